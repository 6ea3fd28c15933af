//! The object API both modes reconcile against: [`ObjectStore`], its keys and its errors.
//!
//! Objects are Kubernetes-shaped JSON (`apiVersion`, `kind`, `metadata`, `spec`, `status`),
//! addressed by [`ObjectKey`] (kind, namespace, name), with the metadata the API server
//! keeps: `uid`, `creationTimestamp`, `resourceVersion`, `generation`, `finalizers` and
//! `deletionTimestamp`. The local mode's redb file (capw-store) and the Kubernetes mode's API
//! server client (capw-kube) implement it; [`Overlay`] lays writes over either for a dry run.
//!
//! # Guarantees every implementation gives
//!
//! - A write that names a `resourceVersion` fails with [`StoreError::Conflict`] when the object
//!   has moved on: two writers never silently overwrite each other.
//! - A delete of an object with finalizers only marks it (`deletionTimestamp`); it disappears
//!   when the last finalizer is removed.

mod error;
mod key;
pub mod management;
pub mod meta;
mod objects;
mod overlay;
mod typed;

pub use error::StoreError;
pub use management::{ManagementCluster, ObjectRef, Owner};
pub use meta::{ObjectKey, WatchEvent, WatchEventKind, has_label, meta_str};
pub use objects::{Applied, Change, Deleted, ObjectStore};
pub use overlay::Overlay;
pub use typed::{Kind, TypedObjects, cluster_key_of, decode, key_of};
