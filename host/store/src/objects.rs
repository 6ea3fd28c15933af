//! [`ObjectStore`]: the object API the reconciler works against, whichever holds the objects.
//!
//! The embedded [`Store`] implements it for the local mode; a Kubernetes API server client
//! implements it for the Kubernetes mode. The reconciler only ever reads, creates, changes
//! and deletes objects through it, so both modes share one executor.

use async_trait::async_trait;
use serde_json::Value;

use crate::error::StoreError;
use crate::meta::{ObjectKey, has_label};
use crate::store::{Applied, Deleted, Store};

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

#[async_trait]
impl ObjectStore for Store {
    async fn get(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        Store::get(self, key)
    }

    async fn list(&self, kind: &str, namespace: Option<&str>) -> Result<Vec<Value>, StoreError> {
        Store::list(self, kind, namespace)
    }

    async fn list_labelled(
        &self,
        kind: &str,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> Result<Vec<Value>, StoreError> {
        Store::list_labelled(self, kind, namespace, label, value)
    }

    async fn create(&self, object: Value) -> Result<Value, StoreError> {
        Store::create(self, object)
    }

    async fn apply(&self, object: Value) -> Result<(Value, Applied), StoreError> {
        Store::apply(self, object)
    }

    async fn update(
        &self,
        key: &ObjectKey,
        change: Change<'_>,
    ) -> Result<Option<Value>, StoreError> {
        // One transaction: nobody can write in between, so `change` runs once.
        Store::update(self, key, change)
    }

    async fn update_status(
        &self,
        key: &ObjectKey,
        status: Value,
        resource_version: Option<&str>,
    ) -> Result<Value, StoreError> {
        Store::update_status(self, key, status, resource_version)
    }

    async fn delete(&self, key: &ObjectKey) -> Result<Deleted, StoreError> {
        Store::delete(self, key)
    }
}
