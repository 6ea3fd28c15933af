//! [`Overlay`]: a store that reads through to another and keeps its own writes, for a dry run.
//!
//! `capw apply` checks a manifest's objects as if they were stored, against everything
//! already stored, before it stores any of them: it puts them into an overlay of the state
//! file, runs the checks there (which may load providers and write their status) and throws
//! the overlay away.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;

use super::error::StoreError;
use super::meta::ObjectKey;
use super::objects::{Applied, Change, Deleted, ObjectStore};

/// Reads from `base` unless the overlay wrote the object (or removed it); writes never
/// reach `base`.
#[derive(Debug)]
pub struct Overlay {
    base: Arc<dyn ObjectStore>,
    /// What the overlay holds instead of `base`: `None` for an object it removed.
    written: Mutex<BTreeMap<ObjectKey, Option<Value>>>,
}

impl Overlay {
    /// An overlay over `base` that holds nothing of its own yet.
    pub fn new(base: Arc<dyn ObjectStore>) -> Self {
        Overlay {
            base,
            written: Mutex::default(),
        }
    }

    fn written(&self, key: &ObjectKey) -> Option<Option<Value>> {
        self.written.lock().expect("overlay").get(key).cloned()
    }

    fn put(&self, key: ObjectKey, object: Option<Value>) {
        self.written.lock().expect("overlay").insert(key, object);
    }
}

#[async_trait]
impl ObjectStore for Overlay {
    async fn get(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        match self.written(key) {
            Some(object) => Ok(object),
            None => self.base.get(key).await,
        }
    }

    async fn get_fresh(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        match self.written(key) {
            Some(object) => Ok(object),
            None => self.base.get_fresh(key).await,
        }
    }

    async fn list(&self, kind: &str, namespace: Option<&str>) -> Result<Vec<Value>, StoreError> {
        let mut all = BTreeMap::new();
        for object in self.base.list(kind, namespace).await? {
            all.insert(ObjectKey::of(&object)?, Some(object));
        }
        let written = self.written.lock().expect("overlay");
        let ours = written
            .iter()
            .filter(|(k, _)| k.kind == kind && namespace.is_none_or(|ns| k.namespace == ns));
        for (key, object) in ours {
            all.insert(key.clone(), object.clone());
        }
        Ok(all.into_values().flatten().collect())
    }

    async fn create(&self, object: Value) -> Result<Value, StoreError> {
        let key = ObjectKey::of(&object)?;
        if self.get(&key).await?.is_some() {
            return Err(StoreError::AlreadyExists(key));
        }
        self.put(key, Some(object.clone()));
        Ok(object)
    }

    async fn apply(&self, mut object: Value) -> Result<(Value, Applied), StoreError> {
        let key = ObjectKey::of(&object)?;
        let outcome = match self.get(&key).await? {
            None => Applied::Created,
            Some(old) if old.get("spec") == object.get("spec") => Applied::Unchanged,
            Some(old) => {
                // What the store keeps of an object that is applied again: its identity and
                // status.
                for field in ["uid", "creationTimestamp", "finalizers"] {
                    if let Some(v) = old.pointer(&format!("/metadata/{field}")) {
                        object["metadata"][field] = v.clone();
                    }
                }
                if let Some(status) = old.get("status") {
                    object["status"] = status.clone();
                }
                Applied::Configured
            }
        };
        if outcome != Applied::Unchanged {
            self.put(key, Some(object.clone()));
        }
        Ok((object, outcome))
    }

    async fn update(
        &self,
        key: &ObjectKey,
        change: Change<'_>,
    ) -> Result<Option<Value>, StoreError> {
        let Some(mut object) = self.get(key).await? else {
            return Err(StoreError::NotFound(key.clone()));
        };
        change(&mut object)?;
        self.put(key.clone(), Some(object.clone()));
        Ok(Some(object))
    }

    async fn update_status(
        &self,
        key: &ObjectKey,
        status: Value,
        _resource_version: Option<&str>,
    ) -> Result<Value, StoreError> {
        let Some(mut object) = self.get(key).await? else {
            return Err(StoreError::NotFound(key.clone()));
        };
        object["status"] = status;
        self.put(key.clone(), Some(object.clone()));
        Ok(object)
    }

    async fn delete(&self, key: &ObjectKey) -> Result<Deleted, StoreError> {
        if self.get(key).await?.is_none() {
            return Err(StoreError::NotFound(key.clone()));
        }
        self.put(key.clone(), None);
        Ok(Deleted::Removed)
    }
}
