use capw_simcloud::fixtures::{CA_HASH, TOKEN, join_cloud_config};
use capw_simcloud::model::{Instance, InstanceState, Inventory, ManagedControlPlane};
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Sim, body, fast_config};

#[tokio::test]
async fn state_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sim-state.json");
    let config = fast_config().with_state_file(&path);

    let sim = Sim::with(config.clone()).await;
    let lb = sim.setup_cluster("c1").await;
    let data = join_cloud_config(&lb.endpoint.to_string(), TOKEN, CA_HASH, false);
    let (_, worker) = sim.create_instance("w1", "c1", "worker", &data).await;
    let running = sim.settled_instance(&worker.id).await;
    assert_eq!(running.state, InstanceState::Running);
    let (_, gone) = sim.create_instance("w2", "c1", "worker", &data).await;
    sim.delete(&format!("/v1/instances/{}", gone.id)).await;
    let r = sim
        .post(
            "/v1/managed-control-planes",
            json!({"cluster": "m1", "name": "cp", "version": "1.31.0", "replicas": 3}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let before: Inventory = body(sim.get("/v1/inventory").await).await;
    sim.handle.shutdown().await.expect("shutdown");
    assert!(!dir.path().join("sim-state.json.tmp").exists());

    let sim = Sim::with(config).await;
    let after: Inventory = body(sim.get("/v1/inventory").await).await;
    // The managed control plane may have become ready meanwhile; the rest is unchanged.
    assert_eq!(before.clusters["c1"], after.clusters["c1"]);
    let cp: &ManagedControlPlane = &after.clusters["m1"].managed_control_planes[0];
    assert_eq!(cp.id, "mcp-1");

    // Tokens still answer the same instance, deleted ones stay used, ids go on.
    let (status, again) = sim.create_instance("w1", "c1", "worker", &data).await;
    assert_eq!(
        (status, again.id.as_str()),
        (StatusCode::OK, worker.id.as_str())
    );
    let r = sim
        .post(
            "/v1/instances",
            crate::support::instance_body("w2", "c1", "worker", &data),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let (_, next) = sim.create_instance("w3", "c1", "worker", &data).await;
    assert_eq!(next.id, "i-3");
    assert_eq!(next.addresses[0].address, "10.0.4.12");
    let booted: Instance = sim.settled_instance(&next.id).await;
    assert_eq!(booted.state, InstanceState::Running);
}

#[tokio::test]
async fn a_corrupt_state_file_stops_the_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.json");
    std::fs::write(&path, "{ not json").expect("write");
    let err = capw_simcloud::SimCloud::start(fast_config().with_state_file(&path))
        .await
        .expect_err("a corrupt file is not silently replaced");
    let chain = capw_simcloud::error_chain(&err);
    assert!(chain.starts_with("load state: state file"), "{chain}");
}
