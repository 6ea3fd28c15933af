//! What every pass test shares: the quickstart's manifests pointed at an in-process simcloud,
//! a store in memory, an executor over both, and a loop that passes over every Cluster until
//! each one settles.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_api::Cluster;
use capw_engine::store::{ObjectKey, ObjectStore};
use capw_engine::{EngineConfig, Executor, PassOutcome, ProviderRegistry, SecretSource};
use capw_simcloud::SimCloudHandle;
use capw_simcloud::model::Inventory;
use capw_store::Store;
pub use capw_test_support::{condition, first_of_kind};
use kube::Resource as _;
use serde_json::Value;

pub const TOKEN: &str = "engine-test-token";
pub const SETTLE: Duration = Duration::from_secs(120);

/// How one cluster settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterOutcome {
    Converged,
    Gone,
    Blocked(String),
    TimedOut,
    Failed(String),
}

/// How every cluster settled, by `namespace/name`.
#[derive(Debug, Default)]
pub struct SettleReport {
    pub outcomes: BTreeMap<String, ClusterOutcome>,
}

/// A store in memory, a secrets directory with simcloud's token, an in-process simcloud with
/// `delay` per step, and an engine config with short requeues and the built components.
pub struct Env {
    pub _tmp: tempfile::TempDir,
    pub config: EngineConfig,
    pub sim: SimCloudHandle,
    pub store: Store,
}

impl Env {
    pub async fn start(delay: Duration) -> Env {
        capw_test_support::init_tracing();
        let tmp = tempfile::tempdir().unwrap();
        let secrets = tmp.path().join("secrets");
        let sim = capw_test_support::simcloud_granted(&secrets, TOKEN, delay).await;
        let mut config = EngineConfig::new(
            capw_test_support::plugin_dir(),
            tmp.path().join("cache"),
            SecretSource::Files { dir: secrets },
        );
        config.cache_dir = Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"));
        config.requeue = capw_engine::RequeueBounds {
            min: Duration::from_millis(10),
            base_backoff: Duration::from_millis(20),
            max: Duration::from_millis(100),
        };
        Env {
            _tmp: tmp,
            config,
            sim,
            store: Store::in_memory().unwrap(),
        }
    }

    /// Stores `objects` as `capw apply` would (status dropped).
    pub fn apply(&self, objects: Vec<Value>) {
        for mut object in objects {
            object.as_object_mut().unwrap().remove("status");
            self.store.apply(object).unwrap();
        }
    }

    /// The providers loaded (their status written) and an executor over the store.
    pub async fn executor(&self) -> Executor {
        let store: Arc<dyn ObjectStore> = Arc::new(self.store.clone());
        let registry = ProviderRegistry::load_all(store.as_ref(), &self.config)
            .await
            .unwrap();
        Executor::new(store, Arc::new(registry), self.config.clone())
    }
}

/// The quickstart's manifests, pointed at `sim`, plus `extra` documents.
pub fn manifests(sim: &SimCloudHandle, extra: &str) -> Vec<Value> {
    capw_test_support::quickstart_objects(&sim.base_url(), extra)
}

pub async fn inventory(sim: &SimCloudHandle) -> Inventory {
    capw_test_support::simcloud_inventory(&sim.base_url(), TOKEN).await
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

pub async fn settle(executor: &Executor) -> SettleReport {
    settle_within(executor, SETTLE).await
}

/// Passes over every Cluster, all at once, each until it converged, is gone or is blocked,
/// waiting between passes as the engine's requeue says; a cluster still working after
/// `limit` is `TimedOut`.
pub async fn settle_within(executor: &Executor, limit: Duration) -> SettleReport {
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + limit;
    let keys: Vec<ObjectKey> = executor
        .store()
        .list(&Cluster::kind(&()), None)
        .await
        .unwrap()
        .iter()
        .map(|c| ObjectKey::of(c).unwrap())
        .collect();
    let drives = keys.iter().map(|key| async move {
        let mut requeue = executor.config().requeue.start();
        let outcome = loop {
            let pass = tokio::time::timeout_at(deadline, executor.reconcile(key)).await;
            let wait = match pass {
                Err(_) => break ClusterOutcome::TimedOut,
                Ok(Err(e)) => break ClusterOutcome::Failed(capw_engine::error_chain(&e)),
                Ok(Ok(PassOutcome::Gone)) => break ClusterOutcome::Gone,
                Ok(Ok(PassOutcome::Converged(_))) => break ClusterOutcome::Converged,
                Ok(Ok(PassOutcome::Blocked(why))) => break ClusterOutcome::Blocked(why),
                Ok(Ok(PassOutcome::Progress {
                    status,
                    requeue: hint,
                    failed,
                })) => requeue.progress(status.as_ref(), hint, failed),
            };
            if tokio::time::Instant::now() + wait >= deadline {
                break ClusterOutcome::TimedOut;
            }
            tokio::time::sleep(wait).await;
        };
        (format!("{}/{}", key.namespace, key.name), outcome)
    });
    let report = SettleReport {
        outcomes: futures::future::join_all(drives)
            .await
            .into_iter()
            .collect(),
    };
    eprintln!("settled in {:?}: {:?}", started.elapsed(), report.outcomes);
    report
}
