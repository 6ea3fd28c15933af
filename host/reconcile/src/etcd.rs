//! etcd membership kept by the host: what the core is told of it and what it decides.
//!
//! A control-plane machine that is an etcd member leaves etcd before its machine goes
//! ([`crate::Action::RemoveEtcdMember`], which first marks the machine deleted, so that a
//! kill between the two steps is finished by the next pass); a member no machine has is
//! removed once no control-plane machine is joining. Where the host cannot see etcd the
//! core says what it does instead, in [`EtcdView`]'s variants.

use crate::decide::Action;
use crate::status::ConditionView;
use crate::view::{ClusterView, MachinePhase};

/// Condition type on a control-plane Machine: whether it is an etcd member, and how its
/// removal went.
pub const ETCD_MEMBER: &str = "EtcdMember";

/// Condition type on a Cluster whose host keeps etcd membership: every member has a machine
/// and every leaving machine left, or what waits.
pub const ETCD_MEMBERSHIP: &str = "EtcdMembership";

/// The control plane's etcd membership, as the executor observed it before the decision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EtcdView {
    /// The host does not keep etcd membership (the class gives no etcd access, or the
    /// control plane has no machines): a member leaves with its machine's own reset, and a
    /// deletion goes straight on.
    #[default]
    Unmanaged,
    /// The host keeps membership but asks nothing: workload cluster access is off, so the
    /// machines are taken as unreachable by design (a simulated cloud). Deletions go on; each
    /// skipped step says why.
    Skipped { reason: String },
    /// No member answered: a member's machine is not deleted blind, it waits.
    Unreachable { message: String },
    /// The members, each matched to the Machine it runs on where one is.
    Observed { members: Vec<EtcdMemberView> },
}

/// One member of etcd.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMemberView {
    /// etcd's member id.
    pub id: u64,
    /// Its name; empty when it was added and never started.
    pub name: String,
    /// The Machine whose address its peer URL names (or whose name it has), if any.
    pub machine: Option<String>,
}

impl EtcdView {
    /// Whether etcd lists a member on `machine`: `None` when the host did not observe etcd
    /// in this pass (unmanaged, skipped or unreachable), which is what a control-plane
    /// provider is told (contract 0.3's `member.etcd`).
    pub fn lists(&self, machine: &str) -> Option<bool> {
        matches!(self, EtcdView::Observed { .. }).then(|| self.is_member(machine))
    }

    /// Whether `machine` is a member, as far as the host knows.
    pub(crate) fn is_member(&self, machine: &str) -> bool {
        match self {
            EtcdView::Observed { members } => members
                .iter()
                .any(|m| m.machine.as_deref() == Some(machine)),
            _ => false,
        }
    }
}

/// Routes the deletions of `actions` through etcd: a control-plane machine that is a
/// member leaves etcd first ([`Action::RemoveEtcdMember`] instead of its
/// [`Action::DeleteMachine`]); where no member answers, its deletion waits; a member no
/// machine has goes once no control-plane machine is joining (a joining machine adds its
/// member before its Machine may say where it runs), never the last started one. Returns
/// the actions and, when something waits or is under way, why.
pub(crate) fn route(view: &ClusterView, actions: Vec<Action>) -> (Vec<Action>, EtcdProgress) {
    let control_plane = |name: &str| {
        view.machines
            .iter()
            .any(|m| m.name == name && m.role.is_control_plane())
    };
    let mut progress = EtcdProgress::default();
    let mut out = Vec::with_capacity(actions.len());
    for action in actions {
        let Action::DeleteMachine { machine } = &action else {
            out.push(action);
            continue;
        };
        if !control_plane(machine) {
            out.push(action);
            continue;
        }
        match &view.etcd {
            EtcdView::Unmanaged | EtcdView::Skipped { .. } => out.push(action),
            EtcdView::Unreachable { message } => progress.waiting.push(format!(
                "{machine} leaves etcd before its machine is deleted, and etcd does not answer: {message}"
            )),
            EtcdView::Observed { .. } if view.etcd.is_member(machine) => {
                progress.removing.push(machine.clone());
                out.push(Action::RemoveEtcdMember {
                    machine: machine.clone(),
                });
            }
            EtcdView::Observed { .. } => out.push(action),
        }
    }
    if let EtcdView::Observed { members } = &view.etcd {
        let settled = view
            .machines
            .iter()
            .filter(|m| m.role.is_control_plane())
            .all(|m| m.deleting || m.phase == MachinePhase::Running);
        let started = members.iter().filter(|m| m.machine.is_some()).count();
        for orphan in members.iter().filter(|m| m.machine.is_none()) {
            if settled && started > 0 {
                progress.orphans.push(orphan.id);
                out.push(Action::RemoveEtcdOrphan {
                    member: orphan.id,
                    name: orphan.name.clone(),
                });
            } else {
                progress.waiting.push(format!(
                    "member {} ({:x}) has no machine; it is removed once no control-plane machine is joining",
                    if orphan.name.is_empty() { "(never started)" } else { &orphan.name },
                    orphan.id
                ));
            }
        }
    }
    (out, progress)
}

/// What [`route`] left under way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EtcdProgress {
    /// Machines leaving etcd this pass.
    pub removing: Vec<String>,
    /// Members no machine has, removed this pass.
    pub orphans: Vec<u64>,
    /// Why something waits.
    pub waiting: Vec<String>,
}

impl EtcdProgress {
    /// The Cluster's `EtcdMembership` condition, where the host keeps membership.
    pub(crate) fn condition(&self, view: &EtcdView) -> Option<ConditionView> {
        let (status, reason, message) = match view {
            EtcdView::Unmanaged | EtcdView::Skipped { .. } => return None,
            EtcdView::Unreachable { message } => (false, "EtcdUnreachable", message.clone()),
            EtcdView::Observed { .. } if !self.waiting.is_empty() => {
                (false, "Waiting", self.waiting.join("; "))
            }
            EtcdView::Observed { .. } if !self.removing.is_empty() || !self.orphans.is_empty() => {
                let mut parts: Vec<String> = self
                    .removing
                    .iter()
                    .map(|m| format!("removing {m} from etcd"))
                    .collect();
                parts.extend(
                    self.orphans
                        .iter()
                        .map(|id| format!("removing member {id:x}, which no machine has")),
                );
                (false, "Reconciling", parts.join("; "))
            }
            EtcdView::Observed { .. } => (true, "MembersMatchMachines", String::new()),
        };
        Some(ConditionView {
            type_: ETCD_MEMBERSHIP,
            status,
            reason,
            message,
        })
    }
}
