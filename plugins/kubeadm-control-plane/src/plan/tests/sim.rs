//! A simulated host: applies each step the planner answers, checks that the step was safe,
//! then lets the machine become ready (or finish deleting) and plans again. Like the host, it
//! may observe etcd (a machine joins etcd as it becomes ready and leaves it on
//! `remove-etcd-member`) and records what shaped each machine (a generation of the class's
//! machine-shaping inputs), telling the planner what is out of date.

use std::collections::BTreeMap;

use capw_sdk::control_plane::{EtcdMembership, MachineToCreate, Member, Plan, PlanInput, Step};
use capw_sdk::testing::{machine as machine_ref, version};
use capw_sdk::types::{Endpoint, KubernetesVersion, MachineRef};

use crate::config::KubeadmControlPlaneConfig;
use crate::plan::membership::quorum;
use crate::plan::{PlanError, plan};

/// Domains `a`, `b`, `c`.
pub fn abc() -> Vec<String> {
    ["a", "b", "c"].map(String::from).to_vec()
}

/// What the simulated cluster looked like after one transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// Every machine, being deleted or not.
    pub machines: usize,
    /// Machines not being deleted.
    pub live: usize,
    /// Live machines that are ready.
    pub ready: usize,
}

/// The simulated cluster and everything the walk saw.
#[derive(Debug, Clone)]
pub struct Sim {
    pub config: KubeadmControlPlaneConfig,
    pub version: KubernetesVersion,
    pub replicas: u32,
    /// The Cluster's `failures-tolerated` ask, given with `replicas` 0.
    pub failures_tolerated: Option<u32>,
    pub domains: Vec<String>,
    pub members: Vec<Member>,
    /// Every create or delete applied, in order.
    pub steps: Vec<Step>,
    /// The state after every transition: a step applied, a machine ready, a deletion done.
    pub snapshots: Vec<Snapshot>,
    /// Whether the host observes etcd: members then say whether etcd lists them.
    pub etcd: bool,
    /// The generation of the machine-shaping inputs new machines are made with.
    pub shape: u32,
    /// The generation each machine was made with, by name; absent: generation 0.
    shapes: BTreeMap<String, u32>,
    /// The machines the host's health checks judge unhealthy, with why, by name.
    pub sick: BTreeMap<String, String>,
    clock: u64,
    created: u32,
}

impl Sim {
    /// An empty cluster wanting `replicas` machines at `v1.{minor}.0` over `domains`.
    pub fn new(replicas: u32, minor: u32, domains: Vec<String>) -> Self {
        Self {
            config: KubeadmControlPlaneConfig::default(),
            version: version(minor),
            replicas,
            failures_tolerated: None,
            domains,
            members: Vec::new(),
            steps: Vec::new(),
            snapshots: Vec::new(),
            etcd: false,
            shape: 0,
            shapes: BTreeMap::new(),
            sick: BTreeMap::new(),
            clock: 1_700_000_000,
            created: 0,
        }
    }

    /// The same, with a host that observes etcd.
    pub fn observing_etcd(mut self) -> Self {
        self.etcd = true;
        self
    }

    /// The same, with `maxSurge: 0`.
    pub fn delete_first(mut self) -> Self {
        self.config.max_surge = 0;
        self
    }

    pub fn input(&self) -> PlanInput {
        let members = (self.members.iter())
            .map(|m| Member {
                out_of_date: self.changed(m),
                unhealthy: self
                    .sick
                    .get(&m.machine.name)
                    .cloned()
                    .into_iter()
                    .collect(),
                ..m.clone()
            })
            .collect();
        PlanInput {
            version: self.version,
            replicas: self.replicas,
            members,
            failure_domains: self.domains.clone(),
            endpoint: Some(Endpoint {
                host: "cp.c1.test".into(),
                port: 6443,
            }),
            failures_tolerated: self.failures_tolerated,
            objects: Vec::new(),
        }
    }

    pub fn try_plan(&self) -> Result<Plan, PlanError> {
        plan(&self.config, &self.input())
    }

    /// The plan, checked to be deterministic and independent of the members' order.
    pub fn plan(&self) -> Plan {
        let answer = match self.try_plan() {
            Ok(p) => p,
            Err(e) => panic!("plan refused: {e}\n{self:#?}"),
        };
        assert_eq!(self.try_plan().as_ref(), Ok(&answer), "not deterministic");
        let mut reversed = self.input();
        reversed.members.reverse();
        if let Ok(other) = plan(&self.config, &reversed)
            && !matches!(answer.step, Step::Wait(_))
        {
            assert_eq!(other.step, answer.step, "depends on the members' order");
        }
        answer
    }

