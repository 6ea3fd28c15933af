//! `ClusterClass`: which provider builds each part of a cluster, with which config, and the
//! variables and patches that let one class stamp out many clusters.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;
use crate::health::MachineHealthCheck;
use crate::json::JsonObject;
use crate::patch::ClusterClassPatch;
use crate::rollout::{ControlPlaneDeletion, MachineDeletion, MachineRollout};

/// A template for clusters.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "capw.dev",
    version = "v1alpha1",
    kind = "ClusterClass",
    namespaced,
    status = "ClusterClassStatus",
    shortname = "cc",
    category = "capw",
    derive = "PartialEq",
    printcolumn = r#"{"name":"Infrastructure","type":"string","jsonPath":".spec.infrastructure.provider"}"#,
    printcolumn = r#"{"name":"ControlPlane","type":"string","jsonPath":".spec.controlPlane.provider"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassSpec {
    /// The infrastructure provider of the cluster (network, load balancer, machines).
    pub infrastructure: ProviderConfigRef,
    /// The control plane.
    pub control_plane: ControlPlaneClass,
    /// Worker classes a Cluster may instantiate.
    #[serde(default)]
    pub workers: WorkersClass,
    /// Providers called at lifecycle hooks, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lifecycle_hooks: Vec<ProviderConfigRef>,
    /// Variables a Cluster may (or must) set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterClassVariable>,
    /// Patches that write variables into provider configs, applied in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<ClusterClassPatch>,
}

/// A provider (by `WasmProvider` name) and its config.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfigRef {
    /// Name of a `WasmProvider`.
    pub provider: String,
    /// Config passed to the provider; checked against its schema.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::free_object")]
    pub config: JsonObject,
}

/// Config for the infrastructure provider named in `spec.infrastructure`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InfrastructureConfig {
    /// Config passed to the infrastructure provider for these machines.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::free_object")]
    pub config: JsonObject,
}

/// How the control plane is built.
///
/// Machine-based control planes (kubeadm-like) set `machineInfrastructure` and `bootstrap`;
/// control planes hosted in the management cluster or run as a managed service leave them out.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneClass {
    /// Name of the control-plane `WasmProvider`.
    pub provider: String,
    /// Config passed to the control-plane provider.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::free_object")]
    pub config: JsonObject,
    /// Infrastructure config for control-plane machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_infrastructure: Option<InfrastructureConfig>,
    /// Bootstrap provider and config for control-plane machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<ProviderConfigRef>,
    /// How the host reaches the control plane's etcd to keep its membership (remove a member
    /// before its machine goes, remove members no machine has). Without it, a member leaves
    /// etcd only as its machine's own bootstrap takes it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd: Option<EtcdAccess>,
    /// When a control-plane machine is unhealthy and whether it may be replaced now; a
    /// Cluster may override it. The host judges, the control-plane provider replaces the
    /// member through its plan (contract 0.3), one at a time and never below etcd's quorum.
    /// No health check when neither says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<MachineHealthCheck>,
    /// How control-plane machines are deleted (their Node drained first); a Cluster may
    /// override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<ControlPlaneDeletion>,
}

/// Where the control plane's etcd listens and which of the cluster's secret items (those
/// the bootstrap provider's `cluster-secrets` returned) hold its certificate authority; the
/// host mints a short-lived client certificate from it for each membership call.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EtcdAccess {
    /// The port of etcd's client URL on each control-plane machine's address.
    #[serde(default = "default_etcd_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub client_port: u16,
    /// The secret item holding the etcd CA certificate (PEM).
    pub ca_certificate_item: String,
    /// The secret item holding the etcd CA private key (PKCS#8 PEM).
    pub ca_key_item: String,
}

fn default_etcd_port() -> u16 {
    2379
}

/// Worker classes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkersClass {
    /// Classes of machine deployments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_deployments: Vec<MachineDeploymentClass>,
}

/// One class of worker pools.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeploymentClass {
    /// Name a Cluster uses to pick this class.
    pub class: String,
    /// Config for the cluster's infrastructure provider, for these machines.
    #[serde(default)]
    pub infrastructure: InfrastructureConfig,
    /// Bootstrap provider and config for these machines.
    pub bootstrap: ProviderConfigRef,
    /// How out-of-date machines are replaced; a Cluster may override it per pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<MachineRollout>,
    /// How machines are deleted; a Cluster may override it per pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletion>,
    /// When a machine is unhealthy and what is done about it; a Cluster may override it per
    /// pool. No health check when neither says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<MachineHealthCheck>,
}

/// A variable a Cluster sets to shape its configs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassVariable {
    /// Name, unique within the class; `builtin` is reserved.
    pub name: String,
    /// Whether every Cluster must set it (a schema `default` does not count as set).
    #[serde(default)]
    pub required: bool,
    /// Schema of the value.
    pub schema: VariableSchema,
}

/// The schema of a variable.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariableSchema {
    /// An OpenAPI v3 schema (the Kubernetes CRD dialect), with `default`s.
    #[serde(rename = "openAPIV3Schema")]
    #[schemars(schema_with = "crate::json::free_object")]
    pub open_api_v3_schema: JsonObject,
}

/// What the host observed about a ClusterClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassStatus {
    /// `VariablesReady`, `RefVersionsUpToDate` and friends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
