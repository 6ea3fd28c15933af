//! Where the local mode keeps its state and finds provider components.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use capw_runtime::CallObserver;

use crate::workload::WorkloadClusterAccess;

/// File name of the object store inside the state directory.
pub const STATE_FILE: &str = "state.redb";

/// How to run the local mode.
#[derive(Clone, Debug)]
pub struct LocalConfig {
    /// The state directory (`.capw/` by default in the CLI).
    pub state_dir: PathBuf,
    /// Base directory of relative `WasmProvider` `file` sources. A relative path cannot reach
    /// outside it; an absolute path is read as is.
    pub plugin_dir: PathBuf,
    /// Compile cache directory; `None` compiles in memory.
    pub cache_dir: Option<PathBuf>,
    /// Longest wait between two passes over a cluster, whatever a provider's requeue hint.
    /// Bounds how stale a cluster's status can get while a provider asks for patience.
    pub max_requeue: Duration,
    /// Wait after a failed call whose error names no retry-after; doubled per failed pass up
    /// to `max_requeue`.
    pub base_backoff: Duration,
    /// Where the values of `WasmProvider` secret grants come from.
    pub secrets: SecretSource,
    /// Told of every provider call (the Kubernetes mode's metrics); `None` tells no one.
    pub call_observer: Option<Arc<dyn CallObserver>>,
    /// Passes that run at once in [`crate::Executor::reconcile_until_settled`]; the other
    /// clusters wait their turn. Bounds the memory and the instances a burst of work takes.
    pub max_concurrent_passes: usize,
    /// Whether each cluster's admin kubeconfig is stored and the workload cluster reached
    /// through it (nodeRef, `NodeHealthy`, `ControlPlaneAvailable`). Off by default.
    pub workload_clusters: WorkloadClusterAccess,
}

/// Where the values of `WasmProvider` secret grants come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SecretSource {
    /// Files under `<state-dir>/secrets/` (the local mode).
    #[default]
    Files,
    /// `Secret` objects of the object store (the Kubernetes mode); a reference without a
    /// namespace looks in `default_namespace`.
    Store {
        /// Namespace of references that name none.
        default_namespace: String,
    },
}

impl LocalConfig {
    /// The defaults for `state_dir`: plugin dir `<state-dir>/../target/wasm32-wasip2/plugin`,
    /// no compile cache, requeue at most every second, workload cluster access off.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        let state_dir = state_dir.into();
        let plugin_dir = parent_of(&state_dir).join("target/wasm32-wasip2/plugin");
        LocalConfig {
            state_dir,
            plugin_dir,
            cache_dir: None,
            max_requeue: Duration::from_secs(1),
            base_backoff: Duration::from_millis(100),
            secrets: SecretSource::Files,
            call_observer: None,
            max_concurrent_passes: 64,
            workload_clusters: WorkloadClusterAccess::Off,
        }
    }

    /// The object store's file.
    pub fn state_file(&self) -> PathBuf {
        self.state_dir.join(STATE_FILE)
    }

    /// Where pulled OCI components are cached by digest (`<dir>/oci/`): the compile cache
    /// directory, or `<state-dir>/cache` when there is none, so a restart pulls nothing.
    pub fn oci_cache_dir(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(|| self.state_dir.join("cache"))
    }

    /// The directory of locally granted secrets.
    pub fn secrets_dir(&self) -> PathBuf {
        self.state_dir.join("secrets")
    }

    /// The in-process simcloud's state file.
    pub fn simcloud_state(&self) -> PathBuf {
        self.state_dir.join("simcloud.json")
    }
}

/// The directory holding `dir`; `.` for a bare relative name.
fn parent_of(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
