//! Errors and deadlines: undeclared points answer `unsupported`, a config that is not JSON
//! gets a permanent error, every provider error's retry flag is consistent, no call runs late.

use capw_runtime::types::{ClusterRef, ErrorCode, KubernetesVersion};
use capw_runtime::{CallError, ExtensionPoint, control_plane, lifecycle_hooks};

use super::Findings;
use crate::calls::{CallLog, Subject};
use crate::checks::config::MALFORMED;
use crate::rules::id;

/// One call of `point` with `config`, its answer dropped: what matters is whether it failed.
async fn probe(
    s: &Subject<'_>,
    point: ExtensionPoint,
    cluster: &ClusterRef,
    config: &str,
) -> Result<(), CallError> {
    let ctx = s.ctx_with(cluster, "conformance-probe", config);
    let p = s.provider;
    let result = match point {
        ExtensionPoint::Infrastructure => p.list_machines(&ctx).await.map(drop),
        ExtensionPoint::Bootstrap => p.cluster_secrets(&ctx).await.map(drop),
        ExtensionPoint::ControlPlane => p.plan(&ctx, &plan_input()).await.map(drop),
        ExtensionPoint::LifecycleHooks => p.call_hook(&ctx, &hook_request()).await.map(drop),
    };
    s.record(result)
}

fn version() -> KubernetesVersion {
    KubernetesVersion {
        major: 1,
        minor: 35,
        patch: 0,
    }
}

fn plan_input() -> control_plane::PlanInput {
    control_plane::PlanInput {
        version: version(),
        replicas: 1,
        members: Vec::new(),
        failure_domains: Vec::new(),
        endpoint: None,
        failures_tolerated: None,
        objects: Vec::new(),
    }
}

fn hook_request() -> lifecycle_hooks::HookRequest {
    lifecycle_hooks::HookRequest {
        hook: lifecycle_hooks::Hook::BeforeClusterCreate,
        from_version: None,
        to_version: version(),
    }
}

pub(crate) async fn run(s: &Subject<'_>, cluster: &ClusterRef, f: &mut Findings) {
    let info = s.provider.info();
    let declared = info.extension_points();

    // Exported but not declared: every call answers a permanent `unsupported`.
    let undeclared: Vec<ExtensionPoint> = info
        .contract
        .exported
        .iter()
        .copied()
        .filter(|p| !declared.contains(p))
        .collect();
    if undeclared.is_empty() {
        f.skip(
            id::UNDECLARED_UNSUPPORTED,
            "every exported extension point is declared",
        );
    } else {
        let mut problems = Vec::new();
        for point in undeclared {
            match probe(s, point, cluster, &s.config).await {
                Ok(()) => problems.push(format!(
                    "{point} is exported but not declared, yet it answered instead of `unsupported`"
                )),
                Err(e) => match e.provider_error() {
                    Some(pe) if pe.code == ErrorCode::Unsupported && !pe.retryable => {}
                    Some(pe) => problems.push(format!(
                        "{}: answered {:?} (retryable {}) instead of a permanent `unsupported`",
                        e.operation, pe.code, pe.retryable
                    )),
                    None => problems.push(e.to_string()),
                },
            }
        }
        f.problems(id::UNDECLARED_UNSUPPORTED, problems);
    }

    // A config that is not JSON: the same input fails again, so the error is permanent.
    let mut problems = Vec::new();
    for point in &declared {
        match probe(s, *point, cluster, MALFORMED).await {
            Ok(()) => problems.push(format!(
                "{point}: answered a call whose config is {MALFORMED:?} instead of an error"
            )),
            Err(e) => match e.provider_error() {
                Some(pe) if !pe.retryable => {}
                Some(pe) => problems.push(format!(
                    "{}: a config that is not JSON got a retryable {:?} error ({:?}); the same input fails again, so it must not be retryable",
                    e.operation, pe.code, pe.message
                )),
                None => problems.push(format!(
                    "{}: a config that is not JSON must give a provider error, got {}: {e}",
                    e.operation,
                    e.failure().reason()
                )),
            },
        }
    }
    f.problems(id::BAD_INPUT_PERMANENT, problems);
}

/// The rules judged on every call the suite made.
pub(crate) fn judge_log(log: &CallLog, f: &mut Findings) {
    let mut problems = Vec::new();
    for (operation, e) in &log.errors {
        let never_retryable = matches!(e.code, ErrorCode::InvalidInput | ErrorCode::Unsupported);
        if e.retryable && never_retryable {
            problems.push(format!(
                "{operation}: error {:?} is marked retryable, but {:?} never succeeds on the same input ({:?})",
                e.code, e.code, e.message
            ));
        }
        if !e.retryable && e.retry_after_ms.is_some() {
            problems.push(format!(
                "{operation}: a permanent {:?} error carries retry-after-ms; give a retry hint only with retryable ({:?})",
                e.code, e.message
            ));
        }
    }
    problems.dedup();
    f.problems(id::RETRY_FLAG, problems);

    let late: Vec<String> = log
        .late
        .iter()
        .map(|c| format!("{} ran past its deadline of {:?}", c.operation, c.timeout))
        .collect();
    f.problems(id::WITHIN_DEADLINE, late);
}
