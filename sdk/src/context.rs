//! The typed context every extension-point call receives.

use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use crate::config::{self, ConfigError};
use crate::types::{CallContext, ClusterRef};

/// What a call knows about its caller's intent, with the config already parsed into the
/// provider's `Config` type.
///
/// # Guarantees
///
/// - `config` is the provider's config for this call, with the ClusterClass's patches and the
///   pool's overrides applied; the host validated it with `validate-config` first.
/// - `idempotency_key` is stable for one intent across retries and host restarts: two calls
///   with the same key must never create two resources.
#[derive(Debug, Clone)]
pub struct Context<C> {
    /// The cluster the call concerns.
    pub cluster: ClusterRef,
    /// The provider's config for this call.
    pub config: C,
    /// Stable for one intent across retries, restarts and crashes.
    pub idempotency_key: String,
    /// Time the host allowed this call when it started; past it the call is cancelled. See
    /// [`Context::remaining`] for what is left now.
    pub deadline: Duration,
    started: Instant,
}

impl<C> Context<C> {
    /// A context from its parts, starting the deadline now. The SDK builds one per call; unit
    /// tests build their own.
    pub fn new(
        cluster: ClusterRef,
        config: C,
        idempotency_key: impl Into<String>,
        deadline: Duration,
    ) -> Self {
        Self {
            cluster,
            config,
            idempotency_key: idempotency_key.into(),
            deadline,
            started: Instant::now(),
        }
    }

    /// Time left before the host cancels this call; zero once it has passed. Use it to bound
    /// outbound requests, so a slow backend yields an error the provider chose rather than a
    /// cancellation.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_sub(self.started.elapsed())
    }
}

impl<C: DeserializeOwned> Context<C> {
    /// Parses the contract's call context.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when `call.config` does not parse into `C`; the SDK answers such a call
    /// with `invalid-input`.
    pub fn from_call(call: CallContext) -> Result<Self, ConfigError> {
        let config = config::parse(&call.config)?;
        Ok(Self::new(
            call.cluster,
            config,
            call.idempotency_key,
            Duration::from_millis(u64::from(call.deadline_ms)),
        ))
    }
}

/// The common entry of every extension-point call: an unsupported point answers `unsupported`
/// without looking at the config; otherwise the config must parse, or the call answers
/// `invalid-input`.
pub(crate) fn enter<C: DeserializeOwned>(
    supported: bool,
    function: &str,
    call: CallContext,
) -> Result<Context<C>, crate::types::ProviderError> {
    if !supported {
        return Err(crate::types::ProviderError::unsupported(function));
    }
    Context::from_call(call).map_err(Into::into)
}
