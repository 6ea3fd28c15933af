//! Machine health: a worker is unhealthy when its Node never registered, or when one of its
//! Node's conditions held an unhealthy status too long. The pool replaces unhealthy machines
//! unless more are unhealthy than its trigger allows.

use crate::view::{ClusterView, MachinePhase, MachineView, PoolSpec};
use crate::workload::WorkloadView;

/// The Machine condition that says whether its health checks pass.
pub const HEALTH_CHECK_SUCCEEDED: &str = "HealthCheckSucceeded";

/// The Cluster condition, present when a pool has health checks: false while a pool has more
/// unhealthy machines than its trigger allows, and none of them is replaced.
pub const REMEDIATION_ALLOWED: &str = "RemediationAllowed";

/// A pool's health check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthCheck {
    /// How long a machine may exist without its Node, in seconds; 0 for no limit.
    pub node_startup_timeout: u64,
    /// Node conditions that make a machine unhealthy once they held long enough.
    pub unhealthy_conditions: Vec<UnhealthyCondition>,
    /// Unhealthy machines are replaced only while there are at most this many.
    pub max_unhealthy: Option<u32>,
    /// Control plane only: replacements in a row, each turning unhealthy again within
    /// `min_healthy_period`; `None`: no limit.
    pub max_retry: Option<u32>,
    /// Control plane only: the least time between two replacements, in seconds.
    pub retry_period: u64,
    /// Control plane only: how long a replacement stays healthy to end a row, in seconds.
    pub min_healthy_period: u64,
}

/// The last unhealthy control-plane member the provider took out to replace it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastRemediation {
    pub machine: String,
    /// When, seconds since the Unix epoch.
    pub at: u64,
    /// Replacements in a row, this one included.
    pub retries: u32,
}

impl LastRemediation {
    /// What to record when the provider takes `machine` out at `now`, after `last`: one
    /// more in the row when the last was within `min_healthy_period`, else the first.
    pub fn next(
        last: Option<&LastRemediation>,
        machine: &str,
        now: u64,
        check: &HealthCheck,
    ) -> Self {
        let retries = match last {
            Some(l) if now < l.at.saturating_add(check.min_healthy_period) => l.retries + 1,
            _ => 1,
        };
        LastRemediation {
            machine: machine.into(),
            at: now,
            retries,
        }
    }
}

/// A Node condition that makes its machine unhealthy once it held for `timeout` seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnhealthyCondition {
    pub type_: String,
    /// The unhealthy status; `None` for `Unknown`.
    pub status: Option<bool>,
    pub timeout: u64,
}

/// What the checks say of one machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// Healthy as far as the checks go (a machine still within its startup time included).
    Healthy,
    /// Unhealthy: replaced unless the pool's trigger forbids it.
    Unhealthy {
        reason: &'static str,
        message: String,
    },
    /// Not judged: the workload cluster is not observed (access off, or it does not answer).
    /// A machine is never replaced on what cannot be seen.
    Unknown { message: String },
}

/// What `check` says of machine `m` at `now` (seconds since the Unix epoch).
pub fn machine_health(
    m: &MachineView,
    check: &HealthCheck,
    workload: &WorkloadView,
    now: u64,
) -> Health {
    let nodes = match workload {
        WorkloadView::Off => {
            return Health::Unknown {
                message: "workload cluster access is off: Nodes are not observed".into(),
            };
        }
        WorkloadView::NotConnected { message } | WorkloadView::Unreachable { message } => {
            return Health::Unknown {
                message: message.clone(),
            };
        }
        WorkloadView::Available { nodes: None } => {
            return Health::Unknown {
                message: "the workload cluster's Nodes are not listed yet".into(),
            };
        }
        WorkloadView::Available { nodes: Some(nodes) } => nodes,
    };
    let node = m
        .provider_id
        .as_deref()
        .and_then(|id| nodes.iter().find(|n| n.provider_id.as_deref() == Some(id)));
    let Some(node) = node else {
        let age = now.saturating_sub(m.created_at);
        if check.node_startup_timeout > 0 && age >= check.node_startup_timeout {
            return Health::Unhealthy {
                reason: "NodeStartupTimeout",
                message: format!(
                    "no Node registered within {}s of the machine's creation",
                    check.node_startup_timeout
                ),
            };
        }
        return Health::Healthy;
    };
    for rule in &check.unhealthy_conditions {
        let held = node
            .conditions
            .iter()
            .find(|c| c.type_ == rule.type_ && c.status == rule.status)
            .map(|c| now.saturating_sub(c.since.unwrap_or(now)));
        if let Some(held) = held
            && held >= rule.timeout
        {
            return Health::Unhealthy {
                reason: "UnhealthyNode",
                message: format!(
                    "Node {}: {} is {} for {held}s (more than {}s)",
                    node.name,
                    rule.type_,
                    status_text(rule.status),
                    rule.timeout
                ),
            };
        }
    }
    Health::Healthy
}

