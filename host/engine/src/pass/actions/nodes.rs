//! `RecordNodes`: each Machine's nodeRef, `ready` and `NodeHealthy` as the workload
//! cluster's Nodes show them (with workload cluster access on).

use capw_api::{Condition, MachineStatus, NodeRef, set_condition};
use capw_reconcile::{NODE_HEALTHY, NodeRefUpdate, WorkloadView, node_health};

use crate::objects::now;
use crate::pass::convert::api_condition_of;
use crate::pass::env::Env;
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::StoreError;

/// Writes each live Machine's nodeRef, `ready` and `NodeHealthy` as `workload` shows them;
/// nothing with access off. Machines whose status would not change are not written.
pub(crate) async fn record_nodes(
    env: &Env,
    s: &Snapshot,
    workload: &WorkloadView,
) -> Option<ActionNote> {
    if !workload.observed() {
        return None;
    }
    for m in s
        .machines
        .iter()
        .filter(|m| m.metadata.deletion_timestamp.is_none())
    {
        let status = m.status.clone().unwrap_or_default();
        let Some(health) = node_health(status.provider_id.as_deref(), workload) else {
            continue;
        };
        let mut next = status.clone();
        apply_health(&mut next, &health);
        if next == status {
            continue;
        }
        let name = m.metadata.name.clone().unwrap_or_default();
        let written = env
            .write_machine_status(s, &name, |st| apply_health(st, &health))
            .await;
        match written {
            Ok(()) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Some(Env::store_failed(NODE_HEALTHY, &e)),
        }
    }
    None
}

/// `health` in a Machine's status: nodeRef, `ready` (running and its Node Ready), and the
/// `NodeHealthy` condition.
fn apply_health(st: &mut MachineStatus, health: &capw_reconcile::NodeHealth) {
    match &health.node_ref {
        NodeRefUpdate::Keep => {}
        NodeRefUpdate::Set(name) => st.node_ref = Some(NodeRef { name: name.clone() }),
        NodeRefUpdate::Clear => st.node_ref = None,
    }
    st.ready = st.phase == capw_api::MachinePhase::Running && health.healthy == Some(true);
    let status = api_condition_of(health.healthy);
    let condition = Condition::new(
        NODE_HEALTHY,
        status,
        health.reason.clone(),
        health.message.clone(),
        now(),
    );
    // Same status: the transition time stays, so an unchanged health changes nothing.
    set_condition(&mut st.conditions, condition);
}
