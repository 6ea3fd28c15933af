//! The control-plane extension point: `plan` on a few inputs (an empty control plane, one
//! that is as desired, one to scale up, one to scale down), each twice. From contract 0.2 on,
//! the control-plane status the plan carries is checked too. A provider whose shape has no
//! machines (hosted, managed) is asked no machine-shaped question: its plan is asked for a new
//! control plane without members, and from 0.3 on its service is driven through
//! `reconcile-control-plane` and taken down with `delete-control-plane`.

use capw_runtime::control_plane::{EtcdMembership, Member, PlanInput, PlanOutput, Step};
use capw_runtime::metadata::ControlPlaneShape;
use capw_runtime::types::{
    CallContext, Deletion, Endpoint, ErrorCode, KubernetesVersion, MachineRef,
};

use super::{Findings, cluster};
use crate::calls::{Progress, Subject, check_hint};
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
        failures_tolerated: None,
    }
}

/// What a control plane a service runs is asked: no members, no endpoint of the
/// infrastructure's, the replicas the Cluster asks (0: what the service runs).
fn service_input(replicas: u32) -> PlanInput {
    PlanInput {
        endpoint: None,
        ..input(replicas, 0)
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

/// What is wrong with `out` as the plan of a control plane a service runs: a machine step.
fn service_step_problem(out: &PlanOutput) -> Option<String> {
    match &out.step {
        Step::None => None,
        Step::Wait(p) => check_hint(p.requeue_after_ms, &p.reason).err(),
        other => Some(format!(
            "the step {other:?} is a machine or manifest step; a managed control plane has none"
        )),
    }
}

pub(crate) async fn run(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let p = s.provider;
    let c = cluster(&s.options.cluster_name, suffix, "control-plane");
    let ctx = s.ctx(&c, &format!("{}-plan", c.name));
    let shape = p.info().metadata.capabilities.control_plane_shape;
    let managed = matches!(shape, Some(ControlPlaneShape::Managed));
    let inputs: Vec<(&str, PlanInput)> = if managed {
        vec![
            ("a new control plane, the service's size", service_input(0)),
            ("a new control plane, 3 wanted", service_input(3)),
        ]
    } else {
        vec![
            ("no members, 3 wanted", input(3, 0)),
            ("1 member, 1 wanted", input(1, 1)),
            ("1 member, 3 wanted", input(3, 1)),
            ("3 members, 1 wanted", input(1, 3)),
        ]
    };
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
                let problem = if managed {
                    service_step_problem(a)
                } else {
                    step_problem(input, a)
                };
                if let Some(problem) = problem {
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
    if managed {
        f.skip(
            id::PLAN_ETCD_MEMBERS,
            "the provider's shape is managed: it has no members in etcd",
        );
    } else {
        etcd_members(s, &ctx, f).await;
    }
    if s.provider.info().contract.version.starts_with("0.1")
        || s.provider.info().contract.version.starts_with("0.2")
    {
        return;
    }
    if managed {
        service(s, suffix, f).await;
    } else {
        unsupported_service_calls(s, &c, f).await;
    }
}

/// A control plane on machines has no service to drive: both calls answer a permanent
/// `unsupported`.
async fn unsupported_service_calls(
    s: &Subject<'_>,
    c: &capw_runtime::types::ClusterRef,
    f: &mut Findings,
) {
    let ctx = s.ctx(c, &format!("{}-control-plane", c.name));
    let unsupported = |what: &str, r: Result<String, capw_runtime::CallError>| match r {
        Err(e) => match e.provider_error() {
            Some(pe) if pe.code == ErrorCode::Unsupported && !pe.retryable => Ok(()),
            _ => Err(format!(
                "{what}: {e}; a machines provider answers unsupported"
            )),
        },
        Ok(answer) => Err(format!(
            "{what} answered {answer}; a machines provider answers unsupported"
        )),
    };
    let reconcile = s
        .record(s.provider.reconcile_control_plane(&ctx, &input(3, 0)).await)
        .map(|o| format!("{:?}", o.plan.step));
    let delete = s
        .record(s.provider.delete_control_plane(&ctx).await)
        .map(|d| format!("{d:?}"));
    f.check(
        id::SERVICE_CONVERGES,
        unsupported("reconcile-control-plane", reconcile),
    );
    f.check(
        id::SERVICE_DELETE,
        unsupported("delete-control-plane", delete),
    );
}

/// What is wrong with a settled answer of `reconcile-control-plane`: a machine step, a status
/// not ready, no usable access.
fn service_answer_problem(out: &capw_runtime::control_plane::ReconcileOutput) -> Option<String> {
    if let Some(problem) = service_step_problem(&out.plan) {
        return Some(problem);
    }
    if !out.plan.initialized || out.plan.ready != Some(true) {
        return Some(format!(
            "answered none with initialized {} and ready {:?}",
            out.plan.initialized, out.plan.ready
        ));
    }
    let Some(access) = &out.access else {
        return Some("answered none without the access (endpoint, CA, kubeconfig)".into());
    };
    if access.endpoint.host.is_empty() || access.endpoint.port == 0 {
        return Some(format!(
            "the access's endpoint {:?} is not usable",
            access.endpoint
        ));
    }
    None
}

/// Drives a control plane through the provider's service: created and ready with its access,
/// as desired when asked again, then deleted, twice, and deleted for a cluster that never had
/// one.
async fn service(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let p = s.provider;
    let c = cluster(&s.options.cluster_name, suffix, "managed");
    let ctx = s.ctx(&c, &format!("{}-control-plane", c.name));
    let wanted = service_input(0);
    let settled = s
        .settle(
            "reconcile-control-plane",
            || p.reconcile_control_plane(&ctx, &wanted),
            |out| match &out.plan.step {
                Step::Wait(w) => Progress::Pending(check_hint(w.requeue_after_ms, &w.reason)),
                _ => Progress::Done,
            },
        )
        .await;
    let converged = match settled {
        Err(problem) => Err(problem),
        Ok(out) => service_answer_problem(&out).map_or(Ok(()), Err),
    };
    let converged = match converged {
        Err(problem) => Err(problem),
        Ok(()) => match s.record(p.reconcile_control_plane(&ctx, &wanted).await) {
            Ok(again) if again.plan.step == Step::None => Ok(()),
            Ok(again) => Err(format!(
                "called again once as desired, it answered {:?}",
                again.plan.step
            )),
            Err(e) => Err(format!("called again once as desired, it failed: {e}")),
        },
    };
    f.check(id::SERVICE_CONVERGES, converged);

    let gone = |d: &Deletion| match d {
        Deletion::Deleted => Progress::Done,
        Deletion::InProgress(p) => Progress::Pending(check_hint(p.requeue_after_ms, &p.reason)),
    };
    let deleted = async {
        s.settle("delete-control-plane", || p.delete_control_plane(&ctx), gone)
            .await?;
        match s.record(p.delete_control_plane(&ctx).await) {
            Ok(Deletion::Deleted) => {}
            other => return Err(format!("once gone, delete-control-plane answered {other:?}")),
        }
        let never = cluster(&s.options.cluster_name, suffix, "never-managed");
        let never_ctx = s.ctx(&never, &format!("{}-control-plane", never.name));
        match s.record(p.delete_control_plane(&never_ctx).await) {
            Ok(Deletion::Deleted) => Ok(()),
            other => Err(format!(
                "for a cluster that never had a control plane, delete-control-plane answered {other:?}"
            )),
        }
    }
    .await;
    f.check(id::SERVICE_DELETE, deleted);
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
            failures_tolerated: None,
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
