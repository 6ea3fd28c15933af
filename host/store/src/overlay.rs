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

use crate::error::StoreError;
use crate::meta::ObjectKey;
use crate::objects::{Change, ObjectStore};
use crate::store::{Applied, Deleted};

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::Store;

    fn object(kind: &str, name: &str, spec: Value) -> Value {
        json!({"kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": spec})
    }

    #[tokio::test]
    async fn reads_see_the_overlay_and_writes_never_reach_the_base() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.redb")).unwrap();
        store
            .create(object("Cluster", "a", json!({"n": 1})))
            .unwrap();
        store
            .create(object("Cluster", "b", json!({"n": 1})))
            .unwrap();
        let overlay = Overlay::new(Arc::new(store.clone()));

        let (_, applied) = overlay
            .apply(object("Cluster", "a", json!({"n": 2})))
            .await
            .unwrap();
        assert_eq!(applied, Applied::Configured);
        overlay
            .apply(object("Cluster", "c", json!({"n": 3})))
            .await
            .unwrap();
        overlay
            .delete(&ObjectKey::namespaced("Cluster", "ns", "b"))
            .await
            .unwrap();
        let names: Vec<(String, i64)> = (overlay.list("Cluster", Some("ns")).await.unwrap())
            .iter()
            .map(|o| {
                let name = o["metadata"]["name"].as_str().unwrap().to_owned();
                (name, o["spec"]["n"].as_i64().unwrap())
            })
            .collect();
        assert_eq!(names, [("a".into(), 2), ("c".into(), 3)]);
        // The uid the base gave `a` is kept, as the store keeps it on apply.
        let a = ObjectKey::namespaced("Cluster", "ns", "a");
        assert_eq!(
            overlay.get(&a).await.unwrap().unwrap()["metadata"]["uid"],
            store.get(&a).unwrap().unwrap()["metadata"]["uid"]
        );

        // The base is as it was.
        let base: Vec<i64> = (store.list("Cluster", Some("ns")).unwrap().iter())
            .map(|o| o["spec"]["n"].as_i64().unwrap())
            .collect();
        assert_eq!(base, [1, 1]);
    }
}
