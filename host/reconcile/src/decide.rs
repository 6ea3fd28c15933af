//! The decision: from a [`ClusterView`] to the next actions.

use crate::health;
use crate::hooks::Hook;
use crate::status::{ConditionView, StatusView, status};
use crate::view::{
    ClusterView, ControlPlaneShape, DeletionOrder, InfraView, MachinePhase, MachineRole,
    MachineView, PlanStep, PoolSpec, Version,
};
use crate::workload::node_ready;

/// One thing the executor is to do. Actions of one decision may run concurrently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Call the infrastructure provider's `reconcile-cluster` and record the answer.
    ReconcileInfrastructure,
    /// Call the bootstrap provider's `cluster-secrets` and store a `ready` answer.
    EnsureSecrets,
    /// Ask the bootstrap provider for an admin kubeconfig for the current endpoint and store
    /// it in the cluster's kubeconfig Secret (workload cluster access on only).
    EnsureKubeconfig,
    /// Call the control-plane provider's `plan` for the current machines.
    PlanControlPlane,
    /// Call the control-plane provider's `reconcile-control-plane` for a control plane a
    /// service runs, store how to reach it and record what it said (an observation with side
    /// effects on the service only: the core decides again with the answer).
    ReconcileControlPlane,
    /// Call `delete-control-plane` until the service's control plane is gone.
    DeleteControlPlane,
    /// Persist a new Machine (name, idempotency key) with this intent, then create it.
    CreateMachine(MachineIntent),
    /// Call `reconcile-machine` for a machine that is not running yet and record its status.
    ReconcileMachine { machine: String },
    /// Mark the machine deleted, call `delete-machine` until it is gone, then remove it.
    DeleteMachine { machine: String },
    /// Mark the machine deleted and take a drain step for its Node; its
    /// [`Action::DeleteMachine`] follows once the drain finished, was skipped or timed out.
    DrainNode {
        machine: String,
        step: crate::drain::DrainStep,
    },
    /// Mark the control-plane machine deleted and take its member out of etcd (moving
    /// leadership off it first); its [`Action::DeleteMachine`] follows in a later pass.
    RemoveEtcdMember { machine: String },
    /// Remove an etcd member that no Machine has (by etcd's id; `name` for messages).
    RemoveEtcdOrphan { member: u64, name: String },
    /// Call `list-machines` and record the keys no Machine has.
    ListMachines,
    /// Ask the bootstrap provider which token joins carry, and whether the workload cluster
    /// still accepts it (an observation: the core decides again with the answer).
    ObserveJoinToken,
    /// Ask the bootstrap provider for a fresh join token, write it into the workload cluster,
    /// then store it with the cluster's secrets; the joins it held go on in a later pass.
    RenewJoinToken,
    /// Call `delete-machine` for a machine the infrastructure has and no Machine object names.
    DeleteOrphan { key: String },
    /// Call `delete-cluster` until the infrastructure is gone.
    DeleteInfrastructure,
    /// Everything is gone: remove the Cluster's finalizer.
    RemoveFinalizer,
    /// Ask every hook provider at `hook`; record it as passed for `to` once all proceed.
    CallHook {
        hook: Hook,
        from: Option<Version>,
        to: Version,
    },
}

/// Condition type: no lifecycle hook holds a transition.
pub const HOOKS_PASSED: &str = "LifecycleHooksPassed";

/// A machine to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineIntent {
    pub role: MachineRole,
    pub pool: String,
    pub version: Version,
    pub failure_domain: Option<String>,
}

/// The core's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub actions: Vec<Action>,
    pub status: StatusView,
}

impl Decision {
    /// Nothing to do and everything as desired.
    pub fn converged(&self) -> bool {
        self.actions.is_empty() && self.status.phase == crate::ClusterPhase::Provisioned
    }
}

