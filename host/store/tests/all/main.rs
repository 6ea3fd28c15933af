//! The redb object store: one test binary for the crate.

mod contract;
mod overlay;
mod store;
mod typed;
