//! capw's reconcile core: given what a cluster wants and what is observed of it, the next
//! actions and the status to show. Pure: plain data in, plain data out; the executor (local or
//! Kubernetes mode) calls the providers, records what they answered and asks again.
//!
//! # The model
//!
//! Level-triggered: [`decide`] looks only at the current [`ClusterView`], never at history, so
//! calling it again after a crash gives the same answer. One decision is a set of actions that
//! may run concurrently (for example, progressing every booting machine); the executor runs
//! them, writes their results into the objects and decides again.
//!
//! Order for a live cluster: infrastructure → cluster secrets → control plane (one step at a
//! time, as the control-plane provider's plan says) → workers once the control plane is as
//! desired. With workload cluster access on, the admin kubeconfig is written once the
//! endpoint and the secrets exist, a machine is ready only when its Node is Ready, and the
//! cluster is ready only when its API answers ([`WorkloadView`]). Version upgrades roll the
//! control plane first, then the worker pools one at a time. A pool rolls any out-of-date
//! machine (another version, or other inputs that shape a machine) by its [`Rollout`]: new
//! machines first as `max_surge` allows, old ones removed as long as no fewer than
//! `replicas - max_unavailable` machines are ready. A
//! deleted cluster goes in reverse: workers, control plane, orphans the infrastructure still
//! lists, the infrastructure, and last its finalizer.
//!
//! # Guarantees
//!
//! - A machine is created only through [`Action::CreateMachine`], which the executor persists
//!   (with its idempotency key) before any provider call; the core never asks for a second
//!   machine while the first one's intent exists.
//! - While a pool rolls, its machines (live or being deleted) never exceed its replicas plus
//!   `max_surge`, and a ready machine is removed only while more than `replicas -
//!   max_unavailable` are ready.
//! - Nothing is deleted from the infrastructure while a Machine object for it exists, except
//!   through [`Action::DeleteMachine`] of that Machine.
//! - A live cluster's machine with a Node is deleted only after [`Action::DrainNode`] drained
//!   it, or its pool's drain timeout passed, or the host could not see the workload cluster
//!   at all (access off); a deleted cluster's machines are not drained.

mod decide;
mod drain;
mod etcd;
mod health;
mod hooks;
mod join_token;
mod status;
mod view;
mod workload;

#[cfg(test)]
mod tests;

pub use decide::{Action, Decision, HOOKS_PASSED, MachineIntent, decide};
pub use drain::{
    DRAIN_SKIPPED, DRAIN_TIMED_OUT, DRAINED, DRAINING, DRAINING_SUCCEEDED, DrainStep, DrainView,
};
pub use etcd::{ETCD_MEMBER, ETCD_MEMBERSHIP, EtcdMemberView, EtcdView};
pub use health::{
    HEALTH_CHECK_SUCCEEDED, Health, HealthCheck, LastRemediation, REMEDIATION_ALLOWED,
    UnhealthyCondition, control_plane_to_remediate, machine_health,
};
pub use hooks::{Hook, HooksView};
pub use join_token::{JOIN_TOKEN_VALID, JoinTokenView, fresh as join_token_fresh};
pub use status::{ClusterPhase, ConditionView, PoolStatus, StatusView};
pub use view::{
    ClusterView, ControlPlaneShape, DeletionOrder, InfraView, MachinePhase, MachineRole,
    MachineView, PlanStep, PlanView, PoolSpec, Rollout, ServiceView, Version,
};
pub use workload::{
    CONTROL_PLANE_AVAILABLE, NODE_HEALTHY, NodeCondition, NodeConditionSince, NodeHealth,
    NodeRefUpdate, NodeView, WORKLOAD_NOT_CONNECTED, WORKLOAD_UNREACHABLE, WorkloadView,
    node_health, node_ready,
};
