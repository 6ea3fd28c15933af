//! The core driven by a simulated executor: every action takes effect one pass later, machines
//! boot over two passes, and a simple planner stands in for the control-plane provider.

use std::collections::BTreeSet;

use crate::*;

const V1: Version = Version {
    major: 1,
    minor: 33,
    patch: 4,
};
const V2: Version = Version {
    major: 1,
    minor: 34,
    patch: 1,
};

/// The executor and the world, simulated.
struct Sim {
    view: ClusterView,
    /// Keys the infrastructure has with no Machine object.
    orphans: BTreeSet<String>,
    clock: u64,
    names: u32,
    /// Every action taken, in order, as text.
    log: Vec<String>,
    /// The most live machines seen at once.
    peak: usize,
    finalized: bool,
    /// Hook points the simulated hook provider holds.
    hold: BTreeSet<Hook>,
    /// etcd, when the host keeps its membership: member id → (name, machine).
    etcd: Option<std::collections::BTreeMap<u64, (String, Option<String>)>>,
    /// The join token, when the host keeps it valid.
    token: Option<SimToken>,
    /// Whether etcd answers.
    etcd_reachable: bool,
    /// A crash after a `RemoveEtcdMember` marked the machine deleted, before etcd heard.
    crash_in_removal: bool,
    /// Machines whose Node holds a Pod no eviction may take (a budget forbids it).
    drain_blocked: BTreeSet<String>,
}

/// The join token the simulated workload cluster holds.
#[derive(Debug)]
struct SimToken {
    id: u32,
    in_cluster: bool,
    expires: u64,
    ttl: u64,
    reachable: bool,
}

impl Sim {
    fn new(cp: u32, pools: &[(&str, u32)]) -> Sim {
        Sim {
            view: ClusterView {
                version: Some(V1),
                control_plane_replicas: cp,
                pools: pools
                    .iter()
                    .map(|(name, replicas)| PoolSpec {
                        name: (*name).into(),
                        replicas: *replicas,
                        failure_domain: None,
                        rollout: Rollout::default(),
                        deletion_order: DeletionOrder::Oldest,
                        health: None,
                        drain_timeout: 600,
                    })
                    .collect(),
                ..ClusterView::default()
            },
            orphans: BTreeSet::new(),
            clock: 0,
            names: 0,
            log: Vec::new(),
            peak: 0,
            finalized: false,
            hold: BTreeSet::new(),
            etcd: None,
            etcd_reachable: true,
            crash_in_removal: false,
            token: None,
            drain_blocked: BTreeSet::new(),
        }
    }

    /// The same, with the host keeping etcd membership.
    fn with_etcd(cp: u32, pools: &[(&str, u32)]) -> Sim {
        Sim {
            etcd: Some(Default::default()),
            ..Sim::new(cp, pools)
        }
    }

    /// The etcd members' machines (`None` for a member no machine has), in id order.
    fn members(&self) -> Vec<Option<String>> {
        let etcd = self.etcd.as_ref().unwrap();
        etcd.values().map(|(_, m)| m.clone()).collect()
    }

    fn live(&self) -> Vec<&MachineView> {
        self.view.machines.iter().filter(|m| !m.deleting).collect()
    }

    /// The name of the first live machine of pool `md-0` (the oldest: machines are kept in
    /// creation order).
    fn first_worker(&self) -> String {
        let first = self.live().into_iter().find(|m| m.pool == "md-0");
        first.expect("a live worker").name.clone()
    }

    /// The stand-in control-plane provider: init, then one join at a time, removal of the
    /// oldest, and surge-one upgrades.
    fn plan(&self) -> PlanView {
        let cp: Vec<&MachineView> = self
            .view
            .machines
            .iter()
            .filter(|m| m.role.is_control_plane() && !m.deleting)
            .collect();
        let ready = cp
            .iter()
            .filter(|m| m.phase == MachinePhase::Running)
            .count();
        let want = self.view.control_plane_replicas as usize;
        let version = self.view.version.unwrap();
        let outdated: Vec<&&MachineView> = cp.iter().filter(|m| m.version != version).collect();
        let create = |init| PlanStep::Create {
            init,
            failure_domain: None,
        };
        let step = if cp.is_empty() {
            create(true)
        } else if ready < cp.len() {
            PlanStep::Wait
        } else if cp.len() < want {
            create(false)
        } else if cp.len() > want {
            let victim = outdated.first().copied().unwrap_or(&cp[0]);
            PlanStep::Delete {
                machine: victim.name.clone(),
            }
        } else if !outdated.is_empty() {
            create(false)
        } else {
            PlanStep::None
        };
        PlanView {
            step,
            initialized: ready > 0,
            replicas: cp.len() as u32,
            ready_replicas: ready as u32,
            up_to_date_replicas: (cp.len() - outdated.len()) as u32,
        }
    }

    /// One pass: observe, decide, act. Returns the decision's actions.
    fn pass(&mut self) -> Decision {
        self.view.plan = None;
        self.view.orphans = None;
        self.view.etcd = match &self.etcd {
            None => self.view.etcd.clone(),
            Some(_) if !self.etcd_reachable => EtcdView::Unreachable {
                message: "10.0.0.1:2379: connect: connection refused".into(),
            },
            Some(members) => EtcdView::Observed {
                members: members
                    .iter()
                    .map(|(id, (name, machine))| EtcdMemberView {
                        id: *id,
                        name: name.clone(),
                        machine: machine.clone(),
                    })
                    .collect(),
            },
        };
        if self.token.is_some() {
            self.view.join_token = JoinTokenView::NotObserved;
        }
        // Observations asked for by a decision, then decide again: a join appears only once
        // the plan is in, and only then asks for the token.
        for _ in 0..3 {
            for action in decide(&self.view).actions {
                self.observe(&action);
            }
        }
        let decision = decide(&self.view);
        for action in &decision.actions {
            self.apply(action);
        }
        self.peak = self.peak.max(self.live().len());
        decision
    }

    /// Answers an observation the core asked for.
    fn observe(&mut self, action: &Action) {
        match action {
            Action::ObserveJoinToken => {
                let t = self.token.as_ref().expect("the host keeps the token");
                self.view.join_token = if !t.reachable {
                    JoinTokenView::Unknown {
                        message: "10.0.0.1:6443: connection refused".into(),
                    }
                } else if !t.in_cluster {
                    JoinTokenView::Renew {
                        reason: format!("token t{} is missing", t.id),
                    }
                } else if !crate::join_token::fresh(Some(t.expires), t.ttl, self.clock) {
                    JoinTokenView::Renew {
                        reason: format!("token t{} is past half its life", t.id),
                    }
                } else {
                    JoinTokenView::Valid {
                        id: format!("t{}", t.id),
                        expires: Some(t.expires),
                    }
                };
            }
            Action::PlanControlPlane => self.view.plan = Some(self.plan()),
            Action::ListMachines => {
                self.view.orphans = Some(self.orphans.iter().cloned().collect());
            }
            _ => {}
        }
    }

