use std::path::PathBuf;
use std::time::{Duration, Instant};

use capw_simcloud::FaultConfig;
use capw_simcloud::model::{
    FaultsView, Instance, InstanceList, InstanceState, Inventory, Network, NetworkList,
};
use capw_test_support::{simcloud_cluster_faults, simcloud_instance_faults};
use reqwest::header::RETRY_AFTER;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::real_boot::{MachinesGuard, kube_binaries, real_config};
use crate::support::{API_TOKEN, Sim, body, error, fast_config, instance_body};

async fn set_faults(sim: &Sim, faults: serde_json::Value) -> FaultsView {
    let r = sim
        .send(Method::PUT, "/v1/admin/faults", Some(faults))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    body(r).await
}

/// The statuses of `n` sequential `GET /v1/zones`.
async fn statuses(sim: &Sim, n: usize) -> Vec<u16> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(sim.get("/v1/zones").await.status().as_u16());
    }
    out
}

#[tokio::test]
async fn throttled_requests_carry_retry_after() {
    let sim = Sim::with(fast_config().with_faults(FaultConfig {
        throttle_rate: 1.0,
        retry_after_secs: 7,
        ..FaultConfig::default()
    }))
    .await;
    let r = sim.get("/v1/zones").await;
    assert_eq!(
        r.headers().get(RETRY_AFTER).map(|v| v.as_bytes()),
        Some(&b"7"[..])
    );
    let e = error(r, StatusCode::TOO_MANY_REQUESTS).await;
    assert_eq!(e.error.code, "rate_limited");
    // The controls and the inventory are never faulted.
    assert_eq!(sim.get("/v1/inventory").await.status(), StatusCode::OK);
    let view: FaultsView = body(sim.get("/v1/admin/faults").await).await;
    assert_eq!(view.stats.throttled, 1);
    set_faults(&sim, json!({})).await;
    assert_eq!(sim.get("/v1/zones").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn error_rate_is_roughly_as_configured_and_repeats_under_a_seed() {
    let sim = Sim::start().await;
    let faults = json!({"seed": 1234, "error_rate": 0.3});
    set_faults(&sim, faults.clone()).await;
    let first = statuses(&sim, 200).await;
    let errors = first.iter().filter(|s| **s == 500).count();
    assert!(
        (40..=80).contains(&errors),
        "{errors} errors in 200 at rate 0.3"
    );
    assert!(first.iter().all(|s| *s == 500 || *s == 200));
    // Setting the faults again restarts the same sequence.
    set_faults(&sim, faults).await;
    assert_eq!(statuses(&sim, 200).await, first);
    let view: FaultsView = body(sim.get("/v1/admin/faults").await).await;
    assert_eq!(view.stats.requests, 200);
    assert_eq!(view.stats.errored as usize, errors);
}

#[tokio::test]
async fn a_failed_request_is_not_applied_and_its_retry_creates() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    set_faults(&sim, json!({"error_rate": 1.0})).await;
    let r = sim
        .post("/v1/instances", instance_body("a", "c1", "worker", ""))
        .await;
    let e = error(r, StatusCode::INTERNAL_SERVER_ERROR).await;
    assert_eq!(e.error.code, "internal");
    let inventory: Inventory = body(sim.get("/v1/inventory").await).await;
    assert!(inventory.clusters["c1"].instances.is_empty());
    set_faults(&sim, json!({})).await;
    let r = sim
        .post("/v1/instances", instance_body("a", "c1", "worker", ""))
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
}

/// A lost response: the cloud applies the request, then answers 500. What the client was
/// told failed is there, and its retry under the same client token is answered with that
/// very object (200, an earlier create), never a second one.
#[tokio::test]
async fn a_lost_response_was_applied_and_its_retry_gets_the_same_object() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let network = json!({"cluster": "c2", "name": "c2-net", "client_token": "net-lost"});
    set_faults(&sim, json!({"error_rate": 1.0, "error_after_apply": true})).await;
    let r = sim
        .post("/v1/instances", instance_body("lost", "c1", "worker", ""))
        .await;
    let e = error(r, StatusCode::INTERNAL_SERVER_ERROR).await;
    assert_eq!(e.error.code, "internal");
    let r = sim.post("/v1/networks", network.clone()).await;
    error(r, StatusCode::INTERNAL_SERVER_ERROR).await;

    // Still under the fault: the inventory and the admin routes are never faulted.
    let view: FaultsView = body(sim.get("/v1/admin/faults").await).await;
    assert_eq!((view.stats.requests, view.stats.errored), (2, 2));
    let inventory: Inventory = body(sim.get("/v1/inventory").await).await;
    let instances = &inventory.clusters["c1"].instances;
    assert_eq!(
        instances.len(),
        1,
        "the create answered 500 after it was applied, so its instance is there: {instances:?}"
    );
    let applied = &instances[0];
    assert_eq!(
        (applied.client_token.as_str(), applied.name.as_str()),
        ("lost", "c1-lost")
    );
    let networks = &inventory
        .clusters
        .get("c2")
        .unwrap_or_else(|| panic!("the lost network create was not applied: {inventory:?}"))
        .networks;
    assert_eq!(networks.len(), 1, "{networks:?}");
    let applied_network = &networks[0];
    assert_eq!(applied_network.client_token.as_deref(), Some("net-lost"));

    // The retries find what the lost creates made.
    set_faults(&sim, json!({})).await;
    let r = sim.get(&format!("/v1/instances/{}", applied.id)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = sim
        .post("/v1/instances", instance_body("lost", "c1", "worker", ""))
        .await;
    assert_eq!(r.status(), StatusCode::OK, "the retry created anew");
    let again: Instance = body(r).await;
    assert_eq!(again.id, applied.id);
    let r = sim.post("/v1/networks", network).await;
    assert_eq!(r.status(), StatusCode::OK, "the retry created anew");
    let again: Network = body(r).await;
    assert_eq!(again.id, applied_network.id);

    let list: InstanceList = body(sim.get("/v1/instances?cluster=c1").await).await;
    let ids: Vec<&str> = list.instances.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, [applied.id.as_str()]);
    let list: NetworkList = body(sim.get("/v1/networks?cluster=c2").await).await;
    let ids: Vec<&str> = list.networks.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, [applied_network.id.as_str()]);
}

