//! Whole scale-ups, scale-downs and rollouts, walked step by step through the simulated host.
//! [`Sim::converge`] checks every step for safety; these tests check the path and the end.

use capw_sdk::control_plane::Step;
use capw_sdk::testing::version;

use super::sim::{Sim, Snapshot, abc};

fn creates(steps: &[Step]) -> usize {
    steps
        .iter()
        .filter(|s| matches!(s, Step::CreateMachine(_)))
        .count()
}

fn deletes(steps: &[Step]) -> usize {
    steps
        .iter()
        .filter(|s| matches!(s, Step::DeleteMachine(_) | Step::RemoveEtcdMember(_)))
        .count()
}

/// The cluster is exactly as desired: the count, every machine ready and up to date.
fn assert_converged(sim: &Sim, replicas: usize) {
    assert_eq!(sim.members.len(), replicas, "{sim:#?}");
    assert!(
        sim.members
            .iter()
            .all(|m| m.ready && !m.deleting && m.version == sim.version),
        "{sim:#?}"
    );
    assert!(
        sim.input().members.iter().all(|m| m.out_of_date.is_empty()),
        "{sim:#?}"
    );
}

fn peak(snapshots: &[Snapshot]) -> usize {
    snapshots.iter().map(|s| s.machines).max().unwrap_or(0)
}

#[test]
fn scales_1_3_5_3_1_one_machine_at_a_time() {
    let mut sim = Sim::new(1, 35, abc());
    let mut seen = 0;
    // (desired, creates, deletes) of each phase.
    for (replicas, want_creates, want_deletes) in
        [(1, 1, 0), (3, 2, 0), (5, 2, 0), (3, 0, 2), (1, 0, 2)]
    {
        sim.replicas = replicas;
        let steps = sim.converge();
        assert_eq!(
            (creates(&steps), deletes(&steps)),
            (want_creates, want_deletes),
            "to {replicas}: {steps:?}"
        );
        assert_converged(&sim, replicas as usize);
        let phase = &sim.snapshots[seen..];
        seen = sim.snapshots.len();
        // Plain scaling never surges: at most max(before, desired) machines.
        let before = phase.first().map_or(0, |s| s.machines.max(s.live));
        assert!(peak(phase) <= before.max(replicas as usize), "{phase:?}");
        // At most one machine is joining or leaving at any time.
        for s in phase {
            assert!(s.machines - s.ready <= 1, "{phase:?}");
            assert!(s.live >= 1, "{phase:?}");
        }
    }
    // Only the very first create initialised the cluster.
    let inits = sim
        .steps
        .iter()
        .filter(|s| matches!(s, Step::CreateMachine(m) if m.init))
        .count();
    assert_eq!(inits, 1);
    assert!(matches!(&sim.steps[0], Step::CreateMachine(m) if m.init));
}

#[test]
fn upgrade_of_three_with_surge_rolls_one_at_a_time() {
    let mut sim = Sim::new(3, 34, abc());
    sim.converge();
    let start = sim.snapshots.len();
    let old: Vec<String> = sim.members.iter().map(|m| m.machine.name.clone()).collect();

    sim.version = version(35);
    let steps = sim.converge();

    // Surge, remove, three times over.
    assert_eq!(steps.len(), 6, "{steps:?}");
    for pair in steps.chunks(2) {
        assert!(matches!(&pair[0], Step::CreateMachine(m) if !m.init && m.version == version(35)));
        assert!(matches!(&pair[1], Step::DeleteMachine(m) if old.contains(&m.name)));
    }
    // The oldest out-of-date machine goes first when the domains are balanced.
    assert!(matches!(&steps[1], Step::DeleteMachine(m) if m.name == old[0]));
    let during = &sim.snapshots[start..];
    assert!(peak(during) <= 4, "{during:?}");
    for s in during {
        assert!(s.ready >= 3, "fewer than 3 ready: {during:?}");
        assert!(s.machines - s.ready <= 1, "{during:?}");
    }
    assert_converged(&sim, 3);
    assert_eq!(sim.spread(), [1, 1, 1]);
}

