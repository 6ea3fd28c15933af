//! The typed context every extension-point call receives.
//!
//! At contract 0.2 the host lends each call its context as a resource (`borrow<call-context>`)
//! and the provider asks for the fields it reads. [`Context`] keeps that: the config is parsed
//! on entry (every call needs it), while the cluster and the idempotency key are fetched from
//! the host the first time they are read, once per call, and the time left is asked for live.

use std::cell::OnceCell;
use std::fmt;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use crate::config::{self, ConfigError};
use crate::types::{CallContext, ClusterRef, ProviderError};

/// What a call knows about its caller's intent, with the config already parsed into the
/// provider's `Config` type.
///
/// # Guarantees
///
/// - `config` is the provider's config for this call, with the ClusterClass's patches and the
///   pool's overrides applied; the host validated it with `validate-config` first.
/// - [`Context::idempotency_key`] is stable for one intent across retries and host restarts:
///   two calls with the same key must never create two resources.
///
/// # Migrating from SDK releases on contract 0.1
///
/// The cluster, the idempotency key and the deadline were public fields; they are methods now,
/// because the host hands them over only when asked. Write `ctx.cluster()` for `ctx.cluster`,
/// `ctx.idempotency_key()` for `&ctx.idempotency_key`, and [`Context::remaining`] for what was
/// computed from `ctx.deadline`. `ctx.config` is unchanged. A signature naming
/// `&Context<Config>` keeps compiling: the context's lifetime is elided there.
pub struct Context<'call, C> {
    /// The provider's config for this call.
    pub config: C,
    source: Source<'call>,
}

/// Where the context's other fields come from.
enum Source<'call> {
    /// The host, through the lent `call-context`; each field fetched once, when first read.
    Host {
        call: &'call dyn CallSource,
        cluster: OnceCell<ClusterRef>,
        idempotency_key: OnceCell<String>,
    },
    /// Given up front: a unit test's context.
    Given {
        cluster: ClusterRef,
        idempotency_key: String,
        deadline: Duration,
        started: Instant,
    },
}

/// The fields of a call's context as the host serves them. Implemented for the contract's
/// `call-context` resource and, in [`testing`](crate::testing), for a plain record.
#[doc(hidden)]
pub trait CallSource {
    /// The cluster the call concerns.
    fn cluster(&self) -> ClusterRef;
    /// The provider's config, as JSON.
    fn config(&self) -> String;
    /// The call's idempotency key.
    fn idempotency_key(&self) -> String;
    /// Milliseconds left now before the host cancels the call.
    fn remaining_ms(&self) -> u32;
}

impl CallSource for CallContext {
    fn cluster(&self) -> ClusterRef {
        CallContext::cluster(self)
    }

    fn config(&self) -> String {
        CallContext::config(self)
    }

    fn idempotency_key(&self) -> String {
        CallContext::idempotency_key(self)
    }

    fn remaining_ms(&self) -> u32 {
        CallContext::remaining_ms(self)
    }
}

impl<C> Context<'static, C> {
    /// A context from its parts, starting the deadline now: what a unit test builds (see
    /// [`testing::ContextBuilder`](crate::testing::ContextBuilder)). The SDK builds the
    /// contexts of real calls itself.
    pub fn new(
        cluster: ClusterRef,
        config: C,
        idempotency_key: impl Into<String>,
        deadline: Duration,
    ) -> Self {
        Self {
            config,
            source: Source::Given {
                cluster,
                idempotency_key: idempotency_key.into(),
                deadline,
                started: Instant::now(),
            },
        }
    }
}

impl<C> Context<'_, C> {
    /// The cluster the call concerns.
    pub fn cluster(&self) -> &ClusterRef {
        match &self.source {
            Source::Host { call, cluster, .. } => cluster.get_or_init(|| call.cluster()),
            Source::Given { cluster, .. } => cluster,
        }
    }

    /// Stable for one intent across retries, restarts and crashes: two calls with the same
    /// key must never create two resources.
    pub fn idempotency_key(&self) -> &str {
        match &self.source {
            Source::Host {
                call,
                idempotency_key,
                ..
            } => idempotency_key.get_or_init(|| call.idempotency_key()),
            Source::Given {
                idempotency_key, ..
            } => idempotency_key,
        }
    }

    /// Time left before the host cancels this call; zero once it has passed. Use it to bound
    /// outbound requests, so a slow backend yields an error the provider chose rather than a
    /// cancellation.
    pub fn remaining(&self) -> Duration {
        match &self.source {
            Source::Host { call, .. } => Duration::from_millis(u64::from(call.remaining_ms())),
            Source::Given {
                deadline, started, ..
            } => deadline.saturating_sub(started.elapsed()),
        }
    }
}

impl<'call, C: DeserializeOwned> Context<'call, C> {
    /// Parses the config of a call the host lent; the other fields are read when asked for.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the call's config does not parse into `C`; the SDK answers such a
    /// call with `invalid-input`.
    fn from_source(call: &'call dyn CallSource) -> Result<Self, ConfigError> {
        Ok(Self {
            config: config::parse(&call.config())?,
            source: Source::Host {
                call,
                cluster: OnceCell::new(),
                idempotency_key: OnceCell::new(),
            },
        })
    }
}

impl<C: fmt::Debug> fmt::Debug for Context<'_, C> {
    /// The config and the fields read so far: printing a context asks the host for nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Context");
        out.field("config", &self.config);
        match &self.source {
            Source::Host {
                cluster,
                idempotency_key,
                ..
            } => out
                .field("cluster", &cluster.get())
                .field("idempotency_key", &idempotency_key.get()),
            Source::Given {
                cluster,
                idempotency_key,
                deadline,
                ..
            } => out
                .field("cluster", cluster)
                .field("idempotency_key", idempotency_key)
                .field("deadline", deadline),
        };
        out.finish_non_exhaustive()
    }
}

/// The common entry of every extension-point call: an unsupported point answers `unsupported`
/// without looking at the config; otherwise the config must parse, or the call answers
/// `invalid-input`.
///
/// Public only for the SDK's own tests, which drive it with a record for a host.
#[doc(hidden)]
pub fn enter<'call, C: DeserializeOwned>(
    supported: bool,
    function: &str,
    call: &'call dyn CallSource,
) -> Result<Context<'call, C>, ProviderError> {
    if !supported {
        return Err(ProviderError::unsupported(function));
    }
    Context::from_source(call).map_err(Into::into)
}
