//! Errors of loading and of calling providers. A provider's failure is data: each kind is its
//! own variant so that the caller can turn it into a precise condition and metric.

use std::time::Duration;

use crate::answer::InvalidAnswer;
use crate::sandbox::Denial;
use crate::types::ProviderError;

/// Why a component could not be loaded as a provider.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The bytes are a core WebAssembly module, not a component.
    #[error(
        "{source_name}: is a core WebAssembly module, not a component; build it for wasm32-wasip2 or wrap it with `wasm-tools component new`"
    )]
    NotAComponent {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
    },
    /// The bytes are not WebAssembly at all.
    #[error("{source_name}: is not WebAssembly (bad magic number or version)")]
    NotWasm {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
    },
    /// The component is larger than the host loads.
    #[error("{source_name}: is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// Its size, in bytes.
        size: usize,
        /// The most the host loads ([`crate::MAX_COMPONENT_BYTES`]).
        limit: usize,
    },
    /// The component does not implement a contract version this host serves.
    #[error("{source_name}: contract mismatch: {detail}")]
    ContractMismatch {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// What the component exports, against what the host serves.
        detail: String,
    },
    /// The component failed to validate or compile.
    #[error("{source_name}: invalid component")]
    Compile {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// Why wasmtime refused it.
        #[source]
        source: wasmtime::Error,
    },
    /// The component imports something the sandbox does not provide.
    #[error("{source_name}: cannot be linked; it imports what the sandbox does not provide")]
    Link {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// wasmtime's error, naming the import it could not satisfy.
        #[source]
        source: wasmtime::Error,
    },
    /// Instantiating it, to check its exports, failed.
    #[error("{source_name}: instantiating it failed")]
    Instantiate {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// The failed call.
        #[source]
        source: Box<CallError>,
    },
    /// Its `metadata.describe` failed.
    #[error("{source_name}: describing itself failed")]
    Describe {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// The failed call.
        #[source]
        source: Box<CallError>,
    },
    /// Its `metadata.describe` answered something unusable.
    #[error("{source_name}: bad metadata: {detail}")]
    BadMetadata {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// Which rule the metadata breaks.
        detail: String,
    },
    /// The compile cache failed in a way that is not a plain miss.
    #[error("{source_name}: compile cache")]
    Cache {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// The cache's error.
        #[source]
        source: CacheError,
    },
    /// The engine could not be set up.
    #[error("the wasm engine could not be configured")]
    Engine(#[source] wasmtime::Error),
    /// The thread that enforces call deadlines could not be started.
    #[error("the epoch ticker thread could not be started")]
    EpochTicker(#[source] std::io::Error),
    /// A blocking task of the loader was cancelled or panicked.
    #[error("{source_name}: the compile task was lost")]
    TaskLost {
        /// The name the component was loaded under (in capw, the WasmProvider's).
        source_name: String,
        /// How the task ended.
        #[source]
        source: tokio::task::JoinError,
    },
}

/// Errors of the on-disk compile cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Reading or writing the cache directory failed.
    #[error("cache file {name}: {op}")]
    Io {
        /// The file, within the cache directory.
        name: String,
        /// What was being done, e.g. `write`.
        op: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Serialising compiled code failed.
    #[error("serialising compiled code")]
    Serialize(#[source] wasmtime::Error),
}

/// A call to a provider that did not produce an answer, or produced a provider error.
#[derive(Debug, thiserror::Error)]
#[error("provider {provider}: {operation}: {failure}")]
pub struct CallError {
    /// The provider's name.
    pub provider: String,
    /// The contract function, e.g. `infrastructure.reconcile-machine`.
    pub operation: &'static str,
    /// What went wrong.
    #[source]
    pub failure: CallFailure,
}

impl CallError {
    /// The kind of failure.
    pub fn failure(&self) -> &CallFailure {
        &self.failure
    }

    /// The provider's own error, when the call failed that way.
    pub fn provider_error(&self) -> Option<&ProviderError> {
        match &self.failure {
            CallFailure::Provider(e) => Some(e),
            CallFailure::Denied { outcome, .. } => outcome.provider_error(),
            _ => None,
        }
    }
}

/// The kinds of failure of a call. Each sandbox promise breaks in its own way.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallFailure {
    /// The call ran past its deadline and was cancelled.
    #[error("deadline of {timeout:?} exceeded")]
    DeadlineExceeded {
        /// The call's deadline.
        timeout: Duration,
    },
    /// The instance tried to grow its memory past its limit and then failed.
    #[error("memory limit of {limit} bytes exceeded")]
    MemoryLimitExceeded {
        /// The instance's memory limit, in bytes.
        limit: usize,
    },
    /// The call recursed past the wasm stack limit.
    #[error("wasm stack overflow")]
    StackOverflow,
    /// The guest trapped: a panic, `unreachable`, an out-of-bounds access.
    #[error("trapped: {message}")]
    Trap {
        /// The trap, with any granted secret scrubbed from it.
        message: String,
        /// The trap as wasmtime reported it.
        #[source]
        source: wasmtime::Error,
    },
    /// The answer (or an argument to a host function) was larger than the host copies out
    /// of a guest.
    #[error("answer is over the limit of {limit} bytes")]
    ResultTooLarge {
        /// The most the host copies out of a guest at once, in bytes.
        limit: usize,
    },
    /// The sandbox refused a capability the provider was not granted, and the call failed.
    #[error("denied {denial}; the call then failed: {outcome}")]
    Denied {
        /// The sandbox's first refusal during the call.
        denial: Denial,
        /// How the call then ended.
        outcome: Box<CallFailure>,
    },
    /// The answer broke the contract's limits on names and lists ([`crate::answer`]):
    /// nothing of it is kept.
    #[error(transparent)]
    InvalidAnswer(#[from] InvalidAnswer),
    /// The provider does not export what the call needs.
    #[error("contract mismatch: {detail}")]
    ContractMismatch {
        /// What is missing or of the wrong type.
        detail: String,
    },
    /// The provider answered with an error of its own.
    #[error("{}", format_provider_error(.0))]
    Provider(ProviderError),
    /// The host could not run the call (e.g. the instance pool is exhausted).
    #[error("could not run the call: {detail}")]
    Host {
        /// What wasmtime said, scrubbed of the call's granted secrets and bounded: what a
        /// report shows of it.
        detail: String,
        /// wasmtime's error.
        #[source]
        source: wasmtime::Error,
    },
}

impl CallFailure {
    /// CamelCase name of the kind, for condition reasons and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            CallFailure::DeadlineExceeded { .. } => "DeadlineExceeded",
            CallFailure::MemoryLimitExceeded { .. } => "MemoryLimitExceeded",
            CallFailure::StackOverflow => "StackOverflow",
            CallFailure::Trap { .. } => "Trap",
            CallFailure::ResultTooLarge { .. } => "ResultTooLarge",
            CallFailure::Denied { .. } => "CapabilityDenied",
            CallFailure::InvalidAnswer(_) => "InvalidAnswer",
            CallFailure::ContractMismatch { .. } => "ContractMismatch",
            CallFailure::Provider(_) => "ProviderError",
            CallFailure::Host { .. } => "HostError",
        }
    }

    /// The provider's own error, when the call failed that way.
    pub fn provider_error(&self) -> Option<&ProviderError> {
        match self {
            CallFailure::Provider(e) => Some(e),
            CallFailure::Denied { outcome, .. } => outcome.provider_error(),
            _ => None,
        }
    }
}

fn format_provider_error(e: &ProviderError) -> String {
    let retry = match (e.retryable, e.retry_after_ms) {
        (true, Some(ms)) => format!(" (retry after {ms} ms)"),
        (true, None) => " (retryable)".to_string(),
        (false, _) => String::new(),
    };
    format!("provider error {:?}: {}{retry}", e.code, e.message)
}
