//! The planner's tests: single answers, refusals, and whole walks through the simulated host
//! in [`sim`], which checks every step it applies for safety.

mod refusals;
mod sim;
mod walks;

use capw_sdk::control_plane::{EtcdMembership, Member, Plan, Step};
use capw_sdk::testing::{machine, version};
use capw_sdk::types::{Condition, ConditionStatus};

use super::status::{AVAILABLE, SCALING_DOWN, SCALING_UP, UPGRADING};
use sim::{Sim, abc};

/// A ready, live member.
fn member(name: &str, minor: u32, domain: &str, created_at: u64) -> Member {
    Member {
        machine: machine(name),
        version: version(minor),
        failure_domain: Some(domain.into()),
        ready: true,
        created_at,
        deleting: false,
        etcd: EtcdMembership::Unknown,
        out_of_date: Vec::new(),
        unhealthy: Vec::new(),
    }
}

fn unready(mut m: Member) -> Member {
    m.ready = false;
    m
}

fn deleting(mut m: Member) -> Member {
    m.deleting = true;
    m
}

/// A simulated cluster with `members` already in place.
fn sim_with(replicas: u32, minor: u32, members: Vec<Member>) -> Sim {
    let mut sim = Sim::new(replicas, minor, abc());
    sim.members = members;
    sim
}

fn condition<'a>(plan: &'a Plan, type_: &str) -> &'a Condition {
    match plan.status.conditions.iter().find(|c| c.type_ == type_) {
        Some(c) => c,
        None => panic!("no {type_} condition in {:?}", plan.status.conditions),
    }
}

fn status(plan: &Plan, type_: &str) -> (ConditionStatus, String) {
    let c = condition(plan, type_);
    (c.status, c.reason.clone())
}

fn wait_reason(step: &Step) -> &str {
    match step {
        Step::Wait(progress) => &progress.reason,
        other => panic!("expected wait, got {other:?}"),
    }
}

#[test]
fn first_machine_initialises_the_cluster() {
    let p = Sim::new(3, 35, abc()).plan();
    let Step::CreateMachine(machine) = &p.step else {
        panic!("expected create, got {:?}", p.step);
    };
    assert!(machine.init);
    assert_eq!(machine.version, version(35));
    assert_eq!(machine.failure_domain.as_deref(), Some("a"));
    assert!(!p.status.initialized);
    // Nothing serves yet: no failure can be said to be tolerated.
    assert_eq!(p.status.failures_tolerated, None);
    assert_eq!(
        (p.replicas, p.ready_replicas, p.up_to_date_replicas),
        (0, 0, 0)
    );
    assert_eq!(p.status.endpoint.as_ref().map(|e| e.port), Some(6443));
    assert_eq!(
        status(&p, AVAILABLE),
        (ConditionStatus::False, "WaitingForInitialization".into())
    );
    assert_eq!(
        status(&p, SCALING_UP),
        (ConditionStatus::True, "ScalingUp".into())
    );
}

#[test]
fn without_failure_domains_machines_have_none() {
    let p = Sim::new(1, 35, Vec::new()).plan();
    assert!(matches!(
        p.step,
        Step::CreateMachine(ref m) if m.init && m.failure_domain.is_none()
    ));
}

#[test]
fn waits_for_the_init_machine_before_joining() {
    let sim = sim_with(3, 35, vec![unready(member("m0", 35, "a", 1))]);
    let p = sim.plan();
    assert_eq!(wait_reason(&p.step), "WaitingForMachinesReady");
    let Step::Wait(progress) = &p.step else {
        panic!("expected wait");
    };
    assert_eq!(
        progress.message,
        "0 of 1 control-plane machines ready; waiting for `m0` before the next change"
    );
    assert_eq!(progress.requeue_after_ms, 10_000);
    assert!(!p.status.initialized);
}

#[test]
fn joins_one_at_a_time() {
    let sim = sim_with(
        5,
        35,
        vec![member("m0", 35, "a", 1), unready(member("m1", 35, "b", 2))],
    );
    let p = sim.plan();
    assert_eq!(wait_reason(&p.step), "WaitingForMachinesReady");
    assert!(p.status.initialized);
    assert_eq!((p.replicas, p.ready_replicas), (2, 1));
    // One of two etcd members is not a quorum: honest, if alarming, while m1 joins.
    assert_eq!(
        status(&p, AVAILABLE),
        (ConditionStatus::False, "QuorumNotReady".into())
    );
}

