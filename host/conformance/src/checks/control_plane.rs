//! The control-plane extension point: `plan` on a few inputs (an empty control plane, one
//! that is as desired, one to scale up, one to scale down), each twice. From contract 0.2 on,
//! the control-plane status the plan carries is checked too.

use capw_runtime::control_plane::{EtcdMembership, Member, PlanInput, PlanOutput, Step};
use capw_runtime::types::{CallContext, Endpoint, KubernetesVersion, MachineRef};

use super::{Findings, cluster};
use crate::calls::{Subject, check_hint};
use crate::rules::id;

const VERSION: KubernetesVersion = KubernetesVersion {
    major: 1,
    minor: 35,
    patch: 0,
};

fn member(n: u64) -> Member {
    Member {
        machine: MachineRef {
            name: format!("cp-{n}"),
            uid: format!("uid-cp-{n}"),
        },
        version: VERSION,
        failure_domain: Some(format!("zone-{}", n % 3)),
        ready: true,
        created_at: 1_767_225_600 + n * 60,
        deleting: false,
        etcd: capw_runtime::control_plane::EtcdMembership::Unknown,
        out_of_date: Vec::new(),
        unhealthy: Vec::new(),
    }
}

fn input(replicas: u32, members: u64) -> PlanInput {
    PlanInput {
        version: VERSION,
        replicas,
        members: (0..members).map(member).collect(),
        failure_domains: (0..3).map(|z| format!("zone-{z}")).collect(),
        endpoint: Some(Endpoint {
            host: "cp.conformance.test".into(),
            port: 6443,
        }),
    }
}

/// The same input, with a host that observed etcd list every member (contract 0.3).
fn in_etcd(mut input: PlanInput) -> PlanInput {
    for m in &mut input.members {
        m.etcd = EtcdMembership::Member;
    }
    input
}

/// What is wrong with `out` for a member etcd lists: a `delete-machine` for it.
fn etcd_problem(input: &PlanInput, out: &PlanOutput) -> Option<String> {
    match &out.step {
        Step::DeleteMachine(m)
            if (input.members.iter())
                .any(|x| x.machine == *m && x.etcd == EtcdMembership::Member) =>
        {
            Some(format!(
                "the step deletes {:?}, which etcd lists: it must answer remove-etcd-member",
                m.name
            ))
        }
        _ => None,
    }
}

/// What is wrong with the control-plane status of `out` (contract 0.2) as an answer to
/// `input`. A 0.1 provider's plan carries no `ready` or `version`, so nothing here fails it.
fn status_problem(input: &PlanInput, out: &PlanOutput) -> Option<String> {
    if out.ready == Some(true) && !out.initialized {
        return Some("the status is ready but not initialized".into());
    }
    if out.ready_replicas > out.replicas {
        return Some(format!(
            "{} ready replicas of {}",
            out.ready_replicas, out.replicas
        ));
    }
    match out.version {
        Some(v) if v != input.version && !input.members.iter().any(|m| m.version == v) => {
            Some(format!(
                "the status names version {}.{}.{}, which neither the input nor a member runs",
                v.major, v.minor, v.patch
            ))
        }
        _ => None,
    }
}

/// What is wrong with `out` as an answer to `input`.
fn step_problem(input: &PlanInput, out: &PlanOutput) -> Option<String> {
    match &out.step {
        Step::DeleteMachine(m) if !input.members.iter().any(|x| x.machine == *m) => Some(format!(
            "the step deletes {:?}, which is not one of the members",
            m.name
        )),
        Step::RemoveEtcdMember(m) if !input.members.iter().any(|x| x.machine == *m) => {
            Some(format!(
                "the step takes {:?} out of etcd, which is not one of the members",
                m.name
            ))
        }
        Step::CreateMachine(c) if c.init && !input.members.is_empty() => Some(format!(
            "the step creates an init machine although {} members exist",
            input.members.len()
        )),
        Step::Wait(p) => check_hint(p.requeue_after_ms, &p.reason).err(),
        _ => None,
    }
}

