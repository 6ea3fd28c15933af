//! The control-plane extension point: `plan` on a few inputs (an empty control plane, one
//! that is as desired, one to scale up, one to scale down), each twice. From contract 0.2 on,
//! the control-plane status the plan carries is checked too. A provider whose shape has no
//! machines (hosted, managed) is asked no machine-shaped question: its plan is asked for a new
//! control plane without members. From 0.3 on a managed provider's service is driven through
//! `reconcile-control-plane` and taken down with `delete-control-plane`; a hosted provider's
//! plan is driven as the host drives it, every object it answers applied and ready
//! ([`hosted`](super::hosted)), and neither call is made of it: the host applies and deletes
//! its objects itself.

use capw_runtime::control_plane::{EtcdMembership, Member, PlanInput, PlanOutput, Step};
use capw_runtime::metadata::ControlPlaneShape;
use capw_runtime::types::{
    CallContext, Deletion, Endpoint, ErrorCode, KubernetesVersion, MachineRef,
};

use super::{Findings, cluster, hosted};
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
        objects: Vec::new(),
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

/// What a hosted control plane is first asked: no members, nothing applied yet, the
/// infrastructure's endpoint, the replicas the Cluster asks (0: the provider's default).
fn hosted_input(replicas: u32) -> PlanInput {
    input(replicas, 0)
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

/// The shape the suite judges a provider by: the one it declares, but a hosted provider of a
/// contract before 0.3, which says nothing of what it applied, is asked as one on machines
/// was before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    Machines,
    Hosted,
    Managed,
}

/// What the suite found of one input's two answers.
#[derive(Default)]
struct Verdict {
    /// The first answer, when both answered.
    answer: Option<PlanOutput>,
    same: Option<String>,
    formed: Option<String>,
    status: Option<String>,
}

/// `plan` for `input` twice, judged by the rules of `judged`'s shape.
async fn judge(
    s: &Subject<'_>,
    ctx: &CallContext,
    c: &capw_runtime::types::ClusterRef,
    judged: Judged,
    what: &str,
    input: &PlanInput,
) -> Verdict {
    let p = s.provider;
    let first = s.record(p.plan(ctx, input).await);
    let second = s.record(p.plan(ctx, input).await);
    let mut v = Verdict::default();
    match (first, second) {
        (Ok(a), Ok(b)) => {
            if a != b {
                v.same = Some(format!("{what}: first {a:?}, then {b:?}"));
            }
            let problem = match judged {
                Judged::Managed => service_step_problem(&a),
                Judged::Hosted => hosted::step_problem(c, input, &a),
                Judged::Machines => step_problem(input, &a),
            };
            v.formed = problem.map(|problem| format!("{what}: {problem}"));
            let status = status_problem(input, &a).or_else(|| match judged {
                Judged::Hosted => hosted::status_problem(input, &a),
                _ => None,
            });
            v.status = status.map(|problem| format!("{what}: {problem}"));
            v.answer = Some(a);
        }
        (Err(a), Err(b)) => match (a.provider_error(), b.provider_error()) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => v.same = Some(format!("{what}: refused with {x:?}, then {y:?}")),
            _ => v.formed = Some(format!("{what}: {a}")),
        },
        (Ok(a), Err(e)) | (Err(e), Ok(a)) => {
            v.same = Some(format!(
                "{what}: answered {:?} once and failed once: {e}",
                a.step
            ));
        }
    }
    v
}

pub(crate) async fn run(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let p = s.provider;
    let c = cluster(&s.options.cluster_name, suffix, "control-plane");
    let ctx = s.ctx(&c, &format!("{}-plan", c.name));
    let contract = &p.info().contract.version;
    let before_0_3 = contract.starts_with("0.1") || contract.starts_with("0.2");
    let judged = match p.info().metadata.capabilities.control_plane_shape {
        Some(ControlPlaneShape::Managed) => Judged::Managed,
        Some(ControlPlaneShape::Hosted) if !before_0_3 => Judged::Hosted,
        _ => Judged::Machines,
    };
    let mut inputs: Vec<(&str, PlanInput)> = match judged {
        Judged::Managed => vec![
            ("a new control plane, the service's size", service_input(0)),
            ("a new control plane, 3 wanted", service_input(3)),
        ],
        Judged::Hosted => vec![
            (
                "a new control plane, nothing applied, 3 wanted",
                hosted_input(3),
            ),
            (
                "a new control plane, nothing applied, the provider's size",
                hosted_input(0),
            ),
        ],
        Judged::Machines => vec![
            ("no members, 3 wanted", input(3, 0)),
            ("1 member, 1 wanted", input(1, 1)),
            ("1 member, 3 wanted", input(3, 1)),
            ("3 members, 1 wanted", input(1, 3)),
        ],
    };
    let mut answered = 0;
    let mut same = Vec::new();
    let mut formed = Vec::new();
    let mut status = Vec::new();
    let mut i = 0;
    while let Some((what, input)) = inputs.get(i) {
        let v = judge(s, &ctx, &c, judged, what, input).await;
        // A hosted plan is asked again as the host would ask it once it applied the first
        // answer and every object is ready.
        if judged == Judged::Hosted
            && i == 0
            && let Some(applied) =
                (v.answer.as_ref()).and_then(|a| hosted::all_applied(&c, input, a))
        {
            inputs.push((
                "every object of the first answer applied and ready",
                applied,
            ));
        }
        answered += usize::from(v.answer.is_some());
        same.extend(v.same);
        formed.extend(v.formed);
        status.extend(v.status);
        i += 1;
    }
    if answered == 0 {
        formed.push("plan refused every input; it must answer a step for at least a plain create or a steady state".into());
    }
    f.problems(id::PLAN_DETERMINISTIC, same);
    f.problems(id::PLAN_WELL_FORMED, formed);
    f.problems(id::PLAN_STATUS, status);
    match judged {
        Judged::Managed | Judged::Hosted => f.skip(
            id::PLAN_ETCD_MEMBERS,
            format!(
                "the provider's shape is {}: it has no members in etcd",
                if judged == Judged::Managed {
                    "managed"
                } else {
                    "hosted"
                }
            ),
        ),
        Judged::Machines => etcd_members(s, &ctx, f).await,
    }
    if before_0_3 {
        return;
    }
    match judged {
        Judged::Managed => service(s, suffix, f).await,
        Judged::Hosted => hosted(s, suffix, f).await,
        Judged::Machines => unsupported_service_calls(s, &c, f).await,
    }
}

/// A hosted control plane: `plan` settles once every object it answers is applied and ready,
/// with a ready, initialised status. The host applies and deletes its objects itself and calls
/// neither `reconcile-control-plane` nor `delete-control-plane`, so neither is judged.
async fn hosted(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let c = cluster(&s.options.cluster_name, suffix, "hosted");
    let ctx = s.ctx(&c, &format!("{}-plan", c.name));
    f.check(
        id::SERVICE_CONVERGES,
        hosted::converges(s, &ctx, &c, &hosted_input(0)).await,
    );
    f.skip(
        id::SERVICE_DELETE,
        "the provider's shape is hosted: the host deletes the objects it applied and calls no \
         delete-control-plane",
    );
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
            certificates: Vec::new(),
            shared_datastore: None,
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
