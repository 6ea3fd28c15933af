//! The token joining machines carry, kept valid in the workload cluster: `ObserveJoinToken`
//! (an observation the core asks for before it makes join data) and `RenewJoinToken`.
//!
//! The bootstrap provider names the token (contract 0.3's `current-join-token`, read from the
//! cluster's secrets) and mints a fresh one (`renew-join-token`); the host looks for it and
//! writes it in the workload cluster as Kubernetes' own bootstrap token Secret, so the token
//! format and where the API server reads it are Kubernetes', not a provider's. A renewal
//! writes the workload cluster first and the cluster's secrets after: a pass cut between the
//! two leaves an extra valid token there (its id is random, and the token cleaner deletes it at
//! its expiry), never join data with a token the cluster lacks.

use capw_reconcile::{JOIN_TOKEN_VALID, JoinTokenView};
use capw_text::error_chain as chain;

use crate::objects::secret_object;
use crate::pass::convert::{core_join_token, workload_bootstrap_token};
use crate::pass::env::{Env, bootstrap_call};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;

/// The core's view of the join token of `s` at `now` (seconds since the epoch).
pub(crate) async fn observe(env: &Env, s: &Snapshot, now: u64) -> JoinTokenView {
    let (Some(cache), Some(kubeconfig), Some(items)) = (
        env.cluster_cache.as_deref(),
        &s.kubeconfig,
        s.contract_secrets(),
    ) else {
        return JoinTokenView::Unknown {
            message: "waiting for the cluster's secrets and kubeconfig".into(),
        };
    };
    let (provider, ctx) = match bootstrap_call(env, s, JOIN_TOKEN_VALID, "join-token") {
        Ok(call) => call,
        Err(_) => return JoinTokenView::Unmanaged,
    };
    let token = match provider.provider.current_join_token(&ctx, &items).await {
        Ok(Some(token)) => token,
        Ok(None) => return JoinTokenView::Unmanaged,
        Err(e) => {
            return JoinTokenView::Unknown {
                message: format!(
                    "asking the bootstrap provider for the join token: {}",
                    chain(&e)
                ),
            };
        }
    };
    let presence = cache
        .bootstrap_token(&s.cluster_id(), &kubeconfig.value, &token.id)
        .await;
    core_join_token(&token, presence.map_err(|e| chain(&e)), now)
}

/// `RenewJoinToken`: a fresh token from the bootstrap provider, written into the workload
/// cluster, then stored in its item of the cluster's secrets.
pub(crate) async fn renew(env: &Env, s: &Snapshot, now: u64) -> ActionNote {
    const COND: &str = JOIN_TOKEN_VALID;
    let (Some(cache), Some(kubeconfig), Some(items)) = (
        env.cluster_cache.as_deref(),
        &s.kubeconfig,
        s.contract_secrets(),
    ) else {
        return ActionNote::done();
    };
    let (provider, ctx) = match bootstrap_call(env, s, COND, "join-token") {
        Ok(call) => call,
        Err(note) => return note,
    };
    let token = match provider.provider.renew_join_token(&ctx, &items).await {
        Ok(token) => token,
        Err(e) => return ActionNote::failed(COND, &e),
    };
    let written = workload_bootstrap_token(&token, now);
    if let Err(e) = cache
        .write_bootstrap_token(&s.cluster_id(), &kubeconfig.value, &written)
        .await
    {
        return ActionNote::host_failed(COND, "WorkloadWriteFailed", chain(&e));
    }
    let mut stored = s.secrets.clone().unwrap_or_default();
    match stored.iter_mut().find(|(name, _)| *name == token.item) {
        Some((_, data)) => *data = token.token().into_bytes(),
        None => stored.push((token.item.clone(), token.token().into_bytes())),
    }
    let object = secret_object(&s.namespace, &s.name, &s.uid, &stored);
    match env.store.apply(object).await {
        Ok(_) => {
            tracing::info!(cluster = %s.name, token = %token.id, expires = ?written.expires, "join token renewed");
            ActionNote::done()
        }
        Err(e) => Env::store_failed(COND, &e),
    }
}
