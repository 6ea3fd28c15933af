//! What a managed control plane as simcloud reports it means to the host: the step, the
//! status and the counts, and the one update to ask the service for. Pure: the tests walk
//! every state of the service through it without simcloud.
//!
//! # The rules
//!
//! - `creating`: `wait` (`ServiceCreating`); not initialized, not ready.
//! - `updating`: `wait` (`ServiceUpdating`); it serves meanwhile, at its current version.
//! - `ready` at the desired version: `none`.
//! - `ready` below it: ask for the next version ([`version::next_step`]: one minor at a time)
//!   and `wait` (`UpdateRequested`); the next update only once this one has finished.
//! - `ready` above it (the service upgraded itself): `none`, with `VersionAhead`; never a
//!   downgrade.
//! - `failed` (the service could not start or upgrade it): `none`, with `ServiceReady` False
//!   (`ServiceFailed`, naming the control plane and the service's reason); not initialized,
//!   not ready, nothing asked of the service. Only deleting it moves on
//!   ([`assess`] says why `none` rather than an error).
//! - Refused (`invalid-input`): a `failures-tolerated` beyond what the service promises, a
//!   change of major version.

use std::time::Duration;

use capw_sdk::control_plane::{ControlPlaneStatus, Plan, PlanInput, Step};
use capw_sdk::types::{Condition, ConditionStatus, Endpoint, InProgress, KubernetesVersion};

use crate::api::{ControlPlaneState, ManagedControlPlane};
use crate::version::{self, Stepping};

/// How soon to ask again while the service creates the control plane.
pub const CREATING_POLL: Duration = Duration::from_secs(5);

/// How soon to ask again while the service updates it.
pub const UPDATING_POLL: Duration = Duration::from_secs(5);

/// Where a Cluster asks for `failures-tolerated`, as refusals name it.
pub const FAILURES_TOLERATED_FIELD: &str = "spec.topology.controlPlane.failuresTolerated";

/// Condition type: the service serves the control plane.
pub const SERVICE_READY: &str = "ServiceReady";
/// Reason of [`SERVICE_READY`] (and [`UP_TO_DATE`]) False once the service failed.
pub const SERVICE_FAILED: &str = "ServiceFailed";
/// Condition type: the service runs the desired version.
pub const UP_TO_DATE: &str = "UpToDate";
/// Condition type: the service runs a later version than desired (it upgraded itself).
pub const VERSION_AHEAD: &str = "VersionAhead";

/// A desired state the service cannot be brought to. Permanent: the same input fails again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssessError {
    /// The Cluster asks the control plane to survive more failures than the service promises.
    #[error(
        "{FAILURES_TOLERATED_FIELD} {asked}: the managed control plane tolerates {promised} \
         failed members with its {replicas} replicas; simcloud runs at most 5 (tolerating 2), \
         set by the provider config's `replicas` when the service creates it"
    )]
    FailuresTolerated {
        /// The Cluster's ask.
        asked: u32,
        /// The service's promise.
        promised: u32,
        /// The replicas the promise comes from.
        replicas: u32,
    },
    /// The desired version has another major version than the service's.
    #[error(
        "the managed control plane runs {current} and cannot move to {desired}: updates stay \
         within the major version"
    )]
    MajorChange {
        /// What the service runs.
        current: KubernetesVersion,
        /// What the Cluster asks.
        desired: KubernetesVersion,
    },
    /// simcloud answered a version this provider cannot read. Retryable: a service bug or a
    /// newer simcloud, not the input.
    #[error("managed control plane {id} reports version `{version}`, which is not `[v]X.Y.Z`")]
    BadServiceVersion {
        /// The control plane's id.
        id: String,
        /// The version as simcloud spelt it, escaped.
        version: String,
    },
}

/// The answer for one look at the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// The step, status and counts for the host.
    pub plan: Plan,
    /// The version to ask the service to update to now, when it should start an update.
    pub update: Option<KubernetesVersion>,
}

/// Refuses a `failures-tolerated` ask above `promised`.
///
/// # Errors
///
/// [`AssessError::FailuresTolerated`].
pub fn check_failures_tolerated(
    asked: Option<u32>,
    promised: u32,
    replicas: u32,
) -> Result<(), AssessError> {
    match asked {
        Some(asked) if asked > promised => Err(AssessError::FailuresTolerated {
            asked,
            promised,
            replicas,
        }),
        _ => Ok(()),
    }
}

