//! The Kubernetes mode against a real kube-apiserver (tests/kube-env, `make kube-env`), with
//! simcloud in-process and the real provider components (`make plugins`).

#[path = "kube/admission.rs"]
mod admission;
#[path = "kube/cache.rs"]
mod cache;
mod common;
#[path = "kube/contract.rs"]
mod contract;
#[path = "kube/hosted.rs"]
mod hosted;
#[path = "kube/hostile.rs"]
mod hostile;
#[path = "kube/management.rs"]
mod management;
#[path = "kube/processes.rs"]
mod processes;
#[path = "kube/shards.rs"]
mod shards;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use capw_engine::EngineConfig;
use capw_engine::store::{ObjectKey, ObjectStore};
use capw_engine::{RequeueBounds, SecretSource};
use capw_kube::{CacheConfig, ControllerConfig, KubeStore, LeaseConfig, RequeuePolicy};
use capw_simcloud::model::Inventory;
use capw_simcloud::{SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use capw_test_support::bounded::{Watchdog, output_within, step};
use capw_test_support::condition;
use capw_test_support::kube::KubeEnv;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const TOKEN: &str = "kube-test-token";
const WAIT: Duration = Duration::from_secs(240);
/// How long a replica may take to stop or to end once aborted.
const STOP: Duration = Duration::from_secs(60);
/// How long one kubectl command may take (each of its requests gives up after a minute).
const KUBECTL_LIMIT: Duration = Duration::from_secs(120);
/// How long one test may run before its watchdog ends the test process: longer than any
/// test's waits together take when they succeed, far shorter than CI's limit.
const TEST_LIMIT: Duration = Duration::from_secs(900);

/// One test's world: its namespace, simcloud and a client.
struct World {
    env: &'static KubeEnv,
    namespace: String,
    sim: SimCloudHandle,
    store: KubeStore,
    client: kube::Client,
    tmp: tempfile::TempDir,
    /// Fails the test process, naming the wait, if the test runs past [`TEST_LIMIT`].
    _watchdog: Watchdog,
}

impl World {
    async fn new(prefix: &str) -> World {
        World::with_timings(prefix, Timings::uniform(Duration::from_millis(20))).await
    }

    /// A world whose simcloud takes `timings` to change its resources' states.
    async fn with_timings(prefix: &str, timings: Timings) -> World {
        let watchdog = Watchdog::start(TEST_LIMIT);
        capw_test_support::init_tracing();
        let env = KubeEnv::shared();
        env.apply_crds(capw_api::crds()).await;
        let namespace = env.create_namespace(prefix).await;
        let sim = SimCloud::start(SimCloudConfig::new(TOKEN).with_timings(timings))
            .await
            .unwrap();
        let client = env.client().await;
        let store = KubeStore::new(client.clone());
        // The token the sim-infra provider is granted, as a Kubernetes Secret.
        store
            .create(json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "simcloud", "namespace": namespace},
                "stringData": {"token": TOKEN},
            }))
            .await
            .unwrap();
        World {
            env,
            namespace,
            sim,
            store,
            client,
            tmp: tempfile::tempdir().unwrap(),
            _watchdog: watchdog,
        }
    }

    /// The quickstart, in this test's namespace, its providers prefixed with it.
    fn example(&self) -> PathBuf {
        let path = self.tmp.path().join("example.yaml");
        std::fs::write(&path, common::quickstart_in(&self.namespace, &self.sim)).unwrap();
        path
    }

    /// `kubectl delete` of Cluster `name` without waiting, then waits until it is gone.
    async fn delete_cluster(&self, name: &str) {
        self.kubectl(&[
            "delete",
            "clusters.capw.dev",
            name,
            "-n",
            &self.namespace,
            "--wait=false",
        ]);
        let gone = format!("{name} gone");
        wait(&gone, || async {
            self.get("Cluster", name).await.is_none().then_some(())
        })
        .await;
    }

    fn kubectl(&self, args: &[&str]) -> String {
        let out = output_within(self.env.kubectl().args(args), KUBECTL_LIMIT);
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What `capw ARGS --kubeconfig <this API server's>` prints: the CLI reading the
    /// Kubernetes mode's objects. Fails the test unless it succeeds.
    fn capw(&self, args: &[&str]) -> String {
        let out = output_within(
            std::process::Command::new(capw_binary())
                .args(args)
                .arg("--kubeconfig")
                .arg(self.env.kubeconfig())
                .env_remove("CAPW_LOG"),
            KUBECTL_LIMIT,
        );
        assert!(
            out.status.success(),
            "capw {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn config(&self, identity: &str, lease: Option<Duration>) -> ControllerConfig {
        let mut engine = EngineConfig::new(
            capw_test_support::plugin_dir(),
            self.tmp.path().join("pulled"),
            SecretSource::Store {
                default_namespace: self.namespace.clone(),
            },
        );
        engine.cache_dir = Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"));
        engine.requeue = RequeueBounds {
            min: Duration::from_millis(20),
            base_backoff: Duration::from_millis(50),
            max: Duration::from_millis(500),
        };
        ControllerConfig {
            engine,
            provider_namespace: self.namespace.clone(),
            watch_namespace: Some(self.namespace.clone()),
            identity: identity.into(),
            leader_election: lease.map(|duration| LeaseConfig {
                name: "capw-controller".into(),
                namespace: self.namespace.clone(),
                identity: identity.into(),
                duration,
                renew_every: duration / 4,
            }),
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
        }
    }

    /// Starts a controller; it stops when the sender is dropped or sent to.
    fn start(&self, config: ControllerConfig) -> Replica {
        let (stop, stopped) = oneshot::channel::<()>();
        let client = self.client.clone();
        let task = tokio::spawn(async move {
            capw_kube::run(client, config, async {
                let _ = stopped.await;
            })
            .await
        });
        Replica { task, stop }
    }

    /// `kubectl patch` of Cluster `name`'s worker pool md-0 to `replicas`.
    fn scale_workers(&self, name: &str, replicas: u32) {
        let patch = json!({"spec": {"topology": {"workers": {"machineDeployments": [
            {"class": "default-worker", "name": "md-0", "replicas": replicas}
        ]}}}});
        self.kubectl(&[
            "patch",
            "clusters.capw.dev",
            name,
            "-n",
            &self.namespace,
            "--type=merge",
            "-p",
            &patch.to_string(),
        ]);
    }

    async fn get(&self, kind: &str, name: &str) -> Option<Value> {
        self.store
            .get(&ObjectKey::namespaced(kind, &self.namespace, name))
            .await
            .unwrap()
    }

    /// The WasmProvider `name` (cluster-scoped), if it exists.
    async fn provider(&self, name: &str) -> Option<Value> {
        self.store
            .get(&ObjectKey::cluster_scoped("WasmProvider", name))
            .await
            .unwrap()
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

    /// simcloud's name of a cluster: `<namespace>.<name>`.
    fn cloud_key(&self, cluster: &str) -> String {
        format!("{}.{cluster}", self.namespace)
    }

    async fn wait_ready(&self, cluster: &str) -> Value {
        wait(&format!("{cluster} Ready"), || async {
            let c = self.get("Cluster", cluster).await?;
            (condition(&c, "Ready")["status"] == "True"
                && c["status"]["observedGeneration"] == c["metadata"]["generation"])
                .then_some(c)
        })
        .await
    }

    /// Waits until the cluster is Ready with `workers` worker machines, and checks that the
    /// cloud holds exactly its machines, one instance per idempotency key.
    async fn wait_workers(&self, cluster: &str, workers: usize) {
        wait(&format!("{cluster} with {workers} workers"), || async {
            let c = self.get("Cluster", cluster).await?;
            let ready = condition(&c, "Ready")["status"] == "True"
                && c["status"]["observedGeneration"] == c["metadata"]["generation"];
            let n = self
                .machines(cluster)
                .await
                .iter()
                .filter(|m| m["spec"]["role"] == "Worker")
                .count();
            (ready && n == workers).then_some(())
        })
        .await;
        self.assert_no_duplicates(cluster).await;
    }

    async fn assert_no_duplicates(&self, cluster: &str) {
        let machines = self.machines(cluster).await;
        let inv = self.inventory().await;
        let instances = &inv.clusters[&self.cloud_key(cluster)].instances;
        let keys: Vec<&str> = machines
            .iter()
            .map(|m| m["spec"]["idempotencyKey"].as_str().unwrap())
            .collect();
        assert_eq!(
            instances.len(),
            machines.len(),
            "instances {instances:?} for machines {keys:?}"
        );
        for i in instances {
            assert!(
                keys.contains(&i.client_token.as_str()),
                "{i:?} has no machine"
            );
        }
    }
}

struct Replica {
    task: JoinHandle<Result<(), capw_kube::KubeModeError>>,
    stop: oneshot::Sender<()>,
}

impl Replica {
    /// Asks it to stop and waits until it has: running passes finish, the Lease is released.
    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(STOP, self.task)
            .await
            .unwrap_or_else(|_| panic!("the controller did not stop within {STOP:?}"))
            .unwrap()
            .unwrap();
    }

    /// Kills it: the task is dropped mid-pass, nothing is released.
    async fn kill(self) {
        self.task.abort();
        let ended = tokio::time::timeout(STOP, self.task).await;
        assert!(
            ended.is_ok(),
            "the aborted controller did not end within {STOP:?}"
        );
    }
}

/// The `capw` binary of this build. `cargo test --workspace` (what `make test` runs) builds
/// every binary of the workspace before any test runs.
fn capw_binary() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../debug/capw");
    assert!(
        path.exists(),
        "{} is missing: build the workspace's tests (`cargo test --workspace`) so the capw \
         binary is there",
        path.display()
    );
    path
}

