//! Lifecycle hooks: the points of a cluster's life where hook providers are asked before (or
//! told after) a transition, and which transitions a pending answer holds.
//!
//! | Hook point | Called | Holds until every hook provider proceeds |
//! |---|---|---|
//! | `BeforeClusterCreate` | before anything is created for a new cluster | everything |
//! | `AfterControlPlaneInitialized` | once the first control-plane machine runs | nothing |
//! | `BeforeClusterUpgrade` | before the first machine of a new version | the control plane and the workers |
//! | `AfterControlPlaneUpgrade` | once every control-plane machine has the new version | the workers' upgrade |
//! | `AfterClusterUpgrade` | once every machine has the new version | nothing |
//! | `BeforeClusterDelete` | before anything is deleted | the teardown |
//!
//! A hold holds only its transition: machines already being created, reconciled or deleted
//! go on. A point that passed is recorded with the version it passed for
//! ([`HooksView::passed`]), so each is called until it proceeds, and once per transition.

use std::collections::BTreeMap;

use crate::view::Version;

/// A hook point, as the core decides when to call one.
///
/// The contract has its own `Hook` (`capw_runtime::lifecycle_hooks::Hook`, with the one list
/// `Hook::ALL` the host's other crates use), but the core may not depend on the plugin runtime
/// nor the runtime on the core (DESIGN.md, "Dependency directions"; `tests/layout`'s walls), so
/// the two cannot share a type or a list. The engine, which sees both, converts this one into
/// the contract's with an exhaustive match: a point added here does not compile until it has
/// a contract hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hook {
    BeforeClusterCreate,
    AfterControlPlaneInitialized,
    BeforeClusterUpgrade,
    AfterControlPlaneUpgrade,
    AfterClusterUpgrade,
    BeforeClusterDelete,
}

impl Hook {
    /// Every hook point.
    pub const ALL: [Hook; 6] = [
        Hook::BeforeClusterCreate,
        Hook::AfterControlPlaneInitialized,
        Hook::BeforeClusterUpgrade,
        Hook::AfterControlPlaneUpgrade,
        Hook::AfterClusterUpgrade,
        Hook::BeforeClusterDelete,
    ];

    /// Its name in the Cluster's status (`beforeClusterCreate`).
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::BeforeClusterCreate => "beforeClusterCreate",
            Hook::AfterControlPlaneInitialized => "afterControlPlaneInitialized",
            Hook::BeforeClusterUpgrade => "beforeClusterUpgrade",
            Hook::AfterControlPlaneUpgrade => "afterControlPlaneUpgrade",
            Hook::AfterClusterUpgrade => "afterClusterUpgrade",
            Hook::BeforeClusterDelete => "beforeClusterDelete",
        }
    }

    /// The hook named `name` in the Cluster's status.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.as_str() == name)
    }
}

/// What the core knows of a cluster's hooks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HooksView {
    /// The class names at least one hook provider; without one, no hook is ever called.
    pub configured: bool,
    /// Hook points that passed, with the version they passed for.
    pub passed: BTreeMap<Hook, Version>,
}

impl HooksView {
    /// `hook` must still be called before its transition: hooks are configured and it has not
    /// passed (for `version`, when given; at all, otherwise).
    pub(crate) fn pending(&self, hook: Hook, version: Option<Version>) -> bool {
        self.configured
            && match (self.passed.get(&hook), version) {
                (None, _) => true,
                (Some(v), Some(want)) => *v != want,
                (Some(_), None) => false,
            }
    }
}