    fn apply(&mut self, action: &Action) {
        self.clock += 1;
        match action {
            Action::ReconcileInfrastructure => {
                self.view.infrastructure = InfraView::Ready {
                    failure_domains: vec!["a".into(), "b".into(), "c".into()],
                };
            }
            Action::EnsureSecrets => self.view.secrets_ready = true,
            Action::EnsureKubeconfig => self.view.kubeconfig_current = true,
            // The simulated clusters' control planes are on machines.
            Action::ReconcileControlPlane | Action::DeleteControlPlane => {
                unreachable!("{action:?} for a control plane on machines")
            }
            Action::CreateMachine(intent) => {
                if intent.role != MachineRole::Init {
                    self.check_token();
                }
                self.names += 1;
                let name = format!("{}-{}", intent.pool, self.names);
                self.log.push(format!("create {name} {}", intent.version));
                self.view.machines.push(MachineView {
                    provider_id: Some(format!("sim://{name}")),
                    name,
                    role: intent.role,
                    pool: intent.pool.clone(),
                    version: intent.version,
                    failure_domain: intent.failure_domain.clone(),
                    created_at: self.clock,
                    phase: MachinePhase::Pending,
                    deleting: false,
                    changed: Vec::new(),
                    node: None,
                    drain: DrainView::NotStarted,
                });
            }
            Action::ReconcileMachine { machine } => {
                if (self.view.machines.iter()).any(|m| {
                    m.name == *machine
                        && m.role != MachineRole::Init
                        && m.phase == MachinePhase::Pending
                }) {
                    self.check_token();
                }
                let clock = self.clock;
                let m = self.machine(machine);
                m.phase = match m.phase {
                    MachinePhase::Pending => MachinePhase::Provisioning,
                    _ => MachinePhase::Running,
                };
                if m.phase == MachinePhase::Running {
                    m.node = Some(format!("node-{}", m.name));
                }
                // A control-plane machine adds its member as it boots.
                let joins = m.role.is_control_plane() && m.phase == MachinePhase::Provisioning;
                let name = m.name.clone();
                if joins && let Some(etcd) = &mut self.etcd {
                    etcd.insert(clock, (name.clone(), Some(name)));
                }
            }
            Action::RemoveEtcdMember { machine } => {
                self.machine(machine).deleting = true;
                if std::mem::take(&mut self.crash_in_removal) {
                    self.log.push(format!("crash removing {machine}"));
                    return;
                }
                let etcd = self.etcd.as_mut().expect("etcd kept by the host");
                etcd.retain(|_, (_, m)| m.as_deref() != Some(machine.as_str()));
                self.log.push(format!("remove member {machine}"));
            }
            Action::RemoveEtcdOrphan { member, name } => {
                let etcd = self.etcd.as_mut().expect("etcd kept by the host");
                assert!(etcd.remove(member).is_some(), "no member {member}");
                self.log.push(format!("remove orphan member {name}"));
            }
            Action::DeleteMachine { machine } => {
                let is_member = (self.etcd.as_ref()).is_some_and(|e| {
                    e.values()
                        .any(|(_, m)| m.as_deref() == Some(machine.as_str()))
                });
                let tearing_down = self.view.deleting;
                let etcd_reachable = self.etcd_reachable;
                let m = self.machine(machine);
                if m.deleting {
                    assert!(
                        !is_member || !etcd_reachable,
                        "{machine} deleted while an etcd member"
                    );
                    assert!(
                        tearing_down || m.drain == DrainView::Finished,
                        "{machine} deleted before its drain finished: {:?}",
                        m.drain
                    );
                    self.view.machines.retain(|m| &m.name != machine);
                } else {
                    m.deleting = true;
                    self.log.push(format!("delete {machine}"));
                }
            }
            Action::DrainNode { machine, step } => {
                let clock = self.view.now;
                let blocked = self.drain_blocked.contains(machine);
                let m = self.machine(machine);
                let began = !m.deleting;
                m.deleting = true;
                let line = match step {
                    DrainStep::Skip { reason } => {
                        m.drain = DrainView::Finished;
                        format!("drain skipped {machine}: {reason}")
                    }
                    DrainStep::GiveUp {
                        node,
                        after_seconds,
                    } => {
                        m.drain = DrainView::Finished;
                        format!("drain of {node} timed out after {after_seconds}")
                    }
                    DrainStep::Evict { node } if blocked => {
                        if m.drain == DrainView::NotStarted {
                            m.drain = DrainView::Draining { since: clock };
                        }
                        format!("drain held {node}")
                    }
                    DrainStep::Evict { node } => {
                        m.drain = DrainView::Finished;
                        format!("drained {node}")
                    }
                };
                if began {
                    self.log.push(format!("delete {machine}"));
                }
                self.log.push(line);
            }
            Action::DeleteOrphan { key } => {
                self.orphans.remove(key);
                self.log.push(format!("delete orphan {key}"));
            }
            Action::DeleteInfrastructure => {
                self.view.infrastructure = InfraView::Deleted;
                self.log.push("delete infrastructure".into());
            }
            Action::RemoveFinalizer => self.finalized = true,
            Action::CallHook { hook, to, .. } => {
                if self.hold.contains(hook) {
                    self.log.push(format!("hold {}", hook.as_str()));
                } else {
                    self.view.hooks.passed.insert(*hook, *to);
                    self.log.push(format!("hook {}", hook.as_str()));
                }
            }
            Action::RenewJoinToken => {
                let clock = self.clock;
                let t = self.token.as_mut().expect("the host keeps the token");
                t.id += 1;
                t.in_cluster = true;
                t.expires = clock + t.ttl;
                self.log.push(format!("renew token t{}", t.id));
            }
            Action::PlanControlPlane | Action::ListMachines | Action::ObserveJoinToken => {
                panic!("observations are answered before the decision")
            }
        }
    }

    /// A join's data is made: the token it carries must be one the workload cluster holds,
    /// with more than half its life left.
    fn check_token(&self) {
        if let Some(t) = &self.token {
            assert!(
                t.reachable && t.in_cluster,
                "a join made with token t{} the cluster lacks",
                t.id
            );
            assert!(
                crate::join_token::fresh(Some(t.expires), t.ttl, self.clock),
                "a join made with token t{} past half its life at {}",
                t.id,
                self.clock
            );
        }
    }

    fn machine(&mut self, name: &str) -> &mut MachineView {
        self.view
            .machines
            .iter_mut()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no machine {name}"))
    }

    /// Passes until converged (or the finalizer is gone); the number of passes.
    fn converge(&mut self) -> usize {
        for n in 1..500 {
            let decision = self.pass();
            if self.finalized || decision.converged() {
                return n;
            }
        }
        panic!("no convergence: {:#?}\n{:?}", self.view, self.log)
    }

    fn count(&self, pool: &str) -> usize {
        self.live().iter().filter(|m| m.pool == pool).count()
    }

    fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }
}

#[test]
fn create_goes_infrastructure_secrets_init_joins_then_workers() {
    let mut sim = Sim::new(3, &[("md-0", 2)]);
    let first = sim.pass();
    assert_eq!(first.actions, [Action::ReconcileInfrastructure]);
    assert_eq!(first.status.phase, ClusterPhase::Pending);
    assert_eq!(sim.pass().actions, [Action::EnsureSecrets]);
    sim.converge();
    let log = sim.take_log();
    assert_eq!(
        log,
        [
            "create control-plane-1 v1.33.4",
            "create control-plane-2 v1.33.4",
            "create control-plane-3 v1.33.4",
            "create md-0-4 v1.33.4",
            "create md-0-5 v1.33.4",
        ]
        .map(String::from),
        "joins come one at a time, workers after them"
    );
    let status = decide(&sim.view).status;
    assert_eq!(status.phase, ClusterPhase::Provisioned);
    assert_eq!(status.control_plane.ready, 3);
    assert_eq!(status.workers[0].ready, 2);
    assert!(status.conditions.iter().all(|c| c.status), "{status:?}");
    // Workers are spread over the failure domains.
    let domains: BTreeSet<_> = sim
        .live()
        .iter()
        .filter(|m| m.pool == "md-0")
        .map(|m| m.failure_domain.clone())
        .collect();
    assert_eq!(domains.len(), 2);
}

#[test]
fn the_roles_are_init_then_joins() {
    let mut sim = Sim::new(3, &[]);
    sim.converge();
    let roles: Vec<MachineRole> = sim.view.machines.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            MachineRole::Init,
            MachineRole::JoinControlPlane,
            MachineRole::JoinControlPlane
        ]
    );
}

#[test]
fn scales_the_control_plane_and_workers_both_ways() {
    let mut sim = Sim::new(1, &[("md-0", 2)]);
    sim.converge();
    for (cp, workers) in [(3, 5), (1, 0), (1, 2)] {
        sim.view.control_plane_replicas = cp;
        sim.view.pools[0].replicas = workers;
        sim.converge();
        assert_eq!(sim.count("control-plane"), cp as usize);
        assert_eq!(sim.count("md-0"), workers as usize);
        assert!(sim.view.machines.iter().all(|m| !m.deleting));
    }
}

