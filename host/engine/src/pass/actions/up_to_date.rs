//! `RecordUpToDate`: each worker Machine's `UpToDate` condition, naming what differs from its
//! pool's current inputs (the version, and each input that shapes a machine), so that
//! `capw describe cluster` shows why a machine will be replaced before it is.

use capw_api::{Condition, ConditionStatus, Machine, MachineRole, set_condition};

use crate::objects::now;
use crate::pass::env::Env;
use crate::pass::note::ActionNote;
use crate::pass::snapshot::{Snapshot, changed_inputs};
use crate::store::StoreError;

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
        let (status, reason, message) = judge(m, &pool.version, pool.rollout.on_delete, s);
        let conditions = m.status.as_ref().map(|st| st.conditions.as_slice());
        let current = conditions
            .unwrap_or_default()
            .iter()
            .find(|c| c.type_ == UP_TO_DATE);
        if current.is_some_and(|c| c.status == status && c.reason == reason && c.message == message)
        {
            continue;
        }
        let name = m.metadata.name.clone().unwrap_or_default();
        let condition = Condition::new(UP_TO_DATE, status, reason, message, now());
        let written = env
            .write_machine_status(s, &name, |st| {
                set_condition(&mut st.conditions, condition.clone());
            })
            .await;
        match written {
            Ok(()) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Some(Env::store_failed(UP_TO_DATE, &e)),
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
