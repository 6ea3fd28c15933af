//! [`KubeStore`]: the executor's [`ObjectStore`] over a Kubernetes API server.
//!
//! Every read goes to the API server (no cache), so a pass decides on what is stored now;
//! a controller restart or a leader change never acts on stale objects.

use std::time::Duration;

use async_trait::async_trait;
use capw_store::{Applied, Change, Deleted, ObjectKey, ObjectStore, StoreError};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::{Value, json};

use crate::kinds::{CLUSTER_LABEL, Kind, kind};

/// How often [`ObjectStore::update`] tries again after a conflict before giving up: each
/// retry reads the object afresh, so only a writer changing it continuously can exhaust it.
const CONFLICT_RETRIES: usize = 8;

/// Pause between conflict retries.
const CONFLICT_PAUSE: Duration = Duration::from_millis(20);

/// The Kubernetes API server as the executor's object store.
///
/// # Guarantees
///
/// - Writes name the `resourceVersion` they read: two writers never overwrite each other.
/// - `update` writes the object and, when it changed `status`, the status subresource.
/// - Machines, cluster Secrets and ClusterInfrastructures created for a Cluster (the
///   `capw.dev/cluster` label) get an owner reference to it, so the controller sees their
///   changes and the garbage collector removes them with it.
#[derive(Clone)]
pub struct KubeStore {
    client: Client,
}

impl std::fmt::Debug for KubeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeStore").finish_non_exhaustive()
    }
}

impl KubeStore {
    /// A store talking to the API server of `client`.
    pub fn new(client: Client) -> Self {
        KubeStore { client }
    }

    fn api(
        &self,
        kind_name: &str,
        namespace: Option<&str>,
    ) -> Result<(Api<DynamicObject>, Kind), StoreError> {
        let k = kind(kind_name).ok_or_else(|| {
            StoreError::Invalid(format!(
                "kind {kind_name} is not served by the Kubernetes store"
            ))
        })?;
        let api = match namespace {
            Some(ns) if k.namespaced => Api::namespaced_with(self.client.clone(), ns, &k.resource),
            _ => Api::all_with(self.client.clone(), &k.resource),
        };
        Ok((api, k))
    }

    fn api_for(&self, key: &ObjectKey) -> Result<(Api<DynamicObject>, Kind), StoreError> {
        self.api(&key.kind, Some(&key.namespace))
    }

    /// Adds the owner reference to the Cluster named by the object's cluster label.
    async fn own(&self, object: &mut Value, k: &Kind) -> Result<(), StoreError> {
        if !k.owned_by_cluster || object.pointer("/metadata/ownerReferences").is_some() {
            return Ok(());
        }
        let Some(cluster) = object
            .pointer("/metadata/labels")
            .and_then(|l| l.get(CLUSTER_LABEL))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(());
        };
        let namespace = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let key = ObjectKey::namespaced("Cluster", &namespace, &cluster);
        let Some(owner) = self.get(&key).await? else {
            return Ok(());
        };
        let uid = owner.pointer("/metadata/uid").cloned().unwrap_or_default();
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert(
                "ownerReferences".into(),
                json!([{
                    "apiVersion": "capw.dev/v1alpha1",
                    "kind": "Cluster",
                    "name": cluster,
                    "uid": uid,
                    "controller": true,
                    "blockOwnerDeletion": true,
                }]),
            );
        }
        Ok(())
    }
}

/// The API server's answer as a store error, keeping the source.
fn api_error(key: &ObjectKey, e: kube::Error) -> StoreError {
    match &e {
        kube::Error::Api(s) if s.code == 404 => StoreError::NotFound(key.clone()),
        kube::Error::Api(s) if s.code == 409 && s.reason == "AlreadyExists" => {
            StoreError::AlreadyExists(key.clone())
        }
        kube::Error::Api(s) if s.code == 409 => StoreError::Conflict {
            key: key.clone(),
            expected: String::new(),
            actual: s.message.clone(),
        },
        kube::Error::Api(s) if s.code == 422 || s.code == 400 => {
            StoreError::Invalid(format!("{key}: {}", s.message))
        }
        _ => StoreError::Backend(Box::new(e)),
    }
}

/// An object as the JSON the executor works with, with `apiVersion` and `kind` always set
/// (list responses leave them out of items).
fn to_value(object: DynamicObject, k: &Kind) -> Result<Value, StoreError> {
    let mut value = serde_json::to_value(object).map_err(|e| StoreError::Invalid(e.to_string()))?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), k.resource.api_version.clone().into());
        map.insert("kind".into(), k.resource.kind.clone().into());
    }
    Ok(value)
}

