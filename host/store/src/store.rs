//! The store: objects in a redb table, one transaction per write.

use std::path::Path;
use std::sync::Arc;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;
use tokio::sync::broadcast;

use capw_engine::store::meta::{finalizers, meta_str, metadata_mut, now_rfc3339};
use capw_engine::store::{
    Applied, Change, Deleted, ObjectKey, ObjectStore, StoreError, WatchEvent, WatchEventKind,
    has_label,
};

/// Objects by `kind/namespace/name`, as JSON.
const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");

/// The label index: one empty entry per label of every object, keyed by
/// [`label_index_key`], so the objects of a kind with one label value are a range, not a scan.
const LABELS: TableDefinition<&str, ()> = TableDefinition::new("labels");

/// Counters; `resourceVersion` is the last version handed out.
const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");
const RESOURCE_VERSION: &str = "resourceVersion";
/// The layout of [`LABELS`] the file's index was built with; a file written before the index
/// existed has none and is indexed when opened.
const LABEL_INDEX_VERSION: &str = "labelIndexVersion";
const LABEL_INDEX_CURRENT: u64 = 1;

/// How many events a slow watcher may fall behind before it is told it lagged (it then
/// relists, as a Kubernetes watcher would).
const WATCH_BUFFER: usize = 4096;

/// An open state file. Cheap to clone; every clone sees the same objects.
#[derive(Clone)]
pub struct Store {
    db: Arc<Database>,
    events: broadcast::Sender<WatchEvent>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the state file at `path`, creating it when missing.
    ///
    /// # Errors
    ///
    /// [`StoreError::Locked`] when another process has it open; [`StoreError::Database`] when
    /// it is not a state file or cannot be read.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = Database::create(path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => StoreError::Locked {
                path: path.display().to_string(),
            },
            other => db_error(other),
        })?;
        Self::from_database(db)
    }

    /// A store that lives in memory only, with the same semantics as a state file: for tests
    /// that run a pass without a file, and for the store contract.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when redb cannot set up its tables.
    pub fn in_memory() -> Result<Self, StoreError> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(db_error)?;
        Self::from_database(db)
    }

    /// The store over `db`: its tables made, its label index built when missing.
    fn from_database(db: Database) -> Result<Self, StoreError> {
        let tx = db.begin_write().map_err(db_error)?;
        {
            let objects = tx.open_table(OBJECTS).map_err(db_error)?;
            let mut labels = tx.open_table(LABELS).map_err(db_error)?;
            let mut counters = tx.open_table(COUNTERS).map_err(db_error)?;
            let indexed = counters
                .get(LABEL_INDEX_VERSION)
                .map_err(db_error)?
                .map(|v| v.value());
            if indexed != Some(LABEL_INDEX_CURRENT) {
                labels.retain(|_, _| false).map_err(db_error)?;
                for entry in objects.iter().map_err(db_error)? {
                    let (k, v) = entry.map_err(db_error)?;
                    let object = decode(v.value())?;
                    let key = ObjectKey::of(&object)?;
                    debug_assert_eq!(key.db_key(), k.value());
                    for index_key in label_index_keys(&key, &object) {
                        labels.insert(index_key.as_str(), ()).map_err(db_error)?;
                    }
                }
                counters
                    .insert(LABEL_INDEX_VERSION, LABEL_INDEX_CURRENT)
                    .map_err(db_error)?;
            }
        }
        tx.commit().map_err(db_error)?;
        let (events, _) = broadcast::channel(WATCH_BUFFER);
        Ok(Store {
            db: Arc::new(db),
            events,
        })
    }

    /// Every change from now on. A receiver that falls more than a few thousand events behind
    /// gets `Lagged` and should list again.
    pub fn watch(&self) -> broadcast::Receiver<WatchEvent> {
        self.events.subscribe()
    }

    /// The object at `key`, if any.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when the state file cannot be read.
    pub fn get(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        let tx = self.db.begin_read().map_err(db_error)?;
        let table = tx.open_table(OBJECTS).map_err(db_error)?;
        let found = table.get(key.db_key().as_str()).map_err(db_error)?;
        found.map(|v| decode(v.value())).transpose()
    }

    /// Every object of `kind`, in `namespace` when given, ordered by namespace and name.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when the state file cannot be read.
    pub fn list(&self, kind: &str, namespace: Option<&str>) -> Result<Vec<Value>, StoreError> {
        let prefix = ObjectKey::prefix(kind, namespace);
        let tx = self.db.begin_read().map_err(db_error)?;
        let table = tx.open_table(OBJECTS).map_err(db_error)?;
        let mut out = Vec::new();
        for entry in table.range(prefix.as_str()..).map_err(db_error)? {
            let (k, v) = entry.map_err(db_error)?;
            if !k.value().starts_with(&prefix) {
                break;
            }
            out.push(decode(v.value())?);
        }
        Ok(out)
    }

    /// Every object of `kind` in `namespace` whose label `label` is `value`, ordered by name;
    /// read through the label index, so its cost follows the objects found, not the objects
    /// stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when the state file cannot be read.
    pub fn list_labelled(
        &self,
        kind: &str,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> Result<Vec<Value>, StoreError> {
        let prefix = label_index_prefix(kind, namespace, label, value);
        let tx = self.db.begin_read().map_err(db_error)?;
        let labels = tx.open_table(LABELS).map_err(db_error)?;
        let objects = tx.open_table(OBJECTS).map_err(db_error)?;
        let mut out = Vec::new();
        for entry in labels.range(prefix.as_str()..).map_err(db_error)? {
            let (k, _) = entry.map_err(db_error)?;
            let Some(name) = k.value().strip_prefix(prefix.as_str()) else {
                break;
            };
            let key = ObjectKey::namespaced(kind, namespace, name);
            if let Some(v) = objects.get(key.db_key().as_str()).map_err(db_error)? {
                let object = decode(v.value())?;
                // A value holding the separator could make another entry look like a match.
                if has_label(&object, label, value) {
                    out.push(object);
                }
            }
        }
        Ok(out)
    }

    /// The last resourceVersion handed out.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when the state file cannot be read.
    pub fn resource_version(&self) -> Result<u64, StoreError> {
        let tx = self.db.begin_read().map_err(db_error)?;
        let table = tx.open_table(COUNTERS).map_err(db_error)?;
        let v = table.get(RESOURCE_VERSION).map_err(db_error)?;
        Ok(v.map_or(0, |v| v.value()))
    }

    /// Creates `object`; the store fills `uid`, `creationTimestamp`, `resourceVersion` and
    /// `generation` (1). Returns the stored object.
    ///
    /// # Errors
    ///
    /// [`StoreError::AlreadyExists`], [`StoreError::Invalid`], [`StoreError::Database`].
    pub fn create(&self, object: Value) -> Result<Value, StoreError> {
        let key = ObjectKey::of(&object)?;
        self.write(&key, |existing| match existing {
            Some(_) => Err(StoreError::AlreadyExists(key.clone())),
            None => Ok(Some(object)),
        })
        .map(|(v, _)| v.expect("created"))
    }

    /// Creates `object`, or makes the stored one's `spec`, labels and annotations (and any
    /// other top-level field but `status` and `metadata`) those of `object`; the status and
    /// the store's metadata stay. `generation` goes up when the spec changes.
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`], [`StoreError::Database`].
    pub fn apply(&self, object: Value) -> Result<(Value, Applied), StoreError> {
        let key = ObjectKey::of(&object)?;
        let mut outcome = Applied::Created;
        let (stored, _) = self.write(&key, |existing| {
            let Some(existing) = existing else {
                return Ok(Some(object));
            };
            let mut merged = existing.clone();
            let (Some(target), Some(source)) = (merged.as_object_mut(), object.as_object()) else {
                return Err(StoreError::Invalid("not a JSON object".into()));
            };
            target.retain(|k, _| k == "metadata" || k == "status");
            for (k, v) in source {
                if k != "metadata" && k != "status" {
                    target.insert(k.clone(), v.clone());
                }
            }
            let meta = metadata_mut(&mut merged)?;
            for field in ["labels", "annotations"] {
                match object.get("metadata").and_then(|m| m.get(field)) {
                    Some(v) => {
                        meta.insert(field.into(), v.clone());
                    }
                    None => {
                        meta.remove(field);
                    }
                }
            }
            if &merged == existing {
                outcome = Applied::Unchanged;
                Ok(None)
            } else {
                outcome = Applied::Configured;
                Ok(Some(merged))
            }
        })?;
        Ok((stored.expect("applied"), outcome))
    }

    /// Read-modify-write of the object at `key` in one transaction: `change` gets the stored
    /// object and edits it. `metadata.uid`, `creationTimestamp` and `resourceVersion` are the
    /// store's and cannot be changed; `generation` goes up when `spec` changes. When the object
    /// is being deleted and `change` removes its last finalizer, it is removed. Returns the
    /// stored object, or `None` when it was removed.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`], what `change` returns, [`StoreError::Database`].
    pub fn update(
        &self,
        key: &ObjectKey,
        change: impl FnOnce(&mut Value) -> Result<(), StoreError>,
    ) -> Result<Option<Value>, StoreError> {
        self.write(key, |existing| {
            let existing = existing.ok_or_else(|| StoreError::NotFound(key.clone()))?;
            let mut changed = existing.clone();
            change(&mut changed)?;
            if ObjectKey::of(&changed)? != *key {
                return Err(StoreError::Invalid(format!(
                    "{key}: the name cannot change"
                )));
            }
            Ok((&changed != existing).then_some(changed))
        })
        .map(|(v, _)| v)
    }

    /// Sets the `status` of the object at `key`, if it still has `resource_version` (when
    /// given).
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`], [`StoreError::Conflict`], [`StoreError::Database`].
    pub fn update_status(
        &self,
        key: &ObjectKey,
        status: Value,
        resource_version: Option<&str>,
    ) -> Result<Value, StoreError> {
        self.update(key, |object| {
            check_version(key, object, resource_version)?;
            object["status"] = status;
            Ok(())
        })?
        .ok_or_else(|| StoreError::NotFound(key.clone()))
    }

    /// Deletes the object at `key`: removes it, or, when it has finalizers, marks it with
    /// `deletionTimestamp` (once) for its controllers to finish.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`], [`StoreError::Database`].
    pub fn delete(&self, key: &ObjectKey) -> Result<Deleted, StoreError> {
        let mut outcome = Deleted::Removed;
        self.write(key, |existing| {
            let existing = existing.ok_or_else(|| StoreError::NotFound(key.clone()))?;
            if finalizers(existing).is_empty() {
                return Ok(Some(Value::Null));
            }
            outcome = Deleted::Marked;
            if meta_str(existing, "deletionTimestamp").is_some() {
                return Ok(None);
            }
            let mut marked = existing.clone();
            metadata_mut(&mut marked)?.insert("deletionTimestamp".into(), now_rfc3339().into());
            Ok(Some(marked))
        })?;
        Ok(outcome)
    }

    /// One write transaction on `key`. `decide` sees the stored object and answers what to
    /// store: `None` to leave it, `Some(Null)` to remove it, `Some(object)` to write it with
    /// the store's metadata. Returns the object as stored afterwards and the event announced.
    fn write(
        &self,
        key: &ObjectKey,
        decide: impl FnOnce(Option<&Value>) -> Result<Option<Value>, StoreError>,
    ) -> Result<(Option<Value>, Option<WatchEvent>), StoreError> {
        let db_key = key.db_key();
        let tx = self.db.begin_write().map_err(db_error)?;
        let (stored, event) = {
            let mut objects = tx.open_table(OBJECTS).map_err(db_error)?;
            let mut labels = tx.open_table(LABELS).map_err(db_error)?;
            let mut counters = tx.open_table(COUNTERS).map_err(db_error)?;
            let existing = objects
                .get(db_key.as_str())
                .map_err(db_error)?
                .map(|v| decode(v.value()))
                .transpose()?;
            let Some(mut next) = decide(existing.as_ref())? else {
                return Ok((existing, None));
            };
            let version = counters
                .get(RESOURCE_VERSION)
                .map_err(db_error)?
                .map_or(0, |v| v.value())
                + 1;
            counters
                .insert(RESOURCE_VERSION, version)
                .map_err(db_error)?;
            let removed = next.is_null()
                || (meta_str(&next, "deletionTimestamp").is_some() && finalizers(&next).is_empty());
            let old_labels = existing
                .as_ref()
                .map(|e| label_index_keys(key, e))
                .unwrap_or_default();
            let new_labels = if removed {
                Vec::new()
            } else {
                label_index_keys(key, &next)
            };
            for gone in old_labels.iter().filter(|k| !new_labels.contains(k)) {
                labels.remove(gone.as_str()).map_err(db_error)?;
            }
            for added in new_labels.iter().filter(|k| !old_labels.contains(k)) {
                labels.insert(added.as_str(), ()).map_err(db_error)?;
            }
            let kind = if removed {
                objects.remove(db_key.as_str()).map_err(db_error)?;
                next = Value::Null;
                WatchEventKind::Deleted
            } else {
                stamp(&mut next, existing.as_ref(), version)?;
                let bytes =
                    serde_json::to_vec(&next).map_err(|e| StoreError::Invalid(e.to_string()))?;
                objects
                    .insert(db_key.as_str(), bytes.as_slice())
                    .map_err(db_error)?;
                if existing.is_some() {
                    WatchEventKind::Modified
                } else {
                    WatchEventKind::Added
                }
            };
            let event = WatchEvent {
                kind,
                key: key.clone(),
                resource_version: version,
            };
            ((!next.is_null()).then_some(next), event)
        };
        tx.commit().map_err(db_error)?;
        // No watcher is fine: events are for whoever listens.
        let _ = self.events.send(event.clone());
        Ok((stored, Some(event)))
    }
}

