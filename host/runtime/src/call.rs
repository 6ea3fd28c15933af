//! One call: a fresh store and instance, its deadline, and the classification of how it ended.

use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap, UpdateDeadline};

use crate::answer::{Answer, Checker, answer_root};
use crate::error::{CallError, CallFailure};
use crate::grants::Grants;
use crate::limits::MAX_RESULT_BYTES;
use crate::runtime::CallObserver;
use crate::sandbox::{CallState, Redactor};
use crate::types::ProviderError;

/// Raised from the epoch callback when a call runs past its deadline; recognised in
/// [`classify`].
#[derive(Debug)]
struct DeadlineMarker;

impl std::fmt::Display for DeadlineMarker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("call deadline exceeded")
    }
}

impl std::error::Error for DeadlineMarker {}

/// A store made for one call.
pub(crate) struct ActiveCall {
    pub(crate) store: Store<CallState>,
}

impl ActiveCall {
    pub(crate) fn new(
        engine: &wasmtime::Engine,
        grants: Arc<Grants>,
        redactor: Redactor,
        deadline: Instant,
    ) -> Self {
        let mut store = Store::new(engine, CallState::new(grants, redactor, deadline));
        store.limiter(|s| &mut s.limiter);
        // Bounds what wasmtime copies out of the guest in one go: an answer, or an argument
        // to a host function.
        store.set_hostcall_fuel(MAX_RESULT_BYTES);
        // Check the deadline on every tick, and yield the thread meanwhile so that a busy
        // guest never starves other calls on the same executor.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|ctx| {
            if Instant::now() >= ctx.data().deadline() {
                Err(wasmtime::Error::new(DeadlineMarker))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        ActiveCall { store }
    }
}

/// What a guest call produced before classification: `None` when the deadline future fired.
pub(crate) type RawOutcome<R> = Option<wasmtime::Result<Result<R, ProviderError>>>;

/// Run `body` (instantiate, then call) until `deadline`.
///
/// The epoch deadline already stops wasm that runs past it; this bounds the time a call
/// spends waiting in the host (a hung wasi:http request, a long `poll`). The timer is armed
/// only when `body` first has to wait: most calls never do, and skip its cost.
pub(crate) async fn with_deadline<R>(
    deadline: Instant,
    body: impl Future<Output = wasmtime::Result<Result<R, ProviderError>>>,
) -> RawOutcome<R> {
    let mut body = pin!(body);
    let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = body.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline.into())))
            .as_mut()
            .poll(cx)
            .map(|()| None)
    })
    .await
}

/// Who made a call: the provider's own name (logs and errors), the name it was loaded as
/// and the runtime's observer (told how the call ended).
pub(crate) struct Caller<'a> {
    pub(crate) name: &'a str,
    pub(crate) source: &'a str,
    pub(crate) observer: Option<&'a dyn CallObserver>,
}

/// Turn a raw outcome into the provider's answer or a precise [`CallError`], and write the
/// guest's captured output into the logs.
pub(crate) fn finish<R: Answer>(
    caller: Caller<'_>,
    operation: &'static str,
    state: &CallState,
    timeout: Duration,
    memory_limit: usize,
    started: Instant,
    outcome: RawOutcome<R>,
) -> Result<R, CallError> {
    let provider = caller.name;
    flush_output(state, provider, operation);
    let elapsed = started.elapsed();
    let failure = match outcome {
        None => CallFailure::DeadlineExceeded { timeout },
        Some(Err(e)) => classify(e, state, timeout, memory_limit),
        Some(Ok(Err(mut provider_error))) => {
            let mut checker = Checker::new("provider-error", Some(state.redactor()));
            match provider_error.check(&mut checker) {
                Ok(()) => CallFailure::Provider(provider_error),
                Err(invalid) => CallFailure::InvalidAnswer(invalid),
            }
        }
        Some(Ok(Ok(mut answer))) => {
            let mut checker = Checker::new(answer_root(operation), Some(state.redactor()));
            match answer.check(&mut checker) {
                Err(invalid) => CallFailure::InvalidAnswer(invalid),
                Ok(()) => {
                    tracing::debug!(provider, operation, ?elapsed, "provider call succeeded");
                    if let Some(observer) = caller.observer {
                        observer.call_finished(caller.source, operation, elapsed, Ok(()));
                    }
                    return Ok(answer);
                }
            }
        }
    };
    // A refusal of the sandbox explains most failures that follow it.
    let failure = match (state.journal.first_denial(), failure) {
        (Some(denial), f @ (CallFailure::Provider(_) | CallFailure::Trap { .. })) => {
            CallFailure::Denied {
                denial,
                outcome: Box::new(f),
            }
        }
        (_, f) => f,
    };
    tracing::warn!(provider, operation, ?elapsed, reason = failure.reason(), error = %failure, "provider call failed");
    if let Some(observer) = caller.observer {
        observer.call_finished(caller.source, operation, elapsed, Err(failure.reason()));
    }
    Err(CallError {
        provider: provider.to_string(),
        operation,
        failure,
    })
}

