//! capw's embedded object store: the state of the local mode in one redb file.
//!
//! Objects are Kubernetes-shaped JSON (`apiVersion`, `kind`, `metadata`, `spec`, `status`),
//! addressed by [`ObjectKey`] (kind, namespace, name). The store keeps the metadata the API
//! server would: `uid`, `creationTimestamp`, `resourceVersion` (one counter for the whole
//! store, bumped on every write), `generation` (bumped when `spec` changes), `finalizers` and
//! `deletionTimestamp`. Every write is one ACID transaction, durable when the call returns, and
//! announced to [`Store::watch`] subscribers afterwards.
//!
//! # Guarantees
//!
//! - A write that names a `resourceVersion` fails with [`StoreError::Conflict`] when the object
//!   has moved on: two writers never silently overwrite each other.
//! - A delete of an object with finalizers only marks it (`deletionTimestamp`); it disappears
//!   when the last finalizer is removed.
//! - After a crash, the store holds exactly the writes whose calls returned.

mod error;
mod meta;
mod objects;
mod overlay;
mod store;

pub use error::StoreError;
pub use meta::{ObjectKey, WatchEvent, WatchEventKind, has_label};
pub use objects::{Change, ObjectStore};
pub use overlay::Overlay;
pub use store::{Applied, Deleted, Store};
