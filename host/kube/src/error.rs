//! What stops the Kubernetes mode, or one reconcile of it.

use crate::leader::LeaseError;

/// A failure of the Kubernetes mode. A provider's failure is never one of these: it is in the
/// Cluster's conditions and events.
#[derive(Debug, thiserror::Error)]
pub enum KubeModeError {
    /// A pass over a Cluster failed in the host (the API server).
    #[error("reconciling {cluster}")]
    Pass {
        /// The Cluster.
        cluster: String,
        #[source]
        source: capw_engine::EngineError,
    },
    /// Loading the providers failed in the host (the API server or the runtime).
    #[error("loading providers")]
    Providers(#[source] capw_engine::EngineError),
    /// Listing the providers to tell whether they changed failed.
    #[error("reading providers")]
    Store(#[from] capw_engine::store::StoreError),
    /// Leader election failed or the Lease was lost.
    #[error("leader election")]
    Lease(#[source] std::sync::Arc<LeaseError>),
    /// The metrics or health endpoint could not be served.
    #[error("serving {what} on {address}")]
    Serve {
        /// Which endpoint.
        what: &'static str,
        /// The address.
        address: String,
        #[source]
        source: std::io::Error,
    },
}

/// `error: cause: cause…`, for logs.
pub use capw_text::error_chain as chain;

impl From<LeaseError> for KubeModeError {
    fn from(e: LeaseError) -> Self {
        KubeModeError::Lease(std::sync::Arc::new(e))
    }
}