#[test]
fn upgrades_roll_the_control_plane_first_with_one_extra_machine_at_most() {
    let mut sim = Sim::new(3, &[("md-0", 2), ("md-1", 2)]);
    sim.converge();
    sim.take_log();
    sim.peak = 0;
    sim.view.version = Some(V2);
    sim.converge();
    assert_eq!(sim.peak, 3 + 2 + 2 + 1, "never more than one surge machine");
    let log = sim.take_log();
    let first_worker = log.iter().position(|l| l.contains("md-")).unwrap();
    let last_cp = log
        .iter()
        .rposition(|l| l.contains("control-plane"))
        .unwrap();
    assert!(last_cp < first_worker, "control plane first: {log:?}");
    let last_md0 = log.iter().rposition(|l| l.contains("md-0")).unwrap();
    let first_md1 = log.iter().position(|l| l.contains("md-1")).unwrap();
    assert!(last_md0 < first_md1, "one pool at a time: {log:?}");
    assert!(sim.live().iter().all(|m| m.version == V2));
    // Each old machine is replaced: create new, then delete old.
    assert_eq!(log.iter().filter(|l| l.starts_with("create")).count(), 7);
    assert_eq!(log.iter().filter(|l| l.starts_with("delete")).count(), 7);
}

#[test]
fn a_failed_worker_is_deleted_and_replaced() {
    let mut sim = Sim::new(1, &[("md-0", 2)]);
    sim.converge();
    sim.take_log();
    let victim = sim
        .view
        .machines
        .iter_mut()
        .find(|m| m.pool == "md-0")
        .unwrap();
    victim.phase = MachinePhase::Failed;
    let name = victim.name.clone();
    sim.converge();
    let log = sim.take_log();
    assert_eq!(log[0], format!("delete {name}"));
    // With workload cluster access off, the drain is recorded as skipped, and says why.
    assert!(
        log[1].starts_with(&format!(
            "drain skipped {name}: workload cluster access is off"
        )),
        "{log:?}"
    );
    assert!(log[2].starts_with("create md-0-"), "{log:?}");
    assert_eq!(sim.count("md-0"), 2);
}

/// A cluster of one control-plane machine and `workers` workers, converged with workload
/// cluster access on and every Node Ready, at time `now`.
fn observed_cluster(workers: u32, now: u64) -> Sim {
    let mut sim = Sim::new(1, &[("md-0", workers)]);
    sim.view.now = now;
    sim.view.workload = WorkloadView::Available {
        nodes: Some(Vec::new()),
    };
    for _ in 0..40 {
        sim.pass();
        sim.view.workload = nodes_for(&sim, &[]);
    }
    assert!(sim.pass().converged());
    sim.take_log();
    sim
}

/// Passes at `now` with every live machine's Node Ready; the log of what they did.
fn passes_at(sim: &mut Sim, now: u64, n: usize) -> Vec<String> {
    sim.view.now = now;
    for _ in 0..n {
        sim.view.workload = nodes_for(sim, &[]);
        sim.pass();
    }
    sim.take_log()
}

#[test]
fn a_scale_down_drains_the_node_before_the_machine_goes() {
    let mut sim = observed_cluster(3, 1_000);
    let oldest = sim.first_worker();
    sim.view.pools[0].replicas = 2;
    let log = passes_at(&mut sim, 1_000, 6);
    let node = format!("node-{oldest}");
    assert_eq!(
        log[..2],
        [format!("delete {oldest}"), format!("drained {node}")],
        "{log:?}"
    );
    assert!(
        sim.view.machines.iter().all(|m| m.name != oldest),
        "{log:?}"
    );
    assert_eq!(sim.count("md-0"), 2);
}

#[test]
fn a_held_drain_waits_until_the_timeout_then_the_deletion_goes_on() {
    let mut sim = observed_cluster(3, 1_000);
    let oldest = sim.first_worker();
    sim.view.pools[0].drain_timeout = 300;
    sim.drain_blocked.insert(oldest.clone());
    sim.view.pools[0].replicas = 2;
    let node = format!("node-{oldest}");
    // Held: the machine is being deleted, its Node is drained round after round, it stays.
    let log = passes_at(&mut sim, 1_000, 5);
    assert_eq!(log[0], format!("delete {oldest}"));
    assert!(
        log[1..].iter().all(|l| *l == format!("drain held {node}")),
        "{log:?}"
    );
    assert!(sim.view.machines.iter().any(|m| m.name == oldest));
    // Still within the timeout, counted from the first round.
    let log = passes_at(&mut sim, 1_299, 3);
    assert!(
        log.iter().all(|l| *l == format!("drain held {node}")),
        "{log:?}"
    );
    // Past it: the drain gives up, says so, and the machine goes.
    let log = passes_at(&mut sim, 1_300, 4);
    assert_eq!(
        log[0],
        format!("drain of {node} timed out after 300"),
        "{log:?}"
    );
    assert!(sim.view.machines.iter().all(|m| m.name != oldest));
    assert_eq!(sim.count("md-0"), 2);
}

#[test]
fn a_drain_released_before_the_timeout_lets_the_deletion_go_on_at_once() {
    let mut sim = observed_cluster(2, 1_000);
    let oldest = sim.first_worker();
    sim.drain_blocked.insert(oldest.clone());
    sim.view.pools[0].replicas = 1;
    let log = passes_at(&mut sim, 1_000, 3);
    assert!(
        log.contains(&format!("drain held node-{oldest}")),
        "{log:?}"
    );
    // The budget allows the eviction now (a replacement is Ready elsewhere).
    sim.drain_blocked.clear();
    let log = passes_at(&mut sim, 1_010, 3);
    assert_eq!(log[0], format!("drained node-{oldest}"), "{log:?}");
    assert!(sim.view.machines.iter().all(|m| m.name != oldest));
}

#[test]
fn a_machine_without_a_node_is_not_drained_and_no_limit_means_no_timeout() {
    let mut sim = observed_cluster(2, 1_000);
    let oldest = sim.first_worker();
    sim.machine(&oldest).node = None;
    let younger = sim
        .live()
        .iter()
        .filter(|m| m.pool == "md-0")
        .nth(1)
        .unwrap()
        .name
        .clone();
    sim.view.pools[0].replicas = 1;
    let log = passes_at(&mut sim, 1_000, 3);
    assert_eq!(
        log[1],
        format!("drain skipped {oldest}: the machine never had a Node"),
        "{log:?}"
    );
    // `0`: the drain waits without limit.
    sim.view.pools[0].drain_timeout = 0;
    sim.drain_blocked.insert(younger.clone());
    sim.view.pools[0].replicas = 0;
    passes_at(&mut sim, 1_000, 2);
    let log = passes_at(&mut sim, u64::MAX / 2, 3);
    assert!(
        log.iter()
            .all(|l| *l == format!("drain held node-{younger}")),
        "{log:?}"
    );
}

#[test]
fn orphans_are_deleted_while_the_cluster_lives() {
    let mut sim = Sim::new(1, &[]);
    sim.converge();
    sim.orphans.insert("k-lost".into());
    sim.converge();
    assert!(sim.log.contains(&"delete orphan k-lost".to_string()));
    assert!(sim.orphans.is_empty());
}

#[test]
fn deletion_runs_in_reverse_and_ends_with_the_finalizer() {
    let mut sim = Sim::new(3, &[("md-0", 2)]);
    sim.converge();
    sim.take_log();
    sim.orphans.insert("k-lost".into());
    sim.view.deleting = true;
    assert_eq!(decide(&sim.view).status.phase, ClusterPhase::Deleting);
    sim.converge();
    assert!(sim.finalized);
    let log = sim.take_log();
    let kinds: Vec<&str> = log
        .iter()
        .map(|l| {
            if l.contains("md-0") {
                "worker"
            } else if l.contains("control-plane") {
                "cp"
            } else if l.contains("orphan") {
                "orphan"
            } else {
                "infra"
            }
        })
        .collect();
    let mut order = kinds.clone();
    order.dedup();
    assert_eq!(order, ["worker", "cp", "orphan", "infra"], "{log:?}");
    assert!(sim.view.machines.is_empty());
}

#[test]
fn a_paused_cluster_asks_for_nothing() {
    let mut sim = Sim::new(3, &[("md-0", 2)]);
    sim.view.paused = true;
    assert!(decide(&sim.view).actions.is_empty());
    assert!(sim.pass().actions.is_empty());
}

#[test]
fn nothing_is_created_while_infrastructure_or_secrets_are_missing() {
    let mut view = Sim::new(3, &[("md-0", 2)]).view;
    view.plan = Some(PlanView {
        step: PlanStep::Create {
            init: true,
            failure_domain: None,
        },
        initialized: false,
        replicas: 0,
        ready_replicas: 0,
        up_to_date_replicas: 0,
    });
    view.orphans = Some(Vec::new());
    assert_eq!(decide(&view).actions, [Action::ReconcileInfrastructure]);
    view.infrastructure = InfraView::Ready {
        failure_domains: vec![],
    };
    assert_eq!(decide(&view).actions, [Action::EnsureSecrets]);
    view.secrets_ready = true;
    assert!(matches!(
        decide(&view).actions[..],
        [Action::CreateMachine(MachineIntent {
            role: MachineRole::Init,
            ..
        })]
    ));
}

