//! Calling providers: the call context, and a failed call turned into data (a reason, a
//! message and when to try again).

use std::time::Duration;

use capw_runtime::types::{CallContext, ClusterRef, Endpoint, InProgress};
use capw_runtime::{CallError, CallFailure};
use serde_json::Value;

use crate::registry::LoadedProvider;
use crate::view::Snapshot;

/// An error and its sources, `a: b: c`, for condition messages.
pub(crate) use capw_text::error_chain as chain;

/// The context of a call about `snapshot`'s cluster with `config` and `key`; its deadline is
/// the provider's call timeout.
pub(crate) fn context(
    snapshot: &Snapshot,
    provider: &LoadedProvider,
    config: &serde_json::Map<String, Value>,
    key: &str,
) -> CallContext {
    let timeout = provider.provider.grants().limits.call_timeout;
    CallContext {
        cluster: ClusterRef {
            namespace: snapshot.namespace.clone(),
            name: snapshot.name.clone(),
            uid: snapshot.uid.clone(),
        },
        config: Value::Object(config.clone()).to_string(),
        idempotency_key: key.into(),
        deadline_ms: u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX),
    }
}

/// What one action tells the pass: a condition to show on the Cluster, when to look again,
/// whether it failed.
#[derive(Clone, Debug, Default)]
pub(crate) struct ActionNote {
    /// A Cluster condition to overlay on the core's: (type, reason, message).
    pub condition: Option<(&'static str, String, String)>,
    /// Look again after this (the smallest hint of the pass wins).
    pub requeue: Option<Duration>,
    /// The action failed (retried with backoff when no `requeue` is given).
    pub failed: bool,
    /// The failure cannot pass without a change by a person.
    pub permanent: bool,
}

impl ActionNote {
    /// Nothing to say: the action did what it was asked.
    pub fn done() -> Self {
        Self::default()
    }

    /// The provider is working on it.
    pub fn in_progress(condition: &'static str, p: &InProgress) -> Self {
        ActionNote {
            condition: Some((condition, p.reason.clone(), p.message.clone())),
            requeue: Some(Duration::from_millis(p.requeue_after_ms.into())),
            ..Self::default()
        }
    }

    /// The call failed: the failure's kind is the reason, its chain the message.
    pub fn failed(condition: &'static str, error: &CallError) -> Self {
        let (requeue, permanent) = match error.provider_error() {
            Some(e) => (
                e.retry_after_ms.map(|ms| Duration::from_millis(ms.into())),
                !e.retryable,
            ),
            None => (
                None,
                matches!(error.failure(), CallFailure::ContractMismatch { .. }),
            ),
        };
        ActionNote {
            condition: Some((condition, error.failure().reason().into(), chain(error))),
            requeue,
            failed: true,
            permanent,
        }
    }

    /// A failure of the host's own (a store write, a missing provider).
    pub fn host_failed(condition: &'static str, reason: &str, message: String) -> Self {
        ActionNote {
            condition: Some((condition, reason.into(), message)),
            failed: true,
            ..Self::default()
        }
    }

    /// Something outside the providers is not there yet (a workload cluster that does not
    /// answer): no condition of its own, a failure for the backoff, a look again after
    /// `after`.
    pub fn retry_later(after: Option<Duration>) -> Self {
        ActionNote {
            requeue: after,
            failed: true,
            ..Self::default()
        }
    }

    /// The same, asking to look again after `after` unless it says otherwise.
    pub fn requeue_after(mut self, after: Option<Duration>) -> Self {
        if self.requeue.is_none() {
            self.requeue = after;
        }
        self
    }
}

/// The cluster's control-plane endpoint as the contract spells it.
pub(crate) fn endpoint(snapshot: &Snapshot) -> Endpoint {
    let (host, port) = snapshot
        .infrastructure
        .as_ref()
        .and_then(|r| r.endpoint.clone())
        .unwrap_or_default();
    Endpoint { host, port }
}
