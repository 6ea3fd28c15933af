//! [`ObjectStore`]: the object API the reconciler works against, whichever holds the objects.
//!
//! The embedded [`Store`] implements it for the local mode; a Kubernetes API server client
//! implements it for the Kubernetes mode. The reconciler only ever reads, creates, changes
//! and deletes objects through it, so both modes share one executor.

use async_trait::async_trait;
use serde_json::Value;

use super::error::StoreError;
use super::meta::{ObjectKey, has_label};

/// The outcome of [`ObjectStore::apply`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// There was no such object; it is stored now.
    Created,
    /// It was there and is changed.
    Configured,
    /// It was there as given; nothing was written.
    Unchanged,
}

/// The outcome of [`ObjectStore::delete`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleted {
    /// The object is gone.
    Removed,
    /// The object has finalizers: it is marked with `deletionTimestamp` and goes when they do.
    Marked,
}

/// A change to an object, applied by [`ObjectStore::update`]. It may be called more than
/// once (again on a fresh copy when a concurrent writer won), so it must only look at the
/// object it is given.
pub type Change<'a> = &'a mut (dyn FnMut(&mut Value) -> Result<(), StoreError> + Send);

/// Kubernetes-shaped objects by [`ObjectKey`], with the API server's semantics:
/// `resourceVersion`, `generation`, finalizers and `deletionTimestamp`.
#[async_trait]
pub trait ObjectStore: Send + Sync + std::fmt::Debug {
    /// The object at `key`, if any.
    async fn get(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError>;

    /// The object at `key` as the store holds it now, past any cache of it: for a read whose
    /// answer must include what another client has just written (admission's look-up of the
    /// ClusterClass a `kubectl apply` created a moment before the Cluster). The default is
    /// [`ObjectStore::get`], for stores without a cache.
    async fn get_fresh(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        self.get(key).await
    }

    /// Every object of `kind`, in `namespace` when given, ordered by namespace and name.
    async fn list(&self, kind: &str, namespace: Option<&str>) -> Result<Vec<Value>, StoreError>;

    /// Every object of `kind` in `namespace` whose label `label` is `value`, ordered by name:
    /// what a pass reads of one cluster (its Machines by `capw.dev/cluster`). A store should
    /// answer from an index, so the cost of one cluster's read does not grow with the number
    /// of clusters; the default lists the namespace and filters.
    async fn list_labelled(
        &self,
        kind: &str,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> Result<Vec<Value>, StoreError> {
        let mut all = self.list(kind, Some(namespace)).await?;
        all.retain(|o| has_label(o, label, value));
        Ok(all)
    }

    /// Creates `object`; [`StoreError::AlreadyExists`] when it exists.
    async fn create(&self, object: Value) -> Result<Value, StoreError>;

    /// Creates `object`, or replaces its spec (and labels and annotations) when it exists.
    async fn apply(&self, object: Value) -> Result<(Value, Applied), StoreError>;

    /// Changes the object at `key` with `change`, retried on a fresh copy when another writer
    /// got there first. A change that changes nothing writes nothing. When the object is being
    /// deleted and `change` removes its last finalizer, it is removed. Returns the stored
    /// object, or `None` when it was removed.
    async fn update(
        &self,
        key: &ObjectKey,
        change: Change<'_>,
    ) -> Result<Option<Value>, StoreError>;

    /// Sets the `status` of the object at `key`, if it still has `resource_version` (when
    /// given).
    async fn update_status(
        &self,
        key: &ObjectKey,
        status: Value,
        resource_version: Option<&str>,
    ) -> Result<Value, StoreError>;

    /// Deletes the object at `key`, or marks it with `deletionTimestamp` when it has
    /// finalizers.
    async fn delete(&self, key: &ObjectKey) -> Result<Deleted, StoreError>;
}
