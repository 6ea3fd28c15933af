//! What an action tells the pass ([`ActionNote`]): a failed call or write turned into data
//! (a condition with a reason and a message, when to try again).

use std::time::Duration;

use capw_runtime::types::InProgress;
use capw_runtime::{CallError, CallFailure};
use capw_text::error_chain as chain;

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
