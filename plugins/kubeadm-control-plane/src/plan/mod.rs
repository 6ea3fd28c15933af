//! The planner: observed members and the desired state in, the single next safe step out.
//!
//! Pure and deterministic: [`plan`] reads nothing but its arguments, so the host may call it
//! as often as it likes, and the tests walk whole scale-ups, scale-downs and rollouts through
//! it without any I/O.
//!
//! # The rules, in the order they apply
//!
//! 1. Refuse (`invalid-input`) what cannot be reached safely: an even desired replica count, a
//!    version change that skips a minor version, downgrades or changes the major version (see
//!    [`version`]), a rollout with `maxSurge: 0` below 3 replicas, and a `failures-tolerated`
//!    (contract 0.3) that needs more than [`MAX_MEMBERS`] members. A Cluster that asks
//!    `failures-tolerated` N instead of a replica count gets 2N+1 members: stacked etcd keeps
//!    serving with N of 2N+1 failed.
//! 2. A member is being deleted: wait. Nothing else changes until etcd has let it go, so at
//!    most one membership change is ever under way and at most `replicas + 1` machines exist.
//! 3. No members: create the init machine (`init: true`).
//! 4. A live member is unhealthy (the host's health checks, `member.unhealthy`, contract 0.3):
//!    remove it when that is safe, else wait saying why. Safe means: another member exists,
//!    every other member is healthy and ready (one change at a time), and those others are a
//!    quorum of the membership without it. Rule 6 then creates its replacement. Of several,
//!    the one [`placement`] would remove first goes first.
//! 5. A live member is not ready: wait. Joins and removals go one at a time, each only from a
//!    fully ready membership, so a removal never takes etcd below the quorum of its current
//!    membership.
//! 6. Fewer live members than desired: create one (a join).
//! 7. More than desired: remove one, out-of-date machines first, by [`placement`]'s rule.
//! 8. As many as desired, some out of date: with `maxSurge: 1` create one more (the surge;
//!    rule 7 removes an out-of-date machine once it is ready); with `maxSurge: 0` remove an
//!    out-of-date machine (rule 6 replaces it).
//! 9. Nothing to do.
//!
//! A member is out of date when it runs another version or the host lists a changed
//! machine-shaping input for it (`member.out-of-date`, contract 0.3). A member leaves through
//! `remove-etcd-member` when the host says etcd lists it (`member.etcd`, 0.3): the host takes
//! it out of etcd, from another member, before it deletes the machine; otherwise, etcd not
//! observed or the machine never joined, through `delete-machine`.
//!
//! Every create needs the endpoint (kubeadm writes it into each machine's bootstrap config):
//! without one the plan waits. New machines always run the desired version and go to the
//! failure domain [`placement::domain_for_new_machine`] picks.

pub mod membership;
pub mod placement;
pub mod status;
pub mod version;

#[cfg(test)]
mod tests;

use std::time::Duration;

use capw_sdk::control_plane::{
    self, ControlPlaneStatus, MachineToCreate, Member, Plan, PlanInput, Step,
};
use capw_sdk::types::{ErrorCode, InProgress, ProviderError};

use crate::config::{DELETE_FIRST_MIN_REPLICAS, KubeadmControlPlaneConfig, Rollout};
use membership::Membership;
pub use version::VersionError;

/// How soon to plan again while a machine boots and joins.
pub const MACHINE_READY_POLL: Duration = Duration::from_secs(10);

/// How soon to plan again while a machine is being deleted.
pub const DELETION_POLL: Duration = Duration::from_secs(5);

/// How soon to plan again while the infrastructure has no endpoint yet.
pub const ENDPOINT_POLL: Duration = Duration::from_secs(10);

/// The most members a `failures-tolerated` ask may come to: etcd's own advice is at most 7
/// members, since every write waits for a majority and more members only slow it down.
pub const MAX_MEMBERS: u32 = 7;

/// Where a Cluster asks for `failures-tolerated`, as refusals name it.
pub const FAILURES_TOLERATED_FIELD: &str = "spec.topology.controlPlane.failuresTolerated";