/// The next actions for `view`, and its status.
pub fn decide(view: &ClusterView) -> Decision {
    let mut etcd = None;
    let mut join_token = None;
    let actions = if view.paused {
        Vec::new()
    } else if view.deleting {
        match view.version {
            Some(to) if view.hooks.pending(Hook::BeforeClusterDelete, None) => {
                vec![Action::CallHook {
                    hook: Hook::BeforeClusterDelete,
                    from: None,
                    to,
                }]
            }
            _ => teardown(view),
        }
    } else {
        let (actions, progress) = crate::etcd::route(view, build(view));
        etcd = progress.condition(&view.etcd);
        let actions = crate::drain::route(view, actions);
        let (actions, token) = crate::join_token::route(view, actions);
        join_token = token;
        dedup(actions)
    };
    let mut status = status(view);
    status.conditions.extend(etcd);
    status.conditions.extend(join_token);
    if view.hooks.configured {
        let waiting: Vec<&str> = actions
            .iter()
            .filter_map(|a| match a {
                Action::CallHook { hook, .. } => Some(hook.as_str()),
                _ => None,
            })
            .collect();
        status.conditions.push(ConditionView {
            type_: HOOKS_PASSED,
            status: waiting.is_empty(),
            reason: if waiting.is_empty() {
                "Passed"
            } else {
                "Waiting"
            },
            message: if waiting.is_empty() {
                String::new()
            } else {
                format!("calling {}", waiting.join(", "))
            },
        });
    }
    Decision { actions, status }
}

fn delete(m: &MachineView) -> Action {
    Action::DeleteMachine {
        machine: m.name.clone(),
    }
}

/// The path of a live cluster, as if no machine were an etcd member (the caller routes its
/// deletions through etcd).
fn build(view: &ClusterView) -> Vec<Action> {
    // Deletions under way continue whatever else happens.
    let mut actions: Vec<Action> = view
        .machines
        .iter()
        .filter(|m| m.deleting)
        .map(delete)
        .collect();
    if let Some(to) = view.version
        && view.machines.is_empty()
        && view.infrastructure == InfraView::Unknown
        && view.hooks.pending(Hook::BeforeClusterCreate, None)
    {
        actions.push(Action::CallHook {
            hook: Hook::BeforeClusterCreate,
            from: None,
            to,
        });
        return actions;
    }
    let InfraView::Ready { failure_domains } = &view.infrastructure else {
        actions.push(Action::ReconcileInfrastructure);
        return actions;
    };
    let service = view.control_plane_shape == ControlPlaneShape::Service;
    if service {
        // The service issues the cluster's CAs, kubeconfig and join token: the provider's
        // answer brings them, and nothing joins before it did.
        if view.service.is_none() {
            actions.push(Action::ReconcileControlPlane);
            return actions;
        }
    } else {
        if !view.secrets_ready {
            actions.push(Action::EnsureSecrets);
            return actions;
        }
        if view.workload.observed() && !view.kubeconfig_current {
            actions.push(Action::EnsureKubeconfig);
        }
    }
    for m in view.machines.iter().filter(|m| m.live()) {
        match m.phase {
            MachinePhase::Pending | MachinePhase::Provisioning => {
                actions.push(Action::ReconcileMachine {
                    machine: m.name.clone(),
                });
            }
            // A failed control-plane member is the plan's to replace where the provider is
            // told of it (contract 0.3: `member.unhealthy`); otherwise the host deletes it, but
            // never beside another control-plane change.
            MachinePhase::Failed if m.role.is_control_plane() => {
                let busy = (view.machines.iter())
                    .any(|o| o.name != m.name && o.role.is_control_plane() && o.deleting);
                if !view.control_plane_told_members && !busy {
                    actions.push(delete(m));
                }
            }
            MachinePhase::Failed => actions.push(delete(m)),
            MachinePhase::Running => {}
        }
    }
    match &view.orphans {
        None => actions.push(Action::ListMachines),
        Some(keys) => actions.extend(
            keys.iter()
                .map(|key| Action::DeleteOrphan { key: key.clone() }),
        ),
    }
    let Some(version) = view.version else {
        return actions;
    };
    let hook = |hook: Hook, from: Option<Version>| Action::CallHook {
        hook,
        from,
        to: version,
    };
    let live = || view.machines.iter().filter(|m| m.live());
    let service_initialized = view.service.as_ref().is_some_and(|s| s.initialized);
    if view.hooks.pending(Hook::AfterControlPlaneInitialized, None)
        && (service_initialized
            || live().any(|m| m.role.is_control_plane() && m.phase == MachinePhase::Running))
    {
        actions.push(hook(Hook::AfterControlPlaneInitialized, None));
    }
    // A service's control plane counts by the version it runs; one that runs a newer version
    // than desired (the service upgraded it on its own) is not behind.
    let service_behind = (view.service.as_ref())
        .and_then(|s| s.version)
        .filter(|v| *v < version);
    let oldest = |control_plane: Option<bool>| {
        live()
            .filter(|m| m.version != version)
            .filter(|m| control_plane.is_none_or(|cp| m.role.is_control_plane() == cp))
            .map(|m| m.version)
            .chain(service_behind.filter(|_| control_plane != Some(false)))
            .min()
    };
    if let Some(from) = oldest(None)
        && view
            .hooks
            .pending(Hook::BeforeClusterUpgrade, Some(version))
    {
        // The upgrade waits for its hook; nothing of the control plane or the workers moves.
        actions.push(hook(Hook::BeforeClusterUpgrade, Some(from)));
        return dedup(actions);
    }
    // An upgrade to `version` went through the hooks: the after-upgrade points follow.
    let upgrading = view.hooks.configured
        && view.hooks.passed.get(&Hook::BeforeClusterUpgrade) == Some(&version);

    // Workers follow a settled control plane: after the joins, and after its upgrade.
    if control_plane(view, version, &mut actions) {
        let old_workers = oldest(Some(false));
        if upgrading
            && view
                .hooks
                .pending(Hook::AfterControlPlaneUpgrade, Some(version))
        {
            actions.push(hook(Hook::AfterControlPlaneUpgrade, old_workers));
            if old_workers.is_none() {
                workers(view, version, failure_domains, &mut actions);
            }
        } else {
            workers(view, version, failure_domains, &mut actions);
        }
        if upgrading
            && oldest(None).is_none()
            && view.hooks.pending(Hook::AfterClusterUpgrade, Some(version))
        {
            actions.push(hook(Hook::AfterClusterUpgrade, None));
        }
    }
    dedup(actions)
}

