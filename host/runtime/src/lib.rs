//! capw's plugin runtime: loads provider components, sandboxes them and calls them.
//!
//! Start with [`Runtime`]: one per process. It owns the wasmtime engine, the epoch ticker that
//! bounds every call, the instance pool and the on-disk compile cache. [`Runtime::load`] turns
//! the bytes of a component into a [`Provider`]: checked to be a component of a contract version
//! this host serves, compiled once (or taken from the cache), linked and pre-instantiated. Each
//! typed call on a [`Provider`] (for example [`Provider::reconcile_cluster`]) runs in a fresh
//! instance with its own deadline, memory limit and the capabilities in its [`Grants`], and ends
//! either with the provider's answer or with a [`CallError`] that says what kind of failure it
//! was.
//!
//! This crate knows nothing of Kubernetes or of the reconcile core: it loads components and
//! calls them.

#![warn(missing_docs)]

mod answer;
mod bindings;
mod cache;
mod call;
mod contract;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod grants;
mod limits;
pub mod model;
mod output;
mod provider;
mod runtime;
mod sandbox;

pub use answer::{
    InvalidAnswer, MAX_LIST_ENTRIES, MAX_LISTED_MACHINES, MAX_MESSAGE_BYTES, MAX_NAME_BYTES,
    MAX_PROVIDER_ID_BYTES, MAX_REASON_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, printable,
};
pub use cache::{CacheOutcome, CompileCache};
pub use contract::{CONTRACT_PACKAGE, CONTRACT_VERSION, ContractInfo, ExtensionPoint};
pub use error::{CacheError, CallError, CallFailure, LoadError};
pub use grants::{Grants, HttpGrant, HttpGrantParseError, Secret};
pub use limits::{Limits, MAX_COMPONENT_BYTES, PoolConfig};
pub use model::{bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata, types};
pub use provider::{LoadReport, Provider, ProviderInfo, Session};
pub use runtime::{CallObserver, Runtime, RuntimeConfig, RuntimeStats};
pub use sandbox::{Capability, Denial};
