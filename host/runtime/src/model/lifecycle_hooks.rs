//! The optional lifecycle hooks, after Cluster API's Runtime SDK.

use serde::{Deserialize, Serialize};

use super::types::{InProgress, KubernetesVersion};

/// A point in a cluster's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Hook {
    /// Before anything is created for a new cluster.
    BeforeClusterCreate,
    /// Once the first control-plane machine runs.
    AfterControlPlaneInitialized,
    /// Before the first machine of a new version.
    BeforeClusterUpgrade,
    /// Once every control-plane machine has the new version.
    AfterControlPlaneUpgrade,
    /// Once every machine has the new version.
    AfterClusterUpgrade,
    /// Before anything of the cluster is deleted.
    BeforeClusterDelete,
}

impl Hook {
    /// Every hook, in the order of a cluster's life: the one list of them on the host side
    /// of the contract.
    pub const ALL: [Hook; 6] = [
        Hook::BeforeClusterCreate,
        Hook::AfterControlPlaneInitialized,
        Hook::BeforeClusterUpgrade,
        Hook::AfterControlPlaneUpgrade,
        Hook::AfterClusterUpgrade,
        Hook::BeforeClusterDelete,
    ];
}

/// Which hook fires, and for which versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRequest {
    /// The point of the cluster's life.
    pub hook: Hook,
    /// The version before an upgrade; `None` outside upgrades.
    pub from_version: Option<KubernetesVersion>,
    /// The version the cluster has, or goes to.
    pub to_version: KubernetesVersion,
}

/// The answer of `handle`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HookResponse {
    /// Go on.
    Proceed,
    /// Hold this transition (only this one) and call again after the hint.
    Hold(InProgress),
}
