//! Draining a machine's Node before the machine is deleted, as Cluster API's Machine
//! controller does: the Node is cordoned and its Pods evicted (PodDisruptionBudgets
//! respected), bounded by the pool's `deletion.nodeDrainTimeoutSeconds`; only then does the
//! machine's deletion go on. Each round records its progress on the Machine's
//! [`DRAINING_SUCCEEDED`] condition, which is all the core reads back: a kill at any point is
//! taken up by the next pass, and the timeout counts from the first round.

use crate::decide::Action;
use crate::view::{ClusterView, MachineView};
use crate::workload::WorkloadView;

/// Condition type on a Machine being deleted: whether its Node was drained, or what holds the
/// drain (Cluster API's v1beta1 name).
pub const DRAINING_SUCCEEDED: &str = "DrainingSucceeded";

/// Reason of [`DRAINING_SUCCEEDED`] while Pods are still on the Node.
pub const DRAINING: &str = "Draining";
/// Reason of [`DRAINING_SUCCEEDED`] once nothing that must leave is on the Node.
pub const DRAINED: &str = "Drained";
/// Reason of [`DRAINING_SUCCEEDED`] when there was nothing the host could drain.
pub const DRAIN_SKIPPED: &str = "DrainSkipped";
/// Reason of [`DRAINING_SUCCEEDED`] when the timeout passed first: the deletion went on.
pub const DRAIN_TIMED_OUT: &str = "DrainTimedOut";

/// Where a machine's drain is, as its [`DRAINING_SUCCEEDED`] condition records it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DrainView {
    /// No round yet.
    #[default]
    NotStarted,
    /// Rounds under way since this time (seconds since the Unix epoch).
    Draining { since: u64 },
    /// Drained, skipped, or timed out: the deletion goes on.
    Finished,
}

impl DrainView {
    /// The view of a [`DRAINING_SUCCEEDED`] condition with `status` (`None` for Unknown),
    /// `reason` and last transition `since`; `None` when the Machine has no such condition.
    pub fn of_condition(condition: Option<(Option<bool>, &str, u64)>) -> Self {
        match condition {
            None => DrainView::NotStarted,
            Some((Some(true), _, _)) => DrainView::Finished,
            Some((_, DRAIN_TIMED_OUT, _)) => DrainView::Finished,
            Some((_, _, since)) => DrainView::Draining { since },
        }
    }
}

/// What a drain step does this pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrainStep {
    /// Cordon the Node and evict what may leave now; record what is left.
    Evict { node: String },
    /// Record that nothing is drained, and why; the deletion goes on in the next pass.
    Skip { reason: String },
    /// Record that the timeout passed with Pods left; the deletion goes on in the next pass.
    GiveUp { node: String, after_seconds: u64 },
}

/// Seconds the machine's Node is drained at most: its pool's timeout, the control plane's for
/// its machines; `0` without limit.
fn timeout_of(view: &ClusterView, m: &MachineView) -> u64 {
    if m.role.is_control_plane() {
        return view.control_plane_drain_timeout;
    }
    view.pools
        .iter()
        .find(|p| p.name == m.pool)
        .map_or(view.control_plane_drain_timeout, |p| p.drain_timeout)
}

/// The drain step `m` needs before its deletion, or `None` when it may be deleted now.
fn step(view: &ClusterView, m: &MachineView) -> Option<DrainStep> {
    let since = match m.drain {
        DrainView::Finished => return None,
        DrainView::NotStarted => None,
        DrainView::Draining { since } => Some(since),
    };
    if let WorkloadView::Off = view.workload {
        return Some(DrainStep::Skip {
            reason: "workload cluster access is off (--workload-clusters off): no Node is seen, \
                     nothing is drained"
                .into(),
        });
    }
    let Some(node) = &m.node else {
        return Some(DrainStep::Skip {
            reason: "the machine never had a Node".into(),
        });
    };
    let timeout = timeout_of(view, m);
    if let Some(since) = since
        && timeout > 0
        && view.now >= since.saturating_add(timeout)
    {
        return Some(DrainStep::GiveUp {
            node: node.clone(),
            after_seconds: timeout,
        });
    }
    Some(DrainStep::Evict { node: node.clone() })
}

/// Routes the deletions of `actions` through a drain: a machine whose Node is not drained yet
/// gets [`Action::DrainNode`] instead of its [`Action::DeleteMachine`]. The drain step marks
/// the machine deleted first, so that the deletion, once chosen, is finished whatever the
/// pool does meanwhile.
pub(crate) fn route(view: &ClusterView, actions: Vec<Action>) -> Vec<Action> {
    actions
        .into_iter()
        .map(|action| {
            let Action::DeleteMachine { machine } = &action else {
                return action;
            };
            let Some(m) = view.machines.iter().find(|m| m.name == *machine) else {
                return action;
            };
            match step(view, m) {
                None => action,
                Some(step) => Action::DrainNode {
                    machine: machine.clone(),
                    step,
                },
            }
        })
        .collect()
}
