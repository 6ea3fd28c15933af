//! `RecordHealth`: each Machine's `HealthCheckSucceeded` where its pool (or the control plane)
//! has health checks,
//! as the core's [`machine_health`] judges it, so that a machine about to be replaced says why
//! (and one that is not judged, because the workload cluster is not seen, says that).

use capw_api::{ConditionStatus, MachineRole};
use capw_reconcile::{HEALTH_CHECK_SUCCEEDED, Health, WorkloadView, machine_health};

use crate::pass::convert::core_health_check;
use crate::pass::env::{Env, machine_condition};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::{Snapshot, machine_view};

/// Writes each live Machine's `HealthCheckSucceeded` where it changed.
pub(crate) async fn record_health(
    env: &Env,
    s: &Snapshot,
    workload: &WorkloadView,
    now_seconds: u64,
) -> Option<ActionNote> {
    // With access off nothing is observed, so nothing is written either: a fleet the host
    // cannot see carries no condition that would only say so on every machine.
    if matches!(workload, WorkloadView::Off) {
        return None;
    }
    let desired = s.desired.as_ref().ok()?;
    for m in (s.machines.iter()).filter(|m| m.metadata.deletion_timestamp.is_none()) {
        let check = if m.spec.role == MachineRole::Worker {
            (desired.pools.iter())
                .find(|p| p.name == m.spec.pool)
                .and_then(|p| p.health_check.as_ref())
        } else {
            desired.control_plane.health_check.as_ref()
        };
        let Some(check) = check else {
            continue;
        };
        let Some(view) = machine_view(m, Some(desired)) else {
            continue;
        };
        let (status, reason, message) =
            match machine_health(&view, &core_health_check(check), workload, now_seconds) {
                Health::Healthy => (ConditionStatus::True, "Healthy", String::new()),
                Health::Unhealthy { reason, message } => (ConditionStatus::False, reason, message),
                Health::Unknown { message } => (ConditionStatus::Unknown, "NotObserved", message),
            };
        if status == ConditionStatus::False
            && machine_condition(m, HEALTH_CHECK_SUCCEEDED)
                .is_none_or(|c| c.status != ConditionStatus::False)
        {
            tracing::info!(
                cluster = %s.name,
                machine = %view.name,
                reason,
                %message,
                "machine judged unhealthy",
            );
        }
        let judged = (status, reason, message);
        if let Err(note) = env
            .write_machine_condition(s, m, HEALTH_CHECK_SUCCEEDED, judged)
            .await
        {
            return Some(note);
        }
    }
    None
}