/// A desired state the planner refuses: no sequence of safe steps reaches it.
///
/// Every variant is bad input: the same input fails again, so the host reports it and waits
/// for the Cluster to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The desired replica count is even. etcd needs a majority of its members: 4 members
    /// survive one failure, as 3 do, and 2 survive none, as 1 does.
    #[error(
        "replicas must be odd so that etcd keeps a majority; {replicas} tolerates no more \
         failures than {}: use {} or {}",
        .replicas.saturating_sub(1),
        .replicas.saturating_sub(1),
        .replicas.saturating_add(1)
    )]
    EvenReplicas {
        /// The desired count, at least 2.
        replicas: u32,
    },
    /// The plan input's replica count is 0 (unset) and the config gives no default.
    #[error(
        "replicas is 0 and the provider config sets no `replicas`: a control plane needs at \
         least one machine"
    )]
    NoReplicas,
    /// `failures-tolerated` N needs 2N+1 members, more than [`MAX_MEMBERS`].
    #[error(
        "{FAILURES_TOLERATED_FIELD} {failures_tolerated} needs {} stacked etcd members; \
         kubeadm-control-plane runs at most {MAX_MEMBERS}, which tolerate {}",
        .failures_tolerated.saturating_mul(2).saturating_add(1),
        (MAX_MEMBERS - 1) / 2
    )]
    TooManyFailuresTolerated {
        /// The Cluster's ask.
        failures_tolerated: u32,
    },
    /// Both a replica count and `failures-tolerated` were given, and the count tolerates
    /// fewer failures (the contract never gives both; a host that did is refused plainly).
    #[error(
        "replicas {replicas} tolerate {} failed members, fewer than \
         {FAILURES_TOLERATED_FIELD} {failures_tolerated}",
        .replicas.saturating_sub(1) / 2
    )]
    ReplicasBelowFailuresTolerated {
        /// The input's replica count.
        replicas: u32,
        /// The Cluster's ask.
        failures_tolerated: u32,
    },
    /// The desired version cannot be reached from a member's version.
    #[error(transparent)]
    Version(#[from] VersionError),
    /// A rollout with `maxSurge: 0` would delete a machine of a control plane too small to keep
    /// etcd's quorum without it.
    #[error(
        "maxSurge 0 deletes a machine before creating its replacement, which needs at least \
         {DELETE_FIRST_MIN_REPLICAS} replicas; replicas is {replicas}: use maxSurge 1"
    )]
    DeleteFirstTooFewReplicas {
        /// The desired count, below 3.
        replicas: u32,
    },
}

/// The planner refuses bad input only; retrying the same input fails again.
impl From<PlanError> for ProviderError {
    fn from(e: PlanError) -> Self {
        ProviderError::permanent(ErrorCode::InvalidInput, e.to_string())
    }
}

/// The next safe step toward `input`, and the counts and conditions to show.
///
/// See the [module docs](self) for the rules.
///
/// # Guarantees
///
/// - At most one machine is created or deleted per step, and only from a membership whose
///   live members are all ready and none of which is being deleted (the init machine aside).
/// - A create never brings the live members above `replicas + 1`, and above `replicas` only
///   for a rollout's surge machine; a delete never leaves fewer than one live member.
/// - `status.initialized` is true when any member (being deleted or not) is ready,
///   `status.ready` when a live member is; `replicas`, `ready-replicas` and
///   `up-to-date-replicas` count live members; `status.version` is the oldest live member's
///   (the version the control plane can be said to run during a rollout); `status.endpoint`
///   is the input's.
///
/// # Errors
///
/// [`PlanError`] for a desired state no safe sequence of steps reaches.
pub fn plan(config: &KubeadmControlPlaneConfig, input: &PlanInput) -> Result<Plan, PlanError> {
    let desired = desired_replicas(config, requested_replicas(input)?)?;
    let members = Membership::new(input);
    version::check_change(&members.live, input.version)?;
    let rollout = config.rollout();
    if rollout == Rollout::DeleteFirst
        && desired < DELETE_FIRST_MIN_REPLICAS
        && members.up_to_date() < members.replicas()
    {
        // Refused up front, not when the rollout reaches its first delete: a scale-down to
        // one machine would otherwise make progress and then stop with an old machine left.
        return Err(PlanError::DeleteFirstTooFewReplicas { replicas: desired });
    }
    let step = next_step(rollout, desired, input, &members);
    let initialized = input.members.iter().any(|m| m.ready);
    Ok(Plan {
        step,
        status: ControlPlaneStatus {
            initialized,
            ready: members.ready() > 0,
            version: control_plane::oldest_version(members.live.iter().copied()),
            endpoint: input.endpoint.clone(),
            conditions: status::conditions(&members, desired, initialized),
            failures_tolerated: failures_tolerated(&members),
        },
        replicas: members.replicas(),
        ready_replicas: members.ready(),
        up_to_date_replicas: members.up_to_date(),
        certificates: Vec::new(),
        shared_datastore: None,
    })
}

