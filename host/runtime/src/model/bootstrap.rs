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
    /// How a worker joins a control plane a service runs (hosted and managed shapes), from
    /// the control-plane provider's access; then `secrets` is empty. Told from 0.3 on.
    #[serde(default)]
    pub join: Option<JoinCredentials>,
}

/// How to join a control plane that a service runs (contract 0.3's `join-credentials`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinCredentials {
    /// The certificate authority the API server's certificate chains to (PEM).
    pub ca_certificate: String,
    /// The token a join authenticates with, when the service issues one.
    pub token: Option<JoinToken>,
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

/// A bootstrap token (Kubernetes' Secret type `bootstrap.kubernetes.io/token`): what a
/// joining machine's data carries, which the workload cluster must still accept (contract
/// 0.3's `join-token`). Its `secret` is never shown by `Debug`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinToken {
    /// The item of the cluster's secrets holding it as `<id>.<secret>`.
    pub item: String,
    /// `[a-z0-9]{6}`, public: the workload cluster keeps the token as Secret
    /// `kube-system/bootstrap-token-<id>`.
    pub id: String,
    /// `[a-z0-9]{16}`. Secret.
    pub secret: String,
    /// How long the workload cluster accepts it once written; 0: it never expires.
    pub ttl_seconds: u64,
    /// Groups it authenticates as besides `system:bootstrappers`.
    pub extra_groups: Vec<String>,
}

impl std::fmt::Debug for JoinToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinToken")
            .field("item", &self.item)
            .field("id", &self.id)
            .field("secret", &"[redacted]")
            .field("ttl_seconds", &self.ttl_seconds)
            .field("extra_groups", &self.extra_groups)
            .finish()
    }
}

impl JoinToken {
    /// `<id>.<secret>`, as the cluster's secrets item holds it. Secret.
    pub fn token(&self) -> String {
        format!("{}.{}", self.id, self.secret)
    }
}