#[test]
fn a_control_plane_step_waits_for_the_previous_one() {
    let mut sim = Sim::new(3, &[]);
    sim.converge();
    // A stale plan asking for another join while a member is still booting is not followed.
    sim.view.machines[2].phase = MachinePhase::Provisioning;
    sim.view.control_plane_replicas = 5;
    sim.view.orphans = Some(Vec::new());
    sim.view.plan = Some(PlanView {
        step: PlanStep::Create {
            init: false,
            failure_domain: None,
        },
        initialized: true,
        replicas: 3,
        ready_replicas: 2,
        up_to_date_replicas: 3,
    });
    let actions = decide(&sim.view).actions;
    assert!(
        !actions
            .iter()
            .any(|a| matches!(a, Action::CreateMachine(_))),
        "{actions:?}"
    );
}

/// Passes until `n` passes went by; the log of what happened.
fn run(sim: &mut Sim, n: usize) -> Vec<String> {
    for _ in 0..n {
        sim.pass();
    }
    sim.take_log()
}

fn position(log: &[String], what: &str) -> usize {
    log.iter()
        .position(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no {what:?} in {log:?}"))
}

#[test]
fn hooks_are_called_at_their_points_of_create_upgrade_and_delete() {
    let mut sim = Sim::new(3, &[("md-0", 1)]);
    sim.view.hooks.configured = true;
    let first = sim.pass();
    assert_eq!(
        first.actions,
        [Action::CallHook {
            hook: Hook::BeforeClusterCreate,
            from: None,
            to: V1
        }],
        "nothing is created before the create hook"
    );
    sim.converge();
    let log = sim.take_log();
    assert_eq!(log[0], "hook beforeClusterCreate");
    let initialized = position(&log, "hook afterControlPlaneInitialized");
    assert!(
        initialized > position(&log, "create control-plane-1"),
        "{log:?}"
    );

    sim.view.version = Some(V2);
    let held = decide(&sim.view);
    assert!(
        held.actions.contains(&Action::CallHook {
            hook: Hook::BeforeClusterUpgrade,
            from: Some(V1),
            to: V2
        }),
        "{held:?}"
    );
    sim.converge();
    let log = sim.take_log();
    let before = position(&log, "hook beforeClusterUpgrade");
    let first_new = position(&log, "v1.34.1");
    let after_cp = position(&log, "hook afterControlPlaneUpgrade");
    let first_worker = position(&log, "create md-0");
    let after_cluster = position(&log, "hook afterClusterUpgrade");
    let last_cp = log
        .iter()
        .rposition(|l| l.contains("control-plane"))
        .unwrap();
    assert!(before < first_new, "{log:?}");
    assert!(last_cp < after_cp && after_cp < first_worker, "{log:?}");
    assert!(after_cluster > first_worker, "{log:?}");
    assert_eq!(
        log.iter().filter(|l| l.starts_with("hook")).count(),
        3,
        "each point once: {log:?}"
    );

    sim.view.deleting = true;
    sim.converge();
    let log = sim.take_log();
    assert_eq!(log[0], "hook beforeClusterDelete", "{log:?}");
    assert!(sim.finalized);
}

#[test]
fn a_held_hook_holds_its_transition_until_it_proceeds() {
    let mut sim = Sim::new(1, &[("md-0", 1)]);
    sim.view.hooks.configured = true;
    sim.hold.insert(Hook::BeforeClusterCreate);
    let log = run(&mut sim, 5);
    assert!(
        log.iter().all(|l| l == "hold beforeClusterCreate"),
        "{log:?}"
    );
    assert!(sim.view.machines.is_empty());
    assert_eq!(sim.view.infrastructure, InfraView::Unknown);
    let waiting = decide(&sim.view).status;
    let c = waiting
        .conditions
        .iter()
        .find(|c| c.type_ == HOOKS_PASSED)
        .unwrap();
    assert!(
        !c.status && c.message.contains("beforeClusterCreate"),
        "{c:?}"
    );
    sim.hold.clear();
    sim.converge();
    sim.take_log();

    // The upgrade waits for its hook; the machines keep running meanwhile.
    sim.hold.insert(Hook::BeforeClusterUpgrade);
    sim.view.version = Some(V2);
    let log = run(&mut sim, 10);
    assert!(
        log.iter().all(|l| l == "hold beforeClusterUpgrade"),
        "{log:?}"
    );
    assert!(sim.live().iter().all(|m| m.version == V1));
    sim.hold.clear();
    sim.converge();
    assert!(sim.live().iter().all(|m| m.version == V2));
    let status = decide(&sim.view).status;
    assert!(status.conditions.iter().all(|c| c.status), "{status:?}");
}

#[test]
fn without_hook_providers_no_hook_is_called() {
    let mut sim = Sim::new(1, &[("md-0", 1)]);
    sim.converge();
    sim.view.version = Some(V2);
    sim.converge();
    sim.view.deleting = true;
    sim.converge();
    assert!(sim.take_log().iter().all(|l| !l.contains("hook")));
    assert!(
        decide(&sim.view)
            .status
            .conditions
            .iter()
            .all(|c| c.type_ != HOOKS_PASSED)
    );
}

/// The workload cluster with a Ready Node for every live machine of `sim`, except `not_ready`.
fn nodes_for(sim: &Sim, not_ready: &[&str]) -> WorkloadView {
    let nodes = sim
        .live()
        .iter()
        .map(|m| NodeView {
            name: format!("node-{}", m.name),
            provider_id: m.provider_id.clone(),
            ready: Some(NodeCondition {
                status: Some(!not_ready.contains(&m.name.as_str())),
                reason: String::new(),
                message: String::new(),
            }),
            conditions: Vec::new(),
        })
        .collect();
    WorkloadView::Available { nodes: Some(nodes) }
}

#[test]
fn with_workload_access_the_kubeconfig_is_written_and_ready_needs_every_node_ready() {
    let mut sim = Sim::new(1, &[("md-0", 1)]);
    sim.view.workload = WorkloadView::Available {
        nodes: Some(Vec::new()),
    };
    let mut wrote_kubeconfig = false;
    for _ in 0..30 {
        let d = sim.pass();
        wrote_kubeconfig |= d.actions.contains(&Action::EnsureKubeconfig);
        sim.view.workload = nodes_for(&sim, &[]);
    }
    assert!(wrote_kubeconfig);
    assert_eq!(sim.live().len(), 2);
    let d = sim.pass();
    assert!(d.converged(), "{d:?}");
    let available = d
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == CONTROL_PLANE_AVAILABLE)
        .unwrap();
    assert!(available.status);

    // One Node not Ready: the machine does not count, the cluster is not Provisioned.
    let worker = sim
        .live()
        .into_iter()
        .find(|m| m.pool == "md-0")
        .unwrap()
        .name
        .clone();
    sim.view.workload = nodes_for(&sim, &[&worker]);
    let d = sim.pass();
    assert_eq!(d.status.phase, ClusterPhase::Provisioning);
    assert_eq!(d.status.workers[0].ready, 0);
    assert!(
        d.actions.is_empty(),
        "nothing to do but wait: {:?}",
        d.actions
    );

    // Unreachable: ControlPlaneAvailable false with the reason; nothing is created or deleted.
    sim.view.workload = WorkloadView::Unreachable {
        message: "10.0.0.1:6443: connection refused".into(),
    };
    let d = sim.pass();
    let available = d
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == CONTROL_PLANE_AVAILABLE)
        .unwrap();
    assert_eq!(
        (available.status, available.reason),
        (false, WORKLOAD_UNREACHABLE)
    );
    assert!(available.message.contains("10.0.0.1:6443"));
    assert!(d.actions.is_empty(), "{:?}", d.actions);
}

#[test]
fn with_workload_access_off_no_kubeconfig_is_asked_for() {
    let mut sim = Sim::new(1, &[("md-0", 1)]);
    for _ in 0..30 {
        assert!(!sim.pass().actions.contains(&Action::EnsureKubeconfig));
    }
    let d = sim.pass();
    assert!(d.converged());
    assert!(
        !d.status
            .conditions
            .iter()
            .any(|c| c.type_ == CONTROL_PLANE_AVAILABLE)
    );
}

