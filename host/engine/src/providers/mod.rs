//! The providers wing: every `WasmProvider` loaded into the runtime and its status written
//! ([`registry`]), from where its component and secrets come ([`sources`], [`oci`],
//! [`secrets`]).
//!
//! This wing loads providers and writes their status; it knows nothing of a pass and imports
//! nothing under `pass/` (`tests/layout.rs` checks it).

pub(crate) mod oci;
pub(crate) mod registry;
pub(crate) mod secrets;
pub(crate) mod sources;

pub use registry::{LoadedProvider, ProviderRegistry};
