//! The bootstrap extension point: a cluster's secret material and the data that turns a
//! machine into a node.

use serde::{Deserialize, Serialize};

use super::types::{Endpoint, InProgress, KubernetesVersion, MachineRef, MachineRole};

/// One item of a cluster's secret material, e.g. `ca.crt`. Secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretItem {
    pub name: String,
    pub data: Vec<u8>,
}

/// The answer of `cluster-secrets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SecretsState {
    Ready(Vec<SecretItem>),
    InProgress(InProgress),
}

/// A control-plane member a joining machine may need (etcd).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlPlaneMember {
    pub name: String,
    pub address: String,
}

/// What `generate` makes bootstrap data for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapRequest {
    pub machine: MachineRef,
    pub role: MachineRole,
    pub version: KubernetesVersion,
    pub endpoint: Endpoint,
    pub secrets: Vec<SecretItem>,
    pub control_plane_members: Vec<ControlPlaneMember>,
}

/// The format of bootstrap data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BootstrapFormat {
    CloudConfig,
    Ignition,
    Raw,
}

/// The answer of `generate`. Its data is secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapData {
    pub format: BootstrapFormat,
    pub data: Vec<u8>,
}
