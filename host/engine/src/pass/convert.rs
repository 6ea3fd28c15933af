//! Conversions between the vocabularies a pass speaks: the API's objects (`capw-api`), the
//! pure core's views (`capw-reconcile`), the provider contract's types (`capw-runtime`) and
//! what a workload cluster keeps (`capw-workload`). Each is written once here and named for
//! its direction: `core_*` into the core, `api_*` into the API, `wit_*` into the contract,
//! `workload_*` into a workload cluster.

use capw_api::DeletionOrder as ApiDeletionOrder;
use capw_api::{
    ConditionStatus as ApiConditionStatus, MachinePhase as ApiPhase, MachineRole as ApiRole,
};
use capw_reconcile::{
    DeletionOrder as CoreDeletionOrder, HealthCheck, Hook, MachinePhase as CorePhase,
    MachineRole as CoreRole, Rollout, UnhealthyCondition, Version,
};
use capw_reconcile::{JoinTokenView, join_token_fresh};
use capw_runtime::bootstrap::JoinToken;
use capw_runtime::infrastructure::MachinePhase as WitPhase;
use capw_runtime::lifecycle_hooks::Hook as WitHook;
use capw_runtime::types::{
    AddressKind, ConditionStatus as WitConditionStatus, KubernetesVersion, MachineRole as WitRole,
};
use capw_topology::{PoolHealthCheck, PoolRollout};
use capw_workload::{BootstrapToken, TokenPresence};

/// A version as the API spells it, `v1.34.1` or `1.34.1`, as the core's; `None` when it is
/// not three numbers.
pub(crate) fn core_version(text: &str) -> Option<Version> {
    let mut parts = text.strip_prefix('v').unwrap_or(text).split('.');
    let mut next = || parts.next()?.parse::<u32>().ok();
    Some(Version {
        major: next()?,
        minor: next()?,
        patch: next()?,
    })
}

/// A core version as the contract's.
pub(crate) fn wit_version(v: Version) -> KubernetesVersion {
    KubernetesVersion {
        major: v.major,
        minor: v.minor,
        patch: v.patch,
    }
}

/// A pool's resolved rollout as the core's.
pub(crate) fn core_rollout(r: PoolRollout) -> Rollout {
    Rollout {
        on_delete: r.on_delete,
        max_surge: r.max_surge,
        max_unavailable: r.max_unavailable,
    }
}

/// A pool's resolved health check as the core's.
pub(crate) fn core_health_check(h: &PoolHealthCheck) -> HealthCheck {
    HealthCheck {
        node_startup_timeout: u64::from(h.node_startup_timeout_seconds),
        unhealthy_conditions: (h.unhealthy_node_conditions.iter())
            .map(|c| UnhealthyCondition {
                type_: c.type_.clone(),
                status: match c.status {
                    ApiConditionStatus::True => Some(true),
                    ApiConditionStatus::False => Some(false),
                    ApiConditionStatus::Unknown => None,
                },
                timeout: u64::from(c.timeout_seconds),
            })
            .collect(),
        max_unhealthy: h.max_unhealthy,
        max_retry: h.max_retry,
        retry_period: u64::from(h.retry_period_seconds),
        min_healthy_period: u64::from(h.min_healthy_period_seconds),
    }
}

/// A pool's deletion order as the core's.
pub(crate) fn core_deletion_order(order: ApiDeletionOrder) -> CoreDeletionOrder {
    match order {
        ApiDeletionOrder::Random => CoreDeletionOrder::Random,
        ApiDeletionOrder::Newest => CoreDeletionOrder::Newest,
        ApiDeletionOrder::Oldest => CoreDeletionOrder::Oldest,
    }
}

/// A Machine's role in the API as the core's.
pub(crate) fn core_role(role: ApiRole) -> CoreRole {
    match role {
        ApiRole::Init => CoreRole::Init,
        ApiRole::JoinControlPlane => CoreRole::JoinControlPlane,
        ApiRole::Worker => CoreRole::Worker,
    }
}

/// A role the core decided on as the API's.
pub(crate) fn api_role(role: CoreRole) -> ApiRole {
    match role {
        CoreRole::Init => ApiRole::Init,
        CoreRole::JoinControlPlane => ApiRole::JoinControlPlane,
        CoreRole::Worker => ApiRole::Worker,
    }
}

/// A Machine's role in the API as the contract's.
pub(crate) fn wit_role(role: ApiRole) -> WitRole {
    match role {
        ApiRole::Init => WitRole::Init,
        ApiRole::JoinControlPlane => WitRole::JoinControlPlane,
        ApiRole::Worker => WitRole::Worker,
    }
}

