//! `ClusterInfrastructure`: the infrastructure provider's last answer about a cluster (its
//! state, control-plane endpoint and failure domains), which the Cluster's status has no room
//! for. The host writes it; people read it.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::json::free_object;

/// The host's record of one cluster's infrastructure, named like its Cluster and owned by it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "capw.dev",
    version = "v1alpha1",
    kind = "ClusterInfrastructure",
    namespaced,
    status = "ClusterInfrastructureStatus",
    category = "capw",
    derive = "PartialEq",
    printcolumn = r#"{"name":"State","type":"string","jsonPath":".status.state"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfrastructureSpec {}

/// What the infrastructure provider last said, as the host records it, and the last valid
/// desired state the host acted on.
///
/// Its schema in the CRD is a free object: only the host writes it, and the record of an
/// older host keeps being read.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfrastructureStatus {
    /// `Ready`, `InProgress` or `Deleted`.
    pub state: String,
    /// The uid of the Cluster it belongs to (a recreated Cluster starts afresh).
    pub cluster_uid: String,
    /// Host and port of the control-plane endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<(String, u16)>,
    /// Every failure domain.
    #[serde(default)]
    pub failure_domains: Vec<String>,
    /// Those that may hold control-plane machines.
    #[serde(default)]
    pub control_plane_domains: Vec<String>,
    /// The last valid desired state the host acted on (capw-topology's `DesiredState`): the
    /// providers and configs that made what exists. A Cluster deleted after its topology
    /// stopped resolving (its ClusterClass gone or changed, a variable refused) is taken down
    /// with these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<serde_json::Value>,
    /// A control plane that a service runs (hosted, managed), as its provider's
    /// `reconcile-control-plane` and `delete-control-plane` last said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ServiceControlPlane>,
}

/// What the host keeps of a control plane that a service runs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceControlPlane {
    /// `Ready` (as desired), `InProgress` (the service works toward it), `NotReady` (the
    /// provider asks nothing more of a service that does not serve, such as one that failed;
    /// its conditions say why) or `Deleted`.
    pub state: String,
    /// Host and port of its API server, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<(String, u16)>,
    /// Its API server answered once.
    #[serde(default)]
    pub initialized: bool,
    /// It serves requests now.
    #[serde(default)]
    pub ready: bool,
    /// The version it runs, `vX.Y.Z`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Members (API servers) as the provider counts them.
    #[serde(default)]
    pub replicas: u32,
    /// Those of them that are ready.
    #[serde(default)]
    pub ready_replicas: u32,
    /// Those of them that run the desired version.
    #[serde(default)]
    pub up_to_date_replicas: u32,
    /// How many members may fail with it still serving (the service's promise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures_tolerated: Option<u32>,
    /// What the provider said while it works, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl JsonSchema for ClusterInfrastructureStatus {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ClusterInfrastructureStatus".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        free_object(generator)
    }
}
