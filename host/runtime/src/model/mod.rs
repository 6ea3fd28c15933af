//! The contract's types as the host sees them, whatever version a provider implements.
//!
//! These are plain Rust types, written by hand: every contract version's bindings
//! (`crate::bindings::v0_1`, ...) convert its generated types to and from these, and the
//! generated types never leave those modules. Where a later version adds a field or a case,
//! the model has it too, and an answer from an earlier version lifts to its neutral value,
//! which each item documents (`None`, no such step).
//!
//! The module names follow the contract's interfaces; the crate re-exports them at its root
//! (`capw_runtime::types`, `capw_runtime::control_plane`, ...).

/// `capw:provider/bootstrap`.
pub mod bootstrap;
/// `capw:provider/control-plane`.
pub mod control_plane;
/// `capw:provider/infrastructure`.
pub mod infrastructure;
/// `capw:provider/lifecycle-hooks`.
pub mod lifecycle_hooks;
/// `capw:provider/metadata`.
pub mod metadata;
/// `capw:provider/types`.
pub mod types;