/// Control-plane actions from the plan; whether the control plane is as desired.
fn control_plane(view: &ClusterView, version: Version, actions: &mut Vec<Action>) -> bool {
    if view.control_plane_shape == ControlPlaneShape::Service {
        // The provider drove the service in this pass already; workers join once it is as
        // desired, serves, and the host holds how to join it.
        return view
            .service
            .as_ref()
            .is_some_and(|s| s.settled && s.ready && s.access);
    }
    let Some(plan) = &view.plan else {
        actions.push(Action::PlanControlPlane);
        return false;
    };
    let cp: Vec<&MachineView> = view
        .machines
        .iter()
        .filter(|m| m.role.is_control_plane())
        .collect();
    // One control-plane change at a time, whatever the plan says.
    let busy = cp
        .iter()
        .any(|m| m.deleting || m.phase != MachinePhase::Running);
    match &plan.step {
        PlanStep::None => return !busy,
        PlanStep::Wait => {}
        PlanStep::Create {
            init,
            failure_domain,
        } if !busy => {
            actions.push(Action::CreateMachine(MachineIntent {
                role: if *init {
                    MachineRole::Init
                } else {
                    MachineRole::JoinControlPlane
                },
                pool: "control-plane".into(),
                version,
                failure_domain: failure_domain.clone(),
            }));
        }
        PlanStep::Delete { machine } if !busy => {
            if let Some(m) = cp.iter().find(|m| &m.name == machine && m.live()) {
                actions.push(delete(m));
            }
        }
        PlanStep::Create { .. } | PlanStep::Delete { .. } => {}
    }
    false
}