/// The step, status and counts for `cp` as the service reports it, moving toward `input`.
///
/// See the [module docs](self) for the rules.
///
/// # Guarantees
///
/// - `status.initialized` and `status.ready` once the service serves (`ready` or `updating`;
///   a control plane is `creating` only before it served once, and serves nothing once
///   `failed`); `status.version` the service's version then, `None` while creating or failed.
/// - `replicas` is the service's; `ready-replicas` is it while the service serves, else 0;
///   `up-to-date-replicas` is it only while the service serves the desired version, else 0.
/// - `status.failures-tolerated` is the service's promise while it serves, `None` before.
/// - `update` is set only for a `ready` service below the desired version, and is at most one
///   minor above the service's version.
/// - A `failed` service's step is `none`, never `wait`: nothing is under way and nothing the
///   provider may do brings it back (simcloud refuses updates of a failed control plane; only
///   a delete moves on). `none` rather than a permanent provider error because the answer is
///   the status: with it the host records `ready` false and the `ServiceFailed` condition
///   with the service's reason, and shows `ControlPlaneReady` False; an error would leave the
///   status the host last recorded (the service `Updating`, ready) in place beside it. The
///   host joins and upgrades no worker against a control plane that is not ready, and
///   `delete-control-plane` deletes a failed one as any other.
///
/// # Errors
///
/// [`AssessError`]: an ask beyond the service's promise, a major version change, a version
/// simcloud spells in a way this provider cannot read.
pub fn assess(cp: &ManagedControlPlane, input: &PlanInput) -> Result<Assessment, AssessError> {
    check_failures_tolerated(input.failures_tolerated, cp.failures_tolerated, cp.replicas)?;
    let current = version::parse(&cp.version).ok_or_else(|| AssessError::BadServiceVersion {
        id: cp.id.clone(),
        version: cp.version.escape_debug().to_string(),
    })?;
    let desired = input.version;
    let serving = matches!(
        cp.state,
        ControlPlaneState::Ready | ControlPlaneState::Updating
    );
    let stepping = version::next_step(current, desired);
    if stepping == Stepping::MajorChange {
        return Err(AssessError::MajorChange { current, desired });
    }
    let (step, update) = match (cp.state, stepping) {
        (ControlPlaneState::Creating, _) => (
            wait(
                "ServiceCreating",
                format!(
                    "simcloud is creating managed control plane {} at {current}",
                    cp.id
                ),
                CREATING_POLL,
            ),
            None,
        ),
        (ControlPlaneState::Updating, _) => (
            wait(
                "ServiceUpdating",
                format!(
                    "managed control plane {} is updating from {current} to {}; {desired} is \
                     desired",
                    cp.id,
                    target(cp)
                ),
                UPDATING_POLL,
            ),
            None,
        ),
        (ControlPlaneState::Ready, Stepping::Next(next)) => (
            wait(
                "UpdateRequested",
                format!(
                    "asking managed control plane {} to update from {current} to {next}, one \
                     minor version at a time toward {desired}",
                    cp.id
                ),
                UPDATING_POLL,
            ),
            Some(next),
        ),
        (ControlPlaneState::Ready, _) => (Step::None, None),
        // Not `wait`: nothing is under way. See the guarantees above for why not an error.
        (ControlPlaneState::Failed, _) => (Step::None, None),
    };
    // A service ahead of the spec (it upgraded itself) is not behind it: its members count as
    // up to date, so the host shows the cluster ready and never asks for a downgrade.
    let reached = serving
        && cp.state == ControlPlaneState::Ready
        && matches!(stepping, Stepping::Reached | Stepping::Ahead);
    let replicas = cp.replicas;
    Ok(Assessment {
        plan: Plan {
            step,
            status: ControlPlaneStatus {
                initialized: serving,
                ready: serving,
                version: serving.then_some(current),
                endpoint: cp.endpoint.as_ref().map(|e| Endpoint {
                    host: e.host.clone(),
                    port: e.port,
                }),
                conditions: conditions(cp, current, desired, stepping),
                failures_tolerated: serving.then_some(cp.failures_tolerated),
            },
            replicas,
            ready_replicas: if serving { replicas } else { 0 },
            up_to_date_replicas: if reached { replicas } else { 0 },
            certificates: Vec::new(),
            shared_datastore: None,
        },
        update,
    })
}