/// Marks every live machine of `pool` as made with inputs that differ from the pool's now:
/// what the executor reports after someone changed a field that shapes a machine.
fn change_inputs(sim: &mut Sim, pool: &str) {
    for m in sim.view.machines.iter_mut().filter(|m| m.pool == pool) {
        m.changed = vec!["infrastructure.config/instanceType".into()];
    }
}

#[test]
fn a_changed_input_rolls_only_its_pool_within_its_bounds() {
    for (surge, unavailable) in [(1, 0), (0, 1), (2, 1), (3, 0)] {
        let mut sim = Sim::new(1, &[("md-0", 3), ("md-1", 2)]);
        sim.view.pools[0].rollout = Rollout {
            on_delete: false,
            max_surge: surge,
            max_unavailable: unavailable,
        };
        sim.converge();
        sim.take_log();
        let before: Vec<String> = sim.live().iter().map(|m| m.name.clone()).collect();
        change_inputs(&mut sim, "md-0");
        assert_eq!(decide(&sim.view).status.workers[0].up_to_date, 0);
        let bounds = format!("maxSurge {surge}, maxUnavailable {unavailable}");
        let mut converged = false;
        for _ in 0..200 {
            let decision = sim.pass();
            let of_pool: Vec<&MachineView> = sim
                .view
                .machines
                .iter()
                .filter(|m| m.pool == "md-0")
                .collect();
            assert!(
                of_pool.len() <= 3 + surge as usize,
                "{bounds}: {} machines exist at once",
                of_pool.len()
            );
            let ready = of_pool
                .iter()
                .filter(|m| !m.deleting && m.phase == MachinePhase::Running)
                .count();
            assert!(
                ready + unavailable as usize >= 3,
                "{bounds}: only {ready} ready"
            );
            if decision.converged() {
                converged = true;
                break;
            }
        }
        assert!(converged, "{bounds}: {:?}", sim.log);
        let log = sim.take_log();
        assert!(
            log.iter().all(|l| !l.contains("md-1")),
            "{bounds}: md-1 untouched: {log:?}"
        );
        assert!(log.iter().all(|l| !l.contains("control-plane")), "{log:?}");
        let after = sim.live();
        assert_eq!(after.iter().filter(|m| m.pool == "md-0").count(), 3);
        assert!(after.iter().all(|m| m.changed.is_empty()));
        for name in before.iter().filter(|n| n.starts_with("md-0")) {
            assert!(
                after.iter().all(|m| &m.name != name),
                "{bounds}: {name} was not replaced"
            );
        }
        assert_eq!(
            log.iter().filter(|l| l.starts_with("create")).count(),
            3,
            "{bounds}"
        );
    }
}

#[test]
fn pools_roll_one_after_the_other() {
    let mut sim = Sim::new(1, &[("md-0", 2), ("md-1", 2)]);
    sim.converge();
    sim.take_log();
    change_inputs(&mut sim, "md-0");
    change_inputs(&mut sim, "md-1");
    sim.converge();
    let log = sim.take_log();
    let last_md0 = log.iter().rposition(|l| l.contains("md-0")).unwrap();
    let first_md1 = log.iter().position(|l| l.contains("md-1")).unwrap();
    assert!(last_md0 < first_md1, "{log:?}");
}

#[test]
fn on_delete_replaces_a_machine_only_once_someone_deleted_it() {
    let mut sim = Sim::new(1, &[("md-0", 2)]);
    sim.view.pools[0].rollout.on_delete = true;
    sim.converge();
    sim.take_log();
    change_inputs(&mut sim, "md-0");
    let decision = sim.pass();
    assert!(decision.actions.is_empty(), "{:?}", decision.actions);
    assert!(
        decision.converged(),
        "an OnDelete pool with old machines is ready"
    );
    assert_eq!(decision.status.workers[0].up_to_date, 0);
    let victim = sim.first_worker();
    sim.machine(&victim).deleting = true;
    sim.converge();
    let log = sim.take_log();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("create md-0")).count(),
        1,
        "{log:?}"
    );
    let live = sim.live();
    assert_eq!(
        live.iter().filter(|m| m.changed.is_empty()).count(),
        2,
        "1 cp + 1 new"
    );
    assert_eq!(live.iter().filter(|m| !m.changed.is_empty()).count(), 1);
}

#[test]
fn the_deletion_order_picks_which_machines_go() {
    let deleted = |order: DeletionOrder| {
        let mut sim = Sim::new(1, &[("md-0", 4)]);
        sim.view.pools[0].deletion_order = order;
        sim.converge();
        let mut by_age: Vec<(u64, String)> = (sim.live().iter())
            .filter(|m| m.pool == "md-0")
            .map(|m| (m.created_at, m.name.clone()))
            .collect();
        by_age.sort();
        sim.take_log();
        sim.view.pools[0].replicas = 2;
        sim.converge();
        let mut gone: Vec<String> = (sim.take_log().iter())
            .filter_map(|l| l.strip_prefix("delete ").map(str::to_owned))
            .collect();
        gone.sort();
        let names = |range: std::ops::Range<usize>| {
            let mut n: Vec<String> = by_age[range].iter().map(|(_, n)| n.clone()).collect();
            n.sort();
            n
        };
        (gone, names(0..2), names(2..4))
    };
    let (gone, oldest, _) = deleted(DeletionOrder::Oldest);
    assert_eq!(gone, oldest);
    let (gone, _, newest) = deleted(DeletionOrder::Newest);
    assert_eq!(gone, newest);
    let (random, ..) = deleted(DeletionOrder::Random);
    assert_eq!(random.len(), 2);
    assert_eq!(
        deleted(DeletionOrder::Random).0,
        random,
        "the same on every run"
    );
}

#[test]
fn a_pool_never_rolls_more_than_its_surge_while_machines_are_being_deleted() {
    // A machine being deleted still counts: with one surge machine, a slow deletion holds the
    // next new machine.
    let mut sim = Sim::new(1, &[("md-0", 2)]);
    sim.converge();
    change_inputs(&mut sim, "md-0");
    for _ in 0..4 {
        sim.pass();
    }
    let of_pool = sim
        .view
        .machines
        .iter()
        .filter(|m| m.pool == "md-0")
        .count();
    assert!(of_pool <= 3, "{:?}", sim.view.machines);
}

/// The workload cluster at `now`: a Node for every live machine with a provider id, except
/// those of `missing`; Ready, except the machines of `sick`, whose Ready is `Unknown` since
/// the time given.
fn nodes_at(sim: &Sim, sick: &[(&str, u64)], missing: &[&str]) -> WorkloadView {
    let nodes = (sim.live().iter())
        .filter(|m| !missing.contains(&m.name.as_str()))
        .map(|m| {
            let since = sick.iter().find(|(n, _)| *n == m.name).map(|(_, t)| *t);
            NodeView {
                name: format!("node-{}", m.name),
                provider_id: m.provider_id.clone(),
                ready: Some(NodeCondition {
                    status: if since.is_some() { None } else { Some(true) },
                    reason: String::new(),
                    message: String::new(),
                }),
                conditions: vec![NodeConditionSince {
                    type_: "Ready".into(),
                    status: if since.is_some() { None } else { Some(true) },
                    since: Some(since.unwrap_or(0)),
                }],
            }
        })
        .collect();
    WorkloadView::Available { nodes: Some(nodes) }
}

fn ready_unknown_for(timeout: u64, max_unhealthy: Option<u32>) -> HealthCheck {
    HealthCheck {
        node_startup_timeout: 0,
        unhealthy_conditions: vec![UnhealthyCondition {
            type_: "Ready".into(),
            status: None,
            timeout,
        }],
        max_unhealthy,
        ..HealthCheck::default()
    }
}

/// Passes with the clock at `now`, the Nodes as `nodes_at` makes them, until converged.
fn converge_at(sim: &mut Sim, now: u64, sick: &[(&str, u64)]) -> usize {
    for n in 1..300 {
        sim.view.now = now;
        sim.view.workload = nodes_at(sim, sick, &[]);
        sim.view.kubeconfig_current = true;
        let decision = sim.pass();
        let of_pool = sim
            .view
            .machines
            .iter()
            .filter(|m| m.pool == "md-0")
            .count();
        assert!(
            of_pool <= 4,
            "more than one surge machine: {:?}",
            sim.view.machines
        );
        if decision.converged() {
            return n;
        }
    }
    panic!("no convergence: {:?}", sim.log)
}