#[test]
fn upgrade_of_one_with_surge_keeps_a_member() {
    let mut sim = Sim::new(1, 34, abc());
    sim.converge();
    let start = sim.snapshots.len();
    sim.version = version(35);
    let steps = sim.converge();
    assert_eq!((creates(&steps), deletes(&steps)), (1, 1));
    assert!(matches!(&steps[0], Step::CreateMachine(_)));
    let during = &sim.snapshots[start..];
    assert!(peak(during) <= 2);
    assert!(during.iter().all(|s| s.ready >= 1), "{during:?}");
    assert_converged(&sim, 1);
}

#[test]
fn upgrade_of_three_deleting_first_never_exceeds_three() {
    let mut sim = Sim::new(3, 34, abc()).delete_first();
    sim.converge();
    let start = sim.snapshots.len();
    sim.version = version(35);
    let steps = sim.converge();
    assert_eq!(steps.len(), 6, "{steps:?}");
    for pair in steps.chunks(2) {
        assert!(matches!(&pair[0], Step::DeleteMachine(_)), "{steps:?}");
        assert!(matches!(&pair[1], Step::CreateMachine(_)), "{steps:?}");
    }
    let during = &sim.snapshots[start..];
    assert!(peak(during) <= 3, "{during:?}");
    assert!(during.iter().all(|s| s.ready >= 2), "{during:?}");
    assert_converged(&sim, 3);
    assert_eq!(sim.spread(), [1, 1, 1]);
}