/// The replica count the input asks for: `replicas`, or for `failures-tolerated` N (with
/// `replicas` 0) 2N+1; 0 when it asks neither.
///
/// # Errors
///
/// [`PlanError::TooManyFailuresTolerated`] when 2N+1 exceeds [`MAX_MEMBERS`];
/// [`PlanError::ReplicasBelowFailuresTolerated`] when both are given and the count tolerates
/// fewer than N.
pub fn requested_replicas(input: &PlanInput) -> Result<u32, PlanError> {
    let Some(failures_tolerated) = input.failures_tolerated else {
        return Ok(input.replicas);
    };
    if input.replicas != 0 {
        return if input.replicas.saturating_sub(1) / 2 >= failures_tolerated {
            Ok(input.replicas)
        } else {
            Err(PlanError::ReplicasBelowFailuresTolerated {
                replicas: input.replicas,
                failures_tolerated,
            })
        };
    }
    match failures_tolerated.checked_mul(2).map(|n| n + 1) {
        Some(members) if members <= MAX_MEMBERS => Ok(members),
        _ => Err(PlanError::TooManyFailuresTolerated { failures_tolerated }),
    }
}

/// How many members may fail with etcd still committing, as the members are now: the ready
/// live members beyond the quorum of the live ones ((ready - 1) / 2 when every member is
/// ready). `None` while no member is ready: nothing serves yet.
pub fn failures_tolerated(members: &Membership<'_>) -> Option<u32> {
    let ready = members.ready();
    (ready > 0).then(|| ready.saturating_sub(membership::quorum(members.replicas())))
}

/// The replica count to reach: the input's, or the config's when the input's is 0 (unset).
///
/// # Errors
///
/// [`PlanError::NoReplicas`] when neither gives one, [`PlanError::EvenReplicas`] when the
/// count is even.
pub fn desired_replicas(
    config: &KubeadmControlPlaneConfig,
    requested: u32,
) -> Result<u32, PlanError> {
    let replicas = match (requested, config.replicas) {
        (0, None) => return Err(PlanError::NoReplicas),
        (0, Some(default)) => default,
        (requested, _) => requested,
    };
    if replicas % 2 == 0 {
        // A validated config never has an even or zero default; an input may.
        return match replicas {
            0 => Err(PlanError::NoReplicas),
            replicas => Err(PlanError::EvenReplicas { replicas }),
        };
    }
    Ok(replicas)
}

fn next_step(rollout: Rollout, desired: u32, input: &PlanInput, members: &Membership<'_>) -> Step {
    if let Some(member) = members.deleting.first() {
        return wait_for_deletion(member, members.deleting.len());
    }
    if members.live.is_empty() {
        return create(input, members, true);
    }
    let unhealthy = members.unhealthy();
    if !unhealthy.is_empty() {
        return remediate(&unhealthy, members);
    }
    let unready = members.unready();
    if let Some(member) = unready.first() {
        return wait_for_ready(member, unready.len(), members);
    }
    let live = members.replicas();
    let out_of_date = members.out_of_date();
    if live < desired {
        return create(input, members, false);
    }
    if live > desired {
        // Out-of-date machines go first: a scale-down during a rollout also advances it.
        let candidates = if out_of_date.is_empty() {
            &members.live
        } else {
            &out_of_date
        };
        return delete(candidates, members);
    }
    if out_of_date.is_empty() {
        return Step::None;
    }
    match rollout {
        Rollout::Surge => create(input, members, false),
        Rollout::DeleteFirst => delete(&out_of_date, members),
    }
}