fn from_value(value: Value) -> Result<DynamicObject, StoreError> {
    serde_json::from_value(value).map_err(|e| StoreError::Invalid(e.to_string()))
}

/// Everything of an object but its `status`, for telling what a change touched.
fn without_status(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(map) = v.as_object_mut() {
        map.remove("status");
    }
    v
}

fn resource_version(v: &Value) -> Option<String> {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn finalizers_empty(v: &Value) -> bool {
    v.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

/// `existing` with the fields of `desired` an apply owns: everything but metadata and status,
/// and the labels and annotations.
fn merged(existing: &Value, desired: &Value) -> Value {
    let mut out = existing.clone();
    if let (Some(target), Some(source)) = (out.as_object_mut(), desired.as_object()) {
        target.retain(|k, _| k == "metadata" || k == "status" || k == "apiVersion" || k == "kind");
        for (k, v) in source {
            if k != "metadata" && k != "status" {
                target.insert(k.clone(), v.clone());
            }
        }
        if let Some(meta) = target.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in ["labels", "annotations"] {
                match desired.pointer(&format!("/metadata/{field}")) {
                    Some(v) => meta.insert(field.into(), v.clone()),
                    None => meta.remove(field),
                };
            }
        }
    }
    out
}

#[async_trait]
impl ObjectStore for KubeStore {
    async fn get(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        let (api, k) = self.api_for(key)?;
        match api.get_opt(&key.name).await {
            Ok(Some(o)) => Ok(Some(to_value(o, &k)?)),
            Ok(None) => Ok(None),
            Err(e) => Err(api_error(key, e)),
        }
    }

    async fn list(
        &self,
        kind_name: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, StoreError> {
        let (api, k) = self.api(kind_name, namespace)?;
        let list = api.list(&ListParams::default()).await.map_err(|e| {
            api_error(
                &ObjectKey::namespaced(kind_name, namespace.unwrap_or(""), ""),
                e,
            )
        })?;
        let mut items = list
            .items
            .into_iter()
            .map(|o| to_value(o, &k))
            .collect::<Result<Vec<_>, _>>()?;
        items.sort_by(|a, b| {
            let key = |v: &Value| ObjectKey::of(v).ok();
            key(a).cmp(&key(b))
        });
        Ok(items)
    }

    async fn create(&self, mut object: Value) -> Result<Value, StoreError> {
        let key = ObjectKey::of(&object)?;
        let (api, k) = self.api_for(&key)?;
        self.own(&mut object, &k).await?;
        let created = api
            .create(&PostParams::default(), &from_value(object)?)
            .await
            .map_err(|e| api_error(&key, e))?;
        to_value(created, &k)
    }

    async fn apply(&self, mut object: Value) -> Result<(Value, Applied), StoreError> {
        let key = ObjectKey::of(&object)?;
        let (api, k) = self.api_for(&key)?;
        for _ in 0..CONFLICT_RETRIES {
            let Some(existing) = self.get(&key).await? else {
                self.own(&mut object, &k).await?;
                match api
                    .create(&PostParams::default(), &from_value(object.clone())?)
                    .await
                {
                    Ok(created) => return Ok((to_value(created, &k)?, Applied::Created)),
                    Err(e) => match api_error(&key, e) {
                        StoreError::AlreadyExists(_) => continue,
                        other => return Err(other),
                    },
                }
            };
            let next = merged(&existing, &object);
            if next == existing {
                return Ok((existing, Applied::Unchanged));
            }
            match api
                .replace(&key.name, &PostParams::default(), &from_value(next)?)
                .await
            {
                Ok(stored) => return Ok((to_value(stored, &k)?, Applied::Configured)),
                Err(e) => match api_error(&key, e) {
                    StoreError::Conflict { .. } => tokio::time::sleep(CONFLICT_PAUSE).await,
                    other => return Err(other),
                },
            }
        }
        Err(conflict_exhausted(&key))
    }

    async fn update(
        &self,
        key: &ObjectKey,
        change: Change<'_>,
    ) -> Result<Option<Value>, StoreError> {
        let (api, k) = self.api_for(key)?;
        for _ in 0..CONFLICT_RETRIES {
            let existing = self
                .get(key)
                .await?
                .ok_or_else(|| StoreError::NotFound(key.clone()))?;
            let mut changed = existing.clone();
            change(&mut changed)?;
            if ObjectKey::of(&changed)? != *key {
                return Err(StoreError::Invalid(format!(
                    "{key}: the name cannot change"
                )));
            }
            if changed == existing {
                return Ok(Some(existing));
            }
            let mut stored = existing.clone();
            if without_status(&changed) != without_status(&existing) {
                match api
                    .replace(
                        &key.name,
                        &PostParams::default(),
                        &from_value(changed.clone())?,
                    )
                    .await
                {
                    Ok(o) => stored = to_value(o, &k)?,
                    Err(e) => match api_error(key, e) {
                        StoreError::Conflict { .. } => {
                            tokio::time::sleep(CONFLICT_PAUSE).await;
                            continue;
                        }
                        // Removing the last finalizer of an object being deleted removes it.
                        StoreError::NotFound(_) => return Ok(None),
                        other => return Err(other),
                    },
                }
                let deleting = stored.pointer("/metadata/deletionTimestamp").is_some();
                if deleting && finalizers_empty(&stored) {
                    return Ok(None);
                }
            }
            if k.status_subresource && changed.get("status") != existing.get("status") {
                let mut next = stored.clone();
                next["status"] = changed.get("status").cloned().unwrap_or(Value::Null);
                match api
                    .replace_status(&key.name, &PostParams::default(), &from_value(next)?)
                    .await
                {
                    Ok(o) => stored = to_value(o, &k)?,
                    Err(e) => match api_error(key, e) {
                        StoreError::Conflict { .. } => {
                            tokio::time::sleep(CONFLICT_PAUSE).await;
                            continue;
                        }
                        StoreError::NotFound(_) => return Ok(None),
                        other => return Err(other),
                    },
                }
            }
            return Ok(Some(stored));
        }
        Err(conflict_exhausted(key))
    }

    async fn update_status(
        &self,
        key: &ObjectKey,
        status: Value,
        resource_version: Option<&str>,
    ) -> Result<Value, StoreError> {
        let (api, k) = self.api_for(key)?;
        for _ in 0..CONFLICT_RETRIES {
            let mut object = self
                .get(key)
                .await?
                .ok_or_else(|| StoreError::NotFound(key.clone()))?;
            let actual = self::resource_version(&object).unwrap_or_default();
            if let Some(expected) = resource_version
                && expected != actual
            {
                return Err(StoreError::Conflict {
                    key: key.clone(),
                    expected: expected.into(),
                    actual,
                });
            }
            if object.get("status") == Some(&status) {
                return Ok(object);
            }
            object["status"] = status.clone();
            let written = if k.status_subresource {
                api.replace_status(&key.name, &PostParams::default(), &from_value(object)?)
                    .await
            } else {
                api.replace(&key.name, &PostParams::default(), &from_value(object)?)
                    .await
            };
            match written {
                Ok(o) => return to_value(o, &k),
                Err(e) => match api_error(key, e) {
                    // Only retry when the caller did not pin a version.
                    StoreError::Conflict { .. } if resource_version.is_none() => {
                        tokio::time::sleep(CONFLICT_PAUSE).await;
                    }
                    other => return Err(other),
                },
            }
        }
        Err(conflict_exhausted(key))
    }

    async fn delete(&self, key: &ObjectKey) -> Result<Deleted, StoreError> {
        let (api, _) = self.api_for(key)?;
        match api.delete(&key.name, &DeleteParams::default()).await {
            Ok(either) => Ok(match either {
                either::Either::Left(_) => Deleted::Marked,
                either::Either::Right(_) => Deleted::Removed,
            }),
            Err(e) => Err(api_error(key, e)),
        }
    }
}

fn conflict_exhausted(key: &ObjectKey) -> StoreError {
    StoreError::Conflict {
        key: key.clone(),
        expected: String::new(),
        actual: format!("still changing after {CONFLICT_RETRIES} attempts"),
    }
}

/// The Kubernetes object reference of a stored object, for events.
pub(crate) fn object_reference(object: &Value) -> k8s_openapi::api::core::v1::ObjectReference {
    let s = |p: &str| object.pointer(p).and_then(Value::as_str).map(str::to_owned);
    k8s_openapi::api::core::v1::ObjectReference {
        api_version: s("/apiVersion"),
        kind: s("/kind"),
        name: s("/metadata/name"),
        namespace: s("/metadata/namespace"),
        uid: s("/metadata/uid"),
        resource_version: s("/metadata/resourceVersion"),
        ..Default::default()
    }
}
