//! `DrainNode`: a machine's Node drained before the machine is deleted. The machine is marked
//! deleted first (its finalizer holds it), so a deletion once chosen is finished by later
//! passes whatever happens to the pool meanwhile; each round then cordons the Node, evicts
//! what may leave now through the eviction API and records on the Machine's
//! `DrainingSucceeded` condition what is left and what holds it. The core reads only that
//! condition back (`capw_reconcile::DrainView`): it decides the next round, the timeout, and
//! when the deletion goes on.

use std::time::Duration;

use capw_api::{ConditionStatus, Machine};
use capw_reconcile::{
    DRAIN_SKIPPED, DRAIN_TIMED_OUT, DRAINED, DRAINING, DRAINING_SUCCEEDED, DrainStep,
};
use capw_text::error_chain as chain;
use capw_workload::DrainRound;

use crate::pass::env::{Env, machine_condition};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::key_of;

/// How soon a drain that is under way is looked at again: evicted Pods terminate within their
/// grace period, and a budget may allow the next eviction as soon as a replacement is Ready.
const ROUND_INTERVAL: Duration = Duration::from_secs(2);

/// At most this many Pods are named in the condition's message; the rest are counted.
const NAMED_PODS: usize = 5;

/// `DrainNode`: marks `m` deleted, then takes `step`.
pub(crate) async fn drain(env: &Env, s: &Snapshot, m: &Machine, step: &DrainStep) -> ActionNote {
    let name = m.metadata.name.clone().unwrap_or_default();
    if m.metadata.deletion_timestamp.is_none() {
        tracing::info!(cluster = %s.name, machine = %name, "deleting machine (its Node is drained first)");
        if let Err(e) = env
            .store
            .delete(&key_of::<Machine>(&s.namespace, &name))
            .await
        {
            return Env::store_failed(DRAINING_SUCCEEDED, &e);
        }
    }
    let (status, reason, message, requeue) = match step {
        DrainStep::Skip { reason } => (ConditionStatus::True, DRAIN_SKIPPED, reason.clone(), None),
        DrainStep::GiveUp {
            node,
            after_seconds,
        } => {
            let last = machine_condition(m, DRAINING_SUCCEEDED)
                .map(|c| c.message.clone())
                .unwrap_or_default();
            tracing::warn!(cluster = %s.name, machine = %name, node = %node, "drain timed out; the machine is deleted with what is left on its Node");
            (
                ConditionStatus::False,
                DRAIN_TIMED_OUT,
                format!(
                    "Node {node} was not drained within {after_seconds}s (deletion.nodeDrainTimeoutSeconds); the machine is deleted with what is left. Last round: {last}"
                ),
                None,
            )
        }
        DrainStep::Evict { node } => match round(env, s, node).await {
            Ok(r) if r.drained() => (
                ConditionStatus::True,
                DRAINED,
                drained_message(node, &r),
                None,
            ),
            Ok(r) => (
                ConditionStatus::False,
                DRAINING,
                draining_message(node, &r),
                Some(ROUND_INTERVAL),
            ),
            Err(message) => (
                ConditionStatus::False,
                DRAINING,
                message,
                Some(ROUND_INTERVAL),
            ),
        },
    };
    if let Err(note) = env
        .write_machine_condition(s, m, DRAINING_SUCCEEDED, (status, reason, message))
        .await
    {
        return note;
    }
    match requeue {
        None => ActionNote::done(),
        Some(after) => ActionNote::done().requeue_after(Some(after)),
    }
}

/// One round through the cluster cache; the error as a sentence naming the Node, without
/// credentials.
async fn round(env: &Env, s: &Snapshot, node: &str) -> Result<DrainRound, String> {
    let (Some(cache), Some(kubeconfig)) = (env.cluster_cache.as_deref(), &s.kubeconfig) else {
        return Err(format!(
            "draining Node {node}: the workload cluster's kubeconfig is not stored yet"
        ));
    };
    cache
        .drain_node(&s.cluster_id(), &kubeconfig.value, node)
        .await
        .map_err(|e| chain(&e))
}

fn drained_message(node: &str, r: &DrainRound) -> String {
    if r.node_gone {
        return format!("Node {node} is gone: nothing to drain");
    }
    let mut text = format!("Node {node} is cordoned and every Pod left it");
    if r.skipped > 0 {
        text += &format!(
            "; {} DaemonSet or mirror Pod(s) stay, as kubectl drain leaves them",
            r.skipped
        );
    }
    if r.abandoned > 0 {
        text += &format!(
            "; {} evicted Pod(s) were not waited for: the Node's kubelet stopped reporting",
            r.abandoned
        );
    }
    text
}

/// What holds the drain: each blocked Pod with the budgets that select it and what the API
/// said, then the Pods still terminating.
fn draining_message(node: &str, r: &DrainRound) -> String {
    let mut parts = Vec::new();
    for b in r.blocked.iter().take(NAMED_PODS) {
        let held_by = match b.budgets.as_slice() {
            [] => String::new(),
            names => format!(" by PodDisruptionBudget {}", names.join(", ")),
        };
        parts.push(format!("Pod {} is held{held_by}: {}", b.pod, b.message));
    }
    if r.blocked.len() > NAMED_PODS {
        parts.push(format!("{} more Pod(s) held", r.blocked.len() - NAMED_PODS));
    }
    let leaving: Vec<&String> = r.evicted.iter().chain(&r.terminating).collect();
    if !leaving.is_empty() {
        let named: Vec<&str> = leaving
            .iter()
            .take(NAMED_PODS)
            .map(|p| p.as_str())
            .collect();
        let more = leaving.len().saturating_sub(NAMED_PODS);
        parts.push(if more > 0 {
            format!("terminating: {} and {more} more", named.join(", "))
        } else {
            format!("terminating: {}", named.join(", "))
        });
    }
    format!("draining Node {node} (cordoned): {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use capw_workload::BlockedPod;

    #[test]
    fn a_held_drain_names_the_pod_and_its_budget() {
        let r = DrainRound {
            blocked: vec![BlockedPod {
                pod: "default/web-1".into(),
                budgets: vec!["web".into()],
                message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
            }],
            terminating: vec!["default/web-0".into()],
            ..DrainRound::default()
        };
        let text = draining_message("n1", &r);
        assert!(
            text.contains("Pod default/web-1 is held by PodDisruptionBudget web"),
            "{text}"
        );
        assert!(text.contains("terminating: default/web-0"), "{text}");
    }

    #[test]
    fn many_pods_are_counted_past_the_first_few() {
        let r = DrainRound {
            evicted: (0..8).map(|i| format!("ns/p{i}")).collect(),
            ..DrainRound::default()
        };
        let text = draining_message("n1", &r);
        assert!(text.ends_with("and 3 more"), "{text}");
    }
}
