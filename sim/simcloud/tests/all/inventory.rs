use capw_simcloud::model::{ControlPlaneState, InstanceState, Inventory};
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Sim, body};

#[tokio::test]
async fn inventory_shows_everything_alive_per_cluster() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    sim.setup_cluster("c2").await;
    let (_, a) = sim
        .create_instance("a", "c1", "worker", "#cloud-config\n")
        .await;
    let (_, b) = sim
        .create_instance("b", "c1", "worker", "#cloud-config\n")
        .await;
    sim.create_instance("c", "c2", "worker", "#cloud-config\n")
        .await;
    sim.delete(&format!("/v1/instances/{}", b.id)).await;
    sim.post(
        "/v1/managed-control-planes",
        json!({"cluster": "m1", "name": "cp", "version": "v1.31.0", "replicas": 1}),
    )
    .await;
    sim.settled_instance(&a.id).await;

    let inventory: Inventory = body(sim.get("/v1/inventory").await).await;
    assert_eq!(
        inventory.clusters.keys().collect::<Vec<_>>(),
        ["c1", "c2", "m1"]
    );
    let c1 = &inventory.clusters["c1"];
    assert_eq!(c1.networks.len(), 1);
    assert_eq!(c1.load_balancers.len(), 1);
    assert_eq!(c1.instances.len(), 1);
    assert_eq!(c1.instances[0].id, a.id);
    // Not kubeadm at all: it failed, and says so.
    assert_eq!(c1.instances[0].state, InstanceState::Failed);
    assert!(c1.managed_control_planes.is_empty());
    assert_eq!(
        c1.bootstrap.as_ref().map(|b| b.token_id.as_str()),
        Some("abcdef")
    );
    let m1 = &inventory.clusters["m1"];
    assert_eq!(m1.managed_control_planes.len(), 1);
    assert!(matches!(
        m1.managed_control_planes[0].state,
        ControlPlaneState::Creating | ControlPlaneState::Ready
    ));

    let only: Inventory = body(sim.get("/v1/inventory?cluster=c2").await).await;
    assert_eq!(only.clusters.keys().collect::<Vec<_>>(), ["c2"]);
    let r = sim.get("/v1/inventory?clustr=c2").await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}