/// Writes the store's metadata into `next`: identity kept from `existing` (or made), the new
/// resourceVersion, and the generation (bumped when the spec changed).
fn stamp(next: &mut Value, existing: Option<&Value>, version: u64) -> Result<(), StoreError> {
    let spec_changed = existing.is_none_or(|e| e.get("spec") != next.get("spec"));
    let old_generation = existing
        .and_then(|e| e.get("metadata"))
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let meta = metadata_mut(next)?;
    match existing {
        Some(existing) => {
            for field in ["uid", "creationTimestamp", "deletionTimestamp"] {
                match meta_str(existing, field) {
                    Some(v) => meta.insert(field.into(), v.into()),
                    None if field == "deletionTimestamp" => {
                        // Only the store marks deletion, and it does so in `delete`.
                        continue;
                    }
                    None => meta.remove(field),
                };
            }
        }
        None => {
            meta.insert("uid".into(), uuid::Uuid::new_v4().to_string().into());
            meta.insert("creationTimestamp".into(), now_rfc3339().into());
            meta.remove("deletionTimestamp");
        }
    }
    meta.insert("resourceVersion".into(), version.to_string().into());
    let generation = if spec_changed {
        old_generation + 1
    } else {
        old_generation.max(1)
    };
    meta.insert("generation".into(), generation.into());
    Ok(())
}