#[test]
fn an_unhealthy_worker_is_replaced_its_replacement_first() {
    let mut sim = Sim::new(1, &[("md-0", 3)]);
    sim.view.pools[0].health = Some(ready_unknown_for(300, None));
    converge_at(&mut sim, 1_000, &[]);
    sim.take_log();
    let sick = sim.first_worker();
    // Unknown since 1000: at 1200 it is not yet past its 300 s.
    sim.view.now = 1_200;
    sim.view.workload = nodes_at(&sim, &[(&sick, 1_000)], &[]);
    let decision = sim.pass();
    assert!(decision.actions.is_empty(), "{:?}", decision.actions);
    let m = sim.view.machines.iter().find(|m| m.name == sick).unwrap();
    assert_eq!(
        machine_health(m, &ready_unknown_for(300, None), &sim.view.workload, 1_200),
        Health::Healthy
    );
    // At 1400 it is: replaced, the new machine first.
    converge_at(&mut sim, 1_400, &[(&sick, 1_000)]);
    let log = sim.take_log();
    let created = log
        .iter()
        .position(|l| l.starts_with("create md-0"))
        .unwrap();
    let deleted = log
        .iter()
        .position(|l| *l == format!("delete {sick}"))
        .unwrap();
    assert!(created < deleted, "{log:?}");
    assert_eq!(sim.count("md-0"), 3);
    assert!(sim.live().iter().all(|m| m.name != sick));
}

#[test]
fn past_the_trigger_nothing_is_remediated_and_the_cluster_says_why() {
    let mut sim = Sim::new(1, &[("md-0", 3)]);
    sim.view.pools[0].health = Some(ready_unknown_for(60, Some(1)));
    converge_at(&mut sim, 1_000, &[]);
    sim.take_log();
    let names: Vec<String> = (sim.live().iter())
        .filter(|m| m.pool == "md-0")
        .map(|m| m.name.clone())
        .collect();
    let two = [(names[0].as_str(), 500), (names[1].as_str(), 500)];
    sim.view.now = 1_000;
    sim.view.workload = nodes_at(&sim, &two, &[]);
    for _ in 0..5 {
        let decision = sim.pass();
        assert!(decision.actions.is_empty(), "{:?}", decision.actions);
        let c = (decision.status.conditions.iter())
            .find(|c| c.type_ == REMEDIATION_ALLOWED)
            .unwrap();
        assert!(!c.status);
        assert_eq!(c.reason, "TooManyUnhealthy");
        assert!(
            c.message
                .contains("md-0: 2 unhealthy machines, more than the 1"),
            "{}",
            c.message
        );
    }
    // One recovers: the other is within the trigger and is replaced.
    converge_at(&mut sim, 1_000, &two[..1]);
    let log = sim.take_log();
    assert!(log.contains(&format!("delete {}", names[0])), "{log:?}");
    assert!(!log.contains(&format!("delete {}", names[1])), "{log:?}");
    let status = decide(&sim.view).status;
    let c = status
        .conditions
        .iter()
        .find(|c| c.type_ == REMEDIATION_ALLOWED)
        .unwrap();
    assert!(c.status, "{c:?}");
}

#[test]
fn a_machine_whose_node_never_registers_is_replaced_after_its_startup_time() {
    let mut sim = Sim::new(1, &[("md-0", 1)]);
    sim.view.pools[0].health = Some(HealthCheck {
        node_startup_timeout: 600,
        ..HealthCheck::default()
    });
    converge_at(&mut sim, 1_000, &[]);
    let worker = sim.first_worker();
    let created = sim
        .live()
        .iter()
        .find(|m| m.name == worker)
        .unwrap()
        .created_at;
    let m = sim
        .view
        .machines
        .iter()
        .find(|m| m.name == worker)
        .unwrap()
        .clone();
    let check = sim.view.pools[0].health.clone().unwrap();
    let without = nodes_at(&sim, &[], &[&worker]);
    assert_eq!(
        machine_health(&m, &check, &without, created + 599),
        Health::Healthy
    );
    assert!(matches!(
        machine_health(&m, &check, &without, created + 600),
        Health::Unhealthy {
            reason: "NodeStartupTimeout",
            ..
        }
    ));
}

#[test]
fn nothing_is_judged_where_the_workload_cluster_is_not_seen() {
    let mut sim = Sim::new(1, &[("md-0", 2)]);
    sim.view.pools[0].health = Some(ready_unknown_for(0, None));
    sim.converge();
    let m = sim.live()[0].clone();
    let check = sim.view.pools[0].health.clone().unwrap();
    for workload in [
        WorkloadView::Off,
        WorkloadView::Unreachable {
            message: "timed out".into(),
        },
        WorkloadView::Available { nodes: None },
    ] {
        assert!(matches!(
            machine_health(&m, &check, &workload, u64::MAX),
            Health::Unknown { .. }
        ));
    }
    sim.take_log();
    sim.view.workload = WorkloadView::Unreachable {
        message: "timed out".into(),
    };
    sim.view.now = u64::MAX;
    let decision = sim.pass();
    assert!(
        !decision
            .actions
            .iter()
            .any(|a| matches!(a, Action::DeleteMachine { .. })),
        "{:?}",
        decision.actions
    );
}

fn etcd_condition(decision: &Decision) -> Option<&ConditionView> {
    (decision.status.conditions.iter()).find(|c| c.type_ == ETCD_MEMBERSHIP)
}

/// The control plane's machines by name, sorted.
fn control_plane_names(sim: &Sim) -> Vec<Option<String>> {
    let mut names: Vec<Option<String>> = (sim.view.machines.iter())
        .filter(|m| m.role.is_control_plane())
        .map(|m| Some(m.name.clone()))
        .collect();
    names.sort();
    names
}

#[test]
fn a_member_leaves_etcd_before_its_machine_is_deleted_and_members_follow_machines() {
    let mut sim = Sim::with_etcd(3, &[]);
    sim.converge();
    let mut members = sim.members();
    members.sort();
    assert_eq!(members, control_plane_names(&sim));
    sim.take_log();
    sim.view.control_plane_replicas = 1;
    for _ in 0..200 {
        let decision = sim.pass();
        // Whenever no step is in flight, the members are the control-plane machines.
        let in_flight = sim.view.machines.iter().any(|m| m.deleting);
        if !in_flight {
            let mut members = sim.members();
            members.sort();
            assert_eq!(members, control_plane_names(&sim), "{:?}", sim.log);
        }
        if decision.converged() {
            break;
        }
    }
    assert_eq!(sim.members().len(), 1);
    // Each member removal comes before its machine's deletion, never the other way.
    let log = sim.take_log();
    let removals: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("remove member"))
        .collect();
    assert_eq!(removals.len(), 2, "{log:?}");
    assert!(!log.iter().any(|l| l.starts_with("delete ")), "{log:?}");
    let d = decide(&sim.view);
    assert!(d.converged());
    let c = etcd_condition(&d).expect("the condition is there where the host keeps etcd");
    assert!(c.status, "{c:?}");
}

#[test]
fn a_crash_between_marking_and_removing_is_finished_by_the_next_pass() {
    let mut sim = Sim::with_etcd(3, &[]);
    sim.converge();
    sim.view.control_plane_replicas = 2;
    sim.crash_in_removal = true;
    sim.take_log();
    sim.converge();
    let log = sim.take_log();
    let crash = log
        .iter()
        .position(|l| l.starts_with("crash removing"))
        .unwrap();
    let machine = log[crash].rsplit(' ').next().unwrap().to_owned();
    // The next pass takes up the same machine, deleting already, and finishes its removal.
    assert_eq!(
        log[crash + 1],
        format!("remove member {machine}"),
        "{log:?}"
    );
    assert_eq!(sim.members().len(), 2);
    assert!(!sim.view.machines.iter().any(|m| m.name == machine));
}