pub(crate) async fn run(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let p = s.provider;
    let c = cluster(&s.options.cluster_name, suffix, "control-plane");
    let ctx = s.ctx(&c, &format!("{}-plan", c.name));
    let inputs = [
        ("no members, 3 wanted", input(3, 0)),
        ("1 member, 1 wanted", input(1, 1)),
        ("1 member, 3 wanted", input(3, 1)),
        ("3 members, 1 wanted", input(1, 3)),
    ];
    let mut answered = 0;
    let mut same = Vec::new();
    let mut formed = Vec::new();
    let mut status = Vec::new();
    for (what, input) in &inputs {
        let first = s.record(p.plan(&ctx, input).await);
        let second = s.record(p.plan(&ctx, input).await);
        match (&first, &second) {
            (Ok(a), Ok(b)) => {
                answered += 1;
                if a != b {
                    same.push(format!("{what}: first {a:?}, then {b:?}"));
                }
                if let Some(problem) = step_problem(input, a) {
                    formed.push(format!("{what}: {problem}"));
                }
                if let Some(problem) = status_problem(input, a) {
                    status.push(format!("{what}: {problem}"));
                }
            }
            (Err(a), Err(b)) => match (a.provider_error(), b.provider_error()) {
                (Some(x), Some(y)) if x == y => {}
                (Some(x), Some(y)) => same.push(format!("{what}: refused with {x:?}, then {y:?}")),
                _ => {
                    formed.push(format!("{what}: {a}"));
                }
            },
            (Ok(a), Err(e)) | (Err(e), Ok(a)) => same.push(format!(
                "{what}: answered {:?} once and failed once: {e}",
                a.step
            )),
        }
    }
    if answered == 0 {
        formed.push("plan refused every input; it must answer a step for at least a plain create or a steady state".into());
    }
    f.problems(id::PLAN_DETERMINISTIC, same);
    f.problems(id::PLAN_WELL_FORMED, formed);
    f.problems(id::PLAN_STATUS, status);
    etcd_members(s, &ctx, f).await;
}

/// Scale-downs of members etcd lists: whatever the provider answers, never `delete-machine`
/// for one of them. A refusal is the well-formed rule's business, not this one's.
async fn etcd_members(s: &Subject<'_>, ctx: &CallContext, f: &mut Findings) {
    let inputs = [
        ("3 members in etcd, 1 wanted", in_etcd(input(1, 3))),
        ("5 members in etcd, 3 wanted", in_etcd(input(3, 5))),
    ];
    let mut problems = Vec::new();
    for (what, input) in &inputs {
        if let Ok(out) = s.record(s.provider.plan(ctx, input).await)
            && let Some(problem) = etcd_problem(input, &out)
        {
            problems.push(format!("{what}: {problem}"));
        }
    }
    f.problems(id::PLAN_ETCD_MEMBERS, problems);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(step: Step) -> PlanOutput {
        PlanOutput {
            step,
            initialized: true,
            replicas: 3,
            ready_replicas: 3,
            up_to_date_replicas: 3,
            endpoint: None,
            conditions: Vec::new(),
            ready: Some(true),
            version: None,
        }
    }

    #[test]
    fn deleting_a_member_etcd_lists_is_a_problem_removing_it_is_not() {
        let listed = in_etcd(input(1, 3));
        let first = listed.members[0].machine.clone();
        let problem = etcd_problem(&listed, &answer(Step::DeleteMachine(first.clone())));
        assert!(
            problem
                .as_deref()
                .is_some_and(|p| p.contains("remove-etcd-member")),
            "{problem:?}"
        );
        assert_eq!(
            etcd_problem(&listed, &answer(Step::RemoveEtcdMember(first.clone()))),
            None
        );
        // A member the host did not see in etcd may be deleted outright.
        let unknown = input(1, 3);
        assert_eq!(
            etcd_problem(&unknown, &answer(Step::DeleteMachine(first))),
            None
        );
    }
}
