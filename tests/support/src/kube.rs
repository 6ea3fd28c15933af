//! A real kube-apiserver and etcd for tests: the environment of `tests/kube-env/kube-env.sh`
//! behind a Rust handle.
//!
//! `make kube-env` (a prerequisite of `make test`) builds the binaries once into
//! `$HOME/.cache/capw-kube-env/<version>/bin`; [`KubeEnv::start`] starts a fresh pair on free
//! loopback ports in a few seconds.
//!
//! ```no_run
//! # async fn demo() {
//! use capw_test_support::kube::KubeEnv;
//! let env = KubeEnv::shared(); // one per test binary; or KubeEnv::start() for your own
//! let client = env.client().await;
//! let namespace = env.create_namespace("my-test").await;
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long [`KubeEnv::apply_crds`] waits for a CRD to be established.
const CRD_ESTABLISH_TIMEOUT: Duration = Duration::from_secs(60);

/// Field manager of the objects the helpers apply.
const FIELD_MANAGER: &str = "capw-tests";

/// Whether and how the workloads of a [`KubeEnv::start_with`] environment run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workloads {
    /// Pods run as local processes, from the image table of `kube-env.sh`.
    Run,
    /// Pods are reported Running and Ready without running.
    Simulated,
}

/// A running kube-apiserver with its etcd, reached through [`KubeEnv::kubeconfig`] as a
/// `system:masters` user (a static token).
///
/// # Guarantees
///
/// - Every environment has its own state directory, ports and certificates; tests may start
///   several at once.
/// - An environment from [`KubeEnv::start`] is stopped and its directory removed when the
///   handle drops, also while a failing test unwinds.
/// - Both kinds are stopped by a watcher process once the test process is gone, even when it
///   was killed and nothing dropped.
#[derive(Debug)]
pub struct KubeEnv {
    dir: PathBuf,
    stop_on_drop: bool,
}

impl KubeEnv {
    /// Starts a fresh environment owned by the caller; it stops when the handle drops.
    ///
    /// # Panics
    ///
    /// When the binaries are not built (the message says to run `make kube-env`) or the API
    /// server does not become ready (the message carries the tail of its logs).
    pub fn start() -> KubeEnv {
        Self::start_in(true, None, None)
    }

    /// Starts a fresh environment whose workloads run, owned by the caller: beside the API
    /// server, kube-controller-manager (its garbage collector too: what is deleted there is
    /// not deleted by capw alone), kube-scheduler, one
    /// Node whose kubelet stand-in runs its Pods as local processes (or, with
    /// [`Workloads::Simulated`], reports them Running and Ready without running them),
    /// the Service routing stand-in that gives LoadBalancer Services an address, and a
    /// default StorageClass (`tests/kube-env/kube-env.sh`, `CAPW_KUBE_ENV_WORKLOADS`).
    ///
    /// # Panics
    ///
    /// As [`KubeEnv::start`], and when the Node does not become Ready.
    pub fn start_with(workloads: Workloads) -> KubeEnv {
        Self::start_in(true, Some(workloads), None)
    }

    /// As [`KubeEnv::start_with`], the kubelet stand-in's image table extended by the entries
    /// of the JSON file `images` (`CAPW_KUBE_ENV_IMAGES`; `tests/kube-env/node/images.go` says
    /// their form), such as an image a test unpacked to run.
    ///
    /// # Panics
    ///
    /// As [`KubeEnv::start_with`], and when the file is not a list of entries.
    pub fn start_with_images(workloads: Workloads, images: &Path) -> KubeEnv {
        Self::start_in(true, Some(workloads), Some(images))
    }