/// A loopback address with a port that was free a moment ago.
fn free_address() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

async fn wait<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    step(what);
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_example_comes_up_scales_and_goes_away() {
    let w = World::new("capw-example").await;
    let ns = w.namespace.clone();
    let mut config = w.config("solo", None);
    let metrics_address = free_address();
    config.metrics_address = Some(metrics_address);
    let replica = w.start(config);
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);

    for cluster in ["alpha", "beta"] {
        let c = w.wait_ready(cluster).await;
        assert_eq!(c["status"]["phase"], "Provisioned");
        assert_eq!(c["metadata"]["finalizers"][0], "capw.dev/cluster");
    }
    w.assert_no_duplicates("alpha").await;
    w.assert_no_duplicates("beta").await;
    // The CLI shows the Kubernetes mode's clusters as it shows the local mode's own.
    let table = w.capw(&["get", "clusters", "-n", &ns]);
    for cluster in ["alpha", "beta"] {
        let row = table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(cluster))
            .unwrap_or_else(|| panic!("no row for {cluster}:\n{table}"));
        assert!(row.starts_with(&ns), "{row}");
        assert!(
            row.contains("sim-kubeadm") && row.contains("Provisioned"),
            "{row}"
        );
        assert!(row.trim_end().ends_with("True"), "{row}");
    }
    let tree = w.capw(&["describe", "cluster", "alpha", "-n", &ns]);
    assert!(tree.contains("Cluster/alpha  Provisioned"), "{tree}");
    assert!(
        tree.contains(&format!("├─Infrastructure ({ns}-sim-infra)")),
        "{tree}"
    );
    let listed = w.capw(&["get", "machines", "-n", &ns]);
    for m in w.machines("alpha").await {
        let name = m["metadata"]["name"].as_str().unwrap();
        assert!(tree.contains(name), "{name} not in\n{tree}");
        assert!(listed.contains(name), "{name} not in\n{listed}");
    }
    // Machines are owned by their Cluster.
    for m in w.machines("alpha").await {
        let owner = &m["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "Cluster");
        assert_eq!(owner["name"], "alpha");
        assert_eq!(owner["controller"], true);
    }
    // Health, and the metrics of passes and of every provider's calls.
    let http = capw_test_support::http();
    let ready = http
        .get(format!("http://{metrics_address}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let metrics = http
        .get(format!("http://{metrics_address}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for provider in ["sim-infra", "kubeadm-bootstrap", "kubeadm-control-plane"] {
        let operation = match provider {
            "sim-infra" => "infrastructure.reconcile-machine",
            "kubeadm-bootstrap" => "bootstrap.generate",
            _ => "control-plane.plan",
        };
        let series = format!(
            "capw_controller_provider_calls_total{{provider=\"{ns}-{provider}\",operation=\"{operation}\",result=\"ok\"}} "
        );
        let count: u64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix(&series))
            .unwrap_or_else(|| panic!("no {series} in\n{metrics}"))
            .parse()
            .unwrap();
        assert!(count >= 1, "{series}{count}");
    }
    assert!(
        metrics.contains("capw_controller_reconciles_total{outcome=\"converged\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "capw_controller_provider_call_duration_seconds_count{{provider=\"{ns}-sim-infra\",operation=\"infrastructure.reconcile-machine\"}}"
        )),
        "{metrics}"
    );
    let providers = w.kubectl(&["get", "wasmproviders.capw.dev"]);
    assert!(
        providers.contains(&format!("{ns}-sim-infra")),
        "{providers}"
    );

    // The printer columns.
    let table = w.kubectl(&["get", "clusters.capw.dev", "-n", &ns]);
    let header = table.lines().next().unwrap();
    for column in ["NAME", "PHASE", "VERSION", "AGE"] {
        assert!(header.contains(column), "{table}");
    }
    let alpha = table.lines().find(|l| l.starts_with("alpha")).unwrap();
    assert!(
        alpha.contains("Provisioned") && alpha.contains("v1.34.4"),
        "{table}"
    );

    // Events on the Cluster.
    let events = w.kubectl(&[
        "get",
        "events",
        "-n",
        &ns,
        "--field-selector",
        "involvedObject.name=alpha",
    ]);
    assert!(events.contains("Provisioned"), "{events}");

    // Scale alpha's workers with kubectl patch, up and down.
    for workers in [3, 1] {
        let patch = json!([{
            "op": "replace",
            "path": "/spec/topology/workers/machineDeployments/0/replicas",
            "value": workers,
        }]);
        w.kubectl(&[
            "patch",
            "clusters.capw.dev",
            "alpha",
            "-n",
            &ns,
            "--type=json",
            "-p",
            &patch.to_string(),
        ]);
        w.wait_workers("alpha", workers).await;
    }

    // Delete: nothing of alpha is left, in the API or in the cloud; beta is untouched.
    w.delete_cluster("alpha").await;
    assert!(w.machines("alpha").await.is_empty());
    let inv = w.inventory().await;
    assert!(
        !inv.clusters.contains_key(&w.cloud_key("alpha")),
        "{:?}",
        inv.clusters.get(&w.cloud_key("alpha"))
    );
    assert_eq!(inv.clusters[&w.cloud_key("beta")].instances.len(), 5);
    w.kubectl(&[
        "delete",
        "clusters.capw.dev",
        "beta",
        "-n",
        &ns,
        "--wait=false",
    ]);
    wait("beta gone", || async {
        w.get("Cluster", "beta").await.is_none().then_some(())
    })
    .await;
    let inv = w.inventory().await;
    assert!(
        inv.clusters.is_empty(),
        "simcloud still holds {:?}",
        inv.clusters.keys()
    );
    replica.stop().await;
}

/// A provider whose ConfigMap holds something that is not a component.
fn config_map_provider(ns: &str, name: &str, config_map: &str) -> Value {
    json!({
        "apiVersion": "capw.dev/v1alpha1", "kind": "WasmProvider",
        "metadata": {"name": format!("{ns}-{name}")},
        "spec": {"source": {"configMap": {"namespace": ns, "name": config_map, "key": "component.wasm"}}},
    })
}

fn config_map(ns: &str, name: &str, bytes: &[u8]) -> Value {
    use base64::Engine as _;
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "binaryData": {"component.wasm": base64::engine::general_purpose::STANDARD.encode(bytes)},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn configmap_providers_load_reload_and_fail_alone() {
    let w = World::new("capw-configmap").await;
    let ns = w.namespace.clone();
    let cp = capw_test_support::component("capw_kubeadm_control_plane");
    let example = capw_test_support::component("capw_example_provider");
    w.store.create(config_map(&ns, "good", &cp)).await.unwrap();
    w.store
        .create(config_map(&ns, "junk", b"\0asm but not really a component"))
        .await
        .unwrap();
    w.store
        .create(config_map_provider(&ns, "good", "good"))
        .await
        .unwrap();
    w.store
        .create(config_map_provider(&ns, "junk", "junk"))
        .await
        .unwrap();
    let replica = w.start(w.config("solo", None));

    let provider = |name: &'static str| {
        let w = &w;
        let name = format!("{ns}-{name}");
        async move { w.provider(&name).await.unwrap() }
    };
    let junk = wait("junk provider status", || async {
        let p = provider("junk").await;
        (!condition(&p, "Loaded").is_null()).then_some(p)
    })
    .await;
    let loaded = condition(&junk, "Loaded");
    assert_eq!(loaded["status"], "False", "{junk:#}");
    assert_eq!(loaded["reason"], "LoadFailed", "{junk:#}");
    assert!(!loaded["message"].as_str().unwrap().is_empty());
    let good = provider("good").await;
    assert_eq!(condition(&good, "Loaded")["status"], "True", "{good:#}");
    let first = good["status"]["digest"].as_str().unwrap().to_owned();

    // A change of the ConfigMap reloads the provider: a new digest in its status.
    w.store
        .apply(config_map(&ns, "good", &example))
        .await
        .unwrap();
    wait("a new digest", || async {
        let p = provider("good").await;
        let digest = p["status"]["digest"].as_str()?.to_owned();
        (digest != first && condition(&p, "Loaded")["status"] == "True").then_some(())
    })
    .await;

    // The other providers keep working: the example still comes up beside the junk.
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);
    w.wait_ready("alpha").await;
    assert_eq!(
        condition(&provider("junk").await, "Loaded")["status"],
        "False"
    );
    replica.stop().await;
}

/// An `oci` source whose registry asks for credentials, with the credentials only in a
/// Secret of the provider namespace: without the Secret the provider is refused, saying why;
/// once the Secret is created it loads (a change of a Secret there reloads the providers).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn oci_registry_credentials_come_from_a_secret() {
    use capw_oci::{ClientSettings, Credentials, RetryPolicy};
    use capw_test_support::registry::TestRegistry;

    const PASSWORD: &str = "registry-pass-7d1e";
    let w = World::new("capw-oci-login").await;
    let ns = w.namespace.clone();
    let registry = TestRegistry::start_with_user("capw", PASSWORD);
    // A repository of this run's own: the compile cache, and the OCI cache beside it, outlive
    // the run, and a tag served from there by an earlier registry on the same port would be
    // an older build's digest.
    let reference = format!("{}/capw/{ns}:1", registry.host());
    let settings = ClientSettings {
        insecure_registries: vec![registry.host()],
        retry: RetryPolicy {
            retries: 0,
            ..RetryPolicy::default()
        },
        ..ClientSettings::default()
    };
    let pushed = capw_oci::push(
        &settings,
        &reference,
        bytes::Bytes::from(capw_test_support::component("capw_example_provider")),
        std::collections::BTreeMap::new(),
        &Credentials::Basic {
            username: "capw".into(),
            password: PASSWORD.into(),
        },
        None,
    )
    .await
    .unwrap();
    let name = format!("{ns}-private");
    w.store
        .create(json!({
            "apiVersion": "capw.dev/v1alpha1", "kind": "WasmProvider",
            "metadata": {"name": name},
            "spec": {"source": {"oci": {
                "reference": reference, "insecure": true,
                "credentialsSecretRef": {"name": "registry-login"},
            }}},
        }))
        .await
        .unwrap();
    let replica = w.start(w.config("solo", None));
    let loaded = |want: &'static str| {
        let w = &w;
        let name = name.clone();
        async move {
            let p = w.provider(&name).await?;
            (condition(&p, "Loaded")["status"] == want).then_some(p)
        }
    };
    let refused = wait("the provider refused without the Secret", || {
        loaded("False")
    })
    .await;
    let message = condition(&refused, "Loaded")["message"].to_string();
    assert!(message.contains("no credentials"), "{message}");

    w.store
        .create(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "registry-login", "namespace": ns},
            "stringData": {"username": "capw", "password": PASSWORD},
        }))
        .await
        .unwrap();
    let p = wait("the provider loaded with the Secret", || loaded("True")).await;
    assert_eq!(p["status"]["digest"], pushed.digest.as_str(), "{p:#}");
    assert!(!p.to_string().contains(PASSWORD));
    replica.stop().await;
}