fn classify(
    error: wasmtime::Error,
    state: &CallState,
    timeout: Duration,
    memory_limit: usize,
) -> CallFailure {
    if error.downcast_ref::<DeadlineMarker>().is_some() {
        return CallFailure::DeadlineExceeded { timeout };
    }
    if is_hostcall_fuel_exhausted(&error) {
        return CallFailure::ResultTooLarge {
            limit: MAX_RESULT_BYTES,
        };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => return CallFailure::StackOverflow,
        Some(Trap::Interrupt) => return CallFailure::DeadlineExceeded { timeout },
        Some(_) if state.limiter.hit => {
            return CallFailure::MemoryLimitExceeded {
                limit: memory_limit,
            };
        }
        Some(trap) => {
            return CallFailure::Trap {
                message: state.redactor().scrub(&trap.to_string()),
                source: error,
            };
        }
        None => {}
    }
    if state.limiter.hit {
        return CallFailure::MemoryLimitExceeded {
            limit: memory_limit,
        };
    }
    CallFailure::Host {
        detail: host_detail(&error, state),
        source: error,
    }
}

/// The most of a host error's text a report carries.
const HOST_DETAIL_MAX: usize = 512;

/// What `error` says, for a report that would otherwise name no cause: its outermost message
/// and its root cause (the chain between them, with any wasm backtrace, stays in the source),
/// scrubbed of the call's granted secrets and cut at [`HOST_DETAIL_MAX`] bytes.
fn host_detail(error: &wasmtime::Error, state: &CallState) -> String {
    let (top, root) = (error.to_string(), error.root_cause().to_string());
    let text = if top == root {
        top
    } else {
        format!("{top}: {root}")
    };
    capw_text::truncate(state.redactor().scrub(&text), HOST_DETAIL_MAX)
}

/// Whether wasmtime refused to copy more than the store's hostcall fuel from the guest:
/// the answer (or an argument to a host function) was over [`MAX_RESULT_BYTES`]. wasmtime
/// does not export the error type, so its message is the only way to tell.
fn is_hostcall_fuel_exhausted(error: &wasmtime::Error) -> bool {
    error.chain().any(|e| {
        e.to_string()
            .contains("fuel allocated for hostcalls has been exhausted")
    })
}

fn flush_output(state: &CallState, provider: &str, operation: &'static str) {
    for (stream, out) in state.captured() {
        let (bytes, dropped) = out.take();
        if bytes.is_empty() && dropped == 0 {
            continue;
        }
        let text = state.redactor().scrub(&String::from_utf8_lossy(&bytes));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            tracing::info!(target: "capw::provider", provider, operation, stream, "{line}");
        }
        if dropped > 0 {
            tracing::warn!(
                provider,
                operation,
                stream,
                dropped,
                "provider output over the limit was dropped"
            );
        }
    }
    if state.log_dropped() > 0 {
        tracing::warn!(
            provider,
            operation,
            dropped = state.log_dropped(),
            "provider log records over the limit were dropped"
        );
    }
}
