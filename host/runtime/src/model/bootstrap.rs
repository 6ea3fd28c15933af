//! The bootstrap extension point: a cluster's secret material and the data that turns a
//! machine into a node.

use serde::{Deserialize, Serialize};

use super::types::{Endpoint, InProgress, KubernetesVersion, MachineRef, MachineRole};

/// One item of a cluster's secret material, e.g. `ca.crt`. Secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretItem {
    /// Its name, e.g. `ca.crt` or `sa.key`.
    pub name: String,
    /// Its bytes; the host stores them in a Secret and never logs them.
    pub data: Vec<u8>,
}

/// The answer of `cluster-secrets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SecretsState {
    /// The material is made: the host stores it and does not ask again.
    Ready(Vec<SecretItem>),
    /// Key generation takes long; the host calls again.
    InProgress(InProgress),
}

/// A control-plane member a joining machine may need (etcd).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlPlaneMember {
    /// Machine name, also the etcd member name.
    pub name: String,
    /// Address the member is reached at.
    pub address: String,
}

/// What `generate` makes bootstrap data for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapRequest {
    /// The machine the data is for.
    pub machine: MachineRef,
    /// What it is to become.
    pub role: MachineRole,
    /// The Kubernetes version it is to run.
    pub version: KubernetesVersion,
    /// The cluster's control-plane endpoint.
    pub endpoint: Endpoint,
    /// The material `cluster-secrets` made for the cluster.
    pub secrets: Vec<SecretItem>,
    /// The control plane's members now; empty for [`MachineRole::Init`].
    pub control_plane_members: Vec<ControlPlaneMember>,
}

/// The format of bootstrap data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BootstrapFormat {
    /// cloud-init's `#cloud-config` YAML.
    CloudConfig,
    /// An Ignition config (JSON).
    Ignition,
    /// Bytes the infrastructure passes on as they are.
    Raw,
}

/// The answer of `generate`. Its data is secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapData {
    /// How the machine reads `data`.
    pub format: BootstrapFormat,
    /// The data itself; never logged.
    pub data: Vec<u8>,
}
