//! The status the core derives for a cluster: phase, counters and conditions.

use crate::health;
use crate::view::{
    ClusterView, ControlPlaneShape, InfraView, MachinePhase, MachineView, PlanStep, PoolSpec,
};
use crate::workload::{
    CONTROL_PLANE_AVAILABLE, WORKLOAD_NOT_CONNECTED, WORKLOAD_UNREACHABLE, WorkloadView, node_ready,
};

/// The Cluster's phase, as `kubectl get` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterPhase {
    /// Nothing exists yet.
    Pending,
    /// Infrastructure or machines are being created or changed.
    Provisioning,
    /// Everything desired exists and is ready.
    Provisioned,
    /// Being deleted.
    Deleting,
}

impl ClusterPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterPhase::Pending => "Pending",
            ClusterPhase::Provisioning => "Provisioning",
            ClusterPhase::Provisioned => "Provisioned",
            ClusterPhase::Deleting => "Deleting",
        }
    }
}

/// A condition's value as the core sees it; the executor adds timestamps and generations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionView {
    pub type_: &'static str,
    pub status: bool,
    pub reason: &'static str,
    pub message: String,
}

/// Replica counters of one pool (or of the control plane).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStatus {
    pub name: String,
    pub desired: u32,
    /// Machines that exist and are not being deleted.
    pub replicas: u32,
    pub ready: u32,
    /// At the desired version and made with the pool's current inputs.
    pub up_to_date: u32,
}

/// What the core says the status is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusView {
    pub phase: ClusterPhase,
    pub control_plane: PoolStatus,
    pub workers: Vec<PoolStatus>,
    pub conditions: Vec<ConditionView>,
}

