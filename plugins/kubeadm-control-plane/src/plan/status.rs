//! The conditions a plan reports.
//!
//! The host prefixes a control-plane provider's condition types with `controlplane.capw.dev/`,
//! so these show on the Cluster as `controlplane.capw.dev/Available`, `.../Upgrading`,
//! `.../ScalingUp` and `.../ScalingDown`, beside the host's own `ControlPlaneAvailable`. All
//! four are always reported, `True` or `False`, so a condition that stops applying turns `False`
//! rather than lingering.

use capw_sdk::types::{Condition, ConditionStatus};

use super::membership::{Membership, quorum};

/// Condition type: etcd has a quorum of ready members.
pub const AVAILABLE: &str = "Available";
/// Condition type: some live member runs another version than the desired one.
pub const UPGRADING: &str = "Upgrading";
/// Condition type: fewer live members than desired.
pub const SCALING_UP: &str = "ScalingUp";
/// Condition type: more live members than desired, beyond a rollout's surge machine.
pub const SCALING_DOWN: &str = "ScalingDown";

/// The four conditions for `members` moving toward `desired` replicas, in the order
/// Available, Upgrading, ScalingUp, ScalingDown.
///
/// # Guarantees
///
/// - `Available` is `True` when at least one live member is ready and the ready live members
///   are a quorum of the live members. It is `False` while the first machine boots (reason
///   `WaitingForInitialization`) and while too few members are ready (`QuorumNotReady`), which
///   includes the moment a second member joins a one-member etcd.
/// - `ScalingDown` is `False` for the one surge machine of a rollout (`replicas + 1` members,
///   some out of date): that is `Upgrading`, not a scale-down.
pub fn conditions(members: &Membership<'_>, desired: u32, initialized: bool) -> Vec<Condition> {
    vec![
        available(members, initialized),
        upgrading(members),
        scaling_up(members, desired),
        scaling_down(members, desired),
    ]
}

fn available(members: &Membership<'_>, initialized: bool) -> Condition {
    let live = members.replicas();
    let ready = members.ready();
    let needed = quorum(live);
    let detail = format!("{ready} of {live} members ready; etcd's quorum is {needed}");
    if ready >= 1 && ready >= needed {
        Condition::new(AVAILABLE, ConditionStatus::True, "QuorumReady", detail)
    } else if !initialized {
        Condition::new(
            AVAILABLE,
            ConditionStatus::False,
            "WaitingForInitialization",
            "no control-plane machine has been ready yet",
        )
    } else {
        Condition::new(AVAILABLE, ConditionStatus::False, "QuorumNotReady", detail)
    }
}

fn upgrading(members: &Membership<'_>) -> Condition {
    let live = members.replicas();
    let up_to_date = members.up_to_date();
    let target = members.target;
    if up_to_date < live {
        let changed = changed_inputs(members);
        let message = if changed.is_empty() || changed == ["version"] {
            format!("{up_to_date} of {live} machines run {target}; replacing one at a time")
        } else {
            format!(
                "{up_to_date} of {live} machines are up to date with {target} and what shapes \
                 them; changed: {}; replacing one at a time",
                changed.join(", ")
            )
        };
        Condition::new(UPGRADING, ConditionStatus::True, "RollingOut", message)
    } else {
        Condition::new(
            UPGRADING,
            ConditionStatus::False,
            "UpToDate",
            format!("every machine runs {target}"),
        )
    }
}

/// What makes the live members out of date, each input once, sorted: `version` for a member
/// on another version, and the inputs the host listed.
fn changed_inputs(members: &Membership<'_>) -> Vec<String> {
    let mut changed: Vec<String> = (members.out_of_date().iter())
        .flat_map(|m| {
            let version = (m.version != members.target).then(|| "version".to_owned());
            version.into_iter().chain(m.out_of_date.iter().cloned())
        })
        .collect();
    changed.sort();
    changed.dedup();
    changed
}

fn scaling_up(members: &Membership<'_>, desired: u32) -> Condition {
    let live = members.replicas();
    if live < desired {
        Condition::new(
            SCALING_UP,
            ConditionStatus::True,
            "ScalingUp",
            format!("{live} of {desired} machines; adding one at a time"),
        )
    } else {
        Condition::new(SCALING_UP, ConditionStatus::False, "NotScalingUp", "")
    }
}

fn scaling_down(members: &Membership<'_>, desired: u32) -> Condition {
    let live = members.replicas();
    let surge_only = members.up_to_date() < live && live <= desired.saturating_add(1);
    if live > desired && !surge_only {
        Condition::new(
            SCALING_DOWN,
            ConditionStatus::True,
            "ScalingDown",
            format!("{live} machines, {desired} desired; removing one at a time"),
        )
    } else {
        Condition::new(SCALING_DOWN, ConditionStatus::False, "NotScalingDown", "")
    }
}