    /// One environment per test process, started by the first caller and shared by every
    /// test after it; the watcher stops it when the process ends. Tests that share it keep
    /// to their own namespaces ([`KubeEnv::create_namespace`]).
    ///
    /// # Panics
    ///
    /// As [`KubeEnv::start`].
    pub fn shared() -> &'static KubeEnv {
        static SHARED: OnceLock<KubeEnv> = OnceLock::new();
        SHARED.get_or_init(|| Self::start_in(false, None, None))
    }

    fn start_in(
        stop_on_drop: bool,
        workloads: Option<Workloads>,
        images: Option<&Path>,
    ) -> KubeEnv {
        let dir = tempfile::Builder::new()
            .prefix("capw-kube-env-")
            .tempdir()
            .expect("creating the test environment's directory")
            .keep();
        let mut command = Command::new(script());
        command
            .arg("start")
            .arg(&dir)
            .env("CAPW_KUBE_ENV_OWNER_PID", std::process::id().to_string());
        match workloads {
            None => command.env_remove("CAPW_KUBE_ENV_WORKLOADS"),
            Some(Workloads::Run) => command.env("CAPW_KUBE_ENV_WORKLOADS", "run"),
            Some(Workloads::Simulated) => command.env("CAPW_KUBE_ENV_WORKLOADS", "simulated"),
        };
        match images {
            None => command.env_remove("CAPW_KUBE_ENV_IMAGES"),
            Some(images) => command.env("CAPW_KUBE_ENV_IMAGES", images),
        };
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", script().display()));
        if !output.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            panic!(
                "the Kubernetes test environment did not start:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        KubeEnv { dir, stop_on_drop }
    }

    /// The kubeconfig of an administrator (group `system:masters`), default namespace
    /// `default`.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// A new client for [`KubeEnv::kubeconfig`]. Make one per test: a client belongs to the
    /// tokio runtime it was made in.
    ///
    /// # Panics
    ///
    /// When the kubeconfig cannot be read or the client cannot be built.
    pub async fn client(&self) -> kube::Client {
        crate::install_crypto_provider();
        let kubeconfig = Kubeconfig::read_from(self.kubeconfig())
            .unwrap_or_else(|e| panic!("reading {}: {e}", self.kubeconfig().display()));
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .expect("a client config from the test environment's kubeconfig");
        kube::Client::try_from(config).expect("a client for the test environment")
    }

    /// `kubectl` of the API server's version with `--kubeconfig` set to this environment's,
    /// each of its requests bounded to a minute (kubectl's own default is no limit).
    pub fn kubectl(&self) -> Command {
        let mut command = Command::new(self.dir.join("bin/kubectl"));
        command.arg("--kubeconfig").arg(self.kubeconfig());
        command.arg("--request-timeout=60s");
        command
    }

    /// Applies `crds` (server-side apply) and waits until each is established, so objects of
    /// their kinds can be created right away.
    ///
    /// # Panics
    ///
    /// When the API server refuses a CRD or one is not established within a minute.
    pub async fn apply_crds(&self, crds: impl IntoIterator<Item = CustomResourceDefinition>) {
        let api: Api<CustomResourceDefinition> = Api::all(self.client().await);
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let mut names = Vec::new();
        for crd in crds {
            let name = crd.metadata.name.clone().expect("a CRD has a name");
            api.patch(&name, &params, &Patch::Apply(&crd))
                .await
                .unwrap_or_else(|e| panic!("applying CRD {name}: {e}"));
            names.push(name);
        }
        for name in names {
            wait_established(&api, &name).await;
        }
    }

    /// Creates a namespace named `<prefix>-<random suffix>` and returns its name.
    ///
    /// # Panics
    ///
    /// When the API server refuses it.
    pub async fn create_namespace(&self, prefix: &str) -> String {
        let api: Api<Namespace> = Api::all(self.client().await);
        let namespace = Namespace {
            metadata: ObjectMeta {
                generate_name: Some(format!("{prefix}-")),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let created = api
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap_or_else(|e| panic!("creating a namespace {prefix}-*: {e}"));
        created
            .metadata
            .name
            .expect("a created namespace has a name")
    }

    /// The environment's state directory (kubeconfig, certificates, `logs/`, `bin/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for KubeEnv {
    fn drop(&mut self) {
        if !self.stop_on_drop {
            return;
        }
        // Never panic in drop (it may run while a failing test unwinds); say what failed.
        match Command::new(script()).arg("stop").arg(&self.dir).status() {
            Ok(status) if status.success() => {}
            Ok(status) => eprintln!("stopping the test environment in {:?}: {status}", self.dir),
            Err(e) => eprintln!("stopping the test environment in {:?}: {e}", self.dir),
        }
    }
}

/// `tests/kube-env/kube-env.sh` of this workspace.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kube-env/kube-env.sh")
}

async fn wait_established(api: &Api<CustomResourceDefinition>, name: &str) {
    let deadline = Instant::now() + CRD_ESTABLISH_TIMEOUT;
    loop {
        let crd = api
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("reading CRD {name}: {e}"));
        let established = crd
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "CRD {name} was not established within {CRD_ESTABLISH_TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Plays a stand-in workload API's part in judging join tokens, for clusters of simulated
/// machines: simcloud's boot check judges a simulated join by the token registered for the
/// cluster (`sim_cluster`, simcloud's name for it), so a token the host wrote into the
/// stand-in API (a Secret of type `bootstrap.kubernetes.io/token` in `kube-system`) is
/// registered there, as a real cluster would start accepting it. Does nothing until an init
/// registered the cluster, or when the newest token is the registered one.
///
/// # Panics
///
/// When the stand-in API or simcloud fails a request.
pub async fn follow_join_tokens(
    stand_in: &kube::Client,
    sim_base_url: &str,
    sim_token: &str,
    sim_cluster: &str,
) {
    use k8s_openapi::api::core::v1::Secret;
    let secrets: Api<Secret> = Api::namespaced(stand_in.clone(), "kube-system");
    let listed = secrets
        .list(&kube::api::ListParams::default().fields("type=bootstrap.kubernetes.io/token"))
        .await
        .expect("listing the stand-in's bootstrap tokens");
    let Some(newest) = listed
        .items
        .iter()
        .max_by_key(|s| s.metadata.creation_timestamp.as_ref().map(|t| t.0))
    else {
        return;
    };
    let field = |key: &str| {
        newest
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
            .unwrap_or_default()
    };
    let (id, secret) = (field("token-id"), field("token-secret"));
    let http = crate::http();
    let url = format!("{sim_base_url}/v1/clusters/{sim_cluster}/bootstrap");
    let registered = http
        .get(&url)
        .bearer_auth(sim_token)
        .send()
        .await
        .expect("simcloud answers");
    if !registered.status().is_success() {
        return;
    }
    let registered: serde_json::Value = registered.json().await.expect("a registration");
    if registered["token_id"] == id.as_str() {
        return;
    }
    let put = http
        .put(&url)
        .bearer_auth(sim_token)
        .json(&serde_json::json!({
            "token": format!("{id}.{secret}"),
            "ca_cert_hash": registered["ca_cert_hash"],
        }))
        .send()
        .await
        .expect("simcloud answers");
    assert!(
        put.status().is_success(),
        "registering token {id}: {}",
        put.status()
    );
}