#[test]
fn where_etcd_does_not_answer_a_member_machine_waits_and_the_cluster_says_why() {
    let mut sim = Sim::with_etcd(3, &[("md-0", 1)]);
    sim.converge();
    sim.etcd_reachable = false;
    sim.view.control_plane_replicas = 2;
    for _ in 0..5 {
        let decision = sim.pass();
        assert!(
            !decision.actions.iter().any(|a| matches!(
                a,
                Action::DeleteMachine { .. } | Action::RemoveEtcdMember { .. }
            )),
            "{:?}",
            decision.actions
        );
    }
    // A machine chosen earlier (deleting) waits too, and the condition names it and why.
    sim.etcd_reachable = true;
    sim.crash_in_removal = true;
    while !sim
        .view
        .machines
        .iter()
        .any(|m| m.deleting && m.role.is_control_plane())
    {
        sim.pass();
    }
    sim.etcd_reachable = false;
    let decision = sim.pass();
    let c = etcd_condition(&decision).unwrap();
    assert!(!c.status);
    assert_eq!(c.reason, "EtcdUnreachable");
    assert!(c.message.contains("connection refused"), "{c:?}");
    sim.etcd_reachable = true;
    sim.converge();
    assert_eq!(sim.members().len(), 2);
}

#[test]
fn a_member_without_a_machine_goes_once_no_machine_is_joining() {
    let mut sim = Sim::with_etcd(1, &[]);
    sim.converge();
    // A control-plane machine starts to join...
    sim.view.control_plane_replicas = 2;
    sim.pass();
    // ...and etcd lists a member nothing runs (its machine was deleted behind the host's
    // back). While the machine joins, the member stays (it may be the joiner's).
    sim.etcd
        .as_mut()
        .unwrap()
        .insert(9_999, ("ghost".into(), None));
    let mut saw_wait = false;
    loop {
        let joining = sim
            .view
            .machines
            .iter()
            .any(|m| m.role.is_control_plane() && m.phase != MachinePhase::Running);
        let decision = sim.pass();
        let removes = decision
            .actions
            .iter()
            .any(|a| matches!(a, Action::RemoveEtcdOrphan { .. }));
        if joining {
            assert!(!removes, "{:?}", decision.actions);
            let c = etcd_condition(&decision).unwrap();
            saw_wait |= c.reason == "Waiting" && c.message.contains("ghost");
        }
        if removes {
            break;
        }
    }
    assert!(saw_wait);
    sim.converge();
    assert!(!sim.members().contains(&None), "{:?}", sim.members());
    assert_eq!(sim.members().len(), 2);
}

#[test]
fn without_etcd_access_deletions_go_as_before() {
    for skipped in [false, true] {
        let mut sim = Sim::new(3, &[]);
        sim.converge();
        if skipped {
            sim.view.etcd = EtcdView::Skipped {
                reason: "workload cluster access is off".into(),
            };
        }
        sim.view.control_plane_replicas = 1;
        sim.take_log();
        let decision = sim.converge();
        assert!(decision > 0);
        let log = sim.take_log();
        assert_eq!(log.iter().filter(|l| l.starts_with("delete ")).count(), 2);
        assert!(etcd_condition(&decide(&sim.view)).is_none());
    }
}

#[test]
fn an_unhealthy_control_plane_machine_is_left_to_the_provider_within_the_trigger() {
    let mut sim = Sim::new(3, &[]);
    sim.view.control_plane_health = Some(ready_unknown_for(60, Some(1)));
    converge_at(&mut sim, 1_000, &[]);
    sim.take_log();
    let cp: Vec<String> = (sim.live().iter())
        .filter(|m| m.role.is_control_plane())
        .map(|m| m.name.clone())
        .collect();
    assert_eq!(cp.len(), 3);
    // One unhealthy: told to the provider, and the host itself deletes nothing.
    sim.view.now = 1_000;
    sim.view.workload = nodes_at(&sim, &[(cp[0].as_str(), 500)], &[]);
    let told = control_plane_to_remediate(&sim.view);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, cp[0]);
    assert!(told[0].1.contains("Ready is Unknown for 500s"), "{told:?}");
    let decision = decide(&sim.view);
    assert!(
        !(decision.actions.iter()).any(|a| matches!(a, Action::DeleteMachine { .. })),
        "{:?}",
        decision.actions
    );
    // Two, past the trigger of 1: nothing is told, and the Cluster says why.
    let two = [(cp[0].as_str(), 500), (cp[1].as_str(), 500)];
    sim.view.workload = nodes_at(&sim, &two, &[]);
    assert!(control_plane_to_remediate(&sim.view).is_empty());
    let status = decide(&sim.view).status;
    let c = (status.conditions.iter())
        .find(|c| c.type_ == REMEDIATION_ALLOWED)
        .unwrap();
    assert!(!c.status);
    assert!(
        c.message
            .contains("control plane: 2 unhealthy machines, more than the 1"),
        "{}",
        c.message
    );
    // Without a check nothing is judged.
    sim.view.control_plane_health = None;
    assert!(control_plane_to_remediate(&sim.view).is_empty());
}

#[test]
fn control_plane_replacements_wait_for_the_retry_period_and_stop_at_max_retry() {
    let mut sim = Sim::new(3, &[]);
    let check = HealthCheck {
        max_retry: Some(1),
        retry_period: 100,
        min_healthy_period: 1_000,
        ..ready_unknown_for(60, None)
    };
    sim.view.control_plane_health = Some(check.clone());
    converge_at(&mut sim, 1_000, &[]);
    let sick = (sim.live().iter())
        .find(|m| m.role.is_control_plane())
        .unwrap()
        .name
        .clone();
    sim.view.last_remediation = Some(LastRemediation {
        machine: "cp-before".into(),
        at: 1_000,
        retries: 1,
    });
    let allowed = |sim: &Sim| {
        let status = decide(&sim.view).status;
        (status.conditions.into_iter())
            .find(|c| c.type_ == REMEDIATION_ALLOWED)
            .unwrap()
    };
    let at = |sim: &mut Sim, now: u64| {
        sim.view.now = now;
        sim.view.workload = nodes_at(sim, &[(sick.as_str(), 900)], &[]);
    };
    // Within the retry period: nothing is told, and the Cluster says why.
    at(&mut sim, 1_050);
    assert!(control_plane_to_remediate(&sim.view).is_empty());
    let c = allowed(&sim);
    assert_eq!((c.status, c.reason), (false, "RetryPeriod"), "{c:?}");
    assert!(
        c.message.contains("cp-before was replaced 50s ago"),
        "{c:?}"
    );
    // Past it, but the last replacement turned unhealthy within the healthy period, and one
    // retry is all `maxRetry` allows.
    at(&mut sim, 1_200);
    assert!(control_plane_to_remediate(&sim.view).is_empty());
    let c = allowed(&sim);
    assert_eq!((c.status, c.reason), (false, "MaxRetryReached"), "{c:?}");
    // Once the healthy period has passed, the row is over: the sick member is told again.
    at(&mut sim, 2_100);
    let told = control_plane_to_remediate(&sim.view);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(allowed(&sim).status);
    // What is recorded next: one more in a row within the period, the first after it.
    let last = sim.view.last_remediation.clone();
    assert_eq!(
        LastRemediation::next(last.as_ref(), &sick, 1_500, &check).retries,
        2
    );
    assert_eq!(
        LastRemediation::next(last.as_ref(), &sick, 2_100, &check).retries,
        1
    );
}

/// A Sim whose host keeps the join token, first held by the cluster until `expires`.
fn with_token(cp: u32, pools: &[(&str, u32)], in_cluster: bool, expires: u64) -> Sim {
    Sim {
        token: Some(SimToken {
            id: 1,
            in_cluster,
            expires,
            ttl: 1000,
            reachable: true,
        }),
        ..Sim::new(cp, pools)
    }
}

#[test]
fn joins_wait_for_a_token_the_workload_cluster_holds_and_renewal_comes_first() {
    // The cluster's first token is gone (deleted, or cleaned up at its expiry).
    let mut sim = with_token(3, &[("md-0", 2)], false, 10_000);
    sim.converge();
    let log = sim.take_log();
    assert_eq!(
        log[..3],
        [
            "create control-plane-1 v1.33.4",
            "renew token t2",
            "create control-plane-2 v1.33.4"
        ]
        .map(String::from),
        "the init needs no token; the first join waits for a fresh one"
    );
    assert_eq!(
        log.iter().filter(|l| l.starts_with("renew")).count(),
        1,
        "{log:?}"
    );
    assert_eq!(sim.count("md-0"), 2);
    let status = decide(&sim.view).status;
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.type_ != JOIN_TOKEN_VALID),
        "no join, no look at the token: {status:?}"
    );
}