/// A Machine's phase in the API as the core's: a machine being deleted is still on its way
/// as far as the core counts.
pub(crate) fn core_phase(phase: ApiPhase) -> CorePhase {
    match phase {
        ApiPhase::Pending => CorePhase::Pending,
        ApiPhase::Provisioning | ApiPhase::Deleting => CorePhase::Provisioning,
        ApiPhase::Running => CorePhase::Running,
        ApiPhase::Failed => CorePhase::Failed,
    }
}

/// The infrastructure's phase of a machine as the API's.
pub(crate) fn api_phase(phase: WitPhase) -> ApiPhase {
    match phase {
        WitPhase::Pending => ApiPhase::Pending,
        WitPhase::Provisioning => ApiPhase::Provisioning,
        WitPhase::Running => ApiPhase::Running,
        WitPhase::Failed => ApiPhase::Failed,
        WitPhase::Deleting => ApiPhase::Deleting,
    }
}

/// The kind of an address the infrastructure reports as the API's address type.
pub(crate) fn api_address_type(kind: AddressKind) -> &'static str {
    match kind {
        AddressKind::Hostname => "Hostname",
        AddressKind::InternalIp => "InternalIP",
        AddressKind::ExternalIp => "ExternalIP",
        AddressKind::InternalDns => "InternalDNS",
        AddressKind::ExternalDns => "ExternalDNS",
    }
}

/// A condition status a provider reports as the API's.
pub(crate) fn api_condition_status(status: WitConditionStatus) -> ApiConditionStatus {
    match status {
        WitConditionStatus::True => ApiConditionStatus::True,
        WitConditionStatus::False => ApiConditionStatus::False,
        WitConditionStatus::Unknown => ApiConditionStatus::Unknown,
    }
}

/// A tri-state health (`None` when unknown) as the API's condition status.
pub(crate) fn api_condition_of(healthy: Option<bool>) -> ApiConditionStatus {
    match healthy {
        Some(true) => ApiConditionStatus::True,
        Some(false) => ApiConditionStatus::False,
        None => ApiConditionStatus::Unknown,
    }
}

/// A hook point of the core as the contract's.
pub(crate) fn wit_hook(hook: Hook) -> WitHook {
    match hook {
        Hook::BeforeClusterCreate => WitHook::BeforeClusterCreate,
        Hook::AfterControlPlaneInitialized => WitHook::AfterControlPlaneInitialized,
        Hook::BeforeClusterUpgrade => WitHook::BeforeClusterUpgrade,
        Hook::AfterControlPlaneUpgrade => WitHook::AfterControlPlaneUpgrade,
        Hook::AfterClusterUpgrade => WitHook::AfterClusterUpgrade,
        Hook::BeforeClusterDelete => WitHook::BeforeClusterDelete,
    }
}

/// `vX.Y.Z`.
pub(crate) fn core_version_text(v: &capw_runtime::types::KubernetesVersion) -> String {
    format!("v{}.{}.{}", v.major, v.minor, v.patch)
}

/// What the workload cluster's answer about `token` means for joins at `now`.
pub(crate) fn core_join_token(
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

/// `token` as the workload cluster keeps it, written at `now`: it expires after its TTL.
pub(crate) fn workload_bootstrap_token(token: &JoinToken, now: u64) -> BootstrapToken {
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

    #[test]
    fn versions_parse_with_or_without_v() {
        let v = core_version("v1.34.1").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (1, 34, 1));
        assert_eq!(core_version("1.34.1"), Some(v));
        assert_eq!(core_version("v1.34"), None);
    }

    /// The core keeps its own list of hooks (it may not depend on the runtime); the two lists
    /// meet here, in the same order, each hook once.
    #[test]
    fn the_cores_hooks_are_the_contracts_in_order() {
        let mapped: Vec<WitHook> = Hook::ALL.into_iter().map(wit_hook).collect();
        assert_eq!(mapped, WitHook::ALL);
    }

    #[test]
    fn roles_go_to_the_core_and_back_unchanged() {
        for role in [ApiRole::Init, ApiRole::JoinControlPlane, ApiRole::Worker] {
            assert_eq!(api_role(core_role(role)), role);
        }
    }

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
            core_join_token(&t, at(Some(10_600)), 10_000),
            JoinTokenView::Valid { .. }
        ));
        let JoinTokenView::Renew { reason } = core_join_token(&t, at(Some(10_400)), 10_000) else {
            panic!("renewed with 400 of 1000 s left");
        };
        assert!(reason.contains("abcdef"), "{reason}");
        assert!(!reason.contains("0123456789abcdef"), "{reason}");
        assert!(matches!(
            core_join_token(&t, at(None), 10_000),
            JoinTokenView::Valid { expires: None, .. }
        ));
        assert!(matches!(
            core_join_token(&t, Ok(TokenPresence::Missing), 10_000),
            JoinTokenView::Renew { .. }
        ));
        assert_eq!(
            core_join_token(&t, Err("no answer within 1s".into()), 10_000),
            JoinTokenView::Unknown {
                message: "no answer within 1s".into()
            }
        );
    }
}
