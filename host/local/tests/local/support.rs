//! The helpers every local-mode test shares: the quickstart's manifests pointed at an
//! in-process simcloud, the store, settle loops and object lookups.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_engine::store::ObjectKey;
use capw_engine::{ClusterCacheConfig, Executor, WorkloadClusterAccess};
use capw_local::{LocalConfig, Progress, SettleReport};
use capw_simcloud::model::Inventory;
use capw_simcloud::{FaultConfig, RealBoot, SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use capw_store::Store;
use capw_test_support::real_boot::{KUBE_VERSIONS, kube_binaries};
pub use capw_test_support::{condition, first_of_kind};
use serde_json::Value;

pub const TOKEN: &str = "local-test-token";
pub const SETTLE: Duration = Duration::from_secs(120);

/// The quickstart's manifests, pointed at `sim`, plus `extra` documents.
/// The local mode's config for a test over `state_dir`: the built components, a compile cache
/// shared by the tests, and short requeue delays.
pub fn test_config(state_dir: &Path) -> LocalConfig {
    let mut config = LocalConfig::new(state_dir);
    config.engine.plugin_dir = capw_test_support::plugin_dir();
    config.engine.cache_dir =
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"));
    config.engine.requeue = capw_engine::RequeueBounds {
        min: Duration::from_millis(10),
        base_backoff: Duration::from_millis(20),
        max: Duration::from_millis(100),
    };
    config
}

pub fn manifests(sim: &SimCloudHandle, extra: &str) -> Vec<Value> {
    capw_test_support::quickstart_objects(&sim.base_url(), extra)
}

/// The quickstart's manifests, pointed at `sim`, without its second cluster (`beta`): the
/// class and one cluster, `alpha`.
pub fn alpha_only(sim: &SimCloudHandle) -> Vec<Value> {
    manifests(sim, "")
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect()
}

pub async fn inventory(sim: &SimCloudHandle) -> Inventory {
    capw_test_support::simcloud_inventory(&sim.base_url(), TOKEN).await
}

pub async fn settle(executor: &Executor) -> SettleReport {
    settle_within(executor, SETTLE).await
}

/// Settles for at most `limit`: clusters still held back then are `TimedOut`.
pub async fn settle_within(executor: &Executor, limit: Duration) -> SettleReport {
    let started = Instant::now();
    let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
    let report = capw_local::reconcile_until_settled(executor, limit, progress)
        .await
        .unwrap();
    eprintln!("settled in {:?}: {:?}", started.elapsed(), report.outcomes);
    report
}

pub fn cluster(store: &Store, name: &str) -> Option<Value> {
    store
        .get(&ObjectKey::namespaced("Cluster", "default", name))
        .unwrap()
}

pub fn machines(store: &Store, cluster: &str) -> Vec<Value> {
    store
        .list("Machine", Some("default"))
        .unwrap()
        .into_iter()
        .filter(|m| m["spec"]["clusterName"] == cluster)
        .collect()
}

pub fn set_workers(store: &Store, name: &str, replicas: i64) {
    store
        .update(&ObjectKey::namespaced("Cluster", "default", name), |c| {
            c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = replicas.into();
            Ok(())
        })
        .unwrap();
}

/// The quickstart's objects without `beta`, with alpha's control plane at 3 replicas, no
/// workers, and the class keeping etcd membership (kubeadm's etcd listens on 2379 of each
/// machine; kubeadm-bootstrap stores its CA under these items of the cluster's secrets).
pub fn alpha_with_three_etcd_members(sim: &SimCloudHandle) -> Vec<Value> {
    let mut objects: Vec<Value> = manifests(sim, "")
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    for o in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        o["spec"]["controlPlane"]["etcd"] = serde_json::json!({
            "clientPort": 2379,
            "caCertificateItem": "etcd/ca.crt",
            "caKeyItem": "etcd/ca.key",
        });
    }
    for o in objects.iter_mut().filter(|o| o["kind"] == "Cluster") {
        o["spec"]["topology"]["controlPlane"]["replicas"] = 3.into();
        o["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 0.into();
    }
    objects
}

/// A state directory with simcloud's token granted, an in-process simcloud with `delay`
/// per step, and a local config with short requeues and the built components.
pub struct Env {
    pub _tmp: tempfile::TempDir,
    pub config: LocalConfig,
    pub sim: SimCloudHandle,
    pub store: Store,
}

impl Env {
    pub async fn start(delay: Duration) -> Env {
        capw_test_support::init_tracing();
        let tmp = tempfile::tempdir().unwrap();
        let state_dir = tmp.path().join(".capw");
        let config = test_config(&state_dir);
        let sim = capw_test_support::simcloud_granted(&config.secrets_dir(), TOKEN, delay).await;
        let store = Store::open(&config.state_file()).unwrap();
        Env {
            _tmp: tmp,
            config,
            sim,
            store,
        }
    }

    /// Stores `objects` as `capw apply` would (status dropped).
    pub fn apply(&self, objects: Vec<Value>) {
        for mut object in objects {
            object.as_object_mut().unwrap().remove("status");
            self.store.apply(object).unwrap();
        }
    }

    pub async fn executor(&self) -> Executor {
        capw_local::open(self.store.clone(), self.config.engine.clone())
            .await
            .unwrap()
    }
}

/// Deletes Cluster `name` and settles; the Cluster must be gone afterwards.
pub async fn delete_and_settle(executor: &Executor, store: &Store, name: &str) -> SettleReport {
    store
        .delete(&ObjectKey::namespaced("Cluster", "default", name))
        .unwrap();
    let report = settle(executor).await;
    assert_eq!(
        report.outcomes[&format!("default/{name}")],
        capw_local::ClusterOutcome::Gone
    );
    assert!(cluster(store, name).is_none());
    report
}

/// An [`Env`] whose simcloud has `faults` and, with `machines`, boots its instances for real
/// under that directory.
pub async fn env_with(faults: FaultConfig, machines: Option<&Path>) -> Env {
    capw_test_support::init_tracing();
    let tmp = tempfile::tempdir().unwrap();
    let state_dir = tmp.path().join(".capw");
    std::fs::create_dir_all(state_dir.join("secrets/simcloud")).unwrap();
    std::fs::write(state_dir.join("secrets/simcloud/token"), TOKEN).unwrap();
    let mut sim_config = SimCloudConfig::new(TOKEN)
        .with_timings(Timings::uniform(Duration::from_millis(20)))
        .with_faults(faults);
    if let Some(dir) = machines {
        sim_config = sim_config.with_real_boot(RealBoot {
            kube_binaries: kube_binaries(),
            machines_dir: dir.to_owned(),
        });
    }
    let sim = SimCloud::start(sim_config).await.unwrap();
    let mut config = test_config(&state_dir);
    if machines.is_some() {
        config.engine.workload_clusters =
            WorkloadClusterAccess::Connect(ClusterCacheConfig::default());
    }
    let store = Store::open(&config.state_file()).unwrap();
    Env {
        _tmp: tmp,
        config,
        sim,
        store,
    }
}

/// `kubectl get nodes` in the workload cluster `name`, through the kubeconfig the host stored.
pub fn nodes(store: &Store, name: &str, dir: &Path) -> Vec<Value> {
    let out = kubectl(store, name, dir, &["get", "nodes", "-o", "json"]);
    let list: Value = serde_json::from_slice(&out).unwrap();
    list["items"].as_array().cloned().unwrap_or_default()
}

/// Runs kubectl against workload cluster `name` with its stored admin kubeconfig (written
/// under `dir`); its standard output.
pub fn kubectl(store: &Store, name: &str, dir: &Path, args: &[&str]) -> Vec<u8> {
    let secret = store
        .get(&ObjectKey::namespaced(
            "Secret",
            "default",
            &format!("{name}-kubeconfig"),
        ))
        .unwrap()
        .unwrap_or_else(|| panic!("no Secret {name}-kubeconfig"));
    let kubeconfig = dir.join(format!("{name}.kubeconfig"));
    std::fs::write(&kubeconfig, capw_engine::kubeconfig_value(&secret).unwrap()).unwrap();
    let kubectl = kube_binaries().join(KUBE_VERSIONS[0]).join("bin/kubectl");
    let out = std::process::Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--request-timeout=60s")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The items of cluster `name`'s Secret of cluster secrets.
pub fn secret_items(store: &Store, name: &str) -> Vec<(String, Vec<u8>)> {
    let secret = store
        .get(&ObjectKey::namespaced(
            "Secret",
            "default",
            &capw_engine::cluster_secret_name(name),
        ))
        .unwrap()
        .unwrap_or_else(|| panic!("no cluster secrets of {name}"));
    capw_engine::stored_secret_items(&secret).expect("the cluster Secret's items")
}

pub fn ready(node: &Value) -> bool {
    node["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// Whether the example component `component` is in the plugin directory. `make test` builds
/// every example (its `examples` step runs `make TARGET` for each) and the tests of one fail
/// without it; `make check` builds none and says so with `CAPW_WITHOUT_EXAMPLES=1`, and only
/// then do those tests pass without running.
pub fn example_built(component: &str, target: &str) -> bool {
    let path = capw_test_support::plugin_dir().join(component);
    if path.exists() {
        return true;
    }
    assert!(
        std::env::var_os("CAPW_WITHOUT_EXAMPLES").is_some(),
        "no {}: build it with `make {target}` (or set CAPW_WITHOUT_EXAMPLES=1 to leave the \
         tests that use it out)",
        path.display()
    );
    eprintln!("left out (CAPW_WITHOUT_EXAMPLES): no {component} in the plugin directory");
    false
}