#[test]
fn a_token_past_half_its_life_is_renewed_before_the_next_join_and_not_again() {
    let mut sim = with_token(1, &[("md-0", 1)], true, 10_000);
    sim.converge();
    assert!(!sim.take_log().iter().any(|l| l.starts_with("renew")));
    // Later in its life: less than half of the TTL (1000) is left.
    let t = sim.token.as_mut().unwrap();
    t.expires = sim.clock + 400;
    sim.view.pools[0].replicas = 3;
    sim.converge();
    let log = sim.take_log();
    assert_eq!(log[0], "renew token t2", "{log:?}");
    assert_eq!(
        log.iter().filter(|l| l.starts_with("renew")).count(),
        1,
        "{log:?}"
    );
    assert_eq!(sim.count("md-0"), 3);
}

#[test]
fn while_the_token_cannot_be_looked_at_joins_wait_and_the_cluster_says_why() {
    let mut sim = with_token(1, &[("md-0", 2)], true, 10_000);
    sim.token.as_mut().unwrap().reachable = false;
    for _ in 0..40 {
        sim.pass();
    }
    // The init went on; no worker was made.
    assert_eq!(sim.live().len(), 1, "{:?}", sim.log);
    assert_eq!(sim.live()[0].phase, MachinePhase::Running);
    let c = sim.pass().status.conditions;
    let token = c
        .iter()
        .find(|c| c.type_ == JOIN_TOKEN_VALID)
        .expect("condition");
    assert!(!token.status);
    assert_eq!(token.reason, "NotObserved");
    assert!(
        token.message.contains("connection refused"),
        "{}",
        token.message
    );
    // Once it can be looked at, the workers come.
    sim.token.as_mut().unwrap().reachable = true;
    sim.converge();
    assert_eq!(sim.count("md-0"), 2);
    assert!(!sim.take_log().iter().any(|l| l.starts_with("renew")));
}

#[test]
fn a_failed_control_plane_member_is_the_plans_to_replace_where_the_provider_is_told() {
    let mut sim = Sim::new(3, &[]);
    sim.converge();
    let failed = sim.live()[1].name.clone();
    sim.machine(&failed).phase = MachinePhase::Failed;
    sim.view.plan = Some(sim.plan());
    let deletes = |d: &Decision| {
        (d.actions.iter())
            .filter(|a| matches!(a, Action::DeleteMachine { .. } | Action::DrainNode { .. }))
            .count()
    };

    // Told (contract 0.3): the host deletes nothing itself and tells the plan, even with no
    // health check configured.
    sim.view.control_plane_told_members = true;
    assert_eq!(deletes(&decide(&sim.view)), 0);
    let told = control_plane_to_remediate(&sim.view);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, failed);
    assert!(told[0].1.contains("failed"), "{told:?}");

    // Not told: the host deletes it, but not beside another control-plane change.
    sim.view.control_plane_told_members = false;
    assert!(control_plane_to_remediate(&sim.view).is_empty());
    assert_eq!(deletes(&decide(&sim.view)), 1);
    let other = sim.live()[0].name.clone();
    sim.machine(&other).deleting = true;
    let d = decide(&sim.view);
    let on_failed = d.actions.iter().any(|a| {
        matches!(a, Action::DeleteMachine { machine } | Action::DrainNode { machine, .. } if *machine == failed)
    });
    assert!(!on_failed, "{:?}", d.actions);
}

/// A cluster whose control plane a service runs: its infrastructure ready, two workers
/// wanted, no machine yet.
fn service_view(service: Option<ServiceView>) -> ClusterView {
    ClusterView {
        version: Some(V2),
        control_plane_shape: ControlPlaneShape::Service,
        service,
        infrastructure: InfraView::Ready {
            failure_domains: vec!["a".into()],
        },
        orphans: Some(Vec::new()),
        pools: vec![PoolSpec {
            name: "md-0".into(),
            replicas: 2,
            failure_domain: None,
            rollout: Rollout::default(),
            deletion_order: DeletionOrder::Oldest,
            health: None,
            drain_timeout: 600,
        }],
        ..ClusterView::default()
    }
}

fn service_at(settled: bool, ready: bool, access: bool) -> ServiceView {
    ServiceView {
        settled,
        initialized: ready,
        ready,
        version: Some(V2),
        replicas: 3,
        ready_replicas: if ready { 3 } else { 0 },
        up_to_date_replicas: if ready { 3 } else { 0 },
        access,
    }
}

#[test]
fn a_service_control_plane_is_asked_before_anything_joins_and_no_secrets_are_made() {
    let d = decide(&service_view(None));
    assert_eq!(d.actions, [Action::ReconcileControlPlane]);
    // Working on it, or ready without a way to join it: no worker, not provisioned.
    for service in [
        service_at(false, false, false),
        service_at(false, true, true),
        service_at(true, true, false),
    ] {
        let d = decide(&service_view(Some(service.clone())));
        assert!(
            !(d.actions.iter()).any(|a| matches!(a, Action::CreateMachine(_))),
            "{service:?}: {:?}",
            d.actions
        );
        assert!(
            !d.actions.contains(&Action::EnsureSecrets),
            "{:?}",
            d.actions
        );
        assert_ne!(d.status.phase, ClusterPhase::Provisioned);
    }
    // As desired, ready, joinable: the workers, and the counts are the service's.
    let d = decide(&service_view(Some(service_at(true, true, true))));
    let creates = (d.actions.iter())
        .filter(|a| matches!(a, Action::CreateMachine(i) if i.role == MachineRole::Worker))
        .count();
    assert!(creates > 0, "{:?}", d.actions);
    assert_eq!(d.status.control_plane.desired, 3);
    assert_eq!(d.status.control_plane.ready, 3);
    let ready = (d.status.conditions.iter()).find(|c| c.type_ == "ControlPlaneReady");
    assert!(ready.is_some_and(|c| c.status), "{:?}", d.status.conditions);
}

#[test]
fn a_service_control_plane_behind_the_spec_holds_the_workers_and_one_ahead_does_not() {
    let mut behind = service_at(false, true, true);
    behind.version = Some(V1);
    let mut view = service_view(Some(behind));
    view.machines = (0..2)
        .map(|i| MachineView {
            name: format!("w{i}"),
            role: MachineRole::Worker,
            pool: "md-0".into(),
            version: V1,
            failure_domain: None,
            created_at: i,
            phase: MachinePhase::Running,
            deleting: false,
            provider_id: Some(format!("p{i}")),
            changed: Vec::new(),
            node: None,
            drain: Default::default(),
        })
        .collect();
    let d = decide(&view);
    assert!(
        !(d.actions.iter())
            .any(|a| matches!(a, Action::CreateMachine(_) | Action::DrainNode { .. })),
        "workers wait for the service's upgrade: {:?}",
        d.actions
    );
    // The service upgraded itself past the spec: it is as desired, and workers roll to the
    // spec's version, not the service's.
    let mut ahead = service_at(true, true, true);
    ahead.version = Some(Version { minor: 35, ..V2 });
    view.service = Some(ahead);
    let d = decide(&view);
    let created: Vec<&MachineIntent> = (d.actions.iter())
        .filter_map(|a| match a {
            Action::CreateMachine(i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(created.len(), 1, "{:?}", d.actions);
    assert_eq!(created[0].version, V2);
}

#[test]
fn a_deleted_cluster_takes_its_workers_then_the_service_then_the_infrastructure() {
    let mut view = service_view(None);
    view.deleting = true;
    view.machines = vec![MachineView {
        name: "w0".into(),
        role: MachineRole::Worker,
        pool: "md-0".into(),
        version: V2,
        failure_domain: None,
        created_at: 0,
        phase: MachinePhase::Running,
        deleting: false,
        provider_id: None,
        changed: Vec::new(),
        node: None,
        drain: Default::default(),
    }];
    let d = decide(&view);
    assert!(
        !d.actions.contains(&Action::DeleteControlPlane),
        "{:?}",
        d.actions
    );
    view.machines.clear();
    assert_eq!(decide(&view).actions, [Action::DeleteControlPlane]);
    view.service_deleted = true;
    assert_eq!(decide(&view).actions, [Action::DeleteInfrastructure]);
}
