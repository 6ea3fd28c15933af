//! `ClusterInfrastructure`: the infrastructure provider's last answer about a cluster (its
//! state, control-plane endpoint and failure domains), which the Cluster's status has no room
//! for. The host writes it; people read it.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::json::{JsonObject, free_object};

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

/// What the infrastructure provider last said, as the host records it (`state`,
/// `clusterUid`, `endpoint`, `failureDomains`, `controlPlaneDomains`), and `applied`: the
/// last valid desired state the host acted on, with which a deleted Cluster is taken down
/// when its topology no longer resolves.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(transparent)]
pub struct ClusterInfrastructureStatus(#[schemars(schema_with = "free_object")] pub JsonObject);
