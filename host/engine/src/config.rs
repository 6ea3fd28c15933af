//! How the engine runs: where provider components come from, how long clusters wait between
//! passes, where secrets are read. The same for both modes; each mode fills it in its own way
//! (capw-local from its state directory, the Kubernetes mode from its flags).

use std::path::PathBuf;
use std::sync::Arc;

use std::time::Duration;

use capw_runtime::CallObserver;

/// How to run the engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Base directory of relative `WasmProvider` `file` sources. A relative path cannot reach
    /// outside it; an absolute path is read as is.
    pub plugin_dir: PathBuf,
    /// Compile cache directory; `None` compiles in memory.
    pub cache_dir: Option<PathBuf>,
    /// Where pulled OCI components are kept by digest when there is no compile cache
    /// directory (with one, they are kept beside the compiled code), so a restart pulls
    /// nothing.
    pub pull_cache_dir: PathBuf,
    /// The bounds of the waits between two passes over a cluster whose work is under way
    /// ([`Requeue`](crate::Requeue)).
    pub requeue: RequeueBounds,
    /// Where the values of `WasmProvider` secret grants and registry credentials come from.
    pub secrets: SecretSource,
    /// Told of every provider call (the Kubernetes mode's metrics); `None` tells no one.
    pub call_observer: Option<Arc<dyn CallObserver>>,
    /// Passes that run at once when many clusters are driven together; the other clusters
    /// wait their turn. Bounds the memory and the instances a burst of work takes.
    pub max_concurrent_passes: usize,
    /// Whether each cluster's admin kubeconfig is stored and the workload cluster reached
    /// through it (nodeRef, `NodeHealthy`, `ControlPlaneAvailable`). Off by default.
    pub workload_clusters: WorkloadClusterAccess,
    /// The management cluster hosted control planes run in (the Kubernetes mode's API
    /// server); `None` where there is none (the local mode), which refuses the hosted shape.
    pub management: Option<Arc<dyn crate::store::ManagementCluster>>,
    /// How long the certificates the host mints for a hosted control plane are valid (its
    /// Secrets', the shared datastore's client's, the admin kubeconfig's); each is renewed
    /// two thirds into it. Kubeadm's year by default.
    pub hosted_certificate_validity: std::time::Duration,
}

/// Where the values of secrets that objects name come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretSource {
    /// Files under `dir`: `<dir>/<name>/<key>`, or `<dir>/<name>` for a reference without a
    /// key (the local mode). A missing directory holds no secret.
    Files {
        /// The secrets directory.
        dir: PathBuf,
    },
    /// `Secret` objects of the object store (the Kubernetes mode); a reference without a
    /// namespace looks in `default_namespace`.
    Store {
        /// Namespace of references that name none.
        default_namespace: String,
    },
}

impl EngineConfig {
    /// Components under `plugin_dir`, pulled ones kept in `pull_cache_dir`, secrets from
    /// `secrets`; no compile cache, the local mode's requeue bounds, 64 passes at once,
    /// workload cluster access off.
    pub fn new(
        plugin_dir: impl Into<PathBuf>,
        pull_cache_dir: impl Into<PathBuf>,
        secrets: SecretSource,
    ) -> Self {
        EngineConfig {
            plugin_dir: plugin_dir.into(),
            cache_dir: None,
            pull_cache_dir: pull_cache_dir.into(),
            requeue: RequeueBounds::LOCAL,
            secrets,
            call_observer: None,
            max_concurrent_passes: 64,
            workload_clusters: WorkloadClusterAccess::Off,
            management: None,
            hosted_certificate_validity: crate::objects::hosted::CERTIFICATE_VALIDITY,
        }
    }

    /// Where pulled OCI components are cached by digest (`<dir>/oci/`): the compile cache
    /// directory, or [`EngineConfig::pull_cache_dir`] when there is none.
    pub fn oci_cache_dir(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(|| self.pull_cache_dir.clone())
    }
}

/// Whether workload clusters are reached, and how.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WorkloadClusterAccess {
    /// Nothing is asked of workload clusters and no kubeconfig is written: a machine is
    /// ready when its infrastructure says it runs, and its nodeRef is its own name. For
    /// simulated boots, whose endpoints are not reachable hosts.
    #[default]
    Off,
    /// The admin kubeconfig is stored, and each cluster is reached through it by a
    /// [`ClusterCache`](capw_workload::ClusterCache) with these settings.
    Connect(capw_workload::ClusterCacheConfig),
}

/// The bounds of a cluster's waits between passes, the same in both modes' settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequeueBounds {
    /// Shortest wait while work is under way.
    pub min: Duration,
    /// Wait after a failed pass whose error names no retry-after; doubled with each failure
    /// in a row, up to `max`.
    pub base_backoff: Duration,
    /// Longest wait while work is under way, whatever a provider's hint. Bounds how stale a
    /// cluster's status can get while a provider asks for patience.
    pub max: Duration,
}

impl RequeueBounds {
    /// The local mode's defaults: 10 ms, backoff from 100 ms, at most 1 s.
    pub const LOCAL: RequeueBounds = RequeueBounds {
        min: Duration::from_millis(10),
        base_backoff: Duration::from_millis(100),
        max: Duration::from_secs(1),
    };

    /// The Kubernetes mode's defaults: 50 ms, backoff from 200 ms, at most 10 s (each pass
    /// costs the API server a few requests).
    pub const CONTROLLER: RequeueBounds = RequeueBounds {
        min: Duration::from_millis(50),
        base_backoff: Duration::from_millis(200),
        max: Duration::from_secs(10),
    };
}
