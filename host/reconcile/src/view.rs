//! What the core is told about one cluster: what it wants and what is observed.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::workload::WorkloadView;

/// A Kubernetes version, `v1.34.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// One cluster as the executor sees it at the start of a decision.
#[derive(Clone, Debug, Default)]
pub struct ClusterView {
    /// The Cluster is being deleted (it has a deletion timestamp).
    pub deleting: bool,
    /// Reconciliation is paused: the core asks for nothing.
    pub paused: bool,
    /// The desired Kubernetes version.
    pub version: Option<Version>,
    /// Desired control-plane replicas; 0 when the Cluster asks none (a control plane a
    /// service runs, or one asked by `failuresTolerated`): the provider's plan decides.
    pub control_plane_replicas: u32,
    /// Where the control plane runs: on machines, or run by a service the provider drives.
    pub control_plane_shape: ControlPlaneShape,
    /// What the provider's `reconcile-control-plane` said in this pass of a control plane a
    /// service runs; `None` when it has not been asked in this pass (or failed).
    pub service: Option<ServiceView>,
    /// A service's control plane was deleted (`delete-control-plane` answered `deleted`).
    pub service_deleted: bool,
    /// When control-plane machines are unhealthy; `None`: never judged. The control-plane
    /// provider replaces them through its plan.
    pub control_plane_health: Option<crate::health::HealthCheck>,
    /// The control-plane provider is told, per member, what makes it out of date besides its
    /// version and whether it failed or is unhealthy (contract 0.3), and acts on both through
    /// its plan. Then a changed input counts against `upToDateReplicas`, and a failed member
    /// is the plan's to replace. A provider that is not told rolls versions only (only the
    /// version counts) and would never replace a failed member, so the host deletes it itself,
    /// one at a time.
    pub control_plane_told_members: bool,
    /// Seconds a control-plane machine's Node is drained at most before the machine goes;
    /// `0` without limit.
    pub control_plane_drain_timeout: u64,
    /// The last unhealthy control-plane member the provider took out to replace it.
    pub last_remediation: Option<crate::health::LastRemediation>,
    /// Desired worker pools, in the Cluster's order.
    pub pools: Vec<PoolSpec>,
    /// The infrastructure provider's last answer for the cluster.
    pub infrastructure: InfraView,
    /// The bootstrap provider's cluster secrets are stored.
    pub secrets_ready: bool,
    /// The control-plane provider's plan for the current machines; `None` when it has not been
    /// asked since the machines last changed.
    pub plan: Option<PlanView>,
    /// Every Machine object of the cluster.
    pub machines: Vec<MachineView>,
    /// Idempotency keys of machines the infrastructure lists for the cluster with no Machine
    /// object; `None` when it has not been asked in this pass.
    pub orphans: Option<Vec<String>>,
    /// Lifecycle hooks: configured, and which points passed.
    pub hooks: crate::hooks::HooksView,
    /// The workload cluster's API and Nodes; [`WorkloadView::Off`] when access is off.
    pub workload: WorkloadView,
    /// The stored admin kubeconfig was made for the cluster's current endpoint.
    pub kubeconfig_current: bool,
    /// The time of the decision, seconds since the Unix epoch: health checks measure how long
    /// a Node condition held against it.
    pub now: u64,
    /// The control plane's etcd membership, where the host keeps it.
    pub etcd: crate::etcd::EtcdView,
    /// The token joins carry, where the host keeps it valid.
    pub join_token: crate::join_token::JoinTokenView,
}

/// Where a cluster's control plane runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ControlPlaneShape {
    /// On machines the host creates and deletes as the provider's plan says.
    #[default]
    Machines,
    /// Run by a service, hosted in the management cluster or managed by a cloud: no machines;
    /// the provider drives it through `reconcile-control-plane` and says how to reach it.
    Service,
}

/// What the provider's `reconcile-control-plane` said of a control plane a service runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceView {
    /// It is as desired (step `none`); otherwise the service works toward it (`wait`).
    pub settled: bool,
    /// Its API server answered once.
    pub initialized: bool,
    /// It serves requests now.
    pub ready: bool,
    /// The version it runs, when known.
    pub version: Option<Version>,
    /// Members (API servers) it has, as the provider counts them.
    pub replicas: u32,
    /// Those of them that are ready.
    pub ready_replicas: u32,
    /// Those of them that run the desired version.
    pub up_to_date_replicas: u32,
    /// The host holds how to reach and join it (the provider's access, stored).
    pub access: bool,
}

