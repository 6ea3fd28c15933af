//! What every provider says about itself (`capw:provider/metadata`).

use serde::{Deserialize, Serialize};

/// An extension point a provider declares in its metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ExtensionPoint {
    /// `infrastructure`: networks, the endpoint, machines.
    Infrastructure,
    /// `bootstrap`: cluster secrets and machine bootstrap data.
    Bootstrap,
    /// `control-plane`: the next step toward the desired control plane.
    ControlPlane,
    /// `lifecycle-hooks`: asked at points of a cluster's life.
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
    /// A change of more than one minor version is taken in one step of the spec and carried
    /// out one minor at a time (chained upgrades). Declared from 0.3 on; `false` before.
    #[serde(default)]
    pub chains_upgrades: bool,
}

/// What the provider asks to be granted; the operator decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedGrants {
    /// Outbound HTTP authorities (`host` or `host:port`) it wants to reach.
    pub http_hosts: Vec<String>,
    /// Names of the secrets it reads through `host-secrets.get`.
    pub secrets: Vec<String>,
}

/// The answer of `metadata.describe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderMetadata {
    /// Short lowercase name, e.g. `sim-infra`.
    pub name: String,
    /// The provider's own semantic version.
    pub version: String,
    /// One line for humans.
    pub description: String,
    /// The extension points it implements; the host checks each is exported too.
    pub extension_points: Vec<ExtensionPoint>,
    /// JSON Schema of the config, as a JSON document.
    pub config_schema: String,
    /// What the host may ask of it.
    pub capabilities: Capabilities,
    /// What it asks the operator to grant.
    pub requested_grants: RequestedGrants,
}

/// One problem `metadata.validate-config` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// JSON Pointer (RFC 6901) to the field; `""` for the whole document.
    pub path: String,
    /// What is wrong with the field.
    pub message: String,
}
