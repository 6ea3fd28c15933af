//! Unsafe desired states are refused; unsafe moments wait.

use capw_sdk::control_plane::Step;
use capw_sdk::types::KubernetesVersion;

use super::sim::{Sim, abc};
use super::{deleting, member, sim_with, unready, wait_reason};
use crate::plan::{PlanError, VersionError, desired_replicas};

fn refusal(sim: &Sim) -> PlanError {
    match sim.try_plan() {
        Ok(p) => panic!("accepted: {:?}", p.step),
        Err(e) => e,
    }
}

#[test]
fn even_replicas_are_refused_naming_them() {
    for replicas in [2, 4, 6] {
        let sim = sim_with(replicas, 35, vec![member("m0", 35, "a", 1)]);
        let e = refusal(&sim);
        assert_eq!(e, PlanError::EvenReplicas { replicas });
        assert!(e.to_string().starts_with("replicas must be odd"), "{e}");
    }
    assert_eq!(
        PlanError::EvenReplicas { replicas: 2 }.to_string(),
        "replicas must be odd so that etcd keeps a majority; 2 tolerates no more failures than \
         1: use 1 or 3"
    );
}

#[test]
fn replica_count_falls_back_to_the_config() {
    let mut sim = Sim::new(0, 35, abc());
    assert_eq!(refusal(&sim), PlanError::NoReplicas);
    sim.config.replicas = Some(3);
    assert_eq!(desired_replicas(&sim.config, 0), Ok(3));
    // The input wins when it says.
    assert_eq!(desired_replicas(&sim.config, 5), Ok(5));
    // An unvalidated even default is still refused.
    sim.config.replicas = Some(2);
    assert_eq!(refusal(&sim), PlanError::EvenReplicas { replicas: 2 });
    sim.config.replicas = Some(0);
    assert_eq!(refusal(&sim), PlanError::NoReplicas);
}