fn status_text(status: Option<bool>) -> &'static str {
    match status {
        Some(true) => "True",
        Some(false) => "False",
        None => "Unknown",
    }
}

/// The live machines of `pool` its checks judge unhealthy.
pub(crate) fn unhealthy<'a>(view: &'a ClusterView, pool: &PoolSpec) -> Vec<&'a MachineView> {
    let Some(check) = &pool.health else {
        return Vec::new();
    };
    view.machines
        .iter()
        .filter(|m| m.live() && !m.role.is_control_plane() && m.pool == pool.name)
        .filter(|m| {
            matches!(
                machine_health(m, check, &view.workload, view.now),
                Health::Unhealthy { .. }
            )
        })
        .collect()
}

/// The live control-plane machines the control plane's checks judge unhealthy, each with why,
/// when they may be replaced now: empty without a check, and empty (the Cluster's
/// `RemediationAllowed` says why) when more are unhealthy than its trigger allows. Told to the
/// control-plane provider, which replaces them through its plan (contract 0.3).
pub fn control_plane_to_remediate(view: &ClusterView) -> Vec<(String, String)> {
    let sick = control_plane_unhealthy(view);
    if !control_plane_allowed(view, sick.len()) || control_plane_held(view).is_some() {
        return Vec::new();
    }
    sick
}

/// Why no control-plane member may be replaced now although the trigger allows it: the
/// retry period since the last replacement has not passed, or `maxRetry` replacements in a
/// row each turned unhealthy again within the minimum healthy period. `None` when one may.
pub(crate) fn control_plane_held(view: &ClusterView) -> Option<(&'static str, String)> {
    let check = view.control_plane_health.as_ref()?;
    let last = view.last_remediation.as_ref()?;
    let next = last.at.saturating_add(check.retry_period);
    if view.now < next {
        return Some((
            "RetryPeriod",
            format!(
                "control plane: {} was replaced {}s ago; the next replacement waits for \
                 retryPeriodSeconds ({}s)",
                last.machine,
                view.now.saturating_sub(last.at),
                check.retry_period
            ),
        ));
    }
    let max = check.max_retry?;
    let row_open = view.now < last.at.saturating_add(check.min_healthy_period);
    (row_open && last.retries >= max).then(|| {
        (
            "MaxRetryReached",
            format!(
                "control plane: {} replacements in a row, the last ({}) {}s ago, each unhealthy \
                 again within minHealthyPeriodSeconds ({}s): maxRetry is {max}; nothing more is \
                 replaced until that period has passed",
                last.retries,
                last.machine,
                view.now.saturating_sub(last.at),
                check.min_healthy_period
            ),
        )
    })
}

/// Every live control-plane machine its checks judge unhealthy, with why.
pub(crate) fn control_plane_unhealthy(view: &ClusterView) -> Vec<(String, String)> {
    let live = || (view.machines.iter()).filter(|m| m.live() && m.role.is_control_plane());
    // A failed member is unhealthy whether or not a check is configured: its infrastructure
    // gave up on it, and only the plan may take it out (the host does where the provider is
    // not told: `control_plane_told_members`).
    let failed = live()
        .filter(|m| view.control_plane_told_members && m.phase == MachinePhase::Failed)
        .map(|m| {
            let why = "its infrastructure reports the machine failed".to_owned();
            (m.name.clone(), why)
        });
    let Some(check) = &view.control_plane_health else {
        return failed.collect();
    };
    let judged = live()
        .filter(|m| m.phase != MachinePhase::Failed)
        .filter_map(
            |m| match machine_health(m, check, &view.workload, view.now) {
                Health::Unhealthy { message, .. } => Some((m.name.clone(), message)),
                _ => None,
            },
        );
    failed.chain(judged).collect()
}

/// Whether the control plane may replace `count` unhealthy machines.
pub(crate) fn control_plane_allowed(view: &ClusterView, count: usize) -> bool {
    let max = view
        .control_plane_health
        .as_ref()
        .and_then(|h| h.max_unhealthy);
    max.is_none_or(|max| count <= max as usize)
}

/// Whether `pool` may replace `count` unhealthy machines.
pub(crate) fn allowed(pool: &PoolSpec, count: usize) -> bool {
    let max = pool.health.as_ref().and_then(|h| h.max_unhealthy);
    max.is_none_or(|max| count <= max as usize)
}
