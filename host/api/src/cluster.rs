//! `Cluster`: one Kubernetes cluster, stamped out from a ClusterClass.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;
use crate::health::MachineHealthCheck;
use crate::rollout::{MachineDeletion, MachineRollout};

/// A cluster built from a ClusterClass.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "capw.dev",
    version = "v1alpha1",
    kind = "Cluster",
    namespaced,
    status = "ClusterStatus",
    shortname = "cl",
    category = "capw",
    derive = "PartialEq",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".spec.topology.version"}"#,
    printcolumn = r#"{"name":"CP Ready","type":"integer","jsonPath":".status.controlPlane.readyReplicas"}"#,
    printcolumn = r#"{"name":"CP Desired","type":"integer","jsonPath":".status.controlPlane.desiredReplicas"}"#,
    printcolumn = r#"{"name":"Workers Ready","type":"integer","jsonPath":".status.workersReadyReplicas"}"#,
    printcolumn = r#"{"name":"Workers Desired","type":"integer","jsonPath":".status.workersDesiredReplicas"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSpec {
    /// The class and the values that shape this cluster.
    pub topology: Topology,
    /// Stop reconciling this cluster (nothing is created or deleted) while true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

/// What to build: a class, a version, sizes and variables.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Topology {
    /// The ClusterClass.
    pub class_ref: ClassRef,
    /// Kubernetes version, `vMAJOR.MINOR.PATCH` (for example `v1.34.1`).
    // What CEL can say, the API server checks even without the admission webhook; the
    // messages are the host's own (capw_topology's checks).
    #[schemars(length(max = 128), extend("x-kubernetes-validations" = [
        {"rule": "self.matches('^v[0-9]+[.][0-9]+[.][0-9]+')", "message": "must look like v1.34.1"}
    ]))]
    pub version: String,
    /// Control-plane size.
    #[serde(default)]
    pub control_plane: ControlPlaneTopology,
    /// Worker pools.
    #[serde(default)]
    pub workers: WorkersTopology,
    /// Values of the class's variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterVariable>,
}

/// A reference to a ClusterClass.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClassRef {
    /// Name of the ClusterClass.
    pub name: String,
    /// Namespace of the ClusterClass; the Cluster's own when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Control-plane size: a replica count, or the failures it is to tolerate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!(has(self.replicas) && has(self.failuresTolerated))",
     "message": "is given beside replicas: give one or the other",
     "fieldPath": ".failuresTolerated"}
]))]
pub struct ControlPlaneTopology {
    /// Number of control-plane replicas. When absent: 1 for a control plane on machines; for
    /// one a service runs (hosted, managed), what the service runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // capw_topology::MAX_CONTROL_PLANE_REPLICAS.
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self >= 1 && self <= 15", "message": "is outside 1..=15"}
    ]))]
    pub replicas: Option<i32>,
    /// How many members may fail with the control plane still serving, instead of a count:
    /// its provider says what that means for its shape (2N+1 members for stacked etcd; what
    /// the service promises for a managed one) or refuses it. Never beside `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self >= 0 && self <= 7", "message": "is outside 0..=7"}
    ]))]
    pub failures_tolerated: Option<i32>,
    /// Overrides the class's `controlPlane.healthCheck`, field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<MachineHealthCheck>,
    /// Overrides the class's `controlPlane.deletion`, field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<crate::rollout::ControlPlaneDeletion>,
}

/// Worker pools.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkersTopology {
    /// Pools of identical workers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_deployments: Vec<MachineDeploymentTopology>,
}

/// One worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeploymentTopology {
    /// A `spec.workers.machineDeployments[].class` of the ClusterClass.
    pub class: String,
    /// Pool name, unique in the cluster; a DNS label (it becomes part of machine names).
    pub name: String,
    /// Number of machines; 1 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // capw_topology::MAX_POOL_REPLICAS.
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self >= 0 && self <= 1000", "message": "is outside 0..=1000"}
    ]))]
    pub replicas: Option<i32>,
    /// Failure domain to place the pool in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Per-pool variable values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<PoolVariables>,
    /// Overrides the worker class's `rollout`, field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<MachineRollout>,
    /// Overrides the worker class's `deletion`, field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletion>,
    /// Overrides the worker class's `healthCheck`, field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<MachineHealthCheck>,
}