fn wait(reason: &str, message: String, after: Duration) -> Step {
    Step::Wait(InProgress::new(reason, message).requeue_after(after))
}

/// Why the service failed, as simcloud reports it: one line (simcloud promises it; control
/// characters become spaces all the same, as the text comes from outside the provider).
fn failure_reason(cp: &ManagedControlPlane) -> String {
    match cp.failure_reason.as_deref().map(str::trim) {
        Some(reason) if !reason.is_empty() => reason
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect(),
        _ => "simcloud gave no reason".to_owned(),
    }
}

/// The version an update in progress goes to, as simcloud reports it.
fn target(cp: &ManagedControlPlane) -> String {
    cp.target_version
        .as_deref()
        .and_then(version::parse)
        .map_or_else(|| "a new version".to_owned(), |v| v.to_string())
}

/// `ServiceReady` and `UpToDate`, and `VersionAhead` while the service is ahead.
fn conditions(
    cp: &ManagedControlPlane,
    current: KubernetesVersion,
    desired: KubernetesVersion,
    stepping: Stepping,
) -> Vec<Condition> {
    let id = &cp.id;
    let service_ready = match cp.state {
        ControlPlaneState::Creating => Condition::new(
            SERVICE_READY,
            ConditionStatus::False,
            "Creating",
            format!("simcloud is creating managed control plane {id}"),
        ),
        ControlPlaneState::Ready => Condition::new(
            SERVICE_READY,
            ConditionStatus::True,
            "Ready",
            format!(
                "managed control plane {id} serves {current} with {} replicas",
                cp.replicas
            ),
        ),
        ControlPlaneState::Updating => Condition::new(
            SERVICE_READY,
            ConditionStatus::True,
            "Updating",
            format!(
                "managed control plane {id} serves {current} while it updates to {}",
                target(cp)
            ),
        ),
        ControlPlaneState::Failed => Condition::new(
            SERVICE_READY,
            ConditionStatus::False,
            SERVICE_FAILED,
            format!(
                "managed control plane {id} failed: {}; simcloud does not repair it and takes \
                 no update: delete the Cluster to remove it",
                failure_reason(cp)
            ),
        ),
    };
    let up_to_date = match (cp.state, stepping) {
        (ControlPlaneState::Failed, _) => Condition::new(
            UP_TO_DATE,
            ConditionStatus::False,
            SERVICE_FAILED,
            match &cp.target_version {
                Some(_) => format!(
                    "failed updating from {current} to {}; {desired} is desired",
                    target(cp)
                ),
                None => format!("failed creating it at {current}; {desired} is desired"),
            },
        ),
        (ControlPlaneState::Creating, _) => Condition::new(
            UP_TO_DATE,
            ConditionStatus::False,
            "Creating",
            format!("created at {current}; {desired} is desired"),
        ),
        (_, Stepping::Reached) => Condition::new(
            UP_TO_DATE,
            ConditionStatus::True,
            "UpToDate",
            format!("runs {desired}"),
        ),
        (_, Stepping::Ahead) => Condition::new(
            UP_TO_DATE,
            ConditionStatus::False,
            "VersionAhead",
            format!("runs {current}, later than the desired {desired}"),
        ),
        (ControlPlaneState::Updating, _) => Condition::new(
            UP_TO_DATE,
            ConditionStatus::False,
            "Updating",
            format!(
                "runs {current}, updating to {} toward {desired}",
                target(cp)
            ),
        ),
        _ => Condition::new(
            UP_TO_DATE,
            ConditionStatus::False,
            "UpdateRequested",
            format!("runs {current}; {desired} is desired"),
        ),
    };
    let mut conditions = vec![service_ready, up_to_date];
    if stepping == Stepping::Ahead {
        conditions.push(Condition::new(
            VERSION_AHEAD,
            ConditionStatus::True,
            "ServiceUpgraded",
            format!(
                "the service runs {current}, later than the desired {desired}: it upgraded the \
                 control plane itself, and a downgrade is never asked; raise the Cluster's \
                 version to {current}"
            ),
        ));
    }
    conditions
}

#[cfg(test)]
mod tests;
