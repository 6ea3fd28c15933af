//! The bootstrap extension point: secrets for a made-up cluster, bootstrap data for each role
//! (twice, to compare), a kubeconfig.

use capw_runtime::bootstrap::{BootstrapRequest, ControlPlaneMember, SecretsState};
use capw_runtime::types::{Endpoint, KubernetesVersion, MachineRef, MachineRole};

use super::{Findings, cluster};
use crate::calls::{Progress, Subject, check_hint};
use crate::rules::id;

fn endpoint() -> Endpoint {
    Endpoint {
        host: "cp.conformance.test".into(),
        port: 6443,
    }
}

pub(crate) async fn run(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let p = s.provider;
    let c = cluster(&s.options.cluster_name, suffix, "bootstrap");
    let ctx = s.ctx(&c, &format!("{}-secrets", c.name));
    let settled = s
        .settle(
            "cluster-secrets",
            || p.cluster_secrets(&ctx),
            |state| match state {
                SecretsState::Ready(_) => Progress::Done,
                SecretsState::InProgress(p) => {
                    Progress::Pending(check_hint(p.requeue_after_ms, &p.reason))
                }
            },
        )
        .await;
    let secrets = match settled {
        Ok(SecretsState::Ready(items)) => Ok(items),
        Ok(SecretsState::InProgress(_)) => Err("cluster-secrets: still in progress".to_owned()),
        Err(problem) => Err(problem),
    };
    let secrets = match secrets {
        Ok(items) => items,
        Err(problem) => {
            f.check(id::SECRETS_CONVERGE, Err(problem));
            for rule in [
                id::GENERATE_ROLES,
                id::GENERATE_DETERMINISTIC,
                id::KUBECONFIG,
            ] {
                f.skip(
                    rule,
                    format!("needs the cluster's secrets ({})", id::SECRETS_CONVERGE),
                );
            }
            return;
        }
    };
    let mut problems = Vec::new();
    for (i, item) in secrets.iter().enumerate() {
        if item.name.trim().is_empty() {
            problems.push(format!("secret item {i} has no name"));
        } else if secrets[..i].iter().any(|o| o.name == item.name) {
            problems.push(format!("secret item {:?} is named twice", item.name));
        }
    }
    f.problems(id::SECRETS_CONVERGE, problems);

    let version = KubernetesVersion {
        major: 1,
        minor: 35,
        patch: 0,
    };
    let request =
        |name: &str, role: MachineRole, members: Vec<ControlPlaneMember>| BootstrapRequest {
            machine: MachineRef {
                name: name.into(),
                uid: format!("uid-{name}"),
            },
            role,
            version,
            endpoint: endpoint(),
            secrets: secrets.clone(),
            control_plane_members: members,
        };
    let first = ControlPlaneMember {
        name: "cp-0".into(),
        address: "10.0.0.10".into(),
    };
    let requests = [
        ("init", request("cp-0", MachineRole::Init, Vec::new())),
        (
            "join-control-plane",
            request("cp-1", MachineRole::JoinControlPlane, vec![first.clone()]),
        ),
        (
            "worker",
            request("md-0-a", MachineRole::Worker, vec![first]),
        ),
    ];
    let mut role_problems = Vec::new();
    let mut same_problems = Vec::new();
    for (role, request) in &requests {
        let mctx = s.ctx(&c, &format!("{}-{}", c.name, request.machine.name));
        let data = match s.record(p.generate_bootstrap(&mctx, request).await) {
            Ok(data) if data.data.is_empty() => {
                role_problems.push(format!("generate for role {role} answered empty data"));
                continue;
            }
            Ok(data) => data,
            Err(e) => {
                role_problems.push(format!("generate for role {role}: {e}"));
                continue;
            }
        };
        match s.record(p.generate_bootstrap(&mctx, request).await) {
            Ok(again) if again == data => {}
            Ok(again) => same_problems.push(format!(
                "generate for role {role}: the same request gave different data ({} bytes of {:?}, then {} bytes of {:?})",
                data.data.len(),
                data.format,
                again.data.len(),
                again.format
            )),
            Err(e) => same_problems.push(format!("generate for role {role}, called again: {e}")),
        }
    }
    let generated = role_problems.is_empty();
    f.problems(id::GENERATE_ROLES, role_problems);
    if generated {
        f.problems(id::GENERATE_DETERMINISTIC, same_problems);
    } else {
        f.skip(
            id::GENERATE_DETERMINISTIC,
            format!("needs generate to answer ({})", id::GENERATE_ROLES),
        );
    }

    f.check(
        id::KUBECONFIG,
        match s.record(p.kubeconfig(&ctx, &endpoint(), &secrets).await) {
            Ok(text) if text.trim().is_empty() => {
                Err("kubeconfig answered an empty document".into())
            }
            Ok(_) => Ok(()),
            Err(e) => Err(format!("kubeconfig: {e}")),
        },
    );
}
