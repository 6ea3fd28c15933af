//! The `simulate` knob: the answers every call gives when the config asks for them.

use std::time::Duration;

use capw_sdk::types::{Condition, ConditionStatus, ErrorCode, InProgress, ProviderError};

use crate::config::{ExampleConfig, Simulate};

/// Requeue hint of every simulated in-progress answer.
pub const REQUEUE_AFTER: Duration = Duration::from_millis(2000);

/// Retry hint of the simulated retryable error.
pub const RETRY_AFTER: Duration = Duration::from_millis(1500);

/// The simulated in-progress answer: reason `Simulated`, one condition of status unknown.
pub fn in_progress() -> InProgress {
    InProgress::new("Simulated", "simulated in-progress")
        .requeue_after(REQUEUE_AFTER)
        .with_condition(Condition::new(
            "Simulated",
            ConditionStatus::Unknown,
            "Simulated",
            "simulated",
        ))
}

/// What a call with an in-progress form answers: `Ok(None)` to answer normally,
/// `Ok(Some(_))` to answer in-progress.
///
/// # Errors
///
/// The simulated error when the config asks for one.
pub fn outcome(config: &ExampleConfig) -> Result<Option<InProgress>, ProviderError> {
    match config.simulate {
        None => Ok(None),
        Some(Simulate::InProgress) => Ok(Some(in_progress())),
        Some(Simulate::RetryableError) => Err(retryable()),
        Some(Simulate::PermanentError) => Err(permanent()),
    }
}

/// For calls without an in-progress form: fail when the config asks for an error, answer
/// normally otherwise.
///
/// # Errors
///
/// The simulated error when the config asks for one.
pub fn failure(config: &ExampleConfig) -> Result<(), ProviderError> {
    outcome(config).map(|_| ())
}

fn retryable() -> ProviderError {
    ProviderError::retryable(ErrorCode::Unavailable, "simulated outage").retry_after(RETRY_AFTER)
}

fn permanent() -> ProviderError {
    ProviderError::permanent(ErrorCode::InvalidInput, "simulated permanent failure")
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::config;

    use super::*;

    #[test]
    fn errors_are_exact() {
        let e = outcome(&config(r#"{"region": "r", "simulate": "retryable-error"}"#));
        assert_eq!(
            e,
            Err(ProviderError {
                code: ErrorCode::Unavailable,
                message: "simulated outage".into(),
                retryable: true,
                retry_after_ms: Some(1500),
            })
        );
        let e = failure(&config(r#"{"region": "r", "simulate": "permanent-error"}"#));
        assert_eq!(
            e,
            Err(ProviderError {
                code: ErrorCode::InvalidInput,
                message: "simulated permanent failure".into(),
                retryable: false,
                retry_after_ms: None,
            })
        );
    }

    #[test]
    fn in_progress_is_exact() {
        let p = in_progress();
        assert_eq!(p.reason, "Simulated");
        assert_eq!(p.message, "simulated in-progress");
        assert_eq!(p.requeue_after_ms, 2000);
        assert_eq!(
            p.conditions,
            [Condition::new(
                "Simulated",
                ConditionStatus::Unknown,
                "Simulated",
                "simulated"
            )]
        );
        assert_eq!(
            failure(&config(r#"{"region": "r", "simulate": "in-progress"}"#)),
            Ok(())
        );
    }
}
