//! The infrastructure extension point: networks, the control-plane endpoint and machines.

use serde::{Deserialize, Serialize};

use super::types::{
    Address, Condition, Endpoint, InProgress, KubernetesVersion, MachineRef, MachineRole,
};

/// A failure domain of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureDomain {
    pub name: String,
    /// Control-plane machines may go there.
    pub control_plane: bool,
}

/// The cluster-wide infrastructure, ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterInfrastructure {
    pub control_plane_endpoint: Endpoint,
    pub failure_domains: Vec<FailureDomain>,
    pub conditions: Vec<Condition>,
}

/// The answer of `reconcile-cluster`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClusterState {
    Ready(ClusterInfrastructure),
    InProgress(InProgress),
}

/// The machine the host asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineSpec {
    pub machine: MachineRef,
    pub role: MachineRole,
    /// The worker pool's name, or `control-plane`.
    pub pool: String,
    pub version: KubernetesVersion,
    pub failure_domain: Option<String>,
    /// Secret.
    pub bootstrap_data: Vec<u8>,
}

/// Where a machine is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MachinePhase {
    Pending,
    Provisioning,
    Running,
    /// Failed for good: the host deletes and replaces it.
    Failed,
    Deleting,
}

/// The answer of `reconcile-machine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineStatus {
    pub provider_id: Option<String>,
    pub phase: MachinePhase,
    pub addresses: Vec<Address>,
    pub failure_domain: Option<String>,
    pub message: String,
    /// When to look again while the phase is neither running nor failed.
    pub requeue_after_ms: Option<u32>,
    pub conditions: Vec<Condition>,
}

/// One machine `list-machines` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedMachine {
    pub idempotency_key: String,
    pub provider_id: String,
    pub machine_name: String,
    pub phase: MachinePhase,
}