/// A desired worker pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSpec {
    pub name: String,
    pub replicas: u32,
    /// Where its machines go; `None` spreads them over the cluster's failure domains.
    pub failure_domain: Option<String>,
    /// How its out-of-date machines are replaced.
    pub rollout: Rollout,
    /// Which machines go first when it shrinks or rolls.
    pub deletion_order: DeletionOrder,
    /// When its machines are unhealthy; `None`: never judged.
    pub health: Option<crate::health::HealthCheck>,
    /// Seconds a machine's Node is drained at most before the machine goes; `0` without
    /// limit.
    pub drain_timeout: u64,
}

/// How a pool replaces out-of-date machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rollout {
    /// Replace an out-of-date machine only once someone deleted it.
    pub on_delete: bool,
    /// Machines (live or being deleted) beyond the replicas while the pool rolls.
    pub max_surge: u32,
    /// Ready machines below the replicas while the pool rolls.
    pub max_unavailable: u32,
}

impl Default for Rollout {
    /// A rolling update with one surge machine and none unavailable.
    fn default() -> Self {
        Self {
            on_delete: false,
            max_surge: 1,
            max_unavailable: 0,
        }
    }
}

/// Which machines go first when a pool shrinks or rolls, once out-of-date and not-ready
/// machines went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeletionOrder {
    /// In an order that depends only on the names: the same from pass to pass.
    #[default]
    Random,
    Newest,
    Oldest,
}

/// The cluster-wide infrastructure, as last reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum InfraView {
    /// Never reconciled, or the last call failed before answering.
    #[default]
    Unknown,
    /// Being created.
    InProgress,
    /// Ready: the control-plane endpoint is usable.
    Ready { failure_domains: Vec<String> },
    /// Deleted (only while the cluster is being deleted).
    Deleted,
}

/// What a machine is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MachineRole {
    Init,
    JoinControlPlane,
    Worker,
}

impl MachineRole {
    /// Part of the control plane.
    pub fn is_control_plane(self) -> bool {
        !matches!(self, MachineRole::Worker)
    }
}

/// Lifecycle of a Machine object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MachinePhase {
    /// The intent is persisted; the infrastructure has not confirmed a machine yet.
    Pending,
    /// The infrastructure is creating or booting it.
    Provisioning,
    /// Running, and its node is ready.
    Running,
    /// Failed for good; it is to be deleted and replaced.
    Failed,
}

/// One Machine object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineView {
    pub name: String,
    pub role: MachineRole,
    /// Worker pool name; `control-plane` for the control plane.
    pub pool: String,
    pub version: Version,
    pub failure_domain: Option<String>,
    /// Creation order: seconds since the Unix epoch, ties broken by name.
    pub created_at: u64,
    pub phase: MachinePhase,
    /// Being deleted (deletion timestamp set).
    pub deleting: bool,
    /// The infrastructure's id for it, once reported; its Node carries the same.
    pub provider_id: Option<String>,
    /// The inputs besides the version that shaped it differently from its pool's (or the
    /// control plane's) current ones; empty when it is up to date.
    pub changed: Vec<String>,
    /// Its Node, as last recorded (`status.nodeRef`).
    pub node: Option<String>,
    /// How far the drain of its Node went, once its deletion began.
    pub drain: crate::drain::DrainView,
}

impl MachineView {
    pub(crate) fn live(&self) -> bool {
        !self.deleting
    }

    /// Made for `version` and with its pool's current inputs.
    pub(crate) fn up_to_date(&self, version: Option<Version>) -> bool {
        Some(self.version) == version && self.changed.is_empty()
    }
}

/// The control-plane provider's answer, reduced to what the core needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanView {
    pub step: PlanStep,
    pub initialized: bool,
    pub replicas: u32,
    pub ready_replicas: u32,
    pub up_to_date_replicas: u32,
}

/// The next control-plane step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanStep {
    /// The control plane is as desired.
    None,
    /// Create a control-plane machine (`init` for the first).
    Create {
        init: bool,
        failure_domain: Option<String>,
    },
    /// Delete this machine.
    Delete { machine: String },
    /// Something is under way; plan again later.
    Wait,
}