/// Per-pool variable values.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolVariables {
    /// Values that take precedence over the cluster's for this pool's configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<ClusterVariable>,
}

/// A variable's value.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterVariable {
    /// A variable declared by the ClusterClass.
    pub name: String,
    /// The value; checked against the variable's schema.
    #[schemars(schema_with = "crate::json::any_value")]
    pub value: serde_json::Value,
}

/// Where a cluster is in its life.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ClusterPhase {
    /// Accepted; nothing created yet.
    #[default]
    Pending,
    /// Infrastructure or control plane being created.
    Provisioning,
    /// The control plane is up and its endpoint is known.
    Provisioned,
    /// Being torn down.
    Deleting,
    /// Cannot make progress without a change by a person.
    Failed,
}

impl ClusterPhase {
    /// The phase as stored and shown (`Provisioning`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Provisioning => "Provisioning",
            Self::Provisioned => "Provisioned",
            Self::Deleting => "Deleting",
            Self::Failed => "Failed",
        }
    }
}

/// Address of the control plane's API server.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiEndpoint {
    /// Host name or IP address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// Replica counters shared by the control plane and every worker pool (flattened into both,
/// so `desiredReplicas`, `replicas`, `readyReplicas` and `upToDateReplicas` sit beside the
/// owner's other fields, as in Cluster API).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaCounters {
    /// Replicas asked for.
    #[serde(default)]
    pub desired_replicas: i32,
    /// Machines that exist.
    #[serde(default)]
    pub replicas: i32,
    /// Machines whose node is ready.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Machines at the desired version and config.
    #[serde(default)]
    pub up_to_date_replicas: i32,
}

/// Replica counters of the control plane.
///
/// Unknown fields are tolerated here (serde cannot refuse them next to a flattened struct);
/// status is written by the host, not by people.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneStatus {
    /// The counters.
    #[serde(flatten)]
    pub counters: ReplicaCounters,
    /// Lowest Kubernetes version running in the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How many members may fail with the control plane still serving, as its provider says
    /// of it now (for a managed control plane, what the service promises).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures_tolerated: Option<i32>,
    /// The last unhealthy member the control-plane provider was asked to replace and did
    /// (its `remediation.maxRetry` and `retryPeriodSeconds` count from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_remediation: Option<LastRemediation>,
}

/// An unhealthy control-plane member the provider took out to replace it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastRemediation {
    /// The Machine taken out.
    pub machine: String,
    /// When, RFC 3339.
    pub time: crate::Time,
    /// How many replacements in a row this one makes: 1, or one more than the last when that
    /// was less than `minHealthyPeriodSeconds` before.
    pub retry_count: i32,
}

/// Replica counters of one worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolStatus {
    /// Pool name.
    pub name: String,
    /// The counters.
    #[serde(flatten)]
    pub counters: ReplicaCounters,
}

/// What the host observed about a cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterStatus {
    /// Where the cluster is in its life.
    #[serde(default)]
    pub phase: ClusterPhase,
    /// The API server's address, once the infrastructure provider has made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ApiEndpoint>,
    /// Whether the control plane has been initialized (the first API server answered).
    #[serde(default)]
    pub initialized: bool,
    /// `InfrastructureReady`, `ControlPlaneAvailable`, `TopologyReconciled` and friends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Control-plane counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlaneStatus>,
    /// Counters per worker pool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<PoolStatus>,
    /// Sum of `workers[].readyReplicas` (for printer columns).
    #[serde(default)]
    pub workers_ready_replicas: i32,
    /// Sum of `workers[].desiredReplicas` (for printer columns).
    #[serde(default)]
    pub workers_desired_replicas: i32,
    /// Lifecycle hooks every hook provider answered `proceed` to, by hook point
    /// (`beforeClusterCreate`, `beforeClusterUpgrade`, …) → the Kubernetes version they passed
    /// for. A hook point is called until it is recorded here.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub hooks: std::collections::BTreeMap<String, String>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl ClusterStatus {
    /// Sets `workers` and the two sums the printer columns read, keeping them consistent.
    pub fn set_workers(&mut self, workers: Vec<PoolStatus>) {
        self.workers_ready_replicas = workers.iter().map(|w| w.counters.ready_replicas).sum();
        self.workers_desired_replicas = workers.iter().map(|w| w.counters.desired_replicas).sum();
        self.workers = workers;
    }
}
