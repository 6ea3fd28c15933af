//! The lifecycle-hooks extension point: every hook, twice with the same key.

use capw_runtime::lifecycle_hooks::{Hook, HookRequest, HookResponse};
use capw_runtime::types::KubernetesVersion;

use super::{Findings, cluster};
use crate::calls::{Subject, check_hint};
use crate::rules::id;

pub(crate) async fn run(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let c = cluster(&s.options.cluster_name, suffix, "hooks");
    let version = |minor| KubernetesVersion {
        major: 1,
        minor,
        patch: 0,
    };
    let mut problems = Vec::new();
    for hook in Hook::ALL {
        let upgrade = matches!(
            hook,
            Hook::BeforeClusterUpgrade | Hook::AfterControlPlaneUpgrade | Hook::AfterClusterUpgrade
        );
        let request = HookRequest {
            hook,
            from_version: upgrade.then(|| version(34)),
            to_version: version(35),
        };
        let ctx = s.ctx(&c, &format!("{}-{hook:?}", c.name));
        for attempt in ["first", "second"] {
            match s.record(s.provider.call_hook(&ctx, &request).await) {
                Ok(HookResponse::Proceed) => {}
                Ok(HookResponse::Hold(p)) => {
                    if let Err(problem) = check_hint(p.requeue_after_ms, &p.reason) {
                        problems.push(format!("{hook:?}, {attempt} call: hold: {problem}"));
                    }
                }
                Err(e) => problems.push(format!("{hook:?}, {attempt} call: {e}")),
            }
        }
    }
    f.problems(id::HOOKS_ANSWER, problems);
}
