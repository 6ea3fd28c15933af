//! The token joining machines carry, kept valid by the host: before a machine's join data is
//! made, the host looks whether the workload cluster still accepts the bootstrap provider's
//! current token, and renews it when it is missing there or past half its life (Cluster API
//! renews its pools' tokens at half their TTL). Only joins wait for it; nothing else does.

use crate::decide::Action;
use crate::status::ConditionView;
use crate::view::{ClusterView, MachinePhase, MachineRole};

/// Condition type on a Cluster whose joins carry a token the host keeps: whether the
/// workload cluster accepts it, or why joins wait.
pub const JOIN_TOKEN_VALID: &str = "JoinTokenValid";

/// The join token as the executor observed it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum JoinTokenView {
    /// Nothing to keep: the bootstrap provider's joins carry no token it renews (contract
    /// before 0.3, or it says so), or workload cluster access is off, so nothing could be
    /// looked at (a simulated cloud). Joins go on with the token stored.
    #[default]
    Unmanaged,
    /// To be looked at before a join: the core asks for [`Action::ObserveJoinToken`].
    NotObserved,
    /// The workload cluster holds the token, valid past half its life: joins go on.
    Valid {
        /// Its public id.
        id: String,
        /// When it expires, seconds since the Unix epoch; `None`: never.
        expires: Option<u64>,
    },
    /// Joins wait for a fresh token ([`Action::RenewJoinToken`]): why.
    Renew { reason: String },
    /// The token could not be looked at (the workload API or the provider did not answer):
    /// joins wait, and the message says why.
    Unknown { message: String },
}

/// Whether the token with `expires` (seconds since the epoch) and a lifetime of `ttl`
/// seconds is still good at `now`: more than half its life left. `None` expires never.
pub fn fresh(expires: Option<u64>, ttl: u64, now: u64) -> bool {
    expires.is_none_or(|at| at > now.saturating_add(ttl / 2))
}

/// Whether `action` makes join data: creating a machine that is not the first control-plane
/// member, or progressing one the infrastructure has not taken yet (its data is made again on
/// every attempt, with the token stored then).
fn joins(view: &ClusterView, action: &Action) -> bool {
    match action {
        Action::CreateMachine(intent) => intent.role != MachineRole::Init,
        Action::ReconcileMachine { machine } => view.machines.iter().any(|m| {
            m.name == *machine && m.role != MachineRole::Init && m.phase == MachinePhase::Pending
        }),
        _ => false,
    }
}

/// Holds the joins of `actions` until the token they will carry is known to be valid: asks to
/// look at it first, or to renew it. Returns the actions and the Cluster's condition when the
/// token was looked at in this pass.
pub(crate) fn route(
    view: &ClusterView,
    actions: Vec<Action>,
) -> (Vec<Action>, Option<ConditionView>) {
    let condition = |status: bool, reason: &'static str, message: String| {
        Some(ConditionView {
            type_: JOIN_TOKEN_VALID,
            status,
            reason,
            message,
        })
    };
    let shown = match &view.join_token {
        JoinTokenView::Unmanaged | JoinTokenView::NotObserved => None,
        JoinTokenView::Valid { id, expires } => condition(
            true,
            "Valid",
            match expires {
                Some(at) => format!("token {id} is valid until {at} (seconds since the epoch)"),
                None => format!("token {id} never expires"),
            },
        ),
        JoinTokenView::Renew { reason } => condition(
            false,
            "Renewing",
            format!("joins wait for a new token: {reason}"),
        ),
        JoinTokenView::Unknown { message } => condition(false, "NotObserved", message.clone()),
    };
    if !actions.iter().any(|a| joins(view, a)) {
        return (actions, shown);
    }
    let instead = match &view.join_token {
        JoinTokenView::Unmanaged | JoinTokenView::Valid { .. } => return (actions, shown),
        JoinTokenView::NotObserved => Some(Action::ObserveJoinToken),
        JoinTokenView::Renew { .. } => Some(Action::RenewJoinToken),
        JoinTokenView::Unknown { .. } => None,
    };
    let mut out: Vec<Action> = actions.into_iter().filter(|a| !joins(view, a)).collect();
    out.extend(instead);
    (out, shown)
}
