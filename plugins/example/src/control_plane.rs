//! Control plane: one safe step at a time toward the desired replicas and version, with surge
//! upgrades (create a new machine first, then remove the oldest).

use std::time::Duration;

use capw_sdk::control_plane::{
    self, ControlPlaneStatus, EtcdMembership, MachineToCreate, Member, Plan, PlanInput, Step,
};
use capw_sdk::metadata::ControlPlaneShape;
use capw_sdk::types::{ClusterRef, InProgress, ProviderError};
use capw_sdk::{Context, ControlPlane};

use crate::config::ExampleConfig;
use crate::{ExampleProvider, simulate};

/// How soon to plan again while machines boot.
pub const MACHINE_WAIT: Duration = Duration::from_secs(5);

impl ControlPlane for ExampleProvider {
    // `hosted` is a per-cluster choice in the config; what the provider declares is
    // its default shape.
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Machines;
    const SCALABLE: bool = true;
    const VERSION_UPGRADES: bool = true;

    /// See [`plan`]; with `simulate: in-progress` the counts stay and the step is `wait`.
    fn plan(ctx: &Context<ExampleConfig>, input: PlanInput) -> Result<Plan, ProviderError> {
        let simulated = simulate::outcome(&ctx.config)?;
        let mut plan = plan(ctx.cluster(), &ctx.config, &input);
        if let Some(progress) = simulated {
            plan.step = Step::Wait(progress);
        }
        Ok(plan)
    }
}

/// The next step toward `input`, pure and deterministic.
///
/// Members being deleted are ignored. In order, the first that applies:
/// 1. `hosted`: apply a ConfigMap standing in for the hosted control plane;
/// 2. a member is not ready: wait;
/// 3. fewer members than desired: create one (the first initialises the cluster) in the failure
///    domain holding the fewest members, the first of equals;
/// 4. more than desired: remove the oldest (by creation time, then name): out of etcd first
///    when the host says etcd lists it, else delete its machine;
/// 5. as many as desired but some out of date: create one more (surge; step 4 then removes the
///    oldest once it is ready);
/// 6. nothing.
pub fn plan(cluster: &ClusterRef, config: &ExampleConfig, input: &PlanInput) -> Plan {
    let live: Vec<&Member> = input.members.iter().filter(|m| !m.deleting).collect();
    let replicas = count(live.len());
    let ready = count(live.iter().filter(|m| m.ready).count());
    let up_to_date = count(
        (live.iter())
            .filter(|m| m.version == input.version && m.out_of_date.is_empty())
            .count(),
    );

    let create = |init| {
        Step::CreateMachine(MachineToCreate {
            init,
            version: input.version,
            failure_domain: emptiest_failure_domain(&input.failure_domains, &live),
        })
    };
    let step = if config.hosted {
        Step::ApplyManifests(vec![format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}-control-plane\n",
            cluster.name
        )])
    } else if ready < replicas {
        Step::Wait(
            InProgress::new(
                "WaitingForMachines",
                format!("{ready} of {replicas} control-plane machines ready"),
            )
            .requeue_after(MACHINE_WAIT),
        )
    } else if replicas < input.replicas {
        create(replicas == 0)
    } else if replicas > input.replicas {
        match oldest(&live) {
            Some(member) if member.etcd == EtcdMembership::Member => {
                Step::RemoveEtcdMember(member.machine.clone())
            }
            Some(member) => Step::DeleteMachine(member.machine.clone()),
            // Unreachable: more members than desired means at least one member.
            None => Step::None,
        }
    } else if up_to_date < replicas {
        create(false)
    } else {
        Step::None
    };

    Plan {
        step,
        status: ControlPlaneStatus {
            initialized: input.members.iter().any(|m| m.ready),
            ready: ready > 0,
            version: control_plane::oldest_version(live.iter().copied()),
            endpoint: input.endpoint.clone(),
            conditions: Vec::new(),
            failures_tolerated: None,
        },
        replicas,
        ready_replicas: ready,
        up_to_date_replicas: up_to_date,
        certificates: Vec::new(),
        shared_datastore: None,
    }
}

/// Counts as the contract carries them; a control plane never has 4 billion members, but
/// saturate rather than wrap if one did.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The failure domain with the fewest live members; the first of equals; none without domains.
fn emptiest_failure_domain(domains: &[String], live: &[&Member]) -> Option<String> {
    domains
        .iter()
        .min_by_key(|domain| {
            live.iter()
                .filter(|m| m.failure_domain.as_deref() == Some(domain.as_str()))
                .count()
        })
        .cloned()
}