/// Worker pools: scale each to its replicas; roll out-of-date machines one pool at a time.
fn workers(
    view: &ClusterView,
    version: Version,
    failure_domains: &[String],
    actions: &mut Vec<Action>,
) {
    // Machines of pools that no longer exist go.
    for m in view.machines.iter().filter(|m| {
        m.live() && !m.role.is_control_plane() && !view.pools.iter().any(|p| p.name == m.pool)
    }) {
        actions.push(delete(m));
    }
    let mut rollout_slot = true;
    for pool in &view.pools {
        let all: Vec<&MachineView> = view
            .machines
            .iter()
            .filter(|m| !m.role.is_control_plane() && m.pool == pool.name)
            .collect();
        let mut machines: Vec<&MachineView> = all.iter().copied().filter(|m| m.live()).collect();
        machines.sort_by(|a, b| (a.created_at, &a.name).cmp(&(b.created_at, &b.name)));
        let outdated = machines.iter().any(|m| !m.up_to_date(Some(version)));
        let rolling = outdated && !pool.rollout.on_delete;
        let pool_view = PoolView {
            view,
            pool,
            version,
            failure_domains,
            machines: &machines,
            deleting: all.len() - machines.len(),
        };
        let have = machines.len();
        let want = pool.replicas as usize;
        // Unhealthy machines are replaced before anything else of the pool moves, unless
        // more are unhealthy than the pool's trigger allows (then nothing is, and the
        // status says why).
        let sick = health::unhealthy(view, pool);
        if !sick.is_empty() && health::allowed(pool, sick.len()) {
            pool_view.remediate(&sick, actions);
            rollout_slot = false;
            continue;
        }
        if rolling && rollout_slot {
            pool_view.roll(actions);
        } else if have < want {
            pool_view.create(want - have, actions);
        } else if have > want {
            // A new machine still booting holds the removal of an out-of-date one.
            let new_booting = machines
                .iter()
                .any(|m| m.up_to_date(Some(version)) && m.phase != MachinePhase::Running);
            if !outdated || !new_booting {
                for m in pool_view.removal_order().into_iter().take(have - want) {
                    actions.push(delete(m));
                }
            }
        }
        // Pools roll one after the other: the first pool that rolls or scales holds the slot
        // until it is done. An `OnDelete` pool waits for people, so it holds nothing.
        if rolling || have != want {
            rollout_slot = false;
        }
    }
}

/// One worker pool and its machines, for the decisions about it.
struct PoolView<'a> {
    view: &'a ClusterView,
    pool: &'a PoolSpec,
    version: Version,
    failure_domains: &'a [String],
    /// Its live machines, oldest first.
    machines: &'a [&'a MachineView],
    /// How many of its machines are being deleted.
    deleting: usize,
}

impl<'a> PoolView<'a> {
    fn up_to_date(&self, m: &MachineView) -> bool {
        m.up_to_date(Some(self.version))
    }

    /// Running, and its Node is ready where the workload cluster is observed.
    fn ready(&self, m: &MachineView) -> bool {
        m.phase == MachinePhase::Running
            && node_ready(m.provider_id.as_deref(), &self.view.workload)
    }

    /// Asks for `n` new machines, spread over the failure domains.
    fn create(&self, n: usize, actions: &mut Vec<Action>) {
        let mut placed: Vec<Option<String>> = self
            .machines
            .iter()
            .filter(|m| self.up_to_date(m))
            .map(|m| m.failure_domain.clone())
            .collect();
        for _ in 0..n {
            let domain = place(self.pool, self.failure_domains, &placed);
            placed.push(domain.clone());
            actions.push(Action::CreateMachine(MachineIntent {
                role: MachineRole::Worker,
                pool: self.pool.name.clone(),
                version: self.version,
                failure_domain: domain,
            }));
        }
    }

