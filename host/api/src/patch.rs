//! ClusterClass patches: JSON patches that write variables into provider configs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A named group of patch definitions.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassPatch {
    /// Name, for error messages and status.
    pub name: String,
    /// What the patch is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where to patch, and how.
    #[serde(default)]
    pub definitions: Vec<PatchDefinition>,
}

/// JSON patches applied to the configs a selector picks.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchDefinition {
    /// Which configs to patch.
    pub selector: PatchSelector,
    /// Operations, applied in order.
    pub json_patches: Vec<JsonPatch>,
}

/// Picks the configs a patch definition applies to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchSelector {
    /// Which config.
    pub target: PatchTarget,
    /// For worker targets: only these machine-deployment classes (all when absent or empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_deployment_classes: Option<Vec<String>>,
}

/// A config a patch can target.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchTarget {
    /// `spec.infrastructure.config`.
    Infrastructure,
    /// `spec.controlPlane.config`.
    ControlPlane,
    /// `spec.controlPlane.machineInfrastructure.config`.
    ControlPlaneMachineInfrastructure,
    /// `spec.controlPlane.bootstrap.config`.
    ControlPlaneBootstrap,
    /// `spec.workers.machineDeployments[].infrastructure.config`.
    WorkerInfrastructure,
    /// `spec.workers.machineDeployments[].bootstrap.config`.
    WorkerBootstrap,
}

impl PatchTarget {
    /// Whether the target is a worker class's config (selected per machine-deployment class).
    pub fn is_worker(self) -> bool {
        matches!(self, Self::WorkerInfrastructure | Self::WorkerBootstrap)
    }
}

/// One JSON Patch (RFC 6902) operation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonPatch {
    /// The operation.
    pub op: PatchOp,
    /// JSON pointer into the selected config, for example `/network/cidr`.
    pub path: String,
    /// A literal value (for `add` and `replace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::json::any_value")]
    pub value: Option<serde_json::Value>,
    /// A value taken from variables (for `add` and `replace`), instead of `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<ValueFrom>,
}

/// A JSON Patch operation.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchOp {
    /// Add a member or array element (the parent must exist).
    Add,
    /// Replace an existing value.
    Replace,
    /// Remove an existing value.
    Remove,
}

/// Where a patch value comes from: exactly one of `variable` or `template`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValueFrom {
    /// A variable name, optionally followed by a JSON pointer into its value
    /// (`net/cidr` is `/cidr` inside variable `net`). `builtin/…` reads the built-in
    /// variables (`builtin/cluster/name`, `builtin/controlPlane/version`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    /// A string with `{{ variable/pointer }}` placeholders, rendered to a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}
