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

use capw_reconcile::{JOIN_TOKEN_VALID, JoinTokenView, join_token_fresh};
use capw_runtime::bootstrap::JoinToken;
use capw_text::error_chain as chain;
use capw_workload::{BootstrapToken, TokenPresence};

use crate::objects::secret_object;
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
    judge(&token, presence.map_err(|e| chain(&e)), now)
}

/// What the workload cluster's answer about `token` means for joins at `now`.
pub(crate) fn judge(
    token: &JoinToken,
    presence: Result<TokenPresence, String>,
    now: u64,
) -> JoinTokenView {
    match presence {
        Err(message) => JoinTokenView::Unknown { message },
        Ok(TokenPresence::Missing) => JoinTokenView::Renew {
            reason: format!("token {} is not in the workload cluster", token.id),
        },
        Ok(TokenPresence::Present { expires }) => {
            let expires = expires.map(|at| u64::try_from(at).unwrap_or(0));
            if join_token_fresh(expires, token.ttl_seconds, now) {
                JoinTokenView::Valid {
                    id: token.id.clone(),
                    expires,
                }
            } else {
                JoinTokenView::Renew {
                    reason: format!(
                        "token {} expires at {} (seconds since the epoch), less than half its {}s lifetime from now",
                        token.id,
                        expires.unwrap_or_default(),
                        token.ttl_seconds
                    ),
                }
            }
        }
    }
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
    let written = to_write(&token, now);
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

/// `token` as the workload cluster keeps it, written at `now`: it expires after its TTL.
pub(crate) fn to_write(token: &JoinToken, now: u64) -> BootstrapToken {
    BootstrapToken {
        id: token.id.clone(),
        secret: token.secret.clone(),
        expires: (token.ttl_seconds > 0)
            .then(|| i64::try_from(now.saturating_add(token.ttl_seconds)).unwrap_or(i64::MAX)),
        extra_groups: token.extra_groups.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> JoinToken {
        JoinToken {
            item: "bootstrap-token".into(),
            id: "abcdef".into(),
            secret: "0123456789abcdef".into(),
            ttl_seconds: 1000,
            extra_groups: Vec::new(),
        }
    }

    #[test]
    fn a_token_is_valid_while_more_than_half_its_life_is_left() {
        let t = token();
        let at = |expires| Ok(TokenPresence::Present { expires });
        assert!(matches!(
            judge(&t, at(Some(10_600)), 10_000),
            JoinTokenView::Valid { .. }
        ));
        let JoinTokenView::Renew { reason } = judge(&t, at(Some(10_400)), 10_000) else {
            panic!("renewed with 400 of 1000 s left");
        };
        assert!(reason.contains("abcdef"), "{reason}");
        assert!(!reason.contains("0123456789abcdef"), "{reason}");
        assert!(matches!(
            judge(&t, at(None), 10_000),
            JoinTokenView::Valid { expires: None, .. }
        ));
        assert!(matches!(
            judge(&t, Ok(TokenPresence::Missing), 10_000),
            JoinTokenView::Renew { .. }
        ));
        assert_eq!(
            judge(&t, Err("no answer within 1s".into()), 10_000),
            JoinTokenView::Unknown {
                message: "no answer within 1s".into()
            }
        );
    }
}
