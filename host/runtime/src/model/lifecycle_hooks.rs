//! The optional lifecycle hooks, after Cluster API's Runtime SDK.

use serde::{Deserialize, Serialize};

use super::types::{InProgress, KubernetesVersion};

/// A point in a cluster's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Hook {
    BeforeClusterCreate,
    AfterControlPlaneInitialized,
    BeforeClusterUpgrade,
    AfterControlPlaneUpgrade,
    AfterClusterUpgrade,
    BeforeClusterDelete,
}

/// Which hook fires, and for which versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRequest {
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
