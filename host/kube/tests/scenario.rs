//! One scenario, two modes: create, scale, upgrade, bad input and delete, run against the
//! embedded local mode (redb store, executor passes) and against a real kube-apiserver
//! (tests/kube-env, `make kube-env`) with the controller. Both read and write through
//! [`ObjectStore`] and check the same things: the Cluster's conditions, its Machines, and the
//! in-process simcloud's inventory (one instance per machine, nothing left after delete).

mod common;
#[path = "scenario/deployed.rs"]
mod deployed;
#[path = "scenario/faults.rs"]
mod faults;
#[path = "scenario/hosted.rs"]
mod hosted;
#[path = "scenario/managed.rs"]
mod managed;
#[path = "scenario/real.rs"]
mod real;
#[path = "scenario/shared_datastore.rs"]
mod shared_datastore;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_api::parse_manifests;
use capw_engine::EngineConfig;
use capw_engine::store::{ObjectKey, ObjectStore};
use capw_engine::{
    ClusterCacheConfig, Executor, RequeueBounds, SecretSource, WorkloadClusterAccess,
};
use capw_kube::{CacheConfig, ControllerConfig, KubeStore, RequeuePolicy};
use capw_local::Progress;
use capw_simcloud::model::Inventory;
use capw_simcloud::{FaultConfig, RealBoot, SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use capw_store::Store;
use capw_test_support::condition;
use capw_test_support::kube::KubeEnv;
use capw_test_support::real_boot::{MachinesGuard, kube_binaries};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const TOKEN: &str = "scenario-token";
const WAIT: Duration = Duration::from_secs(240);

/// How the clusters are driven.
enum Driver {
    /// The local mode: each step ends with the executor's passes until everything settled.
    Embedded(Box<Executor>),
    /// The controller against the API server, running all along; each step waits.
    Kube {
        task: JoinHandle<Result<(), capw_kube::KubeModeError>>,
        stop: oneshot::Sender<()>,
    },
    /// The controller installed from its image, running as a Pod of the scenario's
    /// management cluster all along; each step waits.
    Pod,
}

/// What a Cluster must look like when a step has settled.
#[derive(Clone, Copy, Debug)]
enum Expect<'a> {
    /// Ready at its generation, with these machines, all at `version`.
    Ready {
        control_plane: usize,
        workers: usize,
        version: &'a str,
    },
    /// Blocked with `InvalidTopology`, the message naming `needle`, with `machines` machines.
    Blocked { needle: &'a str, machines: usize },
    /// Gone from the store.
    Gone,
}

struct Scenario {
    mode: &'static str,
    namespace: String,
    store: Arc<dyn ObjectStore>,
    sim: SimCloudHandle,
    config: EngineConfig,
    driver: Option<Driver>,
    /// With real boot: the cloud's machines directory; its machines are destroyed on drop.
    machines: Option<MachinesGuard>,
    /// The Kubernetes test environment of the scenario's own, when it has one (stopped on
    /// drop); else the controller uses the test process's shared one.
    kube_env: Option<KubeEnv>,
    _tmp: tempfile::TempDir,
}

/// How the scenario's cloud boots its instances.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Boot {
    /// Checked bootstrap data, nothing runs; the host reaches no workload cluster.
    Simulated,
    /// Real control planes and Nodes; the host reaches each cluster through its kubeconfig.
    Real,
}

impl Scenario {
    async fn embedded(boot: Boot) -> Scenario {
        Scenario::embedded_with(boot, FaultConfig::default()).await
    }

    /// The local mode, against a simcloud with `faults`.
    async fn embedded_with(boot: Boot, faults: FaultConfig) -> Scenario {
        Scenario::embedded_tuned(boot, faults, ClusterCacheConfig::default()).await
    }

    /// The local mode, against a simcloud with `faults`; with real boot, workload clusters are
    /// reached with `cache`'s timeouts.
    async fn embedded_tuned(
        boot: Boot,
        faults: FaultConfig,
        cache: ClusterCacheConfig,
    ) -> Scenario {
        capw_test_support::init_tracing();
        let tmp = tempfile::tempdir().unwrap();
        let state_dir = tmp.path().join(".capw");
        std::fs::create_dir_all(state_dir.join("secrets/simcloud")).unwrap();
        std::fs::write(state_dir.join("secrets/simcloud/token"), TOKEN).unwrap();
        let secrets = SecretSource::Files {
            dir: state_dir.join("secrets"),
        };
        let config = engine_config(&state_dir, secrets, boot, cache);
        let store: Arc<dyn ObjectStore> =
            Arc::new(Store::open(&state_dir.join(capw_local::STATE_FILE)).unwrap());
        let (sim, machines) = sim(boot, tmp.path(), faults).await;
        Scenario {
            mode: "embedded",
            namespace: "default".into(),
            store,
            sim,
            config,
            driver: None,
            machines,
            kube_env: None,
            _tmp: tmp,
        }
    }