/// The label index's entries for `object` at `key`: one per string label.
fn label_index_keys(key: &ObjectKey, object: &Value) -> Vec<String> {
    object
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(label, value)| {
                    let prefix =
                        label_index_prefix(&key.kind, &key.namespace, label, value.as_str()?);
                    Some(prefix + &key.name)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The prefix of the label index's entries of `kind` in `namespace` labelled `label=value`.
/// NUL separates the parts: no kind, namespace, label or value holds one, while `/` and `=`
/// appear in label keys and values.
fn label_index_prefix(kind: &str, namespace: &str, label: &str, value: &str) -> String {
    format!("{kind}\0{namespace}\0{label}\0{value}\0")
}

fn check_version(
    key: &ObjectKey,
    object: &Value,
    expected: Option<&str>,
) -> Result<(), StoreError> {
    let actual = meta_str(object, "resourceVersion").unwrap_or_default();
    match expected {
        Some(expected) if expected != actual => Err(StoreError::Conflict {
            key: key.clone(),
            expected: expected.into(),
            actual: actual.into(),
        }),
        _ => Ok(()),
    }
}

fn decode(bytes: &[u8]) -> Result<Value, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Database(Box::new(e)))
}

#[async_trait::async_trait]
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

/// A database failure as a [`StoreError`].
fn db_error(error: impl Into<redb::Error>) -> StoreError {
    StoreError::Database(Box::new(error.into()))
}
