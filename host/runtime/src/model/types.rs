//! Types every interface of the contract shares (`capw:provider/types`).

use serde::{Deserialize, Serialize};

/// Identity of the cluster a call concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRef {
    /// Namespace of the Cluster object (`default` in the embedded mode).
    pub namespace: String,
    /// Name of the Cluster object.
    pub name: String,
    /// Unique id of the Cluster object; changes when a cluster of the same name is recreated.
    pub uid: String,
}

/// Identity of a machine inside its cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineRef {
    /// Name of the Machine object, unique within the cluster.
    pub name: String,
    /// Unique id of the Machine object.
    pub uid: String,
}

/// A Kubernetes release: v1.35.2 is `{major: 1, minor: 35, patch: 2}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KubernetesVersion {
    /// Major version, `1` for every release so far.
    pub major: u32,
    /// Minor version: what upgrades step through.
    pub minor: u32,
    /// Patch release.
    pub patch: u32,
}

/// What a machine is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MachineRole {
    /// The first control-plane machine: it initialises the cluster.
    Init,
    /// A control-plane machine joining an initialised cluster.
    JoinControlPlane,
    /// A worker node.
    Worker,
}

/// The kind of a machine address, as in Kubernetes `NodeAddress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AddressKind {
    /// The machine's hostname.
    Hostname,
    /// An IP address reachable inside the cluster's network only.
    InternalIp,
    /// An IP address reachable from outside the cluster's network.
    ExternalIp,
    /// A DNS name that resolves inside the cluster's network only.
    InternalDns,
    /// A DNS name that resolves from outside the cluster's network.
    ExternalDns,
}

/// One address of a machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    /// What kind of address it is.
    pub kind: AddressKind,
    /// The address itself: an IP address or a name.
    pub address: String,
}

/// Where the cluster's API server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// Host name or IP address.
    pub host: String,
    /// TCP port, usually 6443.
    pub port: u16,
}

/// Status of a condition, as in Kubernetes `metav1.Condition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// The provider cannot tell.
    Unknown,
}

/// A condition a provider reports; the host copies it onto the object the call concerns,
/// prefixed with the extension point (e.g. `InfrastructureNetworkReady`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    /// CamelCase condition type, e.g. `NetworkReady`.
    pub type_: String,
    /// Whether the condition holds.
    pub status: ConditionStatus,
    /// CamelCase reason, e.g. `WaitingForLoadBalancer`.
    pub reason: String,
    /// Human-readable detail; never secret material.
    pub message: String,
}

/// The answer of a call whose work has started but not finished: the host calls again after
/// `requeue_after_ms`, with the same idempotency key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InProgress {
    /// CamelCase reason, e.g. `InstanceBooting`.
    pub reason: String,
    /// What is under way, for humans; the host shows it in the object's status.
    pub message: String,
    /// Hint for when to call again, in milliseconds.
    pub requeue_after_ms: u32,
    /// Conditions to show while the work goes on.
    pub conditions: Vec<Condition>,
}

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorCode {
    /// The config or request is invalid; retrying the same input fails again.
    InvalidInput,
    /// The provider lacks a capability it needs (a secret or host not granted).
    NotGranted,
    /// The backend refused the provider's credentials.
    Unauthorized,
    /// The backend is out of capacity or quota.
    QuotaExceeded,
    /// The backend is unreachable, overloaded or rate-limiting.
    Unavailable,
    /// The resource is in a state that forbids the operation now.
    Conflict,
    /// The provider does not implement this function or this case of it.
    Unsupported,
    /// Anything else.
    Internal,
}

impl ErrorCode {
    /// The code's name in the contract, e.g. `invalid-input`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid-input",
            ErrorCode::NotGranted => "not-granted",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::QuotaExceeded => "quota-exceeded",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::Internal => "internal",
        }
    }
}

/// A failed call, as the provider reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderError {
    /// The kind of failure.
    pub code: ErrorCode,
    /// What went wrong, for humans; never secret material.
    pub message: String,
    /// Whether the same call may succeed later without a change of input.
    pub retryable: bool,
    /// When to retry, in milliseconds (e.g. from an HTTP `Retry-After`).
    pub retry_after_ms: Option<u32>,
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for ProviderError {}

/// Everything a call knows about its caller's intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallContext {
    /// The cluster the call concerns.
    pub cluster: ClusterRef,
    /// The provider's config for this call, JSON, already validated.
    pub config: String,
    /// Stable for one intent across retries, restarts of the host and crashes.
    pub idempotency_key: String,
    /// Milliseconds left before the host cancels the call.
    pub deadline_ms: u32,
}

/// The answer of a delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Deletion {
    /// Nothing is left; also the answer when there was nothing to delete.
    Deleted,
    /// Deletion has started; call again.
    InProgress(InProgress),
}
