//! The control-plane extension point: `plan` on a few inputs (an empty control plane, one
//! that is as desired, one to scale up, one to scale down), each twice.

use capw_runtime::control_plane::{Member, PlanInput, PlanOutput, Step};
use capw_runtime::types::{Endpoint, KubernetesVersion, MachineRef};

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

/// What is wrong with `out` as an answer to `input`.
fn step_problem(input: &PlanInput, out: &PlanOutput) -> Option<String> {
    match &out.step {
        Step::DeleteMachine(m) if !input.members.iter().any(|x| x.machine == *m) => Some(format!(
            "the step deletes {:?}, which is not one of the members",
            m.name
        )),
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
}
