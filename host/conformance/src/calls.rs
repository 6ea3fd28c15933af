//! The suite's side of calling a provider: call contexts, a log of every call's outcome (for
//! the deadline and retry-flag rules), and waiting out in-progress answers as the host does.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use capw_runtime::types::{CallContext, ClusterRef, ProviderError};
use capw_runtime::{CallError, CallFailure, Provider};

use crate::options::SuiteOptions;

/// A call that ran past its deadline.
#[derive(Debug, Clone)]
pub(crate) struct LateCall {
    pub operation: &'static str,
    pub timeout: Duration,
}

/// What the suite saw of every call it made.
#[derive(Debug, Default)]
pub(crate) struct CallLog {
    pub count: u32,
    pub late: Vec<LateCall>,
    /// Every provider error answered, with the function that answered it.
    pub errors: Vec<(&'static str, ProviderError)>,
}

/// A provider under test, with the suite's options and its call log.
pub(crate) struct Subject<'p> {
    pub provider: &'p Provider,
    pub options: &'p SuiteOptions,
    /// The example config, as the text every call context carries.
    pub config: String,
    log: Mutex<CallLog>,
}

/// What an answer means for waiting: done, or call again after a hint.
pub(crate) enum Progress {
    Done,
    /// Still under way; `Err` when the answer breaks the in-progress rules (e.g. no hint).
    Pending(Result<Duration, String>),
}

impl<'p> Subject<'p> {
    pub fn new(provider: &'p Provider, options: &'p SuiteOptions) -> Self {
        Self {
            provider,
            options,
            config: options.config.to_string(),
            log: Mutex::new(CallLog::default()),
        }
    }

    /// Notes a call's outcome and hands it back.
    pub fn record<T>(&self, result: Result<T, CallError>) -> Result<T, CallError> {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.count += 1;
        if let Err(e) = &result {
            if let CallFailure::DeadlineExceeded { timeout } = e.failure() {
                log.late.push(LateCall {
                    operation: e.operation,
                    timeout: *timeout,
                });
            }
            if let Some(pe) = e.provider_error() {
                log.errors.push((e.operation, pe.clone()));
            }
        }
        result
    }

    pub fn take_log(&self) -> CallLog {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A context for `cluster` with the example config and idempotency key `key`.
    pub fn ctx(&self, cluster: &ClusterRef, key: &str) -> CallContext {
        self.ctx_with(cluster, key, &self.config)
    }

    /// A context with another config text.
    pub fn ctx_with(&self, cluster: &ClusterRef, key: &str, config: &str) -> CallContext {
        let timeout = self.provider.grants().limits.call_timeout;
        CallContext {
            cluster: cluster.clone(),
            config: config.to_owned(),
            idempotency_key: key.to_owned(),
            deadline_ms: u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX),
        }
    }

    /// Calls `call` until `progress` says done, as the host would: after an in-progress answer
    /// it waits the answer's hint (at most `max_wait`), after a retryable error its retry
    /// hint (or `max_wait`), and it gives up after `patience`.
    ///
    /// # Errors
    /// A message saying why it did not settle: a failed call, a permanent error, an
    /// in-progress answer that breaks the rules, or patience running out.
    pub async fn settle<T, F, Fut>(
        &self,
        what: &str,
        mut call: F,
        progress: impl Fn(&T) -> Progress,
    ) -> Result<T, String>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, CallError>>,
    {
        let started = Instant::now();
        let mut calls = 0u32;
        loop {
            calls += 1;
            let wait = match self.record(call().await) {
                Ok(answer) => match progress(&answer) {
                    Progress::Done => return Ok(answer),
                    Progress::Pending(Ok(hint)) => hint,
                    Progress::Pending(Err(problem)) => {
                        return Err(format!("{what}: call {calls}: {problem}"));
                    }
                },
                Err(e) => match e.provider_error() {
                    Some(pe) if pe.retryable => {
                        pe.retry_after_ms.map_or(self.options.max_wait, ms_duration)
                    }
                    _ => return Err(format!("{what}: call {calls} failed: {e}")),
                },
            };
            if started.elapsed() + wait.min(self.options.max_wait) > self.options.patience {
                return Err(format!(
                    "{what}: not settled after {calls} calls in {:.1?} (patience {:?})",
                    started.elapsed(),
                    self.options.patience
                ));
            }
            tokio::time::sleep(wait.min(self.options.max_wait)).await;
        }
    }
}

pub(crate) fn ms_duration(ms: u32) -> Duration {
    Duration::from_millis(u64::from(ms))
}

/// The in-progress rules for a hint and a reason: the hint is above 0 and the reason a
/// CamelCase word.
pub(crate) fn check_hint(requeue_after_ms: u32, reason: &str) -> Result<Duration, String> {
    if requeue_after_ms == 0 {
        return Err(format!(
            "in-progress answer (reason {reason:?}) has requeue-after-ms 0: give the host a hint above 0"
        ));
    }
    if !is_camel_case(reason) {
        return Err(format!(
            "in-progress reason {reason:?} is not a CamelCase word"
        ));
    }
    Ok(ms_duration(requeue_after_ms))
}

/// `WaitingForLoadBalancer`: an ASCII capital, then ASCII letters and digits.
pub(crate) fn is_camel_case(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_and_reasons() {
        assert!(check_hint(2000, "WaitingForLoadBalancer").is_ok());
        assert!(
            check_hint(0, "Waiting")
                .unwrap_err()
                .contains("requeue-after-ms 0")
        );
        assert!(
            check_hint(10, "waiting for lb")
                .unwrap_err()
                .contains("CamelCase")
        );
        assert!(!is_camel_case(""));
    }
}
