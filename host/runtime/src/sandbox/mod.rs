//! The per-call store data: the sandbox a call runs in. Deny by default: no preopened
//! directory, no environment, no arguments, every socket refused, stdio captured, outbound
//! HTTP only to granted authorities, secrets only those granted.
//!
//! One capability per module, each with the part of [`CallState`] it owns and the methods
//! or `wasmtime` views that serve it:
//!
//! - `journal`: what the sandbox refused during the call;
//! - `limiter`: the instance's memory budget;
//! - `redact`: granted secret values scrubbed from what the provider says;
//! - `wasi`: WASI, deny by default, made on first use;
//! - `http`: outbound HTTP, only where granted and never past the deadline;
//! - `log`: `host-log`, bounded and redacted;
//! - `secrets`: `host-secrets`, only what is granted.
//!
//! The capabilities share the call's resource table and its journal; nothing else of one
//! reaches another.

mod http;
mod journal;
mod limiter;
mod log;
mod redact;
mod secrets;
mod wasi;

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::ResourceTable;

use crate::grants::Grants;
use crate::model::types::CallContext;

pub use journal::{Capability, Denial};
pub(crate) use limiter::MemoryLimiter;
pub(crate) use log::LogLevel;
pub(crate) use redact::Redactor;
pub(crate) use secrets::SecretLookupError;

/// Store data of one call.
pub(crate) struct CallState {
    wasi: wasi::WasiState,
    http: http::HttpState,
    /// The resources of the call's WASI and HTTP handles.
    table: ResourceTable,
    log: log::LogBudget,
    /// The call context lent to the call under way (contract 0.2, where the provider reads
    /// it through getters); set by the bindings before the call, cleared after it.
    pub(crate) call_context: Option<CallContext>,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) journal: Arc<journal::CallJournal>,
    grants: Arc<Grants>,
    redactor: Redactor,
}

impl CallState {
    /// The sandbox of one call that must end by `deadline`, with the capabilities `grants`
    /// give and `redactor` scrubbing their secrets.
    pub(crate) fn new(grants: Arc<Grants>, redactor: Redactor, deadline: Instant) -> Self {
        let journal = Arc::new(journal::CallJournal::default());
        CallState {
            wasi: wasi::WasiState::default(),
            http: http::HttpState::new(grants.clone(), journal.clone(), deadline),
            table: ResourceTable::new(),
            log: log::LogBudget::default(),
            call_context: None,
            limiter: MemoryLimiter::new(grants.limits.memory),
            journal,
            grants,
            redactor,
        }
    }

    /// Scrubs the call's granted secrets from what the provider says.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// When the current call must end.
    pub(crate) fn deadline(&self) -> Instant {
        self.http.deadline()
    }

    /// Start the clock of another call in the same store.
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.http.set_deadline(deadline);
    }
}