#[tokio::test]
async fn hung_requests_time_out_on_the_client_and_do_not_block_shutdown() {
    let sim = Sim::with(fast_config().with_faults(FaultConfig {
        hang_rate: 1.0,
        ..FaultConfig::default()
    }))
    .await;
    capw_test_support::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .expect("client");
    let started = Instant::now();
    let err = client
        .get(sim.url("/v1/zones"))
        .bearer_auth(crate::support::API_TOKEN)
        .send()
        .await
        .expect_err("a hung request never answers");
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(300));

    // A request still hanging when the sim stops gets a 503 and the sim stops promptly.
    let hanging = tokio::spawn({
        let request = sim.request(Method::GET, "/v1/zones");
        async move { request.send().await.map(|r| r.status()) }
    });
    let view: FaultsView = sim
        .wait_for("/v1/admin/faults", |v: &FaultsView| v.stats.hung == 2)
        .await;
    assert_eq!(view.stats.hung, 2);
    tokio::time::timeout(Duration::from_secs(10), sim.handle.shutdown())
        .await
        .expect("shutdown is not blocked by hung requests")
        .expect("clean shutdown");
    let status = hanging.await.expect("join").expect("answered");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn latency_is_added() {
    let sim = Sim::with(fast_config().with_faults(FaultConfig {
        latency_ms: 150,
        ..FaultConfig::default()
    }))
    .await;
    let started = Instant::now();
    assert_eq!(sim.get("/v1/zones").await.status(), StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(150));
}