/// `bytes` gzipped, as `gzip -9` writes them.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The quickstart's three providers from ConfigMaps, as an operator drops them in: sim-infra
/// as it is, the control-plane and bootstrap providers gzipped. The bootstrap component
/// (1.3 MB) is larger than a ConfigMap may hold (1 MiB); gzipped it is a third of that.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_quickstart_runs_from_config_maps_with_gzipped_components() {
    use sha2::Digest as _;

    let w = World::new("capw-cm-quickstart").await;
    let ns = w.namespace.clone();
    let mut manifest = common::quickstart_in(&ns, &w.sim);
    let mut digests = Vec::new();
    for (file, gzipped) in [
        ("capw_sim_infra", false),
        ("capw_kubeadm_bootstrap", true),
        ("capw_kubeadm_control_plane", true),
    ] {
        let component = capw_test_support::component(file);
        let stored = if gzipped {
            gzip(&component)
        } else {
            component.clone()
        };
        assert!(stored.len() < 1 << 20, "{file}: {} bytes", stored.len());
        let name = file.trim_start_matches("capw_").replace('_', "-");
        w.store
            .create(config_map(&ns, &name, &stored))
            .await
            .unwrap();
        let file_source = format!("file:\n      path: {file}.wasm");
        assert!(manifest.contains(&file_source), "{manifest}");
        manifest = manifest.replace(
            &file_source,
            &format!("configMap: {{namespace: {ns}, name: {name}, key: component.wasm}}"),
        );
        let hex: String = sha2::Sha256::digest(&component)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        digests.push((format!("{ns}-{name}"), format!("sha256:{hex}")));
    }
    let path = w.tmp.path().join("from-config-maps.yaml");
    std::fs::write(&path, manifest).unwrap();
    let replica = w.start(w.config("solo", None));
    w.kubectl(&["apply", "-f", path.to_str().unwrap()]);
    w.wait_ready("alpha").await;
    // Each provider runs the decompressed component: its digest is of those bytes.
    for (provider, digest) in digests {
        let p = w.provider(&provider).await.unwrap();
        assert_eq!(p["status"]["digest"], digest.as_str(), "{provider}: {p:#}");
    }
    replica.stop().await;
}

