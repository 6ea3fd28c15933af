//! `CallHook`: the class's lifecycle hook providers, asked in order at a hook point.

use capw_api::Cluster;
use capw_reconcile::Hook;
use capw_runtime::lifecycle_hooks::{HookRequest, HookResponse};

use crate::pass::convert::{wit_hook, wit_version};
use crate::pass::env::{Env, context};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::key_of;

/// `CallHook`: ask every hook provider of the class, in order; when all proceed, record the
/// hook point as passed for `to` in the Cluster's status. A hold or an error stops at that
/// provider and holds only this transition.
pub(crate) async fn call_hook(
    env: &Env,
    s: &Snapshot,
    hook: Hook,
    from: Option<capw_reconcile::Version>,
    to: capw_reconcile::Version,
) -> ActionNote {
    const COND: &str = capw_reconcile::HOOKS_PASSED;
    let Ok(desired) = &s.desired else {
        return ActionNote::done();
    };
    let request = HookRequest {
        hook: wit_hook(hook),
        from_version: from.map(wit_version),
        to_version: wit_version(to),
    };
    for config in &desired.hooks {
        let provider = match env.provider(config, COND) {
            Ok(p) => p,
            Err(note) => return note,
        };
        let key = format!("{}-{}-{to}", s.uid, hook.as_str());
        let ctx = context(s, &provider, &config.config, &key);
        match provider.provider.call_hook(&ctx, &request).await {
            Ok(HookResponse::Proceed) => {}
            Ok(HookResponse::Hold(p)) => {
                tracing::info!(cluster = %s.name, hook = hook.as_str(), provider = %config.provider, reason = %p.reason, "hook holds");
                let mut note = ActionNote::in_progress(COND, &p);
                if let Some((_, reason, message)) = &mut note.condition {
                    *message = format!(
                        "{} held by {}: {reason}: {message}",
                        hook.as_str(),
                        config.provider
                    );
                    *reason = format!("{}Held", capitalized(hook.as_str()));
                }
                return note;
            }
            Err(e) => return ActionNote::failed(COND, &e),
        }
    }
    tracing::info!(cluster = %s.name, hook = hook.as_str(), version = %to, "hook passed");
    let key = key_of::<Cluster>(&s.namespace, &s.name);
    let (name, version) = (hook.as_str(), to.to_string());
    let written = env
        .store
        .update(&key, &mut |o| {
            if !o["status"].is_object() {
                o["status"] = serde_json::json!({});
            }
            if !o["status"]["hooks"].is_object() {
                o["status"]["hooks"] = serde_json::json!({});
            }
            o["status"]["hooks"][name] = version.clone().into();
            Ok(())
        })
        .await;
    match written {
        Ok(_) => ActionNote::done(),
        Err(e) => Env::store_failed(COND, &e),
    }
}

/// `beforeClusterCreate` as `BeforeClusterCreate`.
fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}
