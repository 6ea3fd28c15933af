//! Errors that stop the engine (a provider's failure is data, never one of these).

use crate::store::StoreError;

/// What stops the executor or the registry.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The object store failed.
    #[error("store")]
    Store(#[from] StoreError),
    /// The plugin runtime could not start.
    #[error("plugin runtime")]
    Runtime(#[source] capw_runtime::LoadError),
    /// A stored object does not have the shape of its kind.
    #[error("{what} is malformed")]
    Malformed {
        /// The object.
        what: String,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// A directory of the state layout cannot be created or opened.
    #[error("state directory {path}")]
    StateDir {
        /// The directory.
        path: String,
        /// Why it cannot.
        #[source]
        source: std::io::Error,
    },
}
