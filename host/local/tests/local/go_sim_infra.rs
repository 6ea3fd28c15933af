//! The quickstart with the Go infrastructure provider (plugins/other-languages/go-sim-infra,
//! built by `make go-sim-infra`) in place of sim-infra, through the engine: with real boot and
//! the workload cluster's Nodes checked with kubectl; through lost responses and throttling
//! without a duplicate instance; and an orphan instance swept through its `list-machines`.

use std::collections::BTreeSet;
use std::time::Duration;

use capw_local::ClusterOutcome;
use capw_simcloud::model::InstanceState;
use capw_simcloud::{FaultConfig, SimCloudHandle};
use capw_store::Store;
use capw_test_support::real_boot::MachinesGuard;
use serde_json::{Value, json};

use crate::support::{
    TOKEN, cluster, condition, delete_and_settle, env_with, example_built, inventory, machines,
    manifests, nodes, ready, settle_within,
};

/// The Go provider's component in the plugin directory.
const COMPONENT: &str = "capw_go_sim_infra.wasm";

/// How long real machines may take to boot and join.
const REAL_SETTLE: Duration = Duration::from_secs(300);

/// Whether the Go provider is built ([`example_built`]).
fn go_component_built() -> bool {
    example_built(COMPONENT, "go-sim-infra")
}

/// The quickstart's manifests pointed at `sim`, cluster alpha only, with the Go component as
/// the infrastructure provider `sim-infra`.
fn quickstart_on_go(sim: &SimCloudHandle) -> Vec<Value> {
    manifests(sim, "")
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .map(|mut o| {
            if o["kind"] == "WasmProvider" && o["metadata"]["name"] == "sim-infra" {
                o["spec"]["source"]["file"]["path"] = COMPONENT.into();
            }
            o
        })
        .collect()
}

/// The idempotency keys of `name`'s Machines.
fn machine_keys(store: &Store, name: &str) -> BTreeSet<String> {
    machines(store, name)
        .iter()
        .map(|m| m["spec"]["idempotencyKey"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_quickstart_boots_real_nodes_on_the_go_provider() {
    if !go_component_built() {
        return;
    }
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let env = env_with(FaultConfig::default(), Some(machines_dir.path())).await;
    env.apply(quickstart_on_go(&env.sim));
    let executor = env.executor().await;
    let provider = env
        .store
        .list("WasmProvider", None)
        .unwrap()
        .into_iter()
        .find(|p| p["metadata"]["name"] == "sim-infra")
        .unwrap();
    assert_eq!(
        condition(&provider, "Loaded")["status"],
        "True",
        "{provider:#}"
    );

    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(condition(&alpha, "Ready")["status"], "True", "{alpha:#}");
    let ms = machines(&env.store, "alpha");
    assert_eq!(ms.len(), 3);
    let inv = inventory(&env.sim).await;
    let instances = &inv.clusters["alpha"].instances;
    assert_eq!(instances.len(), 3, "{instances:?}");
    let tokens: BTreeSet<String> = instances.iter().map(|i| i.client_token.clone()).collect();
    assert_eq!(tokens, machine_keys(&env.store, "alpha"));

    // The workload cluster's own API: one Ready Node per Machine, by provider id.
    let nodes = nodes(&env.store, "alpha", machines_dir.path());
    let node_ids: BTreeSet<&str> = nodes
        .iter()
        .filter_map(|n| n["spec"]["providerID"].as_str())
        .collect();
    let machine_ids: BTreeSet<&str> = ms
        .iter()
        .filter_map(|m| m["status"]["providerId"].as_str())
        .collect();
    assert_eq!(node_ids, machine_ids, "{nodes:#?}");
    assert!(nodes.iter().all(ready), "{nodes:#?}");

    delete_and_settle(&executor, &env.store, "alpha").await;
    assert!(
        !inventory(&env.sim).await.clusters.contains_key("alpha"),
        "alpha left something in the cloud"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_responses_and_throttling_never_duplicate_an_instance() {
    if !go_component_built() {
        return;
    }
    let faults = FaultConfig {
        seed: 7,
        error_rate: 0.2,
        error_after_apply: true,
        throttle_rate: 0.1,
        retry_after_secs: 1,
        ..FaultConfig::default()
    };
    let env = env_with(faults, None).await;
    env.apply(quickstart_on_go(&env.sim));
    let executor = env.executor().await;
    let report = settle_within(&executor, Duration::from_secs(180)).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);

    let inv = inventory(&env.sim).await;
    let alpha = &inv.clusters["alpha"];
    assert_eq!(alpha.networks.len(), 1, "{alpha:?}");
    assert_eq!(alpha.load_balancers.len(), 1, "{alpha:?}");
    assert_eq!(alpha.instances.len(), 3, "duplicates: {alpha:?}");
    assert!(
        alpha
            .instances
            .iter()
            .all(|i| i.state == InstanceState::Running)
    );
    let tokens: BTreeSet<String> = alpha
        .instances
        .iter()
        .map(|i| i.client_token.clone())
        .collect();
    assert_eq!(tokens, machine_keys(&env.store, "alpha"));

    // The faults were met: lost responses among them.
    let stats = sim_call(&env.sim, "GET", "/v1/admin/faults", None).await;
    assert!(stats["stats"]["errored"].as_u64() > Some(0), "{stats}");
}

/// One request to simcloud's API with the token, over a plain HTTP/1.1 connection (the
/// provider's own client lives in the component); the JSON answer.
async fn sim_call(sim: &SimCloudHandle, method: &str, path: &str, body: Option<Value>) -> Value {
    let authority = sim.addr().to_string();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&authority).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response
            .split_once("\r\n\r\n")
            .unwrap_or((response.as_str(), ""));
        assert!(head.contains(" 20"), "{head}\n{body}");
        let answer: Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"));
        answer
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_no_machine_owns_is_swept_through_list_machines() {
    if !go_component_built() {
        return;
    }
    let env = env_with(FaultConfig::default(), None).await;
    env.apply(quickstart_on_go(&env.sim));
    let executor = env.executor().await;
    let report = settle_within(&executor, Duration::from_secs(120)).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);

    // An instance of alpha behind capw's back, under a key the host issues for alpha's
    // machines (`<cluster uid>-<machine>`), as a crash between create and record leaves one.
    let uid = cluster(&env.store, "alpha").unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let orphan_key = format!("{uid}-alpha-orphan");
    let orphan = sim_call(
        &env.sim,
        "POST",
        "/v1/instances",
        Some(json!({
            "client_token": orphan_key,
            "name": "alpha-orphan",
            "cluster": "alpha",
            "role": "worker",
            "tags": {"capw.dev/machine": "alpha-orphan"},
            "bootstrap_data": "",
        })),
    )
    .await;
    eprintln!("orphan: {orphan}");
    assert_eq!(
        inventory(&env.sim).await.clusters["alpha"].instances.len(),
        4
    );

    let report = settle_within(&executor, Duration::from_secs(60)).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let instances = &inventory(&env.sim).await.clusters["alpha"].instances;
    assert_eq!(instances.len(), 3, "{instances:?}");
    assert!(instances.iter().all(|i| i.client_token != orphan_key));
    assert_eq!(machines(&env.store, "alpha").len(), 3);
}