/// The leader is killed mid scale-up; the standby takes the Lease and finishes the job with
/// nothing done twice. The leader may have finished the scale-up before it died, leaving the
/// standby nothing to do, so a fifth worker is asked for once the leader is dead: work only
/// the standby can have done.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_leader_hands_over_mid_scale_up_and_nothing_is_done_twice() {
    let w = World::new("capw-leader").await;
    let ns = w.namespace.clone();
    let lease = Duration::from_secs(4);
    let first = w.start(w.config("replica-a", Some(lease)));
    // Let the first replica take the Lease before the second one starts.
    wait("replica-a leading", || async {
        let out = w.kubectl(&["get", "lease", "capw-controller", "-n", &ns, "-o", "json"]);
        let lease: Value = serde_json::from_str(&out).ok()?;
        (lease["spec"]["holderIdentity"] == "replica-a").then_some(())
    })
    .await;
    let second = w.start(w.config("replica-b", Some(lease)));
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);
    w.wait_ready("alpha").await;
    let holder = w.kubectl(&[
        "get",
        "lease",
        "capw-controller",
        "-n",
        &ns,
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    assert_eq!(holder, "replica-a");

    // Scale up, and kill the leader as soon as the first new machine's intent is stored.
    let before = w.machines("alpha").await.len();
    w.scale_workers("alpha", 4);
    wait("a new machine", || async {
        (w.machines("alpha").await.len() > before).then_some(())
    })
    .await;
    first.kill().await;
    let killed = Instant::now();
    let left_by_leader = w.instance_tokens("alpha").await;

    // The standby takes the Lease within its duration (plus one try) and finishes the job.
    wait("replica-b leading", || async {
        let holder = w.kubectl(&[
            "get",
            "lease",
            "capw-controller",
            "-n",
            &ns,
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ]);
        (holder == "replica-b").then_some(())
    })
    .await;
    let handover = killed.elapsed();
    assert!(
        handover <= lease * 2,
        "hand-over took {handover:?}, lease {lease:?}"
    );
    w.wait_workers("alpha", 4).await;

    // The fifth worker: its Machine and its instance can only be the standby's.
    w.scale_workers("alpha", 5);
    w.wait_workers("alpha", 5).await;
    assert!(
        w.instance_tokens("alpha")
            .await
            .difference(&left_by_leader)
            .next()
            .is_some(),
        "no instance was made after the leader died"
    );
    second.stop().await;
}

/// A shutdown that comes while the controller is still starting (before its first list of
/// Clusters is in, say a SIGTERM right after the Lease was won) ends it at once: nothing
/// reconciles yet, and no list will come once watching has stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shutdown_while_starting_stops_the_controller() {
    let w = World::new("capw-early-stop").await;
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);
    let run = capw_kube::run(
        w.client.clone(),
        w.config("early", None),
        std::future::ready(()),
    );
    match tokio::time::timeout(STOP, run).await {
        Ok(result) => result.unwrap(),
        Err(_) => panic!("the controller did not stop within {STOP:?}"),
    }
    // It stopped before any pass: nothing was created.
    assert!(w.machines("alpha").await.is_empty());
    assert!(w.inventory().await.clusters.is_empty());
}