/// Create a machine at the desired version in the emptiest failure domain, once the
/// endpoint is known.
fn create(input: &PlanInput, members: &Membership<'_>, init: bool) -> Step {
    if input.endpoint.is_none() {
        return Step::Wait(
            InProgress::new(
                "WaitingForEndpoint",
                "the infrastructure has not reported the control-plane endpoint yet; kubeadm \
                 writes it into every machine's bootstrap config",
            )
            .requeue_after(ENDPOINT_POLL),
        );
    }
    Step::CreateMachine(MachineToCreate {
        init,
        version: input.version,
        failure_domain: placement::domain_for_new_machine(
            &input.failure_domains,
            &members.live,
            input.version,
        ),
    })
}

/// Remove the candidate [`placement::machine_to_remove`] picks: out of etcd first when etcd
/// lists it. The callers' candidates are never empty (more live members than desired, or some
/// out of date); were they, the plan would do nothing rather than guess.
fn delete(candidates: &[&Member], members: &Membership<'_>) -> Step {
    match placement::machine_to_remove(candidates, &members.live) {
        Some(member) if membership::in_etcd(member) => {
            Step::RemoveEtcdMember(member.machine.clone())
        }
        Some(member) => Step::DeleteMachine(member.machine.clone()),
        None => Step::None,
    }
}

/// Replace an unhealthy member: remove the one [`placement::machine_to_remove`] picks among
/// `unhealthy` when the rest of the membership can do without it, else wait saying why.
fn remediate(unhealthy: &[&Member], members: &Membership<'_>) -> Step {
    let Some(member) = placement::machine_to_remove(unhealthy, &members.live) else {
        return Step::None;
    };
    let name = &member.machine.name;
    let why = member.unhealthy.join("; ");
    let others: Vec<&Member> = (members.live.iter().copied())
        .filter(|m| m.machine != member.machine)
        .collect();
    let blocked = |reason: &str, message: String| {
        Step::Wait(InProgress::new(reason, message).requeue_after(MACHINE_READY_POLL))
    };
    if others.is_empty() {
        return blocked(
            "RemediationNotPossible",
            format!(
                "`{name}` is unhealthy ({why}) and is the only member: removing it would lose \
                 etcd's data; add members (replicas 3) to make the control plane repairable"
            ),
        );
    }
    if let Some(other) = others.iter().find(|m| !m.unhealthy.is_empty() || !m.ready) {
        let healthy = others
            .iter()
            .filter(|m| m.unhealthy.is_empty() && m.ready)
            .count();
        let needed = membership::quorum(membership::count(others.len()));
        if membership::count(healthy) < needed {
            return blocked(
                "RemediationBlocked",
                format!(
                    "`{name}` is unhealthy ({why}); removing it would leave {healthy} healthy \
                     of {} members, fewer than etcd's quorum of {needed}: waiting for `{}`",
                    others.len(),
                    other.machine.name
                ),
            );
        }
        return blocked(
            "RemediationWaiting",
            format!(
                "`{name}` is unhealthy ({why}); one change at a time: waiting for `{}` first",
                other.machine.name
            ),
        );
    }
    delete(&[member], members)
}

fn wait_for_deletion(first: &Member, deleting: usize) -> Step {
    let message = if deleting == 1 {
        format!(
            "machine `{}` is being deleted; the next change waits for etcd to let it go",
            first.machine.name
        )
    } else {
        format!(
            "{deleting} machines are being deleted, `{}` among them; the next change waits \
             for etcd to let them go",
            first.machine.name
        )
    };
    Step::Wait(InProgress::new("WaitingForDeletion", message).requeue_after(DELETION_POLL))
}

fn wait_for_ready(first: &Member, unready: usize, members: &Membership<'_>) -> Step {
    let message = format!(
        "{} of {} control-plane machines ready; waiting for `{}`{} before the next change",
        members.ready(),
        members.replicas(),
        first.machine.name,
        if unready > 1 { " and others" } else { "" },
    );
    Step::Wait(
        InProgress::new("WaitingForMachinesReady", message).requeue_after(MACHINE_READY_POLL),
    )
}
