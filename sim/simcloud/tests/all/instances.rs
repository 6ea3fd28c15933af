use capw_simcloud::model::{Instance, InstanceList, InstanceState};
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Sim, body, error, instance_body};

#[tokio::test]
async fn create_is_idempotent_by_client_token() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let (status, first) = sim
        .create_instance("tok-1", "c1", "worker", "#cloud-config\n")
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, again) = sim
        .create_instance("tok-1", "c1", "worker", "#cloud-config\n")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again.id, first.id);
    assert_eq!(again.addresses, first.addresses);

    let list: InstanceList = body(sim.get("/v1/instances?client_token=tok-1").await).await;
    assert_eq!(list.instances.len(), 1);

    // The same token for another machine is a client bug, not a create.
    let mut other = instance_body("tok-1", "c1", "worker", "#cloud-config\n");
    other["name"] = json!("someone-else");
    let e = error(sim.post("/v1/instances", other).await, StatusCode::CONFLICT).await;
    assert_eq!(e.error.code, "idempotency_mismatch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_with_one_token_make_one_instance() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let mut creates = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let request = sim
            .request(reqwest::Method::POST, "/v1/instances")
            .json(&instance_body("race", "c1", "worker", ""));
        creates.spawn(async move { request.send().await.map(|r| r.status()) });
    }
    let statuses: Vec<StatusCode> = creates
        .join_all()
        .await
        .into_iter()
        .map(|r| r.expect("send"))
        .collect();
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == StatusCode::CREATED)
            .count(),
        1,
        "{statuses:?}"
    );
    assert!(statuses.iter().all(|s| s.is_success()), "{statuses:?}");
    let list: InstanceList = body(sim.get("/v1/instances?cluster=c1").await).await;
    assert_eq!(list.instances.len(), 1);
}

#[tokio::test]
async fn list_by_cluster_and_tags() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    sim.setup_cluster("c2").await;
    for (token, cluster, pool) in [
        ("a", "c1", "md-0"),
        ("b", "c1", "md-1"),
        ("c", "c2", "md-0"),
    ] {
        let mut req = instance_body(token, cluster, "worker", "");
        req["tags"] = json!({"capw.dev/pool": pool});
        req["zone"] = json!("zone-b");
        assert_eq!(
            sim.post("/v1/instances", req).await.status(),
            StatusCode::CREATED
        );
    }
    let ids = |list: InstanceList| {
        list.instances
            .into_iter()
            .map(|i| i.name)
            .collect::<Vec<_>>()
    };
    let c1: InstanceList = body(sim.get("/v1/instances?cluster=c1").await).await;
    assert_eq!(ids(c1), ["c1-a", "c1-b"]);
    let md0: InstanceList = body(sim.get("/v1/instances?tag=capw.dev/pool=md-0").await).await;
    assert_eq!(ids(md0), ["c1-a", "c2-c"]);
    let both: InstanceList = body(
        sim.get("/v1/instances?cluster=c2&tag=capw.dev/pool=md-0")
            .await,
    )
    .await;
    let both = both.instances;
    assert_eq!(both.len(), 1);
    assert_eq!(both[0].zone, "zone-b");
    assert_eq!(both[0].tags["capw.dev/pool"], "md-0");
    let e = error(
        sim.get("/v1/instances?tag=nokey").await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("tag"));
}

#[tokio::test]
async fn instances_have_addresses_ids_and_states() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let (_, i) = sim.create_instance("a", "c1", "control-plane", "").await;
    assert_eq!(i.state, InstanceState::Pending);
    assert_eq!(i.provider_id, format!("sim://instances/{}", i.id));
    assert_eq!(i.network_id, "net-1");
    assert_eq!(i.addresses[0].kind, "private-ip");
    assert_eq!(i.addresses[0].address, "10.0.4.10");
    assert_eq!(i.zone, "zone-a");
    assert!(i.created_at > 1_600_000_000);
    let (_, j) = sim.create_instance("b", "c1", "worker", "").await;
    assert_eq!(j.addresses[0].address, "10.0.4.11");
    let got: Instance = body(sim.get(&format!("/v1/instances/{}", i.id)).await).await;
    assert_eq!(got.id, i.id);
}

#[tokio::test]
async fn delete_is_idempotent_and_tokens_are_never_reused() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let (_, i) = sim.create_instance("a", "c1", "worker", "").await;
    let path = format!("/v1/instances/{}", i.id);
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        sim.delete("/v1/instances/i-999").await.status(),
        StatusCode::NO_CONTENT
    );
    let e = error(sim.get(&path).await, StatusCode::NOT_FOUND).await;
    assert_eq!(e.error.code, "not_found");
    assert_eq!(e.error.message, format!("instance {} not found", i.id));
    // A late retry of the create must not bring the machine back.
    let e = error(
        sim.post("/v1/instances", instance_body("a", "c1", "worker", ""))
            .await,
        StatusCode::CONFLICT,
    )
    .await;
    assert!(e.error.message.contains("has been deleted"), "{e:?}");
}

#[tokio::test]
async fn instances_need_a_network_and_a_known_zone() {
    let sim = Sim::start().await;
    let e = error(
        sim.post("/v1/instances", instance_body("a", "nowhere", "worker", ""))
            .await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");
    assert_eq!(
        e.error.message,
        "cluster nowhere has no network; create one first"
    );
    sim.setup_cluster("c1").await;
    let mut req = instance_body("a", "c1", "worker", "");
    req["zone"] = json!("zone-z");
    let e = error(
        sim.post("/v1/instances", req).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("zone"));
    assert!(
        e.error.message.contains("zones are zone-a, zone-b, zone-c"),
        "{e:?}"
    );
    let mut req = instance_body("a", "c1", "worker", "");
    req["bootstrap_data"] = json!("not base64!");
    let e = error(
        sim.post("/v1/instances", req).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("bootstrap_data"));
}

#[tokio::test]
async fn networks_and_load_balancers() {
    let sim = Sim::start().await;
    let lb = sim.setup_cluster("c1").await;
    assert_eq!(lb.endpoint.to_string(), "lb-1.sim:6443");
    // One load balancer per cluster; the same token answers the first.
    let again = sim
        .post(
            "/v1/load-balancers",
            json!({"cluster": "c1", "name": "c1-lb", "client_token": "c1-lb"}),
        )
        .await;
    assert_eq!(again.status(), StatusCode::OK);
    let e = error(
        sim.post(
            "/v1/load-balancers",
            json!({"cluster": "c1", "name": "second"}),
        )
        .await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(
        e.error.message,
        "cluster c1 already has a load balancer: lb-1"
    );
    let active = sim
        .wait_for(
            "/v1/load-balancers/lb-1",
            |lb: &capw_simcloud::model::LoadBalancer| {
                lb.state == capw_simcloud::model::LoadBalancerState::Active
            },
        )
        .await;
    assert_eq!(active.id, "lb-1");
    // A network holding instances stays.
    let (_, i) = sim.create_instance("a", "c1", "worker", "").await;
    let e = error(sim.delete("/v1/networks/net-1").await, StatusCode::CONFLICT).await;
    assert_eq!(e.error.message, "network net-1 still holds 1 instance(s)");
    sim.delete(&format!("/v1/instances/{}", i.id)).await;
    assert_eq!(
        sim.delete("/v1/networks/net-1").await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim.delete("/v1/load-balancers/lb-1").await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim.get("/v1/networks/net-1").await.status(),
        StatusCode::NOT_FOUND
    );
}
