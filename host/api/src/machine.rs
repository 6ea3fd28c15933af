//! `Machine`: one control-plane or worker machine, owned by a Cluster.
//!
//! The host writes a Machine (with its idempotency key) before it asks a provider to create
//! anything, so a crash never leads to a duplicate in the cloud.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;
use crate::rollout::MachineShape;

/// One machine's intent and observed state.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "capw.dev",
    version = "v1alpha1",
    kind = "Machine",
    namespaced,
    status = "MachineStatus",
    shortname = "ma",
    category = "capw",
    derive = "PartialEq",
    printcolumn = r#"{"name":"Cluster","type":"string","jsonPath":".spec.clusterName"}"#,
    printcolumn = r#"{"name":"Role","type":"string","jsonPath":".spec.role"}"#,
    printcolumn = r#"{"name":"Pool","type":"string","jsonPath":".spec.pool"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".spec.version"}"#,
    printcolumn = r#"{"name":"ProviderID","type":"string","jsonPath":".status.providerId","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineSpec {
    /// Name of the owning Cluster (same namespace).
    pub cluster_name: String,
    /// What the machine is for; decides its bootstrap data.
    pub role: MachineRole,
    /// `controlPlane` or a worker pool name.
    pub pool: String,
    /// Kubernetes version the machine runs.
    pub version: String,
    /// Failure domain the machine is placed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Key the infrastructure provider uses to create the machine at most once. Stable for
    /// the machine's life; written before any create call.
    pub idempotency_key: String,
    /// What shaped the machine when it was made (absent on machines made before capw recorded
    /// it: those are taken as up to date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<MachineShape>,
}

/// What a machine is for.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum MachineRole {
    /// The first control-plane machine, which initializes the cluster.
    Init,
    /// A further control-plane machine.
    JoinControlPlane,
    /// A worker.
    Worker,
}

/// Where a machine is in its life.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum MachinePhase {
    /// Intent written; nothing asked of a provider yet.
    #[default]
    Pending,
    /// The provider is creating it.
    Provisioning,
    /// It exists and has booted.
    Running,
    /// Cannot make progress without a change by a person.
    Failed,
    /// Being deleted.
    Deleting,
}

/// A machine address.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineAddress {
    /// `InternalIP`, `ExternalIP`, `Hostname`, `InternalDNS` or `ExternalDNS`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The address.
    pub address: String,
}

/// The node a machine became.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeRef {
    /// Node name in the workload cluster.
    pub name: String,
}

/// What the host observed about a machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineStatus {
    /// Where the machine is in its life.
    #[serde(default)]
    pub phase: MachinePhase,
    /// The provider's id for the machine (`simcloud://region/id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Addresses the provider reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<MachineAddress>,
    /// Whether bootstrap data has been generated for it.
    #[serde(default)]
    pub bootstrap_ready: bool,
    /// The node it became, once it registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_ref: Option<NodeRef>,
    /// Whether its node is ready.
    #[serde(default)]
    pub ready: bool,
    /// Why it failed, when `phase` is `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// `InfrastructureReady`, `BootstrapReady`, `NodeHealthy` and friends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// When the provider reported it created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
