//! Errors of loading and of calling providers. A provider's failure is data: each kind is its
//! own variant so that the caller can turn it into a precise condition and metric.

use std::fmt;
use std::time::Duration;

use crate::answer::InvalidAnswer;
use crate::types::ProviderError;

/// Why a component could not be loaded as a provider.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The bytes are a core WebAssembly module, not a component.
    #[error(
        "{source_name}: is a core WebAssembly module, not a component; build it for wasm32-wasip2 or wrap it with `wasm-tools component new`"
    )]
    NotAComponent { source_name: String },
    /// The bytes are not WebAssembly at all.
    #[error("{source_name}: is not WebAssembly (bad magic number or version)")]
    NotWasm { source_name: String },
    /// The component is larger than the host loads.
    #[error("{source_name}: is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        source_name: String,
        size: usize,
        limit: usize,
    },
    /// The component does not implement a contract version this host serves.
    #[error("{source_name}: contract mismatch: {detail}")]
    ContractMismatch { source_name: String, detail: String },
    /// The component failed to validate or compile.
    #[error("{source_name}: invalid component")]
    Compile {
        source_name: String,
        #[source]
        source: wasmtime::Error,
    },
    /// The component imports something the sandbox does not provide.
    #[error("{source_name}: cannot be linked; it imports what the sandbox does not provide")]
    Link {
        source_name: String,
        #[source]
        source: wasmtime::Error,
    },
    /// Instantiating it, to check its exports, failed.
    #[error("{source_name}: instantiating it failed")]
    Instantiate {
        source_name: String,
        #[source]
        source: Box<CallError>,
    },
    /// Its `metadata.describe` failed.
    #[error("{source_name}: describing itself failed")]
    Describe {
        source_name: String,
        #[source]
        source: Box<CallError>,
    },
    /// Its `metadata.describe` answered something unusable.
    #[error("{source_name}: bad metadata: {detail}")]
    BadMetadata { source_name: String, detail: String },
    /// The compile cache failed in a way that is not a plain miss.
    #[error("{source_name}: compile cache")]
    Cache {
        source_name: String,
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
        source_name: String,
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
        name: String,
        op: &'static str,
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
    DeadlineExceeded { timeout: Duration },
    /// The instance tried to grow its memory past its limit and then failed.
    #[error("memory limit of {limit} bytes exceeded")]
    MemoryLimitExceeded { limit: usize },
    /// The call recursed past the wasm stack limit.
    #[error("wasm stack overflow")]
    StackOverflow,
    /// The guest trapped: a panic, `unreachable`, an out-of-bounds access.
    #[error("trapped: {message}")]
    Trap {
        message: String,
        #[source]
        source: wasmtime::Error,
    },
    /// The answer (or an argument to a host function) was larger than the host copies out
    /// of a guest.
    #[error("answer is over the limit of {limit} bytes")]
    ResultTooLarge { limit: usize },
    /// The sandbox refused a capability the provider was not granted, and the call failed.
    #[error("denied {denial}; the call then failed: {outcome}")]
    Denied {
        denial: Denial,
        outcome: Box<CallFailure>,
    },
    /// The answer broke the contract's limits on names and lists ([`crate::answer`]):
    /// nothing of it is kept.
    #[error(transparent)]
    InvalidAnswer(#[from] InvalidAnswer),
    /// The provider does not export what the call needs.
    #[error("contract mismatch: {detail}")]
    ContractMismatch { detail: String },
    /// The provider answered with an error of its own.
    #[error("{}", format_provider_error(.0))]
    Provider(ProviderError),
    /// The host could not run the call (e.g. the instance pool is exhausted).
    #[error("could not run the call")]
    Host(#[source] wasmtime::Error),
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
            CallFailure::Host(_) => "HostError",
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

/// A capability the sandbox can refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Outbound HTTP to an authority not granted.
    Http,
    /// A secret not granted.
    Secret,
    /// A socket (every socket is refused).
    Socket,
}

/// One refusal of the sandbox during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub capability: Capability,
    /// What was asked for, e.g. `https://example.com:443` or the secret's name.
    pub target: String,
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.capability {
            Capability::Http => "outbound HTTP to",
            Capability::Secret => "secret",
            Capability::Socket => "socket to",
        };
        write!(f, "{what} {}", self.target)
    }
}