    /// A rolling update step: new machines while the surge allows (and always up to the
    /// replicas), then out-of-date ones removed, those not ready first, a ready one only while
    /// more than `replicas - max_unavailable` are ready.
    fn roll(&self, actions: &mut Vec<Action>) {
        let want = self.pool.replicas as usize;
        let rollout = self.pool.rollout;
        let total = self.machines.len() + self.deleting;
        let current = self.machines.iter().filter(|m| self.up_to_date(m)).count();
        let missing = want.saturating_sub(self.machines.len());
        let room = (want + rollout.max_surge as usize).saturating_sub(total);
        let need_new = want.saturating_sub(current);
        self.create(missing.max(need_new.min(room)), actions);

        let ready = self.machines.iter().filter(|m| self.ready(m)).count();
        let min_ready = want.saturating_sub(rollout.max_unavailable as usize);
        let mut budget = ready.saturating_sub(min_ready);
        for m in self.removal_order() {
            if self.up_to_date(m) {
                break;
            }
            if !self.ready(m) {
                actions.push(delete(m));
            } else if budget > 0 {
                budget -= 1;
                actions.push(delete(m));
            }
        }
    }

    /// Replaces the `sick` machines: new ones first as the surge allows, each sick one deleted
    /// once the pool has its replicas ready without it (at once with no surge).
    fn remediate(&self, sick: &[&MachineView], actions: &mut Vec<Action>) {
        let want = self.pool.replicas as usize;
        let surge = self.pool.rollout.max_surge as usize;
        let total = self.machines.len() + self.deleting;
        let healthy = self.machines.len() - sick.len();
        let room = (want + surge).saturating_sub(total);
        self.create(want.saturating_sub(healthy).min(room), actions);
        let ready_healthy = (self.machines.iter())
            .filter(|m| self.ready(m) && !sick.iter().any(|s| s.name == m.name))
            .count();
        if surge == 0 || ready_healthy >= want {
            actions.extend(sick.iter().map(|m| delete(m)));
        }
    }

    /// Which machines go first: out of date, then not ready, then by the pool's deletion
    /// order.
    fn removal_order(&self) -> Vec<&'a MachineView> {
        let mut order = self.machines.to_vec();
        let rank = |m: &MachineView| match self.pool.deletion_order {
            DeletionOrder::Oldest => i128::from(m.created_at),
            DeletionOrder::Newest => -i128::from(m.created_at),
            DeletionOrder::Random => i128::from(name_hash(&m.name)),
        };
        order.sort_by_key(|m| (self.up_to_date(m), self.ready(m), rank(m), m.name.clone()));
        order
    }
}

/// FNV-1a of `name`: an order that looks random and is the same on every pass.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A failure domain for a new machine of `pool`: the pool's own, else the least used.
fn place(pool: &PoolSpec, domains: &[String], placed: &[Option<String>]) -> Option<String> {
    if pool.failure_domain.is_some() {
        return pool.failure_domain.clone();
    }
    domains
        .iter()
        .min_by_key(|d| placed.iter().filter(|p| p.as_deref() == Some(d)).count())
        .cloned()
}

/// The path of a deleted cluster: workers, then the control plane (its machines, or the
/// service's), then orphans, then the infrastructure, then the finalizer.
fn teardown(view: &ClusterView) -> Vec<Action> {
    let workers: Vec<Action> = view
        .machines
        .iter()
        .filter(|m| !m.role.is_control_plane())
        .map(delete)
        .collect();
    if !workers.is_empty() {
        return workers;
    }
    if !view.machines.is_empty() {
        return view.machines.iter().map(delete).collect();
    }
    if view.control_plane_shape == ControlPlaneShape::Service && !view.service_deleted {
        return vec![Action::DeleteControlPlane];
    }
    match &view.orphans {
        None => return vec![Action::ListMachines],
        Some(keys) if !keys.is_empty() => {
            return keys
                .iter()
                .map(|key| Action::DeleteOrphan { key: key.clone() })
                .collect();
        }
        Some(_) => {}
    }
    if view.infrastructure != InfraView::Deleted {
        return vec![Action::DeleteInfrastructure];
    }
    vec![Action::RemoveFinalizer]
}

/// A machine both failed and chosen for removal is deleted once.
fn dedup(actions: Vec<Action>) -> Vec<Action> {
    let mut out: Vec<Action> = Vec::with_capacity(actions.len());
    for a in actions {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}