/// The oldest member, by creation time and then by name so that the answer is deterministic.
fn oldest<'a>(live: &[&'a Member]) -> Option<&'a Member> {
    live.iter()
        .min_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.machine.name.cmp(&b.machine.name))
        })
        .copied()
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{context, machine, version};
    use capw_sdk::types::Endpoint;

    use super::*;

    fn member(name: &str, minor: u32, fd: &str, ready: bool, created_at: u64) -> Member {
        Member {
            machine: machine(name),
            version: version(minor),
            failure_domain: Some(fd.into()),
            ready,
            created_at,
            deleting: false,
            etcd: capw_sdk::control_plane::EtcdMembership::Unknown,
            out_of_date: Vec::new(),
            unhealthy: Vec::new(),
        }
    }

    fn input(replicas: u32, members: Vec<Member>) -> PlanInput {
        PlanInput {
            version: version(35),
            replicas,
            members,
            failure_domains: ["a", "b", "c"].map(String::from).to_vec(),
            endpoint: Some(Endpoint {
                host: "h".into(),
                port: 6443,
            }),
            failures_tolerated: None,
            objects: Vec::new(),
        }
    }

    fn step(members: Vec<Member>, replicas: u32) -> Step {
        plan_for(r#"{"region": "r"}"#, input(replicas, members)).step
    }

    fn plan_for(json: &str, input: PlanInput) -> Plan {
        match ExampleProvider::plan(&context(json), input) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    fn create(init: bool, fd: &str) -> Step {
        Step::CreateMachine(MachineToCreate {
            init,
            version: version(35),
            failure_domain: Some(fd.into()),
        })
    }

    #[test]
    fn first_machine_initialises() {
        let p = plan_for(r#"{"region": "r"}"#, input(3, vec![]));
        assert_eq!(p.step, create(true, "a"));
        assert!(!p.status.initialized);
        assert_eq!(
            (p.replicas, p.ready_replicas, p.up_to_date_replicas),
            (0, 0, 0)
        );
        assert_eq!(p.status.endpoint.map(|e| e.port), Some(6443));
    }

    #[test]
    fn scales_up_into_the_emptiest_domain() {
        let members = vec![
            member("m0", 35, "a", true, 1),
            member("m1", 35, "c", true, 2),
        ];
        assert_eq!(step(members, 3), create(false, "b"));
    }

    #[test]
    fn waits_for_machines_that_are_not_ready() {
        let members = vec![
            member("m0", 35, "a", true, 1),
            member("m1", 35, "b", false, 2),
        ];
        let Step::Wait(progress) = step(members, 3) else {
            panic!("expected wait");
        };
        assert_eq!(progress.reason, "WaitingForMachines");
        assert_eq!(progress.message, "1 of 2 control-plane machines ready");
        assert_eq!(progress.requeue_after_ms, 5000);
        assert!(progress.conditions.is_empty());
    }

    #[test]
    fn scales_down_the_oldest_then_by_name() {
        let members = vec![
            member("m2", 35, "a", true, 5),
            member("m1", 35, "b", true, 5),
            member("m0", 35, "c", true, 9),
        ];
        let Step::DeleteMachine(machine) = step(members, 2) else {
            panic!("expected delete");
        };
        assert_eq!(machine.name, "m1");
    }

    #[test]
    fn a_member_etcd_lists_leaves_etcd_first() {
        let listed = |name, created_at| Member {
            etcd: EtcdMembership::Member,
            ..member(name, 35, "a", true, created_at)
        };
        let Step::RemoveEtcdMember(machine) = step(vec![listed("m0", 1), listed("m1", 2)], 1)
        else {
            panic!("expected remove-etcd-member");
        };
        assert_eq!(machine.name, "m0");
    }

    #[test]
    fn a_changed_machine_shaping_input_is_out_of_date() {
        let changed = Member {
            out_of_date: vec!["infrastructure.config/instanceType".into()],
            ..member("m0", 35, "a", true, 1)
        };
        let p = plan_for(r#"{"region": "r"}"#, input(1, vec![changed]));
        assert_eq!(p.up_to_date_replicas, 0);
        assert!(matches!(p.step, Step::CreateMachine(_)), "{:?}", p.step);
    }

    #[test]
    fn upgrades_by_surge_then_removes_the_oldest() {
        let old = vec![
            member("m0", 34, "a", true, 1),
            member("m1", 34, "b", true, 2),
            member("m2", 34, "c", true, 3),
        ];
        let p = plan_for(r#"{"region": "r"}"#, input(3, old.clone()));
        assert_eq!(p.step, create(false, "a"));
        assert_eq!(p.up_to_date_replicas, 0);
        assert_eq!(p.status.version.map(|v| v.minor), Some(34));
        assert!(p.status.ready);

        let mut surged = old;
        surged.push(member("m3", 35, "a", true, 4));
        let Step::DeleteMachine(machine) = step(surged, 3) else {
            panic!("expected delete");
        };
        assert_eq!(machine.name, "m0");
    }

    #[test]
    fn deleting_members_do_not_count() {
        let mut gone = member("m0", 35, "a", true, 1);
        gone.deleting = true;
        let p = plan_for(r#"{"region": "r"}"#, input(1, vec![gone]));
        assert_eq!(p.replicas, 0);
        // It was ready once, so the cluster was initialised; no live member serves it now.
        assert!(p.status.initialized);
        assert!(!p.status.ready);
        assert_eq!(p.status.version, None);
        assert_eq!(p.step, create(true, "a"));
    }

    #[test]
    fn converged_is_none() {
        let members = vec![member("m0", 35, "a", true, 1)];
        let p = plan_for(r#"{"region": "r"}"#, input(1, members));
        assert_eq!(p.step, Step::None);
        assert_eq!(
            (p.replicas, p.ready_replicas, p.up_to_date_replicas),
            (1, 1, 1)
        );
    }

    #[test]
    fn no_failure_domains_means_none() {
        let mut i = input(1, vec![]);
        i.failure_domains.clear();
        let p = plan_for(r#"{"region": "r"}"#, i);
        assert_eq!(
            p.step,
            Step::CreateMachine(MachineToCreate {
                init: true,
                version: version(35),
                failure_domain: None,
            })
        );
    }

    #[test]
    fn hosted_applies_manifests() {
        let p = plan_for(r#"{"region": "r", "hosted": true}"#, input(3, vec![]));
        assert_eq!(
            p.step,
            Step::ApplyManifests(vec![
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1-control-plane\n".into()
            ])
        );
    }

    #[test]
    fn simulated_in_progress_waits_and_keeps_counts() {
        let members = vec![member("m0", 35, "a", true, 1)];
        let p = plan_for(
            r#"{"region": "r", "simulate": "in-progress"}"#,
            input(1, members),
        );
        assert_eq!(p.step, Step::Wait(simulate::in_progress()));
        assert_eq!(p.replicas, 1);
    }
}