#[test]
fn waits_for_the_endpoint_before_creating() {
    let sim = Sim::new(3, 35, abc());
    let mut input = sim.input();
    input.endpoint = None;
    let p = match super::plan(&sim.config, &input) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(wait_reason(&p.step), "WaitingForEndpoint");
    assert_eq!(p.status.endpoint, None);
}

#[test]
fn converged_is_none_and_available() {
    let sim = sim_with(
        3,
        35,
        vec![
            member("m0", 35, "a", 1),
            member("m1", 35, "b", 2),
            member("m2", 35, "c", 3),
        ],
    );
    let p = sim.plan();
    assert_eq!(p.step, Step::None);
    assert!(p.status.initialized);
    assert_eq!(
        (p.replicas, p.ready_replicas, p.up_to_date_replicas),
        (3, 3, 3)
    );
    let expected: Vec<(String, ConditionStatus, String)> = vec![
        (
            AVAILABLE.into(),
            ConditionStatus::True,
            "QuorumReady".into(),
        ),
        (UPGRADING.into(), ConditionStatus::False, "UpToDate".into()),
        (
            SCALING_UP.into(),
            ConditionStatus::False,
            "NotScalingUp".into(),
        ),
        (
            SCALING_DOWN.into(),
            ConditionStatus::False,
            "NotScalingDown".into(),
        ),
    ];
    let found: Vec<(String, ConditionStatus, String)> = p
        .status
        .conditions
        .iter()
        .map(|c| (c.type_.clone(), c.status, c.reason.clone()))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        condition(&p, AVAILABLE).message,
        "3 of 3 members ready; etcd's quorum is 2"
    );
}

#[test]
fn deleting_members_count_for_initialized_only() {
    let sim = sim_with(1, 35, vec![deleting(member("m0", 35, "a", 1))]);
    let p = sim.plan();
    assert!(p.status.initialized);
    assert_eq!(p.replicas, 0);
    assert_eq!(wait_reason(&p.step), "WaitingForDeletion");
}

#[test]
fn surge_machine_is_upgrading_not_scaling_down() {
    let sim = sim_with(
        3,
        35,
        vec![
            member("m0", 34, "a", 1),
            member("m1", 34, "b", 2),
            member("m2", 34, "c", 3),
            member("m3", 35, "a", 4),
        ],
    );
    let p = sim.plan();
    assert_eq!(p.step, Step::DeleteMachine(machine("m0")));
    assert_eq!(
        status(&p, UPGRADING),
        (ConditionStatus::True, "RollingOut".into())
    );
    assert_eq!(
        condition(&p, UPGRADING).message,
        "1 of 4 machines run v1.35.0; replacing one at a time"
    );
    assert_eq!(
        status(&p, SCALING_DOWN),
        (ConditionStatus::False, "NotScalingDown".into())
    );
    assert_eq!(p.up_to_date_replicas, 1);
    // Mid-rollout the control plane is reported at the version all its members serve.
    assert_eq!(p.status.version, Some(version(34)));
    assert!(p.status.ready);
}

#[test]
fn scale_down_through_an_even_count_is_scaling_down() {
    let sim = sim_with(
        3,
        35,
        vec![
            member("m0", 35, "a", 1),
            member("m1", 35, "b", 2),
            member("m2", 35, "c", 3),
            member("m3", 35, "a", 4),
        ],
    );
    let p = sim.plan();
    assert_eq!(
        status(&p, SCALING_DOWN),
        (ConditionStatus::True, "ScalingDown".into())
    );
    // `a` holds two members; m0 is the older of them.
    assert!(matches!(p.step, Step::DeleteMachine(ref m) if m.name == "m0"));
}

#[test]
fn scale_down_removes_out_of_date_machines_first() {
    // `a` is the fullest domain and m0 the oldest machine, but both of a's machines are up to
    // date: the out-of-date m2 goes, wherever it is.
    let sim = sim_with(
        3,
        35,
        vec![
            member("m0", 35, "a", 1),
            member("m1", 35, "a", 2),
            member("m2", 34, "b", 3),
            member("m3", 35, "c", 4),
        ],
    );
    let p = sim.plan();
    assert!(
        matches!(p.step, Step::DeleteMachine(ref m) if m.name == "m2"),
        "{:?}",
        p.step
    );
}