#[test]
fn skipping_a_minor_version_is_refused() {
    let sim = sim_with(
        3,
        36,
        vec![
            member("m0", 34, "a", 1),
            member("m1", 34, "b", 2),
            member("m2", 34, "c", 3),
        ],
    );
    let e = refusal(&sim);
    assert!(
        matches!(&e, PlanError::Version(VersionError::SkipsMinor { machine, .. }) if machine == "m0"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "machine `m0` runs v1.34.0; upgrading it to v1.36.0 would skip minor version 1.35: \
         upgrade one minor version at a time"
    );
}

#[test]
fn downgrades_are_refused() {
    let sim = sim_with(1, 34, vec![member("m0", 35, "a", 1)]);
    assert!(matches!(
        refusal(&sim),
        PlanError::Version(VersionError::Downgrade { .. })
    ));
    let mut sim = sim_with(1, 35, vec![member("m0", 35, "a", 1)]);
    sim.members[0].version.patch = 3;
    sim.version.patch = 2;
    let e = refusal(&sim);
    assert_eq!(
        e.to_string(),
        "machine `m0` runs v1.35.3; downgrading the control plane to v1.35.2 is not supported"
    );
}

#[test]
fn major_version_changes_are_refused() {
    let mut sim = sim_with(1, 0, vec![member("m0", 35, "a", 1)]);
    sim.version = KubernetesVersion {
        major: 2,
        minor: 0,
        patch: 0,
    };
    assert!(matches!(
        refusal(&sim),
        PlanError::Version(VersionError::MajorChange { .. })
    ));
}

#[test]
fn a_member_being_deleted_does_not_block_a_version() {
    // m9 runs 1.33 but is going away: moving to 1.35 is fine for the ones that stay.
    let sim = sim_with(
        1,
        35,
        vec![member("m0", 34, "a", 1), deleting(member("m9", 33, "b", 0))],
    );
    let p = sim.plan();
    assert_eq!(wait_reason(&p.step), "WaitingForDeletion");
}

#[test]
fn never_deletes_while_a_member_is_unready() {
    let sim = sim_with(
        1,
        35,
        vec![
            member("m0", 35, "a", 1),
            member("m1", 35, "b", 2),
            unready(member("m2", 35, "c", 3)),
        ],
    );
    let p = sim.plan();
    assert_eq!(wait_reason(&p.step), "WaitingForMachinesReady");
    // Not even the unready machine itself: removal from a membership that is not whole can
    // cost etcd its quorum. Replacing a machine that never becomes ready is remediation, the
    // host's job.
    assert!(!matches!(p.step, Step::DeleteMachine(_)));
}

#[test]
fn never_changes_anything_while_a_member_is_being_deleted() {
    // Too many members: no second delete.
    let sim = sim_with(
        1,
        35,
        vec![
            member("m0", 35, "a", 1),
            member("m1", 35, "b", 2),
            deleting(member("m2", 35, "c", 3)),
        ],
    );
    let p = sim.plan();
    assert_eq!(wait_reason(&p.step), "WaitingForDeletion");
    let Step::Wait(progress) = &p.step else {
        panic!("expected wait");
    };
    assert_eq!(progress.requeue_after_ms, 5_000);
    assert_eq!(
        progress.message,
        "machine `m2` is being deleted; the next change waits for etcd to let it go"
    );
    // Too few members: no create either, so machines never exceed replicas + 1.
    let sim = sim_with(
        3,
        35,
        vec![
            member("m0", 35, "a", 1),
            member("m1", 35, "b", 2),
            deleting(member("m2", 34, "c", 3)),
        ],
    );
    assert_eq!(wait_reason(&sim.plan().step), "WaitingForDeletion");
}

#[test]
fn delete_first_rollout_of_fewer_than_three_is_refused() {
    let sim = sim_with(1, 35, vec![member("m0", 34, "a", 1)]).delete_first();
    let e = refusal(&sim);
    assert_eq!(e, PlanError::DeleteFirstTooFewReplicas { replicas: 1 });
    assert!(e.to_string().contains("use maxSurge 1"), "{e}");
    // Without a rollout, maxSurge 0 with one replica is fine.
    let sim = sim_with(1, 35, vec![member("m0", 35, "a", 1)]).delete_first();
    assert_eq!(sim.plan().step, Step::None);
}

#[test]
fn refusals_become_permanent_invalid_input() {
    use capw_sdk::types::{ErrorCode, ProviderError};
    let e = ProviderError::from(PlanError::NoReplicas);
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.retryable);
    assert_eq!(e.retry_after_ms, None);
}

#[test]
fn failures_tolerated_beyond_seven_members_is_refused_naming_the_field() {
    let mut sim = Sim::new(0, 35, abc());
    sim.failures_tolerated = Some(4);
    let e = refusal(&sim);
    assert_eq!(
        e,
        PlanError::TooManyFailuresTolerated {
            failures_tolerated: 4
        }
    );
    assert_eq!(
        e.to_string(),
        "spec.topology.controlPlane.failuresTolerated 4 needs 9 stacked etcd members; \
         kubeadm-control-plane runs at most 7, which tolerate 3"
    );
    sim.failures_tolerated = Some(u32::MAX);
    assert!(matches!(
        refusal(&sim),
        PlanError::TooManyFailuresTolerated { .. }
    ));
}

#[test]
fn a_replica_count_beside_failures_tolerated_must_tolerate_as_many() {
    let mut sim = Sim::new(3, 35, abc());
    sim.failures_tolerated = Some(2);
    let e = refusal(&sim);
    assert_eq!(
        e,
        PlanError::ReplicasBelowFailuresTolerated {
            replicas: 3,
            failures_tolerated: 2
        }
    );
    assert!(
        e.to_string()
            .contains("spec.topology.controlPlane.failuresTolerated 2"),
        "{e}"
    );
    sim.replicas = 5;
    assert!(sim.try_plan().is_ok());
}