/// Rewrites alpha's `<cluster>-kubeconfig` Secret to the kubeconfig file `kubeconfig`.
async fn point_alpha_kubeconfig_at(
    secrets: &kube::Api<k8s_openapi::api::core::v1::Secret>,
    kubeconfig: &std::path::Path,
) {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use kube::api::{Patch, PatchParams};

    let value = STANDARD.encode(std::fs::read(kubeconfig).unwrap());
    secrets
        .patch(
            "alpha-kubeconfig",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"value": value}})),
        )
        .await
        .unwrap();
}

/// Registers, on the API server of `nodes`, a Ready Node `<prefix>-<machine>` with each of
/// `machines`' provider id.
async fn register_ready_nodes(
    nodes: &kube::api::Api<k8s_openapi::api::core::v1::Node>,
    machines: &[Value],
    prefix: &str,
) {
    use kube::api::{Patch, PatchParams, PostParams};

    for m in machines {
        if !m["status"]["providerId"].is_string() {
            continue;
        }
        let name = format!("{prefix}-{}", m["metadata"]["name"].as_str().unwrap());
        let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"providerID": m["status"]["providerId"]},
        }))
        .unwrap();
        match nodes.create(&PostParams::default(), &node).await {
            Ok(_) => {}
            // Registered on an earlier round.
            Err(kube::Error::Api(e)) if e.code == 409 => continue,
            Err(e) => panic!("registering Node {name}: {e}"),
        }
        let ready = json!({"status": {"conditions": [{
            "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "",
            "lastHeartbeatTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }]}});
        nodes
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&ready))
            .await
            .unwrap();
    }
}

/// Workload cluster access in the Kubernetes mode: the kubeconfig Secret
/// `<cluster>-kubeconfig` (key `value`, type `cluster.x-k8s.io/secret`, owned by the Cluster)
/// is written once the endpoint exists and removed with the Cluster, and the Machines take
/// their nodeRef and `NodeHealthy` from the workload cluster's Nodes, a change of which
/// triggers a pass of its Cluster.
///
/// simcloud's simulated endpoints (`lb-N.sim:6443`) are not real hosts, so once the Secret
/// is checked it is pointed at a second kube-apiserver standing in for alpha's API (as the
/// local mode's workload test does), where a Node is registered for each Machine. The Secret
/// is then rotated to a third API server whose Nodes have other names, and the Machines
/// follow it: the client a pass uses is the one the Secret names now.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_kubeconfig_secret_lives_and_dies_with_its_cluster() {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use capw_engine::{ClusterCacheConfig, WorkloadClusterAccess};
    use k8s_openapi::api::core::v1::Node;
    use kube::api::{Api, Patch, PatchParams};

    let w = World::new("capw-workload").await;
    let ns = w.namespace.clone();
    let stand_in = KubeEnv::start();
    let rotated_to = KubeEnv::start();
    let mut config = w.config("solo", None);
    config.engine.workload_clusters = WorkloadClusterAccess::Connect(ClusterCacheConfig {
        probe_timeout: Duration::from_secs(1),
        ..ClusterCacheConfig::default()
    });
    let replica = w.start(config);
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);

    // Written for the endpoint, owned by the Cluster, the way Cluster API writes it.
    let secret = wait("alpha's kubeconfig Secret", || {
        w.get("Secret", "alpha-kubeconfig")
    })
    .await;
    let alpha = w.get("Cluster", "alpha").await.unwrap();
    assert_eq!(secret["type"], "cluster.x-k8s.io/secret");
    let owner = &secret["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "Cluster");
    assert_eq!(owner["name"], "alpha");
    assert_eq!(owner["uid"], alpha["metadata"]["uid"]);
    assert_eq!(owner["controller"], true);
    let kubeconfig = STANDARD
        .decode(secret["data"]["value"].as_str().unwrap())
        .unwrap();
    let endpoint = &alpha["status"]["controlPlaneEndpoint"];
    let server = format!(
        "{}:{}",
        endpoint["host"].as_str().unwrap(),
        endpoint["port"]
    );
    assert!(
        String::from_utf8_lossy(&kubeconfig).contains(&server),
        "the kubeconfig names {server}"
    );
    // `capw get kubeconfig` against the API server prints the Secret's kubeconfig.
    assert_eq!(
        w.capw(&["get", "kubeconfig", "alpha", "-n", &ns])
            .as_bytes(),
        kubeconfig.as_slice()
    );
    // Unreachable until pointed elsewhere: alpha says so and is not Ready.
    wait("alpha unreachable", || async {
        let c = w.get("Cluster", "alpha").await?;
        (condition(&c, "ControlPlaneAvailable")["reason"] == "WorkloadClusterUnreachable")
            .then_some(())
    })
    .await;

    // The stand-in API: alpha's Secret names it, and it has a Ready Node per Machine.
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(w.client.clone(), &ns);
    point_alpha_kubeconfig_at(&secrets, &stand_in.kubeconfig()).await;
    // Nodes register as the machines come up: a control-plane member counts as ready only
    // once its Node is Ready, so the workers wait for the first member's.
    let nodes: Api<Node> = Api::all(stand_in.client().await);
    // The join tokens the host writes into the stand-in, accepted as a cluster would.
    let follow_tokens = || async {
        capw_test_support::kube::follow_join_tokens(
            &stand_in.client().await,
            &w.sim.base_url(),
            TOKEN,
            &w.cloud_key("alpha"),
        )
        .await;
    };
    let machines = wait("alpha's machines running, each with its Node", || async {
        let ms = w.machines("alpha").await;
        register_ready_nodes(&nodes, &ms, "node").await;
        follow_tokens().await;
        (ms.len() == 3 && ms.iter().all(|m| m["status"]["providerId"].is_string())).then_some(ms)
    })
    .await;
    register_ready_nodes(&nodes, &machines, "node").await;
    // Ready once every machine ran; a token the host renewed after the last look above (the
    // workers' joins wait for it) is followed here too, or simcloud refuses their boot.
    step("alpha Ready");
    let deadline = Instant::now() + WAIT;
    let c = loop {
        follow_tokens().await;
        let ms = w.machines("alpha").await;
        register_ready_nodes(&nodes, &ms, "node").await;
        let c = w.get("Cluster", "alpha").await.unwrap();
        if condition(&c, "Ready")["status"] == "True"
            && c["status"]["observedGeneration"] == c["metadata"]["generation"]
        {
            break c;
        }
        assert!(
            Instant::now() < deadline,
            "alpha never Ready: {:#}\nmachines: {:#}",
            c["status"],
            Value::Array(ms.iter().map(|m| m["status"].clone()).collect())
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(condition(&c, "ControlPlaneAvailable")["status"], "True");
    for m in w.machines("alpha").await {
        let name = m["metadata"]["name"].as_str().unwrap();
        assert_eq!(m["status"]["nodeRef"]["name"], format!("node-{name}"));
        assert_eq!(condition(&m, "NodeHealthy")["status"], "True", "{m:#}");
    }
    assert!(w.get("Secret", "beta-kubeconfig").await.is_some());

    // A Node going NotReady is seen at once, not at the next resync (30 s here): its change
    // triggers a pass of alpha.
    let machine = w.machines("alpha").await[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    // Turned NotReady now: the quickstart's health check (five minutes) does not replace it
    // within this test.
    let now = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let not_ready = json!({"status": {"conditions": [{
        "type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": "down",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }]}});
    let flipped = Instant::now();
    nodes
        .patch_status(
            &format!("node-{machine}"),
            &PatchParams::default(),
            &Patch::Merge(&not_ready),
        )
        .await
        .unwrap();
    wait("NodeHealthy=False", || async {
        let m = w.get("Machine", &machine).await?;
        (condition(&m, "NodeHealthy")["reason"] == "KubeletNotReady").then_some(())
    })
    .await;
    assert!(
        flipped.elapsed() < Duration::from_secs(10),
        "the flip took {:?} to show",
        flipped.elapsed()
    );

    // Rotation to another API server: the Secret now names a third one, where each
    // Machine's Node has another name and is Ready (the flipped one too). The first stand-in
    // stays up and keeps answering with its own Nodes, so a client kept per cluster whatever
    // its kubeconfig names would go on showing `node-*`, and the flipped machine unhealthy.
    let rotated_nodes: Api<Node> = Api::all(rotated_to.client().await);
    let machines = w.machines("alpha").await;
    register_ready_nodes(&rotated_nodes, &machines, "rotated").await;
    point_alpha_kubeconfig_at(&secrets, &rotated_to.kubeconfig()).await;
    // A change of the Secret triggers no pass; a change of alpha does, sooner than its
    // resync (which would come too, should this pass still read the Secret's old value).
    w.kubectl(&[
        "annotate",
        "clusters.capw.dev",
        "alpha",
        "-n",
        &ns,
        "test.capw.dev/kubeconfig=rotated",
        "--overwrite",
    ]);
    wait("alpha's Machines on the rotated server's Nodes", || async {
        let ms = w.machines("alpha").await;
        (ms.len() == machines.len()
            && ms.iter().all(|m| {
                let name = m["metadata"]["name"].as_str().unwrap_or_default();
                m["status"]["nodeRef"]["name"] == format!("rotated-{name}")
                    && condition(m, "NodeHealthy")["status"] == "True"
            }))
        .then_some(())
    })
    .await;

    // Deleting alpha removes its Secret with it (the host deletes it before the finalizer
    // goes: the garbage collector is not relied on); beta's stays.
    w.delete_cluster("alpha").await;
    assert!(w.get("Secret", "alpha-kubeconfig").await.is_none());
    assert!(w.get("Secret", "beta-kubeconfig").await.is_some());
    w.kubectl(&[
        "delete",
        "clusters.capw.dev",
        "beta",
        "-n",
        &ns,
        "--wait=false",
    ]);
    wait("beta gone", || async {
        w.get("Cluster", "beta").await.is_none().then_some(())
    })
    .await;
    assert!(w.get("Secret", "beta-kubeconfig").await.is_none());
    replica.stop().await;
}