pub(crate) fn counters(
    name: &str,
    desired: u32,
    machines: &[&MachineView],
    view: &ClusterView,
    inputs_count: bool,
) -> PoolStatus {
    let live: Vec<_> = machines.iter().filter(|m| m.live()).collect();
    PoolStatus {
        name: name.into(),
        desired,
        replicas: count(live.len()),
        ready: count(
            live.iter()
                .filter(|m| {
                    m.phase == MachinePhase::Running
                        && node_ready(m.provider_id.as_deref(), &view.workload)
                })
                .count(),
        ),
        up_to_date: count(
            (live.iter())
                .filter(|m| {
                    if inputs_count {
                        m.up_to_date(view.version)
                    } else {
                        Some(m.version) == view.version
                    }
                })
                .count(),
        ),
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub(crate) fn status(view: &ClusterView) -> StatusView {
    let cp_machines: Vec<&MachineView> = view
        .machines
        .iter()
        .filter(|m| m.role.is_control_plane())
        .collect();
    let service = view.control_plane_shape == ControlPlaneShape::Service;
    let control_plane = match &view.service {
        // A service's control plane is counted by its provider; a Cluster that asks no count
        // wants what the service runs.
        Some(s) if service => PoolStatus {
            name: "control-plane".into(),
            desired: if view.control_plane_replicas > 0 {
                view.control_plane_replicas
            } else {
                s.replicas
            },
            replicas: s.replicas,
            ready: s.ready_replicas,
            up_to_date: s.up_to_date_replicas,
        },
        // Asked by `failuresTolerated`, the count is the provider's to choose: what it has
        // is what it wants once its plan has nothing more to do.
        _ if view.control_plane_replicas == 0 => {
            let mut counted = counters(
                "control-plane",
                0,
                &cp_machines,
                view,
                view.control_plane_told_members,
            );
            counted.desired = counted.replicas;
            counted
        }
        _ => counters(
            "control-plane",
            view.control_plane_replicas,
            &cp_machines,
            view,
            view.control_plane_told_members,
        ),
    };
    let workers: Vec<PoolStatus> = view
        .pools
        .iter()
        .map(|pool: &PoolSpec| {
            let machines: Vec<&MachineView> = view
                .machines
                .iter()
                .filter(|m| !m.role.is_control_plane() && m.pool == pool.name)
                .collect();
            counters(&pool.name, pool.replicas, &machines, view, true)
        })
        .collect();

    let infra_ready = matches!(view.infrastructure, InfraView::Ready { .. });
    let initialized = view.plan.as_ref().is_some_and(|p| p.initialized)
        || view.service.as_ref().is_some_and(|s| s.initialized)
        || cp_machines.iter().any(|m| m.phase == MachinePhase::Running);
    let settled = |p: &PoolStatus| {
        p.replicas == p.desired && p.ready == p.desired && p.up_to_date == p.desired
    };
    // An `OnDelete` pool waits for people to delete its out-of-date machines: it is ready
    // when its machines are, and its counters show how many are not up to date.
    let on_delete = |p: &PoolStatus| {
        (view.pools.iter()).any(|pool| pool.name == p.name && pool.rollout.on_delete)
    };
    let pool_settled = |p: &PoolStatus| {
        settled(p) || (on_delete(p) && p.replicas == p.desired && p.ready == p.desired)
    };
    let cp_ready = if service {
        (view.service.as_ref()).is_some_and(|s| s.settled && s.ready && s.access)
            && settled(&control_plane)
    } else {
        // A plan that still has a step to take is not as desired, whatever the counts say
        // (they are all a `failuresTolerated` ask has).
        settled(&control_plane)
            && (view.control_plane_replicas > 0
                || (control_plane.desired > 0
                    && view.plan.as_ref().is_none_or(|p| p.step == PlanStep::None)))
    };
    let workers_ready = workers.iter().all(pool_settled);
    let stray = view
        .machines
        .iter()
        .any(|m| !m.role.is_control_plane() && !view.pools.iter().any(|p| p.name == m.pool));
    let available = matches!(
        view.workload,
        WorkloadView::Off | WorkloadView::Available { .. }
    );
    let ready = infra_ready && cp_ready && workers_ready && !stray && available;

    let phase = if view.deleting {
        ClusterPhase::Deleting
    } else if ready {
        ClusterPhase::Provisioned
    } else if view.infrastructure == InfraView::Unknown && view.machines.is_empty() {
        ClusterPhase::Pending
    } else {
        ClusterPhase::Provisioning
    };

    let condition = |type_, status, reason_true, reason_false, message: String| ConditionView {
        type_,
        status,
        reason: if status { reason_true } else { reason_false },
        message,
    };
    let mut conditions = vec![
        condition(
            "InfrastructureReady",
            infra_ready,
            "Ready",
            "Provisioning",
            String::new(),
        ),
        condition(
            "ControlPlaneInitialized",
            initialized,
            "Initialized",
            "WaitingForInit",
            String::new(),
        ),
        condition(
            "ControlPlaneReady",
            cp_ready,
            "Ready",
            "ScalingOrUpgrading",
            format!(
                "{}/{} ready, {} up to date",
                control_plane.ready, control_plane.desired, control_plane.up_to_date
            ),
        ),
        condition(
            "WorkersReady",
            workers_ready && !stray,
            "Ready",
            "ScalingOrUpgrading",
            workers
                .iter()
                .filter(|p| !pool_settled(p))
                .map(|p| {
                    format!(
                        "{}: {}/{} ready, {} up to date",
                        p.name, p.ready, p.desired, p.up_to_date
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
        condition(
            "Ready",
            ready && !view.deleting,
            "Ready",
            if view.deleting {
                "Deleting"
            } else {
                "NotReady"
            },
            String::new(),
        ),
    ];
    if let Some(c) = remediation(view) {
        conditions.insert(conditions.len() - 1, c);
    }
    if let Some(c) = availability(&view.workload) {
        // Before `Ready`, so the conditions read in the order a cluster comes up.
        conditions.insert(conditions.len() - 1, c);
    }
    StatusView {
        phase,
        control_plane,
        workers,
        conditions,
    }
}

/// `RemediationAllowed`, when the control plane or a pool has health checks: false naming the
/// control plane and each pool with more unhealthy machines than its trigger allows.
fn remediation(view: &ClusterView) -> Option<ConditionView> {
    let any_check =
        view.control_plane_health.is_some() || view.pools.iter().any(|p| p.health.is_some());
    if view.deleting || !any_check {
        return None;
    }
    let sick = health::control_plane_unhealthy(view);
    let control_plane = (!health::control_plane_allowed(view, sick.len())).then(|| {
        let max = (view.control_plane_health.as_ref())
            .and_then(|h| h.max_unhealthy)
            .unwrap_or_default();
        format!(
            "control plane: {} unhealthy machines, more than the {max} its trigger \
             (unhealthyLessThanOrEqualTo) allows; none is replaced",
            sick.len()
        )
    });
    let paused = health::control_plane_held(view).filter(|_| !sick.is_empty());
    let held: Vec<String> = control_plane
        .into_iter()
        .chain(paused.as_ref().map(|(_, why)| why.clone()))
        .chain(view.pools.iter().filter_map(|pool| {
            let sick = health::unhealthy(view, pool);
            let max = pool.health.as_ref()?.max_unhealthy?;
            (!health::allowed(pool, sick.len())).then(|| {
                format!(
                    "{}: {} unhealthy machines, more than the {max} its trigger \
                     (unhealthyLessThanOrEqualTo) allows; none is replaced",
                    pool.name,
                    sick.len()
                )
            })
        }))
        .collect();
    Some(ConditionView {
        type_: health::REMEDIATION_ALLOWED,
        status: held.is_empty(),
        reason: match (&paused, held.is_empty()) {
            (_, true) => "Allowed",
            (Some((reason, _)), false) if held.len() == 1 => reason,
            _ => "TooManyUnhealthy",
        },
        message: held.join("; "),
    })
}

/// `ControlPlaneAvailable`, when workload cluster access is on.
fn availability(workload: &WorkloadView) -> Option<ConditionView> {
    let (status, reason, message) = match workload {
        WorkloadView::Off => return None,
        WorkloadView::Available { .. } => (true, "Available", String::new()),
        WorkloadView::NotConnected { message } => (false, WORKLOAD_NOT_CONNECTED, message.clone()),
        WorkloadView::Unreachable { message } => (false, WORKLOAD_UNREACHABLE, message.clone()),
    };
    Some(ConditionView {
        type_: CONTROL_PLANE_AVAILABLE,
        status,
        reason,
        message,
    })
}