    /// Live members per failure domain, in the order of `domains`.
    pub fn spread(&self) -> Vec<usize> {
        self.domains
            .iter()
            .map(|d| {
                self.live()
                    .filter(|m| m.failure_domain.as_ref() == Some(d))
                    .count()
            })
            .collect()
    }

    pub fn live(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| !m.deleting)
    }

    /// Plans and applies steps until the plan is `none`, checking every step on the way.
    /// Returns the steps this walk applied.
    pub fn converge(&mut self) -> Vec<Step> {
        let first = self.steps.len();
        for _ in 0..100 {
            let answer = self.plan();
            self.check_counts(&answer);
            match answer.step {
                Step::None => return self.steps[first..].to_vec(),
                Step::CreateMachine(machine) => {
                    self.check_create(&machine);
                    let name = self.create(&machine);
                    self.steps.push(Step::CreateMachine(machine));
                    self.expect_wait("a machine is joining");
                    self.set_ready(&name);
                }
                Step::DeleteMachine(machine) => {
                    self.check_delete(&machine);
                    assert!(
                        self.live()
                            .all(|m| m.machine != machine || m.etcd != EtcdMembership::Member),
                        "delete-machine for {machine:?}, which etcd lists\n{self:#?}"
                    );
                    self.mark_deleting(&machine.name);
                    self.steps.push(Step::DeleteMachine(machine.clone()));
                    self.expect_wait("a machine is being deleted");
                    self.remove(&machine.name);
                }
                Step::RemoveEtcdMember(machine) => {
                    self.check_delete(&machine);
                    assert!(
                        self.live()
                            .any(|m| m.machine == machine && m.etcd == EtcdMembership::Member),
                        "remove-etcd-member for {machine:?}, which etcd does not list\n{self:#?}"
                    );
                    // As the host does: the machine is marked deleted first, then leaves etcd.
                    self.mark_deleting(&machine.name);
                    self.leave_etcd(&machine.name);
                    self.steps.push(Step::RemoveEtcdMember(machine.clone()));
                    self.expect_wait("a member is leaving etcd");
                    self.remove(&machine.name);
                }
                other => panic!("stuck: {other:?}\n{self:#?}"),
            }
        }
        panic!("no convergence in 100 steps\n{self:#?}");
    }

    /// Adds a machine for `machine`, not ready yet; returns its name.
    pub fn create(&mut self, machine: &MachineToCreate) -> String {
        let name = format!("m{}", self.created);
        self.created += 1;
        self.clock += 10;
        self.members.push(Member {
            machine: machine_ref(&name),
            version: machine.version,
            failure_domain: machine.failure_domain.clone(),
            ready: false,
            created_at: self.clock,
            deleting: false,
            etcd: self.not_member(),
            out_of_date: Vec::new(),
            unhealthy: Vec::new(),
        });
        self.shapes.insert(name.clone(), self.shape);
        self.snapshot();
        name
    }

    /// A machine ready: its kubeadm join has added it to etcd.
    pub fn set_ready(&mut self, name: &str) {
        let joined = if self.etcd {
            EtcdMembership::Member
        } else {
            EtcdMembership::Unknown
        };
        for m in &mut self.members {
            if m.machine.name == name {
                m.ready = true;
                m.etcd = joined;
            }
        }
        self.snapshot();
    }

    fn leave_etcd(&mut self, name: &str) {
        let left = self.not_member();
        for m in &mut self.members {
            if m.machine.name == name {
                m.etcd = left;
            }
        }
    }

    /// What the host says of a machine etcd does not list.
    fn not_member(&self) -> EtcdMembership {
        if self.etcd {
            EtcdMembership::NotMember
        } else {
            EtcdMembership::Unknown
        }
    }

    /// What the host lists as out of date for `m`, as capw's engine does.
    fn changed(&self, m: &Member) -> Vec<String> {
        let mut changed = Vec::new();
        if m.version != self.version {
            changed.push("version".to_owned());
        }
        if self.shapes.get(&m.machine.name).copied().unwrap_or(0) != self.shape {
            changed.push("infrastructure.config/instanceType".to_owned());
        }
        changed
    }

    pub fn mark_deleting(&mut self, name: &str) {
        for m in &mut self.members {
            if m.machine.name == name {
                m.deleting = true;
            }
        }
        self.snapshot();
    }

    pub fn remove(&mut self, name: &str) {
        self.members.retain(|m| m.machine.name != name);
        self.sick.remove(name);
        self.snapshot();
    }

    /// The host judges `name` unhealthy (its Node NotReady): it is no longer ready.
    pub fn fall_ill(&mut self, name: &str) {
        self.sick.insert(
            name.into(),
            format!("Node {name}: Ready is Unknown for 400s"),
        );
        for m in &mut self.members {
            if m.machine.name == name {
                m.ready = false;
            }
        }
    }

    fn snapshot(&mut self) {
        let snapshot = Snapshot {
            machines: self.members.len(),
            live: self.live().count(),
            ready: self.live().filter(|m| m.ready).count(),
        };
        self.snapshots.push(snapshot);
    }

    fn expect_wait(&self, why: &str) {
        let answer = self.plan();
        assert!(
            matches!(answer.step, Step::Wait(_)),
            "{why}, yet the plan answered {:?}\n{self:#?}",
            answer.step
        );
    }

    fn desired(&self) -> usize {
        let replicas = match (self.replicas, self.failures_tolerated) {
            (0, Some(n)) => 2 * n + 1,
            (0, None) => self.config.replicas.unwrap_or(0),
            (r, _) => r,
        };
        usize::try_from(replicas).unwrap_or(usize::MAX)
    }

    fn out_of_date(&self) -> usize {
        self.live().filter(|m| !self.changed(m).is_empty()).count()
    }

    /// The counts a plan reports match the members.
    fn check_counts(&self, answer: &Plan) {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        assert_eq!(answer.replicas, count(self.live().count()));
        assert_eq!(
            answer.ready_replicas,
            count(self.live().filter(|m| m.ready).count())
        );
        assert_eq!(
            answer.up_to_date_replicas,
            count(self.live().count() - self.out_of_date())
        );
        assert_eq!(
            answer.status.initialized,
            self.members.iter().any(|m| m.ready)
        );
        assert_eq!(answer.status.ready, self.live().any(|m| m.ready));
        let oldest = self.live().map(|m| m.version.minor).min();
        assert_eq!(answer.status.version.map(|v| v.minor), oldest);
    }

    /// A create is safe: nothing else under way, init exactly for the first machine, the
    /// desired version, a listed domain, and above the replica count only as a surge.
    fn check_create(&self, machine: &MachineToCreate) {
        assert!(
            self.members.iter().all(|m| !m.deleting && m.ready),
            "{self:#?}"
        );
        assert_eq!(machine.init, self.members.is_empty(), "{self:#?}");
        assert_eq!(machine.version, self.version);
        match &machine.failure_domain {
            None => assert!(self.domains.is_empty()),
            Some(d) => assert!(self.domains.contains(d), "unknown domain {d}"),
        }
        let live_after = self.live().count() + 1;
        if live_after > self.desired() {
            assert_eq!(
                live_after,
                self.desired() + 1,
                "more than one surge machine"
            );
            assert_eq!(self.config.max_surge, 1, "surge with maxSurge 0");
            assert!(self.out_of_date() > 0, "surge without a rollout");
        }
    }

    /// A delete is safe: nothing else under way, a live member, never the last one, etcd
    /// keeps its quorum through the removal, and out-of-date machines go first. An unhealthy
    /// member (which may be unready) goes before anything else, with every other member
    /// healthy and ready.
    fn check_delete(&self, machine: &MachineRef) {
        let Some(target) = self.live().find(|m| m.machine == *machine) else {
            panic!("deletes {machine:?}, which is not a live member");
        };
        let sick = self.sick.contains_key(&machine.name);
        assert!(
            (self.members.iter())
                .filter(|m| m.machine != *machine)
                .all(|m| !m.deleting && m.ready && !self.sick.contains_key(&m.machine.name)),
            "{self:#?}"
        );
        assert!(sick || target.ready, "deletes an unready member: {self:#?}");
        assert!(
            sick || self.sick.is_empty(),
            "deletes a healthy member while one is unhealthy: {self:#?}"
        );
        let live = self.live().count();
        assert!(live >= 2, "deletes the last member");
        let others_ready = self
            .live()
            .filter(|m| m.ready && m.machine != *machine)
            .count();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        assert!(
            count(others_ready) >= quorum(count(live - 1)),
            "removal leaves etcd without quorum"
        );
        if sick {
            return;
        }
        if self.out_of_date() > 0 {
            assert!(
                !self.changed(target).is_empty(),
                "deletes an up-to-date machine first"
            );
        }
        let delete_first = self.config.max_surge == 0 && self.out_of_date() > 0;
        assert!(
            live > self.desired() || delete_first,
            "deletes below the desired count"
        );
    }
}
