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
                id::JOIN_TOKEN_RENEWS,
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
            join: None,
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
    join_token(s, &ctx, &secrets, f).await;
}

/// The join token: named from the secrets, renewed with a new id in the same item, and the
/// renewed one named once stored. Never shows a token's secret part.
async fn join_token(
    s: &Subject<'_>,
    ctx: &capw_runtime::types::CallContext,
    secrets: &[capw_runtime::bootstrap::SecretItem],
    f: &mut Findings,
) {
    let p = s.provider;
    let current = match s.record(p.current_join_token(ctx, secrets).await) {
        Ok(Some(token)) => token,
        Ok(None) => return f.check(id::JOIN_TOKEN_RENEWS, Ok(())),
        Err(e) => {
            return f.check(
                id::JOIN_TOKEN_RENEWS,
                Err(format!("current-join-token: {e}")),
            );
        }
    };
    let mut problems = Vec::new();
    if !secrets.iter().any(|i| i.name == current.item) {
        problems.push(format!(
            "current-join-token names item {:?}, which the cluster's secrets do not have",
            current.item
        ));
    }
    match s.record(p.renew_join_token(ctx, secrets).await) {
        Err(e) => problems.push(format!("renew-join-token: {e}")),
        Ok(renewed) => {
            if renewed.item != current.item {
                problems.push(format!(
                    "renew-join-token answered item {:?}, current-join-token names {:?}",
                    renewed.item, current.item
                ));
            }
            if renewed.id == current.id {
                problems.push(format!(
                    "renew-join-token answered the current token's id {}",
                    current.id
                ));
            }
            let mut stored: Vec<_> = secrets
                .iter()
                .filter(|i| i.name != renewed.item)
                .cloned()
                .collect();
            stored.push(capw_runtime::bootstrap::SecretItem {
                name: renewed.item.clone(),
                data: renewed.token().into_bytes(),
            });
            match s.record(p.current_join_token(ctx, &stored).await) {
                Ok(Some(named)) if named.id == renewed.id => {}
                Ok(Some(named)) => problems.push(format!(
                    "with the renewed token {} stored, current-join-token names {}",
                    renewed.id, named.id
                )),
                Ok(None) => problems.push(format!(
                    "with the renewed token {} stored, current-join-token names none",
                    renewed.id
                )),
                Err(e) => problems.push(format!(
                    "current-join-token with the renewed token stored: {e}"
                )),
            }
        }
    }
    f.problems(id::JOIN_TOKEN_RENEWS, problems);
}
