//! What every provider says about itself (`capw:provider/metadata`).

use serde::{Deserialize, Serialize};

/// An extension point a provider declares in its metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ExtensionPoint {
    Infrastructure,
    Bootstrap,
    ControlPlane,
    LifecycleHooks,
}

/// How a control-plane provider builds the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ControlPlaneShape {
    /// Machines the host creates and deletes (kubeadm-like).
    Machines,
    /// Workloads in the management cluster, from manifests the host applies.
    Hosted,
    /// A service behind a cloud API that the provider drives.
    Managed,
}

/// What the host may ask of the provider; it refuses a topology the provider cannot serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Set by control-plane providers.
    pub control_plane_shape: Option<ControlPlaneShape>,
    /// The control plane's replica count may change after creation.
    pub control_plane_scalable: bool,
    /// Kubernetes may be upgraded in place.
    pub version_upgrades: bool,
}

/// What the provider asks to be granted; the operator decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedGrants {
    pub http_hosts: Vec<String>,
    pub secrets: Vec<String>,
}

/// The answer of `metadata.describe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderMetadata {
    pub name: String,
    pub version: String,
    pub description: String,
    pub extension_points: Vec<ExtensionPoint>,
    /// JSON Schema of the config, as a JSON document.
    pub config_schema: String,
    pub capabilities: Capabilities,
    pub requested_grants: RequestedGrants,
}

/// One problem `metadata.validate-config` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// JSON Pointer (RFC 6901) to the field; `""` for the whole document.
    pub path: String,
    pub message: String,
}
