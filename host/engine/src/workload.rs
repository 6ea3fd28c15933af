//! Workload cluster access in a pass: what the [`ClusterCache`] sees of the cluster, as the
//! core's [`WorkloadView`], and each Machine's node reference and `NodeHealthy` from it.

use std::time::Duration;

use crate::store::key_of;
use capw_api::{Condition, ConditionStatus, Machine, MachineStatus, NodeRef, set_condition};
use capw_reconcile::{
    NODE_HEALTHY, NodeCondition, NodeRefUpdate, NodeView, WorkloadView, node_health,
};
use capw_workload::{ApiAvailability, ClusterCache, ClusterId, ReadyStatus, WorkloadObservation};

use crate::actions::Env;
use crate::calls::{ActionNote, chain};
use crate::objects::now;
use crate::view::Snapshot;

/// Slack over the cache's own bounds before an observation is given up: the cache bounds
/// itself; this only guards against a bound it did not foresee.
const OBSERVE_SLACK: Duration = Duration::from_secs(2);

/// How long a deleted machine's Node deletion is tried before the machine goes without it
/// (Cluster API's `nodeDeletionTimeout` defaults to 10 s as well).
const NODE_DELETION_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether workload clusters are reached, and how.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WorkloadClusterAccess {
    /// Nothing is asked of workload clusters and no kubeconfig is written: a machine is
    /// ready when its infrastructure says it runs, and its nodeRef is its own name. For
    /// simulated boots, whose endpoints are not reachable hosts.
    #[default]
    Off,
    /// The admin kubeconfig is stored, and each cluster is reached through it by a
    /// [`ClusterCache`] with these settings.
    Connect(capw_workload::ClusterCacheConfig),
}

/// The cluster of `s` as the cache names it.
pub(crate) fn cluster_id(s: &Snapshot) -> ClusterId {
    ClusterId {
        namespace: s.namespace.clone(),
        name: s.name.clone(),
        uid: s.uid.clone(),
    }
}

/// The workload cluster of `s` as the core sees it, and a note asking for a later pass when
/// it could not be reached. [`WorkloadView::Off`] without a cache; nothing is observed of a
/// cluster being deleted.
pub(crate) async fn observe(
    cache: Option<&ClusterCache>,
    s: &Snapshot,
) -> (WorkloadView, Option<ActionNote>) {
    let Some(cache) = cache else {
        return (WorkloadView::Off, None);
    };
    if s.deleting() {
        return (WorkloadView::Off, None);
    }
    let Some(kubeconfig) = &s.kubeconfig else {
        let message = "waiting for the kubeconfig Secret".to_string();
        return (WorkloadView::NotConnected { message }, None);
    };
    let config = cache.config();
    let bound = config.connect_timeout + config.probe_timeout + config.sync_timeout + OBSERVE_SLACK;
    let retry = Some(config.max_retry);
    let observed =
        tokio::time::timeout(bound, cache.observe(&cluster_id(s), &kubeconfig.value)).await;
    match observed {
        Ok(Ok(observation)) => from_observation(observation),
        Ok(Err(e)) => {
            let message = format!("{}: {}", kubeconfig.endpoint, chain(&e));
            (
                WorkloadView::NotConnected { message },
                Some(ActionNote::retry_later(retry)),
            )
        }
        Err(_) => {
            let message = format!("{}: no answer within {bound:?}", kubeconfig.endpoint);
            (
                WorkloadView::Unreachable { message },
                Some(ActionNote::retry_later(retry)),
            )
        }
    }
}

fn from_observation(o: WorkloadObservation) -> (WorkloadView, Option<ActionNote>) {
    match o.api {
        ApiAvailability::Unreachable { error } => (
            WorkloadView::Unreachable {
                message: format!("{}: {error}", o.server),
            },
            Some(ActionNote::retry_later(o.retry_after)),
        ),
        ApiAvailability::Available => {
            let nodes = o.nodes.map(|nodes| {
                nodes
                    .into_iter()
                    .map(|n| NodeView {
                        name: n.name,
                        provider_id: n.provider_id,
                        ready: n.ready.map(|r| NodeCondition {
                            status: match r.status {
                                ReadyStatus::True => Some(true),
                                ReadyStatus::False => Some(false),
                                ReadyStatus::Unknown => None,
                            },
                            reason: r.reason,
                            message: r.message,
                        }),
                    })
                    .collect()
            });
            (WorkloadView::Available { nodes }, None)
        }
    }
}

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
        let key = key_of::<Machine>(&s.namespace, &name);
        let written = env
            .store
            .update(&key, &mut |object| {
                let current = object.get("status").cloned().unwrap_or_default();
                let mut st: MachineStatus = serde_json::from_value(current).unwrap_or_default();
                apply_health(&mut st, &health);
                object["status"] = serde_json::to_value(st)
                    .map_err(|e| crate::store::StoreError::Invalid(e.to_string()))?;
                Ok(())
            })
            .await;
        match written {
            Ok(_) | Err(crate::store::StoreError::NotFound(_)) => {}
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
    let status = match health.healthy {
        Some(true) => ConditionStatus::True,
        Some(false) => ConditionStatus::False,
        None => ConditionStatus::Unknown,
    };
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

/// Once machine `m`'s infrastructure is gone, deletes its Node from the workload cluster, as
/// Cluster API's Machine controller does, so that the Nodes follow the Machines.
///
/// # Guarantees
///
/// Best effort and bounded: a cluster being deleted (its API goes with it), a machine that
/// never got a Node, access off, or a workload API that does not delete it within
/// [`NODE_DELETION_TIMEOUT`] leaves the Node and never holds up the machine's deletion; the failure is logged with
/// the endpoint and the Node's name only.
pub(crate) async fn delete_node(env: &Env, s: &Snapshot, m: &capw_api::Machine) {
    let (Some(cache), Some(kubeconfig)) = (env.cluster_cache.as_deref(), &s.kubeconfig) else {
        return;
    };
    let Some(node) = m.status.as_ref().and_then(|st| st.node_ref.as_ref()) else {
        return;
    };
    if s.deleting() {
        return;
    }
    // Retried within the bound: while a control-plane machine goes, the load balancer may
    // still send a request to its API server for a second.
    let bound = NODE_DELETION_TIMEOUT;
    let deleted = tokio::time::timeout(bound, async {
        loop {
            match cache
                .delete_node(&cluster_id(s), &kubeconfig.value, &node.name)
                .await
            {
                Ok(()) => return Ok(()),
                Err(e @ capw_workload::ClusterCacheError::DeleteNode { .. }) => {
                    tracing::debug!(cluster = %s.name, node = %node.name, error = %chain(&e), "deleting the Node again");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(e),
            }
        }
    })
    .await;
    match deleted {
        Ok(Ok(())) => {
            tracing::info!(cluster = %s.name, node = %node.name, "deleted the machine's Node");
        }
        Ok(Err(e)) => tracing::warn!(
            cluster = %s.name,
            node = %node.name,
            endpoint = %kubeconfig.endpoint,
            error = %chain(&e),
            "the machine's Node stays in the workload cluster",
        ),
        Err(_) => tracing::warn!(
            cluster = %s.name,
            node = %node.name,
            endpoint = %kubeconfig.endpoint,
            "the machine's Node stays in the workload cluster: no answer within {bound:?}",
        ),
    }
}
