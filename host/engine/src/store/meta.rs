//! Object identity and the metadata the store maintains.

use serde_json::{Map, Value};

use super::error::StoreError;

pub use super::key::ObjectKey;

impl ObjectKey {
    /// The key of `object`, from its `kind`, `metadata.namespace` and `metadata.name`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] when `kind` or `metadata.name` is missing or empty.
    pub fn of(object: &Value) -> Result<Self, StoreError> {
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| StoreError::Invalid("no kind".into()))?;
        let meta = object.get("metadata");
        let name = meta
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| StoreError::Invalid(format!("{kind} without metadata.name")))?;
        let namespace = meta
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        Ok(Self::namespaced(kind, namespace, name))
    }
}

/// What happened to an object, as announced to watchers after the write committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchEvent {
    /// What happened.
    pub kind: WatchEventKind,
    /// To which object.
    pub key: ObjectKey,
    /// The store's resourceVersion after the write.
    pub resource_version: u64,
}

/// The kind of change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEventKind {
    /// Created.
    Added,
    /// Written again (spec, metadata or status).
    Modified,
    /// Removed from the store.
    Deleted,
}

/// The `metadata` map of `object`, created when missing.
pub fn metadata_mut(object: &mut Value) -> Result<&mut Map<String, Value>, StoreError> {
    let map = object
        .as_object_mut()
        .ok_or_else(|| StoreError::Invalid("not a JSON object".into()))?;
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    meta.as_object_mut()
        .ok_or_else(|| StoreError::Invalid("metadata is not an object".into()))
}

/// A string field of `metadata`.
pub fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// Whether `object`'s label `label` is `value`.
pub fn has_label(object: &Value, label: &str, value: &str) -> bool {
    object
        .pointer("/metadata/labels")
        .and_then(|l| l.get(label))
        .and_then(Value::as_str)
        == Some(value)
}

/// `metadata.finalizers`, empty when absent.
pub fn finalizers(object: &Value) -> Vec<String> {
    object
        .get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Now, as Kubernetes writes timestamps: RFC 3339, UTC, whole seconds.
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}
