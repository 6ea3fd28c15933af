//! `RecordUpToDate`: each worker Machine's `UpToDate` condition, naming what differs from its
//! pool's current inputs (the version, and each input that shapes a machine), so that
//! `capw describe cluster` shows why a machine will be replaced before it is. A machine that
//! was always up to date carries none (absent means up to date).

use capw_api::{ConditionStatus, Machine, MachineRole};

use crate::pass::env::{Env, machine_condition};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::{Snapshot, changed_inputs};

/// The Machine condition: made for the desired version and with its pool's current inputs.
pub(crate) const UP_TO_DATE: &str = "UpToDate";

/// Writes each live worker Machine's `UpToDate` where it changed.
pub(crate) async fn record_up_to_date(env: &Env, s: &Snapshot) -> Option<ActionNote> {
    let desired = s.desired.as_ref().ok()?;
    for m in (s.machines.iter())
        .filter(|m| m.metadata.deletion_timestamp.is_none() && m.spec.role == MachineRole::Worker)
    {
        let Some(pool) = desired.pools.iter().find(|p| p.name == m.spec.pool) else {
            continue;
        };
        let judged = judge(m, &pool.version, pool.rollout.on_delete, s);
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

/// `UpToDate` of worker `m` in a pool that wants `version`.
fn judge(
    m: &Machine,
    version: &str,
    on_delete: bool,
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
    let then = if on_delete {
        "replaced once deleted (rollout OnDelete)"
    } else {
        "to be replaced"
    };
    (
        ConditionStatus::False,
        "NotUpToDate",
        format!("{}; {then}", why.join("; ")),
    )
}
