//! The infrastructure extension point: networks, the control-plane endpoint and machines.

use serde::{Deserialize, Serialize};

use super::types::{
    Address, Condition, Endpoint, InProgress, KubernetesVersion, MachineRef, MachineRole,
};

/// A failure domain of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureDomain {
    /// Its name, e.g. a zone.
    pub name: String,
    /// Control-plane machines may go there.
    pub control_plane: bool,
}

/// The cluster-wide infrastructure, ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterInfrastructure {
    /// Where the API server will be reached (e.g. a load balancer); `None` when the
    /// infrastructure makes none because a service runs the control plane and reports its own
    /// (contract 0.3; from an older provider, an endpoint with an empty host).
    pub control_plane_endpoint: Option<Endpoint>,
    /// Where machines can be spread.
    pub failure_domains: Vec<FailureDomain>,
    /// Conditions the host shows on the Cluster.
    pub conditions: Vec<Condition>,
}

/// The answer of `reconcile-cluster`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClusterState {
    /// The infrastructure exists and the endpoint is usable.
    Ready(ClusterInfrastructure),
    /// Not yet; the host calls again.
    InProgress(InProgress),
}

/// The machine the host asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineSpec {
    /// The Machine it is for.
    pub machine: MachineRef,
    /// What the machine is for.
    pub role: MachineRole,
    /// The worker pool's name, or `control-plane`.
    pub pool: String,
    /// The Kubernetes version it is to run.
    pub version: KubernetesVersion,
    /// The failure domain the host chose; `None` when the cluster has none.
    pub failure_domain: Option<String>,
    /// Secret.
    pub bootstrap_data: Vec<u8>,
}

/// Where a machine is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MachinePhase {
    /// Accepted, not yet started.
    Pending,
    /// Being created or booting.
    Provisioning,
    /// Running, and its node is ready.
    Running,
    /// Failed for good: the host deletes and replaces it.
    Failed,
    /// Being deleted.
    Deleting,
}

/// The answer of `reconcile-machine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineStatus {
    /// The cloud's id of the machine, e.g. `sim://instances/i-123`; `None` until it has one.
    pub provider_id: Option<String>,
    /// Where the machine is in its life.
    pub phase: MachinePhase,
    /// Its addresses, as far as known.
    pub addresses: Vec<Address>,
    /// The failure domain it runs in.
    pub failure_domain: Option<String>,
    /// Detail for humans, e.g. why it failed.
    pub message: String,
    /// When to look again while the phase is neither running nor failed.
    pub requeue_after_ms: Option<u32>,
    /// Conditions the host shows on the Machine.
    pub conditions: Vec<Condition>,
}

/// One machine `list-machines` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedMachine {
    /// The idempotency key it was created with.
    pub idempotency_key: String,
    /// The cloud's id of the machine.
    pub provider_id: String,
    /// The name of the Machine it was created for.
    pub machine_name: String,
    /// Where it is in its life.
    pub phase: MachinePhase,
}