#[tokio::test]
async fn invalid_faults_are_refused() {
    let sim = Sim::start().await;
    let r = sim
        .send(
            Method::PUT,
            "/v1/admin/faults",
            Some(json!({"error_rate": 1.5})),
        )
        .await;
    let e = error(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(e.error.field.as_deref(), Some("error_rate"));
    let r = sim
        .send(
            Method::PUT,
            "/v1/admin/faults",
            Some(json!({"eror_rate": 0.5})),
        )
        .await;
    let e = error(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(e.error.field.as_deref(), Some("eror_rate"));
}

/// An instance's kubelet fault needs a kubelet: a cloud that boots nothing for real refuses
/// it, naming the instance; an unknown instance and a bad body are refused as such.
#[tokio::test]
async fn an_instance_fault_needs_a_real_machine() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let (_, created) = sim.create_instance("k1", "c1", "worker", "").await;
    let path = format!("/v1/admin/instances/{}/faults", created.id);
    let r = sim
        .send(Method::PUT, &path, Some(json!({"kubelet": "stopped"})))
        .await;
    let e = error(r, StatusCode::CONFLICT).await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(e.error.message.contains(&created.id), "{}", e.error.message);
    let r = sim
        .send(
            Method::PUT,
            "/v1/admin/instances/i-999/faults",
            Some(json!({"kubelet": "stopped"})),
        )
        .await;
    assert_eq!(
        error(r, StatusCode::NOT_FOUND).await.error.code,
        "not_found"
    );
    let r = sim
        .send(Method::PUT, &path, Some(json!({"kubelet": "asleep"})))
        .await;
    assert_eq!(
        error(r, StatusCode::BAD_REQUEST).await.error.code,
        "invalid_request"
    );
    for faults in [
        json!({"apiServer": "stopped"}),
        json!({"etcd": "stopped"}),
        json!({"node": "unregistered"}),
    ] {
        let r = sim.send(Method::PUT, &path, Some(faults.clone())).await;
        let e = error(r, StatusCode::CONFLICT).await;
        assert_eq!(e.error.code, "failed_precondition", "{faults}");
    }
    let r = sim
        .send(Method::PUT, &path, Some(json!({"api_server": "stopped"})))
        .await;
    let e = error(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(e.error.field.as_deref(), Some("api_server"));
    let r = sim
        .send(Method::PUT, &path, Some(json!({"node": "stopped"})))
        .await;
    error(r, StatusCode::BAD_REQUEST).await;
}

/// A cluster's load balancer fault needs a real load balancer: an unknown cluster is 404, a
/// simulated one 409 naming it, a bad body 400.
#[tokio::test]
async fn a_cluster_fault_needs_a_real_load_balancer() {
    let sim = Sim::start().await;
    let silent = json!({"loadBalancer": "silent"});
    let r = sim
        .send(
            Method::PUT,
            "/v1/admin/clusters/c9/faults",
            Some(silent.clone()),
        )
        .await;
    let e = error(r, StatusCode::NOT_FOUND).await;
    assert_eq!(e.error.code, "not_found");
    assert!(e.error.message.contains("c9"), "{}", e.error.message);
    sim.setup_cluster("c1").await;
    let r = sim
        .send(Method::PUT, "/v1/admin/clusters/c1/faults", Some(silent))
        .await;
    let e = error(r, StatusCode::CONFLICT).await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(e.error.message.contains("c1"), "{}", e.error.message);
    let r = sim
        .send(
            Method::PUT,
            "/v1/admin/clusters/c1/faults",
            Some(json!({"loadBalancer": "mute"})),
        )
        .await;
    assert_eq!(
        error(r, StatusCode::BAD_REQUEST).await.error.code,
        "invalid_request"
    );
}

/// `unregistered_nodes` is shown with the other faults and counts real boots only: an instance
/// of a cloud that boots nothing for real takes none.
#[tokio::test]
async fn unregistered_nodes_are_left_to_real_boots() {
    let sim = Sim::start().await;
    sim.setup_cluster("c1").await;
    let view = set_faults(&sim, json!({"unregistered_nodes": 2})).await;
    assert_eq!(view.faults.unregistered_nodes, 2);
    let (_, created) = sim.create_instance("u1", "c1", "worker", "").await;
    sim.wait_for(&format!("/v1/instances/{}", created.id), |i: &Instance| {
        i.state == InstanceState::Failed
    })
    .await;
    let view: FaultsView = body(sim.get("/v1/admin/faults").await).await;
    assert_eq!(view.faults.unregistered_nodes, 2);
    let r = sim
        .send(
            Method::PUT,
            "/v1/admin/faults",
            Some(json!({"unregistered_nodes": -1})),
        )
        .await;
    error(r, StatusCode::BAD_REQUEST).await;
}

/// The machines directory of a real-boot sim.
fn machines_of(sim: &Sim) -> PathBuf {
    sim.handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned()
}

/// Each instance fault given is a file in the machine's `faults/` that its agent watches, set
/// or removed; faults left out stay as they are, and the answer is what was applied. A worker
/// has no kube-apiserver or etcd to stop. (The instances' data is empty: their boots fail
/// before anything runs, which leaves the files to look at.)
#[tokio::test]
async fn instance_faults_set_and_clear_the_files_the_agent_watches() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _guard = MachinesGuard(dir.path().join("machines"));
    let sim = Sim::with(real_config(
        &dir.path().join("bins"),
        &dir.path().join("machines"),
    ))
    .await;
    let machines = machines_of(&sim);
    let r = sim
        .post("/v1/networks", json!({"cluster": "c1", "name": "c1-net"}))
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let (_, worker) = sim.create_instance("w", "c1", "worker", "").await;
    let (_, cp) = sim.create_instance("cp", "c1", "control-plane", "").await;
    let base = sim.handle.base_url();
    let file = |id: &str, name: &str| machines.join(id).join("faults").join(name);

    let faults = json!({"kubelet": "stopped", "node": "unregistered"});
    let applied = simcloud_instance_faults(&base, API_TOKEN, &worker.id, faults.clone()).await;
    assert_eq!(applied, faults);
    assert!(file(&worker.id, "kubelet-stopped").is_file());
    assert!(file(&worker.id, "node-unregistered").is_file());
    // The old body, alone.
    let applied =
        simcloud_instance_faults(&base, API_TOKEN, &worker.id, json!({"kubelet": "running"})).await;
    assert_eq!(applied, json!({"kubelet": "running"}));
    assert!(!file(&worker.id, "kubelet-stopped").exists());
    assert!(file(&worker.id, "node-unregistered").is_file());

    let path = format!("/v1/admin/instances/{}/faults", worker.id);
    let r = sim
        .send(
            Method::PUT,
            &path,
            Some(json!({"kubelet": "stopped", "etcd": "stopped"})),
        )
        .await;
    let e = error(r, StatusCode::CONFLICT).await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(
        e.error.message.contains("etcd") && e.error.message.contains("worker"),
        "{}",
        e.error.message
    );
    assert!(
        !file(&worker.id, "kubelet-stopped").exists(),
        "a refused body applied a part"
    );

    let faults = json!({"apiServer": "stopped", "etcd": "stopped"});
    simcloud_instance_faults(&base, API_TOKEN, &cp.id, faults).await;
    assert!(file(&cp.id, "kube-apiserver-stopped").is_file());
    assert!(file(&cp.id, "etcd-stopped").is_file());
    simcloud_instance_faults(&base, API_TOKEN, &cp.id, json!({"etcd": "running"})).await;
    assert!(file(&cp.id, "kube-apiserver-stopped").is_file());
    assert!(!file(&cp.id, "etcd-stopped").exists());
    assert_eq!(
        simcloud_instance_faults(&base, API_TOKEN, &cp.id, json!({})).await,
        json!({})
    );
}

/// What a client that connects to `endpoint` and sends a request line sees within `wait`:
/// `Some(true)` when the connection is closed (or reset), `Some(false)` when nothing comes
/// (the connection hangs), `None` when it cannot connect or gets an answer.
async fn connection_outcome(endpoint: String, wait: Duration) -> Option<bool> {
    tokio::task::spawn_blocking(move || {
        use std::io::{ErrorKind, Read as _, Write as _};
        let address: std::net::SocketAddr = endpoint.parse().ok()?;
        let mut conn = std::net::TcpStream::connect_timeout(&address, wait).ok()?;
        conn.set_read_timeout(Some(wait)).ok()?;
        let _ = conn.write_all(b"GET /readyz HTTP/1.0\r\n\r\n");
        match conn.read(&mut [0; 64]) {
            Ok(0) => Some(true),
            Ok(_) => None,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Some(false)
            }
            Err(_) => Some(true),
        }
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Polls `endpoint` until a connection to it ends as `closed` says; fails after 10 s.
async fn wait_connections(endpoint: &str, closed: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = connection_outcome(endpoint.to_owned(), Duration::from_millis(500)).await;
        if seen == Some(closed) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "connections to {endpoint}: {seen:?}, want closed = {closed}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A cluster's silent load balancer (a real `capw-node lb`, without backends) accepts
/// connections and leaves them hanging; forwarding again, it closes them at once, as a
/// balancer without a healthy backend does. A cluster without a balancer cannot be silenced.
#[tokio::test]
async fn a_silent_load_balancer_accepts_connections_and_never_answers() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _guard = MachinesGuard(dir.path().join("machines"));
    let sim = Sim::with(real_config(&bins, &dir.path().join("machines"))).await;
    let machines = machines_of(&sim);
    let base = sim.handle.base_url();
    let lb = sim.setup_cluster("c1").await;
    let endpoint = format!("{}:{}", lb.endpoint.host, lb.endpoint.port);
    wait_connections(&endpoint, true).await;

    let silent = json!({"loadBalancer": "silent"});
    assert_eq!(
        simcloud_cluster_faults(&base, API_TOKEN, "c1", silent.clone()).await,
        silent
    );
    assert!(machines.join(&lb.id).join("silent").is_file());
    wait_connections(&endpoint, false).await;

    let forwarding = json!({"loadBalancer": "forwarding"});
    simcloud_cluster_faults(&base, API_TOKEN, "c1", forwarding).await;
    assert!(!machines.join(&lb.id).join("silent").exists());
    wait_connections(&endpoint, true).await;

    let r = sim
        .post("/v1/networks", json!({"cluster": "c2", "name": "c2-net"}))
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = sim
        .send(Method::PUT, "/v1/admin/clusters/c2/faults", Some(silent))
        .await;
    let e = error(r, StatusCode::CONFLICT).await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(
        e.error.message.contains("no load balancer"),
        "{}",
        e.error.message
    );
}
