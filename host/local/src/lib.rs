//! capw's embedded local mode: the engine (capw-engine) over one state directory, with no
//! cluster at all.
//!
//! Start with [`LocalConfig`] (where the state lives and where provider components are read
//! from), then [`open`], which loads every `WasmProvider` in the state file into the engine's
//! provider registry (writing each one's status), and [`reconcile_until_settled`], which
//! drives every Cluster with the engine until each one has converged, is gone, or is blocked
//! on something only a person can fix.
//!
//! # State layout
//!
//! ```text
//! <state-dir>/            (default `.capw/`)
//!   state.redb            the object store (capw-store)
//!   simcloud.json         the in-process simcloud's state (written by `capw up`)
//!   machines/             the machines' files when control planes are real
//!   cache/oci/            pulled components by digest, when there is no compile cache
//!   secrets/<name>        value of a secret granted to a provider (secretRef without key)
//!   secrets/<name>/<key>  value of one key of it (secretRef with key)
//! ```
//!
//! Every Cluster runs in its own tokio task, so a hanging provider for one cluster never
//! delays another.

mod settle;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use capw_engine::store::ObjectStore;
use capw_engine::{EngineConfig, EngineError, Executor, ProviderRegistry, SecretSource};
use capw_store::Store;

pub use settle::{ClusterOutcome, Progress, SettleReport, reconcile_until_settled};

/// File name of the object store inside the state directory.
pub const STATE_FILE: &str = "state.redb";

/// How to run the local mode: the state directory, and the engine's settings drawn from it.
#[derive(Clone, Debug)]
pub struct LocalConfig {
    /// The state directory (`.capw/` by default in the CLI).
    pub state_dir: PathBuf,
    /// The engine's settings. [`LocalConfig::new`] reads secrets from `<state-dir>/secrets/`
    /// and keeps pulled components in `<state-dir>/cache/`.
    pub engine: EngineConfig,
}

impl LocalConfig {
    /// The defaults for `state_dir`: plugin dir `<state-dir>/../target/wasm32-wasip2/plugin`,
    /// secrets from `<state-dir>/secrets/`, no compile cache, the engine's defaults otherwise.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        let state_dir = state_dir.into();
        let engine = EngineConfig::new(
            parent_of(&state_dir).join("target/wasm32-wasip2/plugin"),
            state_dir.join("cache"),
            SecretSource::Files {
                dir: secrets_dir(&state_dir),
            },
        );
        LocalConfig { state_dir, engine }
    }

    /// The object store's file.
    pub fn state_file(&self) -> PathBuf {
        self.state_dir.join(STATE_FILE)
    }

    /// The directory of locally granted secrets.
    pub fn secrets_dir(&self) -> PathBuf {
        secrets_dir(&self.state_dir)
    }

    /// The in-process simcloud's state file.
    pub fn simcloud_state(&self) -> PathBuf {
        self.state_dir.join("simcloud.json")
    }
}

/// Loads every `WasmProvider` of `store` (writing their status) and returns an executor over
/// it.
///
/// # Errors
///
/// [`EngineError`] when the store fails or the runtime cannot start; a provider that does not
/// load is reported in its status, not here.
pub async fn open(store: Store, config: EngineConfig) -> Result<Executor, EngineError> {
    let store: Arc<dyn ObjectStore> = Arc::new(store);
    let registry = ProviderRegistry::load_all(store.as_ref(), &config).await?;
    Ok(Executor::new(store, Arc::new(registry), config))
}

/// The directory of locally granted secrets in `state_dir`.
fn secrets_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("secrets")
}

/// The directory holding `dir`; `.` for a bare relative name.
fn parent_of(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