    async fn kube(boot: Boot) -> Scenario {
        Scenario::kube_with(boot, FaultConfig::default()).await
    }

    /// The controller against the API server, and a simcloud with `faults`.
    async fn kube_with(boot: Boot, faults: FaultConfig) -> Scenario {
        Scenario::kube_tuned(boot, faults, ClusterCacheConfig::default()).await
    }

    /// The controller against the API server, and a simcloud with `faults`; with real boot,
    /// workload clusters are reached with `cache`'s timeouts.
    async fn kube_tuned(boot: Boot, faults: FaultConfig, cache: ClusterCacheConfig) -> Scenario {
        Scenario::kube_in(None, boot, faults, cache, |_| ()).await
    }

    /// The controller against the API server of `own` (an environment of the scenario's own,
    /// stopped with it), else of the test process's shared environment; `tune` changes the
    /// engine's settings before it starts.
    async fn kube_in(
        own: Option<KubeEnv>,
        boot: Boot,
        faults: FaultConfig,
        cache: ClusterCacheConfig,
        tune: impl FnOnce(&mut EngineConfig),
    ) -> Scenario {
        capw_test_support::init_tracing();
        let env = own.as_ref().unwrap_or_else(|| KubeEnv::shared());
        env.apply_crds(capw_api::crds()).await;
        let namespace = env.create_namespace("capw-scenario").await;
        let client = env.client().await;
        let store: Arc<dyn ObjectStore> = Arc::new(KubeStore::new(client.clone()));
        // The token the sim-infra provider is granted, as a Kubernetes Secret.
        store
            .create(json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "simcloud", "namespace": namespace},
                "stringData": {"token": TOKEN},
            }))
            .await
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut config = engine_config(
            &tmp.path().join("state"),
            SecretSource::Store {
                default_namespace: namespace.clone(),
            },
            boot,
            cache,
        );
        tune(&mut config);
        let (stop, stopped) = oneshot::channel::<()>();
        let controller = ControllerConfig {
            engine: config.clone(),
            provider_namespace: namespace.clone(),
            watch_namespace: Some(namespace.clone()),
            identity: "scenario".into(),
            leader_election: None,
            sharding: None,
            metrics_address: None,
            health_address: None,
            requeue: RequeuePolicy {
                resync: Duration::from_secs(30),
                error_requeue: Duration::from_millis(500),
            },
            concurrency: 0,
            cache: CacheConfig::default(),
            webhook: None,
        };
        let task = tokio::spawn(capw_kube::run(client, controller, async {
            let _ = stopped.await;
        }));
        let (sim, machines) = sim(boot, tmp.path(), faults).await;
        Scenario {
            mode: "kube",
            namespace,
            store,
            sim,
            config,
            driver: Some(Driver::Kube { task, stop }),
            machines,
            kube_env: own,
            _tmp: tmp,
        }
    }

    /// The quickstart's providers, class and Cluster `alpha`, in this scenario's namespace,
    /// with provider names of its own (WasmProviders are cluster-scoped).
    fn quickstart(&self) -> Vec<Value> {
        let text = common::quickstart_in(&self.namespace, &self.sim);
        parse_manifests(&text)
            .unwrap()
            .iter()
            .map(|o| o.to_json().unwrap())
            .filter(|o| o["metadata"]["name"] != "beta")
            .collect()
    }

    async fn apply(&self, objects: Vec<Value>) {
        for mut object in objects {
            object.as_object_mut().unwrap().remove("status");
            self.store.apply(object).await.unwrap();
        }
    }

    fn key(&self, name: &str) -> ObjectKey {
        ObjectKey::namespaced("Cluster", &self.namespace, name)
    }

    async fn update_cluster(&self, name: &str, change: impl Fn(&mut Value) + Send + Sync) {
        self.store
            .update(&self.key(name), &mut |c: &mut Value| {
                change(c);
                Ok(())
            })
            .await
            .unwrap();
    }

    async fn fault_stats(&self) -> Value {
        capw_test_support::http()
            .get(format!("{}/v1/admin/faults", self.sim.base_url()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// simcloud's name of a cluster: its name in `default`, `<namespace>.<name>` elsewhere.
    fn cloud_key(&self, cluster: &str) -> String {
        if self.namespace == "default" {
            cluster.to_owned()
        } else {
            format!("{}.{cluster}", self.namespace)
        }
    }

    async fn machines(&self, cluster: &str) -> Vec<Value> {
        self.store
            .list("Machine", Some(&self.namespace))
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m["spec"]["clusterName"] == cluster)
            .collect()
    }

    async fn inventory(&self) -> Inventory {
        common::inventory(&self.sim, TOKEN).await
    }

    /// Why `name` is not yet as `expect` says, or `None` when it is.
    async fn unmet(&self, name: &str, expect: Expect<'_>) -> Option<String> {
        let cluster = self.store.get(&self.key(name)).await.unwrap();
        let machines = self.machines(name).await;
        match (expect, cluster) {
            (Expect::Gone, None) => None,
            (Expect::Gone, Some(_)) => Some("still there".into()),
            (_, None) => Some("gone".into()),
            (
                Expect::Ready {
                    control_plane,
                    workers,
                    version,
                },
                Some(c),
            ) => {
                let ready = condition(&c, "Ready")["status"] == "True"
                    && c["status"]["observedGeneration"] == c["metadata"]["generation"];
                let count = |worker: bool| {
                    machines
                        .iter()
                        .filter(|m| (m["spec"]["role"] == "Worker") == worker)
                        .count()
                };
                let versions_ok = machines.iter().all(|m| m["spec"]["version"] == version);
                (!(ready && count(false) == control_plane && count(true) == workers && versions_ok))
                    .then(|| {
                        format!(
                            "ready {ready}, {} control plane, {} workers, versions {:?}",
                            count(false),
                            count(true),
                            machines
                                .iter()
                                .map(|m| m["spec"]["version"].clone())
                                .collect::<Vec<_>>()
                        )
                    })
            }
            (
                Expect::Blocked {
                    needle,
                    machines: count,
                },
                Some(c),
            ) => {
                let topology = condition(&c, "TopologyReconciled");
                let blocked = topology["status"] == "False"
                    && topology["reason"] == "InvalidTopology"
                    && topology["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(needle));
                (!(blocked && machines.len() == count))
                    .then(|| format!("{topology}, {} machines", machines.len()))
            }
        }
    }

    /// Drives every cluster until each is as `expected` says: the embedded mode settles once
    /// and must be there; the controller gets until [`WAIT`].
    async fn settle(&mut self, expected: &[(&str, Expect<'_>)]) {
        let started = Instant::now();
        match &mut self.driver {
            None => {
                let executor = Executor::new(
                    self.store.clone(),
                    Arc::new(
                        capw_engine::ProviderRegistry::load_all(self.store.as_ref(), &self.config)
                            .await
                            .unwrap(),
                    ),
                    self.config.clone(),
                );
                self.driver = Some(Driver::Embedded(Box::new(executor)));
                return Box::pin(self.settle(expected)).await;
            }
            Some(Driver::Embedded(executor)) => {
                let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
                capw_local::reconcile_until_settled(executor, WAIT, progress)
                    .await
                    .unwrap();
                for (name, expect) in expected {
                    if let Some(why) = self.unmet(name, *expect).await {
                        panic!("{}: {name} is not {expect:?}: {why}", self.mode);
                    }
                }
            }
            Some(Driver::Kube { .. } | Driver::Pod) => loop {
                let mut unmet = Vec::new();
                for (name, expect) in expected {
                    if let Some(why) = self.unmet(name, *expect).await {
                        unmet.push(format!("{name} is not {expect:?}: {why}"));
                    }
                }
                if unmet.is_empty() {
                    break;
                }
                assert!(
                    started.elapsed() < WAIT,
                    "{}: timed out: {}",
                    self.mode,
                    unmet.join("; ")
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            },
        }
        eprintln!(
            "{}: settled {expected:?} in {:?}",
            self.mode,
            started.elapsed()
        );
    }

    /// The cloud holds exactly the machines of the store: one instance per idempotency key,
    /// none without a machine.
    async fn assert_cloud_matches(&self, clusters: &[&str]) {
        let inventory = self.inventory().await;
        for cluster in clusters {
            let machines = self.machines(cluster).await;
            let mut keys: Vec<&str> = machines
                .iter()
                .map(|m| m["spec"]["idempotencyKey"].as_str().unwrap())
                .collect();
            keys.sort_unstable();
            let in_cloud = inventory.clusters.get(&self.cloud_key(cluster));
            let mut tokens: Vec<&str> = in_cloud
                .map(|c| {
                    c.instances
                        .iter()
                        .map(|i| i.client_token.as_str())
                        .collect()
                })
                .unwrap_or_default();
            tokens.sort_unstable();
            assert_eq!(tokens, keys, "{}: {cluster}'s instances", self.mode);
        }
    }

    /// Nothing of any cluster is left in the cloud.
    async fn assert_cloud_empty(&self) {
        let inventory = self.inventory().await;
        assert!(
            inventory.clusters.is_empty(),
            "{}: simcloud still holds {:?}",
            self.mode,
            inventory.clusters.keys()
        );
    }

    async fn stop(self) {
        if let Some(Driver::Kube { task, stop }) = self.driver {
            let _ = stop.send(());
            task.await.unwrap().unwrap();
        }
    }
}

/// The engine's settings for a scenario; with real boot, workload clusters are reached with
/// `cache`'s settings.
fn engine_config(
    state_dir: &std::path::Path,
    secrets: SecretSource,
    boot: Boot,
    cache: ClusterCacheConfig,
) -> EngineConfig {
    let mut config = EngineConfig::new(
        capw_test_support::plugin_dir(),
        state_dir.join("cache"),
        secrets,
    );
    config.cache_dir = Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"));
    config.requeue = RequeueBounds {
        min: Duration::from_millis(10),
        base_backoff: Duration::from_millis(50),
        max: Duration::from_millis(200),
    };
    if boot == Boot::Real {
        config.workload_clusters = WorkloadClusterAccess::Connect(cache);
    }
    config
}

/// simcloud in this process; with real boot, its machines under `dir/machines`, destroyed
/// when the guard drops.
async fn sim(
    boot: Boot,
    dir: &Path,
    faults: FaultConfig,
) -> (SimCloudHandle, Option<MachinesGuard>) {
    let config = SimCloudConfig::new(TOKEN)
        .with_timings(Timings::uniform(Duration::from_millis(20)))
        .with_faults(faults);
    match boot {
        Boot::Simulated => (SimCloud::start(config).await.unwrap(), None),
        Boot::Real => {
            let machines = dir.join("machines");
            let sim = SimCloud::start(config.with_real_boot(RealBoot {
                kube_binaries: kube_binaries(),
                machines_dir: machines.clone(),
            }))
            .await
            .unwrap();
            let machines = sim.machines_dir().map(Path::to_owned).unwrap_or(machines);
            (sim, Some(MachinesGuard(machines)))
        }
    }
}

/// The processes of this machine whose command line (arguments joined by NUL) `matches`, as
/// their pids and command lines (arguments joined by spaces).
fn processes_where(matches: impl Fn(&[u8]) -> bool) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(e.path().join("cmdline")).ok()?;
            matches(&raw).then(|| (pid, String::from_utf8_lossy(&raw).replace('\0', " ")))
        })
        .collect()
}

/// The scenario itself, the same for both modes.
async fn run(mut s: Scenario) {
    // Create.
    s.apply(s.quickstart()).await;
    let v1 = "v1.34.4";
    s.settle(&[(
        "alpha",
        Expect::Ready {
            control_plane: 1,
            workers: 2,
            version: v1,
        },
    )])
    .await;
    s.assert_cloud_matches(&["alpha"]).await;

    // Scale: three control-plane machines, three workers.
    s.update_cluster("alpha", |c| {
        c["spec"]["topology"]["controlPlane"]["replicas"] = 3.into();
        c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 3.into();
    })
    .await;
    s.settle(&[(
        "alpha",
        Expect::Ready {
            control_plane: 3,
            workers: 3,
            version: v1,
        },
    )])
    .await;
    s.assert_cloud_matches(&["alpha"]).await;

    // Upgrade: every machine replaced by one of the new version.
    let v2 = "v1.34.5";
    s.update_cluster("alpha", |c| c["spec"]["topology"]["version"] = v2.into())
        .await;
    s.settle(&[(
        "alpha",
        Expect::Ready {
            control_plane: 3,
            workers: 3,
            version: v2,
        },
    )])
    .await;
    s.assert_cloud_matches(&["alpha"]).await;

    // Bad input: a variable the class's schema refuses blocks that cluster alone.
    let ns = s.namespace.clone();
    s.apply(vec![json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "bad", "namespace": ns},
        "spec": {"topology": {
            "classRef": {"name": "sim-kubeadm"},
            "version": v1,
            "controlPlane": {"replicas": 1},
            "variables": [{"name": "keyAlgorithm", "value": "dsa-1024"}],
        }},
    })])
    .await;
    s.settle(&[
        (
            "bad",
            Expect::Blocked {
                needle: "variable \"keyAlgorithm\"",
                machines: 0,
            },
        ),
        (
            "alpha",
            Expect::Ready {
                control_plane: 3,
                workers: 3,
                version: v2,
            },
        ),
    ])
    .await;
    let inventory = s.inventory().await;
    assert!(
        !inventory.clusters.contains_key(&s.cloud_key("bad")),
        "{}: the cloud holds something of the bad cluster: {:?}",
        s.mode,
        inventory.clusters.keys()
    );

    // A topology that stops resolving once machines exist (here a variable the class
    // refuses) blocks the cluster where it is: nothing is changed, nothing is lost.
    s.update_cluster("alpha", |c| {
        c["spec"]["topology"]["variables"] = json!([{"name": "keyAlgorithm", "value": "dsa-1024"}]);
    })
    .await;
    s.settle(&[(
        "alpha",
        Expect::Blocked {
            needle: "variable \"keyAlgorithm\"",
            machines: 6,
        },
    )])
    .await;
    s.assert_cloud_matches(&["alpha"]).await;

    // Delete: nothing is left, in the store or in the cloud. alpha, whose topology no longer
    // resolves, is taken down with the providers and configs that made it.
    for name in ["alpha", "bad"] {
        s.store.delete(&s.key(name)).await.unwrap();
    }
    s.settle(&[("alpha", Expect::Gone), ("bad", Expect::Gone)])
        .await;
    assert!(s.machines("alpha").await.is_empty());
    s.assert_cloud_empty().await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scenario_in_the_embedded_mode() {
    run(Scenario::embedded(Boot::Simulated).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scenario_against_the_api_server() {
    run(Scenario::kube(Boot::Simulated).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_clusters_in_the_embedded_mode() {
    real::run(Scenario::embedded(Boot::Real).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_clusters_against_the_api_server() {
    real::run(Scenario::kube(Boot::Real).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_workload_cluster_whose_api_is_down_holds_up_only_itself() {
    let cache = real::hung_api_access();
    real::hung_api(Scenario::embedded_tuned(Boot::Real, FaultConfig::default(), cache).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_workload_cluster_whose_api_is_down_holds_up_only_itself_against_the_api_server() {
    let cache = real::hung_api_access();
    real::hung_api(Scenario::kube_tuned(Boot::Real, FaultConfig::default(), cache).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn faults_in_the_embedded_mode() {
    faults::run(Scenario::embedded_with(Boot::Simulated, faults::unreliable()).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn faults_against_the_api_server() {
    faults::run(Scenario::kube_with(Boot::Simulated, faults::unreliable()).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_clusters_through_faults_in_the_embedded_mode() {
    faults::many(
        Scenario::embedded_with(Boot::Simulated, faults::unreliable()).await,
        20,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_clusters_through_faults_against_the_api_server() {
    faults::many(
        Scenario::kube_with(Boot::Simulated, faults::unreliable()).await,
        20,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_managed_cluster_on_real_components_in_the_embedded_mode() {
    managed::run(Scenario::embedded(Boot::Real).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_managed_cluster_on_real_components_against_the_api_server() {
    managed::run(Scenario::kube(Boot::Real).await).await;
}

/// The controller against a management cluster of the scenario's own whose workloads run,
/// with real boot: where hosted control planes run.
async fn in_a_management_cluster() -> Scenario {
    in_a_management_cluster_tuned(|_| ()).await
}

/// [`in_a_management_cluster`], the engine's settings changed by `tune`.
async fn in_a_management_cluster_tuned(tune: impl FnOnce(&mut EngineConfig)) -> Scenario {
    let env = KubeEnv::start_with(capw_test_support::kube::Workloads::Run);
    Scenario::kube_in(
        Some(env),
        Boot::Real,
        FaultConfig::default(),
        ClusterCacheConfig::default(),
        tune,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hosted_control_plane_runs_in_the_management_cluster() {
    hosted::run(in_a_management_cluster().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hosted_control_planes_on_one_shared_etcd_cannot_read_each_others_keys() {
    let scenario = in_a_management_cluster_tuned(|c| {
        c.hosted_certificate_validity = shared_datastore::CERTIFICATE_VALIDITY;
    })
    .await;
    shared_datastore::run(scenario).await;
}
