//! Types shared by every extension point, and constructors that make the common answers short.
//!
//! These are the contract's `types` interface. The contract's rules hold for all of them:
//! providers are stateless, the host owns retries, and a call that is still working answers
//! [`InProgress`] instead of blocking.

use std::fmt;
use std::time::Duration;

pub use crate::__bindings::capw::provider::types::{
    Address, AddressKind, CallContext, ClusterRef, Condition, ConditionStatus, Deletion, Endpoint,
    ErrorCode, InProgress, JoinToken, KubernetesVersion, MachineRef, MachineRole, ProviderError,
};

/// Milliseconds of `duration` as the contract carries them, saturating at `u32::MAX` (about 49
/// days) rather than wrapping: a too-long hint must stay a long hint.
pub(crate) fn saturating_millis(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}

impl ProviderError {
    /// An error the host retries: the same call may succeed later without a change of input
    /// (an outage, a rate limit, a conflict that resolves itself). The host uses its own
    /// backoff unless [`ProviderError::retry_after`] gives a hint.
    pub fn retryable(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: true,
            retry_after_ms: None,
        }
    }

    /// An error the host does not retry: the same input fails again (bad input, a missing
    /// grant). The host reports it and waits for the input to change.
    pub fn permanent(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: false,
            retry_after_ms: None,
        }
    }

    /// The answer of a function, or a case of one, that this provider does not implement:
    /// code `unsupported`, not retryable. `what` names it, e.g. `bootstrap.generate`.
    pub fn unsupported(what: impl fmt::Display) -> Self {
        Self::permanent(
            ErrorCode::Unsupported,
            format!("{what} is not supported by this provider"),
        )
    }

    /// Asks the host to retry after `after` (e.g. from an HTTP `Retry-After`).
    ///
    /// Also marks the error retryable: a retry hint on an error that must not be retried would
    /// contradict itself. Durations beyond `u32::MAX` milliseconds saturate.
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retryable = true;
        self.retry_after_ms = Some(saturating_millis(after));
        self
    }
}

impl InProgress {
    /// The requeue hint [`InProgress::new`] starts with.
    pub const DEFAULT_REQUEUE_AFTER: Duration = Duration::from_secs(5);

    /// Work has started and is not finished: `reason` is a CamelCase word for it (e.g.
    /// `InstanceBooting`), `message` the detail the host shows. The host calls again after
    /// [`InProgress::DEFAULT_REQUEUE_AFTER`] unless [`InProgress::requeue_after`] says otherwise.
    pub fn new(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            message: message.into(),
            requeue_after_ms: saturating_millis(Self::DEFAULT_REQUEUE_AFTER),
            conditions: Vec::new(),
        }
    }

    /// Hint for when the host should call again. Saturates at `u32::MAX` milliseconds.
    pub fn requeue_after(mut self, after: Duration) -> Self {
        self.requeue_after_ms = saturating_millis(after);
        self
    }

    /// Adds a condition for the host to show while the work goes on.
    pub fn with_condition(mut self, condition: Condition) -> Self {
        self.conditions.push(condition);
        self
    }
}

impl Condition {
    /// A condition as in Kubernetes `metav1.Condition`: `type_` and `reason` are CamelCase;
    /// `message` is for humans and must never hold secret material.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_: type_.into(),
            status,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// Kubernetes spelling: `v1.35.2`.
impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl MachineRole {
    /// The contract's name of the role: `init`, `join-control-plane` or `worker`.
    pub fn as_str(self) -> &'static str {
        match self {
            MachineRole::Init => "init",
            MachineRole::JoinControlPlane => "join-control-plane",
            MachineRole::Worker => "worker",
        }
    }
}

/// The contract's name of the role, as [`MachineRole::as_str`].
impl fmt::Display for MachineRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_and_permanent_set_the_retry_flag() {
        let e = ProviderError::retryable(ErrorCode::Unavailable, "down");
        assert!(e.retryable);
        assert_eq!(e.retry_after_ms, None);
        assert_eq!(e.message, "down");

        let e = ProviderError::permanent(ErrorCode::InvalidInput, "bad");
        assert!(!e.retryable);
        assert_eq!(e.code, ErrorCode::InvalidInput);
    }

    #[test]
    fn unsupported_names_what() {
        let e = ProviderError::unsupported("bootstrap.generate");
        assert_eq!(e.code, ErrorCode::Unsupported);
        assert!(!e.retryable);
        assert!(e.message.contains("bootstrap.generate"), "{}", e.message);
    }

    #[test]
    fn retry_after_marks_retryable_and_saturates() {
        let e = ProviderError::permanent(ErrorCode::Conflict, "busy")
            .retry_after(Duration::from_millis(1500));
        assert!(e.retryable);
        assert_eq!(e.retry_after_ms, Some(1500));

        let e = ProviderError::retryable(ErrorCode::Unavailable, "x")
            .retry_after(Duration::from_secs(u64::MAX));
        assert_eq!(e.retry_after_ms, Some(u32::MAX));
    }

    #[test]
    fn in_progress_defaults_and_builders() {
        let p = InProgress::new("Booting", "instance booting");
        assert_eq!(p.requeue_after_ms, 5000);
        let p = p
            .requeue_after(Duration::from_secs(2))
            .with_condition(Condition::new(
                "Ready",
                ConditionStatus::False,
                "Booting",
                "",
            ));
        assert_eq!(p.requeue_after_ms, 2000);
        assert_eq!(p.conditions.len(), 1);
        assert_eq!(p.conditions[0].type_, "Ready");
    }

    #[test]
    fn version_and_role_display() {
        let v = KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 2,
        };
        assert_eq!(v.to_string(), "v1.35.2");
        assert_eq!(
            MachineRole::JoinControlPlane.to_string(),
            "join-control-plane"
        );
    }
}