#[test]
fn five_spread_over_three_domains_two_two_one() {
    let mut sim = Sim::new(5, 35, abc());
    let steps = sim.converge();
    let domains: Vec<Option<&str>> = steps
        .iter()
        .filter_map(|s| match s {
            Step::CreateMachine(m) => Some(m.failure_domain.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(
        domains,
        [Some("a"), Some("b"), Some("c"), Some("a"), Some("b")]
    );
    assert_eq!(sim.spread(), [2, 2, 1]);
}

#[test]
fn scale_down_takes_from_the_most_populated_domain() {
    let mut sim = Sim::new(5, 35, abc());
    sim.converge();
    // m0 (a), m1 (b), m2 (c), m3 (a), m4 (b): a and b hold two; m0 is the oldest of those.
    sim.replicas = 3;
    let steps = sim.converge();
    let removed: Vec<&str> = steps
        .iter()
        .filter_map(|s| match s {
            Step::DeleteMachine(m) => Some(m.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(removed, ["m0", "m1"]);
    assert_eq!(sim.spread(), [1, 1, 1]);
}

#[test]
fn scale_down_prefers_the_fuller_domain_over_the_older_machine() {
    // c holds two machines, both younger than the machines in a and b.
    let mut sim = Sim::new(3, 35, abc());
    for (name, domain, at) in [("x", "a", 1), ("y", "b", 2), ("z1", "c", 3), ("z2", "c", 4)] {
        sim.members.push(super::member(name, 35, domain, at));
    }
    let p = sim.plan();
    assert!(
        matches!(p.step, Step::DeleteMachine(ref m) if m.name == "z1"),
        "{:?}",
        p.step
    );
}

#[test]
fn upgrade_of_five_keeps_the_spread() {
    let mut sim = Sim::new(5, 34, abc());
    sim.converge();
    let start = sim.snapshots.len();
    sim.version = version(35);
    let steps = sim.converge();
    assert_eq!((creates(&steps), deletes(&steps)), (5, 5));
    let during = &sim.snapshots[start..];
    assert!(peak(during) <= 6);
    assert!(during.iter().all(|s| s.ready >= 5), "{during:?}");
    assert_converged(&sim, 5);
    let mut spread = sim.spread();
    spread.sort_unstable();
    assert_eq!(spread, [1, 2, 2]);
}

#[test]
fn scale_down_during_an_upgrade_removes_old_machines_first() {
    let mut sim = Sim::new(5, 34, abc());
    sim.converge();
    sim.version = version(35);
    sim.replicas = 3;
    let steps = sim.converge();
    // Two out-of-date machines go without replacement, then three are replaced.
    assert!(matches!(&steps[0], Step::DeleteMachine(_)), "{steps:?}");
    assert!(matches!(&steps[1], Step::DeleteMachine(_)), "{steps:?}");
    assert_eq!((creates(&steps), deletes(&steps)), (3, 5));
    assert_converged(&sim, 3);
    assert_eq!(sim.spread(), [1, 1, 1]);
}

/// Every combination of start and end size, rollout strategy, domains and upgrade or not
/// converges through safe steps (the simulated host checks each), and ends evenly spread.
#[test]
fn every_walk_converges_safely_and_evenly() {
    let domain_sets: [Vec<String>; 3] = [Vec::new(), ["a", "b"].map(String::from).to_vec(), abc()];
    for from in [1, 3, 5, 7] {
        for to in [1, 3, 5, 7] {
            for upgrade in [false, true] {
                for surge in [1, 0] {
                    for domains in &domain_sets {
                        let mut sim = Sim::new(from, 34, domains.clone());
                        sim.config.max_surge = surge;
                        sim.converge();
                        sim.replicas = to;
                        if upgrade {
                            sim.version = version(35);
                        }
                        let refused = upgrade && surge == 0 && to < 3;
                        if refused {
                            assert!(sim.try_plan().is_err(), "{from}->{to} accepted");
                            continue;
                        }
                        let start = sim.snapshots.len();
                        sim.converge();
                        assert_converged(&sim, to as usize);
                        let during = &sim.snapshots[start..];
                        let bound = (from.max(to) + surge) as usize;
                        assert!(
                            peak(during) <= bound,
                            "{from}->{to} upgrade={upgrade} surge={surge}: {during:?}"
                        );
                        let spread = sim.spread();
                        if let (Some(most), Some(least)) =
                            (spread.iter().max(), spread.iter().min())
                        {
                            assert!(
                                most - least <= 1,
                                "{from}->{to} upgrade={upgrade} surge={surge} \
                                 domains={domains:?}: {spread:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn with_etcd_observed_every_member_leaves_etcd_before_its_machine() {
    // The simulated host refuses a delete-machine for a member etcd lists (Sim::converge).
    let mut sim = Sim::new(5, 34, abc()).observing_etcd();
    sim.converge();
    sim.replicas = 3;
    let down = sim.converge();
    assert_eq!(down.len(), 2, "{down:?}");
    assert!(
        down.iter().all(|s| matches!(s, Step::RemoveEtcdMember(_))),
        "{down:?}"
    );
    sim.version = version(35);
    let rollout = sim.converge();
    assert_eq!(
        (creates(&rollout), deletes(&rollout)),
        (3, 3),
        "{rollout:?}"
    );
    assert!(
        !rollout.iter().any(|s| matches!(s, Step::DeleteMachine(_))),
        "{rollout:?}"
    );
    assert_converged(&sim, 3);
}

#[test]
fn without_etcd_observed_machines_are_deleted_as_before() {
    let mut sim = Sim::new(3, 34, abc());
    sim.converge();
    sim.replicas = 1;
    let down = sim.converge();
    assert_eq!(down.len(), 2, "{down:?}");
    assert!(
        down.iter().all(|s| matches!(s, Step::DeleteMachine(_))),
        "{down:?}"
    );
}

#[test]
fn a_changed_machine_shaping_input_rolls_like_a_version() {
    let mut sim = Sim::new(3, 35, abc()).observing_etcd();
    sim.converge();
    let start = sim.snapshots.len();
    let old: Vec<String> = sim.members.iter().map(|m| m.machine.name.clone()).collect();

    sim.shape = 1;
    let upgrading = sim.plan();
    let condition = super::condition(&upgrading, super::UPGRADING);
    assert!(
        condition
            .message
            .contains("changed: infrastructure.config/instanceType"),
        "{condition:?}"
    );
    assert_eq!(upgrading.up_to_date_replicas, 0);
    let steps = sim.converge();
    // Surge, then the old member out of etcd, three times over; the version never moved.
    assert_eq!(steps.len(), 6, "{steps:?}");
    for pair in steps.chunks(2) {
        assert!(matches!(&pair[0], Step::CreateMachine(m) if m.version == version(35)));
        assert!(matches!(&pair[1], Step::RemoveEtcdMember(m) if old.contains(&m.name)));
    }
    for s in &sim.snapshots[start..] {
        assert!(
            s.ready >= 3,
            "fewer than 3 ready: {:?}",
            &sim.snapshots[start..]
        );
    }
    assert_converged(&sim, 3);
    assert_eq!(sim.spread(), [1, 1, 1]);
}

#[test]
fn an_unhealthy_member_leaves_etcd_and_is_replaced() {
    let mut sim = Sim::new(3, 35, abc()).observing_etcd();
    sim.converge();
    let sick = sim.members[1].machine.name.clone();
    sim.fall_ill(&sick);
    let steps = sim.converge();
    // Out first (etcd lists it), then its replacement, in the domain it left.
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert!(matches!(&steps[0], Step::RemoveEtcdMember(m) if m.name == sick));
    assert!(matches!(&steps[1], Step::CreateMachine(m) if !m.init));
    assert_converged(&sim, 3);
    assert_eq!(sim.spread(), [1, 1, 1]);
    assert!(sim.members.iter().all(|m| m.machine.name != sick));
}

#[test]
fn two_unhealthy_members_of_three_wait_for_quorum() {
    let mut sim = Sim::new(3, 35, abc()).observing_etcd();
    sim.converge();
    let (a, b) = (
        sim.members[0].machine.name.clone(),
        sim.members[1].machine.name.clone(),
    );
    sim.fall_ill(&a);
    sim.fall_ill(&b);
    let answer = sim.plan();
    assert_eq!(super::wait_reason(&answer.step), "RemediationBlocked");
    let Step::Wait(progress) = &answer.step else {
        unreachable!()
    };
    assert!(
        progress.message.contains("fewer than etcd's quorum of 2"),
        "{}",
        progress.message
    );
    // One recovers: the other is replaced.
    sim.sick.remove(&a);
    for m in &mut sim.members {
        m.ready = m.machine.name != b;
    }
    let steps = sim.converge();
    assert!(
        matches!(&steps[0], Step::RemoveEtcdMember(m) if m.name == b),
        "{steps:?}"
    );
    assert_converged(&sim, 3);
}

#[test]
fn the_only_member_is_never_removed_as_unhealthy() {
    let mut sim = Sim::new(1, 35, abc()).observing_etcd();
    sim.converge();
    let only = sim.members[0].machine.name.clone();
    sim.fall_ill(&only);
    let answer = sim.plan();
    assert_eq!(super::wait_reason(&answer.step), "RemediationNotPossible");
}

#[test]
fn an_unhealthy_member_waits_while_another_joins() {
    let mut sim = Sim::new(3, 35, abc()).observing_etcd();
    sim.converge();
    sim.replicas = 5;
    let joining = match sim.plan().step {
        Step::CreateMachine(m) => m,
        other => panic!("{other:?}"),
    };
    sim.create(&joining);
    let sick = sim.members[0].machine.name.clone();
    sim.fall_ill(&sick);
    assert_eq!(super::wait_reason(&sim.plan().step), "RemediationWaiting");
}

#[test]
fn failures_tolerated_one_then_two_grows_to_three_then_five_members() {
    let mut sim = Sim::new(0, 35, abc());
    sim.failures_tolerated = Some(1);
    let steps = sim.converge();
    assert_eq!(creates(&steps), 3);
    assert_converged(&sim, 3);
    let p = sim.plan();
    assert_eq!(p.status.failures_tolerated, Some(1));

    sim.failures_tolerated = Some(2);
    sim.converge();
    assert_converged(&sim, 5);
    assert_eq!(sim.plan().status.failures_tolerated, Some(2));

    // What it tolerates follows what is ready: of five with two not ready, etcd's quorum of
    // three leaves none to lose.
    for m in sim.members.iter_mut().take(2) {
        m.ready = false;
    }
    assert_eq!(sim.plan().status.failures_tolerated, Some(0));
}
