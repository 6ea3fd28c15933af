//! capw's embedded object store: the state of the local mode in one redb file, behind the
//! engine's [`ObjectStore`](capw_engine::store::ObjectStore).
//!
//! The store keeps the metadata the API server would: `uid`, `creationTimestamp`,
//! `resourceVersion` (one counter for the whole store, bumped on every write), `generation`
//! (bumped when `spec` changes), `finalizers` and `deletionTimestamp`. Every write is one ACID
//! transaction, durable when the call returns, and announced to [`Store::watch`] subscribers
//! afterwards.
//!
//! # Guarantees
//!
//! Those of every [`ObjectStore`](capw_engine::store::ObjectStore), and: after a crash, the
//! store holds exactly the writes whose calls returned.

mod store;

pub use store::Store;
