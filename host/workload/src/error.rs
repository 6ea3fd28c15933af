//! Why the cache could not make a client for a workload cluster.

/// A workload cluster's client could not be built. An unreachable API is not an error: it is
/// an [`crate::ApiAvailability::Unreachable`] observation.
#[derive(Debug, thiserror::Error)]
pub enum ClusterCacheError {
    /// The kubeconfig is not valid UTF-8 YAML of a kubeconfig. The parser's own error is
    /// dropped on purpose: it may quote the document, and the document holds credentials.
    #[error("the kubeconfig is not a readable kubeconfig (YAML)")]
    MalformedKubeconfig,
    /// The kubeconfig names no usable context, cluster, server or user.
    #[error("the kubeconfig does not give a client configuration")]
    Kubeconfig(#[source] kube::config::KubeconfigError),
    /// The client could not be built from the configuration (TLS material refused, say).
    #[error("building a client for the workload cluster")]
    Client(#[source] kube::Error),
    /// The workload API refused or failed to delete a Node (a 404 is not an error: the Node
    /// is gone).
    #[error("deleting Node {node} of the workload cluster")]
    DeleteNode {
        /// The Node's name.
        node: String,
        /// What the API said.
        #[source]
        source: kube::Error,
    },
    /// The workload API refused or failed a step of draining a Node (cordon, listing its
    /// Pods, an eviction failing otherwise than a budget's refusal).
    #[error("draining Node {node} of the workload cluster")]
    Drain {
        /// The Node's name.
        node: String,
        /// What the API said.
        #[source]
        source: kube::Error,
    },
    /// The workload API refused or failed a read or write of a bootstrap token's Secret.
    #[error("bootstrap token {id} in the workload cluster")]
    Token {
        /// The token's public id.
        id: String,
        /// What the API said.
        #[source]
        source: kube::Error,
    },
    /// The workload API refused or failed to apply an object joins need (a hosted control
    /// plane's `cluster-info` or bootstrap RBAC).
    #[error("applying {object} in the workload cluster")]
    JoinAccess {
        /// The object, as `Kind namespace/name`.
        object: String,
        /// What the API said.
        #[source]
        source: kube::Error,
    },
    /// The workload API did not answer in time.
    #[error("{what}: no answer within {after:?}")]
    Timeout {
        /// What was asked.
        what: String,
        /// How long it was given.
        after: std::time::Duration,
    },
}
