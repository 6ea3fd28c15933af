//! `RecordUpToDate`: each Machine's `UpToDate` condition, naming what differs from its pool's
//! (or the control plane's) current inputs (the version, and each input that shapes a
//! machine), so that `capw describe cluster` shows why a machine will be replaced before it
//! is. A machine that was always up to date carries none (absent means up to date).

use capw_api::{ConditionStatus, Machine, MachineRole};

use crate::pass::env::{Env, machine_condition};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::{Snapshot, changed_inputs};

/// The Machine condition: made for the desired version and with its pool's current inputs.
pub(crate) const UP_TO_DATE: &str = "UpToDate";

/// What becomes of an out-of-date machine.
#[derive(Clone, Copy)]
enum Then {
    /// A pool rolls it.
    Rolled,
    /// A pool with `rollout.strategy: OnDelete` waits for someone to delete it.
    OnDelete,
    /// The control-plane provider replaces it through its plan (contract 0.3 on).
    Planned,
    /// The control-plane provider is told only its version (before 0.3): a changed input is
    /// not acted on.
    VersionOnly,
}

/// Writes each live Machine's `UpToDate` where it changed; `rolls_inputs`: whether the
/// control-plane provider is told what changed besides the version.
pub(crate) async fn record_up_to_date(
    env: &Env,
    s: &Snapshot,
    rolls_inputs: bool,
) -> Option<ActionNote> {
    let desired = s.desired.as_ref().ok()?;
    for m in (s.machines.iter()).filter(|m| m.metadata.deletion_timestamp.is_none()) {
        let (version, then) = if m.spec.role == MachineRole::Worker {
            let Some(pool) = desired.pools.iter().find(|p| p.name == m.spec.pool) else {
                continue;
            };
            let then = if pool.rollout.on_delete {
                Then::OnDelete
            } else {
                Then::Rolled
            };
            (&pool.version, then)
        } else if rolls_inputs {
            (&desired.control_plane.version, Then::Planned)
        } else {
            (&desired.control_plane.version, Then::VersionOnly)
        };
        let judged = judge(m, version, then, s);
        // A machine that was never out of date gets no `UpToDate`: a fleet of new machines
        // costs no extra write each. Once written, it follows the machine both ways.
        if machine_condition(m, UP_TO_DATE).is_none() && judged.0 == ConditionStatus::True {
            continue;
        }
        if let Err(note) = env.write_machine_condition(s, m, UP_TO_DATE, judged).await {
            return Some(note);
        }
    }
    None
}

/// `UpToDate` of `m`, wanted at `version`.
fn judge(
    m: &Machine,
    version: &str,
    then: Then,
    s: &Snapshot,
) -> (ConditionStatus, &'static str, String) {
    let mut why = Vec::new();
    if m.spec.version.trim_start_matches('v') != version.trim_start_matches('v') {
        why.push(format!("version {} (wanted {version})", m.spec.version));
    }
    let changed = changed_inputs(m, s.desired.as_ref().ok());
    if !changed.is_empty() {
        why.push(format!("changed: {}", changed.join(", ")));
    }
    if why.is_empty() {
        return (ConditionStatus::True, "UpToDate", String::new());
    }
    let then = match then {
        Then::Rolled => "to be replaced",
        Then::OnDelete => "replaced once deleted (rollout OnDelete)",
        Then::Planned => "to be replaced through the control-plane provider's plan",
        Then::VersionOnly if changed.is_empty() || why.len() > 1 => {
            "to be replaced through the control-plane provider's plan"
        }
        Then::VersionOnly => {
            "not replaced: the control-plane provider (contract before 0.3) is told only versions"
        }
    };
    (
        ConditionStatus::False,
        "NotUpToDate",
        format!("{}; {then}", why.join("; ")),
    )
}
