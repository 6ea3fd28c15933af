//! The local mode end to end, in-process: the store in a temp dir, simcloud with short
//! delays, the real provider components from `CAPW_PLUGIN_DIR` (build them first with
//! `cargo build --profile plugin --target wasm32-wasip2 -p capw-sim-infra
//! -p capw-kubeadm-bootstrap -p capw-kubeadm-control-plane`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_api::parse_manifests;
use capw_local::{ClusterOutcome, Executor, LocalConfig, Progress, SettleReport};
use capw_simcloud::model::Inventory;
use capw_simcloud::{SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use capw_store::{ObjectKey, Store};
use serde_json::Value;

const TOKEN: &str = "local-test-token";
const SETTLE: Duration = Duration::from_secs(120);

/// The quickstart's manifests, pointed at `sim`, plus `extra` documents.
fn manifests(sim: &SimCloudHandle, extra: &str) -> Vec<Value> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/quickstart");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut text: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap() + "\n---\n")
        .collect();
    text.push_str(extra);
    let text = text.replace("http://127.0.0.1:7480", &sim.base_url());
    parse_manifests(&text)
        .unwrap()
        .iter()
        .map(|o| o.to_json().unwrap())
        .collect()
}

async fn inventory(sim: &SimCloudHandle) -> Inventory {
    reqwest::Client::new()
        .get(format!("{}/v1/inventory", sim.base_url()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn settle(executor: &Executor) -> SettleReport {
    let started = Instant::now();
    let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
    let report = executor
        .reconcile_until_settled(SETTLE, progress)
        .await
        .unwrap();
    eprintln!("settled in {:?}: {:?}", started.elapsed(), report.outcomes);
    report
}

fn cluster(store: &Store, name: &str) -> Option<Value> {
    store
        .get(&ObjectKey::namespaced("Cluster", "default", name))
        .unwrap()
}

fn machines(store: &Store, cluster: &str) -> Vec<Value> {
    store
        .list("Machine", Some("default"))
        .unwrap()
        .into_iter()
        .filter(|m| m["spec"]["clusterName"] == cluster)
        .collect()
}

fn condition<'a>(object: &'a Value, type_: &str) -> &'a Value {
    object["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

fn set_workers(store: &Store, name: &str, replicas: i64) {
    store
        .update(&ObjectKey::namespaced("Cluster", "default", name), |c| {
            c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = replicas.into();
            Ok(())
        })
        .unwrap();
}

/// A cluster whose pod subnet the bootstrap provider refuses.
const BAD: &str = "apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {name: bad, namespace: default}
spec:
  topology:
    classRef: {name: sim-kubeadm}
    version: v1.34.1
    variables:
      - {name: podSubnet, value: not-a-cidr}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_scale_and_delete_clusters_with_the_real_providers() {
    let tmp = tempfile::tempdir().unwrap();
    let state_dir = tmp.path().join(".capw");
    std::fs::create_dir_all(state_dir.join("secrets/simcloud")).unwrap();
    std::fs::write(state_dir.join("secrets/simcloud/token"), TOKEN).unwrap();
    let sim = SimCloud::start(
        SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(Duration::from_millis(20))),
    )
    .await
    .unwrap();

    let mut config = LocalConfig::new(&state_dir);
    config.plugin_dir = capw_test_support::plugin_dir();
    config.cache_dir = Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"));
    config.max_requeue = Duration::from_millis(100);
    config.base_backoff = Duration::from_millis(20);
    let store = Store::open(&config.state_file()).unwrap();
    for mut object in manifests(&sim, BAD) {
        object.as_object_mut().unwrap().remove("status");
        store.apply(object).unwrap();
    }
    let executor = Executor::open(store.clone(), config).await.unwrap();
    for p in store.list("WasmProvider", None).unwrap() {
        assert_eq!(condition(&p, "Loaded")["status"], "True", "{p:#}");
        assert!(
            p["status"]["digest"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
    }

    // Create: both clusters come up; the bad one is blocked with the field path.
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    assert_eq!(report.outcomes["default/beta"], ClusterOutcome::Converged);
    assert!(matches!(
        report.outcomes["default/bad"],
        ClusterOutcome::Blocked(_)
    ));
    let bad = cluster(&store, "bad").unwrap();
    let topology = condition(&bad, "TopologyReconciled");
    assert_eq!(topology["status"], "False");
    assert!(
        topology["message"].as_str().unwrap().contains("podSubnet"),
        "{topology:#}"
    );
    assert!(machines(&store, "bad").is_empty());
    for name in ["alpha", "beta"] {
        let c = cluster(&store, name).unwrap();
        assert_eq!(condition(&c, "Ready")["status"], "True", "{c:#}");
        assert_eq!(c["status"]["phase"], "Provisioned");
        assert!(c["metadata"]["finalizers"][0] == "capw.dev/cluster");
    }
    assert_eq!(machines(&store, "alpha").len(), 3);
    assert_eq!(machines(&store, "beta").len(), 5);
    let inv = inventory(&sim).await;
    assert_eq!(inv.clusters["alpha"].instances.len(), 3);
    assert_eq!(inv.clusters["beta"].instances.len(), 5);
    assert!(!inv.clusters.contains_key("bad"));
    let keys: Vec<Value> = machines(&store, "alpha")
        .iter()
        .map(|m| m["spec"]["idempotencyKey"].clone())
        .collect();
    for i in &inv.clusters["alpha"].instances {
        assert!(keys.contains(&Value::from(i.client_token.clone())), "{i:?}");
    }

    // Converged clusters: another run writes nothing.
    let version = store.resource_version().unwrap();
    settle(&executor).await;
    assert_eq!(
        store.resource_version().unwrap(),
        version,
        "a converged run wrote"
    );

    // Scale alpha's workers up, then down.
    set_workers(&store, "alpha", 3);
    assert_eq!(
        settle(&executor).await.outcomes["default/alpha"],
        ClusterOutcome::Converged
    );
    assert_eq!(inventory(&sim).await.clusters["alpha"].instances.len(), 4);
    set_workers(&store, "alpha", 1);
    assert_eq!(
        settle(&executor).await.outcomes["default/alpha"],
        ClusterOutcome::Converged
    );
    assert_eq!(machines(&store, "alpha").len(), 2);
    assert_eq!(inventory(&sim).await.clusters["alpha"].instances.len(), 2);

    // Delete alpha: nothing of it is left, beta is untouched.
    store
        .delete(&ObjectKey::namespaced("Cluster", "default", "alpha"))
        .unwrap();
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Gone);
    assert!(cluster(&store, "alpha").is_none());
    assert!(machines(&store, "alpha").is_empty());
    let inv = inventory(&sim).await;
    // Nothing of alpha is left in the cloud, its bootstrap registration included.
    assert!(
        !inv.clusters.contains_key("alpha"),
        "{:?}",
        inv.clusters.get("alpha")
    );
    assert_eq!(inv.clusters["beta"].instances.len(), 5);
    assert!(
        store
            .list("Secret", Some("default"))
            .unwrap()
            .iter()
            .all(|s| s["metadata"]["name"] != "alpha-cluster-secrets")
    );
}
