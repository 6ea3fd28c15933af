//! [`KubeStore`]: the executor's [`ObjectStore`] over a Kubernetes API server.
//!
//! Built with [`KubeStore::cached`], it answers `get`, `list` and `list_labelled` of the kinds
//! a pass reads (Clusters, Machines, ClusterClasses, ClusterInfrastructures and the Secrets
//! capw writes) from watch-backed caches ([`crate::cache`]); one cluster's Machines come from an
//! index by namespace and cluster label, so a pass's reads do not grow with the number of
//! clusters. Every write goes to the API server. [`KubeStore::new`] reads the API server
//! directly, every time.
//!
//! # Why a pass on a cache that lags never acts twice
//!
//! A cache may lag the API server by the time a watch event takes to arrive. A pass that
//! decided on such a cache could, unguarded, miss a Machine it created a moment ago and
//! create another (Machine names carry a random suffix), or undo a write it just made. Four
//! things keep it from acting twice:
//!
//! 1. **Read your writes.** The store remembers, for each object it wrote, the
//!    `resourceVersion` the API server gave the write (or that it deleted it). A read waits
//!    until the cache of that kind has applied a change at least that new (for a deletion:
//!    until the object is gone from it), for the objects it returns: `get` for that object,
//!    `list_labelled` for every object of that cluster this replica wrote. So the next pass
//!    of a cluster, and the second read within a pass, see every Machine this replica
//!    created. `resourceVersion`s of one kind come from etcd's revision and grow with every
//!    change; a version that does not parse as a number is not waited for. A cache that does
//!    not catch up within [`CacheConfig::catch_up`] (or has not listed within
//!    [`CacheConfig::first_list`]) is not used: the read goes to the API server.
//! 2. **Preconditions.** Every update names the `resourceVersion` it read. A stale read
//!    therefore fails with a conflict instead of overwriting a newer object, and the retry
//!    reads the API server, not the cache.
//! 3. **Intent before action, idempotency keys.** A Machine's name and idempotency key are
//!    stored before any provider is asked to create it, and a provider creates at most one
//!    instance per key; a create that finds the object already there (AlreadyExists) is
//!    retried as a read of the API server, never as a second object.
//! 4. **One writer per cluster.** The controller never runs two passes of one Cluster at once,
//!    and only the Lease holder reconciles. A replica that takes over starts its caches with
//!    a quorum list (`ListSemantic::MostRecent`), taken after the old holder's last write was
//!    acknowledged, as the Lease is only free once the old holder stopped writing.
//!
//! Writes by others (a person, another controller) are seen when their events arrive; a pass
//! that decided without them can only lose a precondition, or be followed by the pass their
//! event triggers.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use capw_engine::store::{Applied, Change, Deleted, ObjectKey, ObjectStore, StoreError};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cache::{CacheConfig, Caches, KindCache, SharedStreams, to_json, version_of};
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
/// - Cached reads show every write this store made of the objects they return (the module
///   docs say why a pass is safe on them).
/// - `update` writes the object and, when it changed `status`, the status subresource.
/// - Machines, cluster Secrets and ClusterInfrastructures created for a Cluster (the
///   `capw.dev/cluster` label) get an owner reference to it, so the controller sees their
///   changes and the garbage collector removes them with it.
#[derive(Clone)]
pub struct KubeStore {
    client: Client,
    caches: Option<Arc<Caches>>,
    written: Arc<WriteLog>,
    misses: Arc<AtomicU64>,
}

impl std::fmt::Debug for KubeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeStore").finish_non_exhaustive()
    }
}

impl KubeStore {
    /// A store that reads and writes the API server of `client` directly.
    pub fn new(client: Client) -> Self {
        KubeStore {
            client,
            caches: None,
            written: Arc::default(),
            misses: Arc::default(),
        }
    }

    /// A store that reads the kinds a pass reads from watches of `namespace` (every
    /// namespace when `None`) and writes to the API server; with the controller's triggers
    /// from the same watches. Must be called inside a Tokio runtime; the watches stop when
    /// the last clone of the store is dropped.
    pub fn cached(
        client: Client,
        namespace: Option<&str>,
        config: CacheConfig,
    ) -> (Self, SharedStreams) {
        let (caches, streams) = Caches::start(&client, namespace, config);
        let store = KubeStore {
            client,
            caches: Some(Arc::new(caches)),
            written: Arc::default(),
            misses: Arc::default(),
        };
        (store, streams)
    }

    /// Reads a cache could not answer because it had not listed yet or lagged behind this
    /// store's writes (they went to the API server).
    pub fn cache_misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    /// The cache of `kind` that sees `namespace`, once it shows this store's writes of the
    /// objects `which` selects; `None` when the read must go to the API server.
    async fn settled_cache(
        &self,
        kind_name: &str,
        namespace: Option<&str>,
        which: impl Fn(&Written) -> bool,
    ) -> Option<&Arc<dyn KindCache>> {
        let caches = self.caches.as_ref()?;
        let cache = caches.of(kind_name, namespace)?;
        let mut seen = cache.seen();
        let listed_by = Instant::now() + caches.config.first_list;
        while !seen.borrow_and_update().listed {
            match tokio::time::timeout_at(listed_by, seen.changed()).await {
                Ok(Ok(())) => {}
                _ => {
                    self.misses.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(
                        kind = kind_name,
                        "cache not listed yet: reading the API server"
                    );
                    return None;
                }
            }
        }
        let caught_up_by = Instant::now() + caches.config.catch_up;
        loop {
            let version = seen.borrow_and_update().version;
            if self.written.settle(kind_name, &which, |w| match w.version {
                Some(v) => version >= v,
                None => !cache.contains(&w.namespace, &w.name),
            }) {
                return Some(cache);
            }
            match tokio::time::timeout_at(caught_up_by, seen.changed()).await {
                Ok(Ok(())) => {}
                _ => {
                    self.misses.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(
                        kind = kind_name,
                        "cache behind this store's writes: reading the API server"
                    );
                    return None;
                }
            }
        }
    }

    /// Remembers a write of `key` that changed `before` (when it was read) into `object`
    /// (`None`: the object is gone), so that cached reads wait until they show it.
    fn wrote(&self, key: &ObjectKey, before: Option<&Value>, object: Option<&Value>) {
        if !self.caches.as_ref().is_some_and(|c| c.caches(&key.kind)) {
            return;
        }
        let version = match object {
            None => None,
            Some(o) => match version_of(
                o.pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str),
            ) {
                Some(v) => Some(v),
                // Not a revision: nothing to wait for.
                None => return,
            },
        };
        // Every Cluster the object belonged to since the cache last showed it: a relabelled
        // object must leave its old cluster's lists as well as join its new one's.
        let previous = self.written.clusters_of(key);
        let unknown = previous.is_none() && before.is_none() && object.is_none();
        let clusters = match previous {
            Some(None) => None,
            _ if unknown && key.kind != "Cluster" => None,
            previous => {
                let mut clusters = previous.flatten().unwrap_or_default();
                clusters.extend(
                    [before, object]
                        .into_iter()
                        .flatten()
                        .filter_map(|o| cluster_label(key, o)),
                );
                if key.kind == "Cluster" {
                    clusters.insert(key.name.clone());
                }
                Some(clusters)
            }
        };
        self.written.record(
            key,
            Written {
                namespace: key.namespace.clone(),
                name: key.name.clone(),
                clusters,
                version,
            },
        );
    }

    /// The object at `key`, from the API server.
    async fn get_fresh(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        let (api, k) = self.api_for(key)?;
        match api.get_opt(&key.name).await {
            Ok(Some(o)) => Ok(Some(to_value(o, &k)?)),
            Ok(None) => Ok(None),
            Err(e) => Err(api_error(key, e)),
        }
    }

    /// The object at `key`, from the cache unless `fresh`.
    async fn read(&self, key: &ObjectKey, fresh: bool) -> Result<Option<Value>, StoreError> {
        if fresh {
            self.get_fresh(key).await
        } else {
            self.get(key).await
        }
    }

    /// Every object of `kind` (in `namespace`), from the API server.
    async fn list_fresh(
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
                    "apiVersion": capw_api::API_VERSION,
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

/// The Cluster `object` (at `key`) belongs to: its label, or its own name for a Cluster.
fn cluster_label(key: &ObjectKey, object: &Value) -> Option<String> {
    if key.kind == "Cluster" {
        return Some(key.name.clone());
    }
    (object.pointer("/metadata/labels"))
        .and_then(|l| l.get(CLUSTER_LABEL))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// One write this store made and its cache has not shown yet.
#[derive(Clone, Debug)]
struct Written {
    namespace: String,
    name: String,
    /// The Clusters it belonged to in the writes its cache has not shown yet (its label; its
    /// own name for a Cluster); `None` when not known (an object removed before this store
    /// read it), which every labelled list of its namespace waits for.
    clusters: Option<BTreeSet<String>>,
    /// The `resourceVersion` the write left, or `None` when it removed the object.
    version: Option<u64>,
}

/// The writes of a store that its caches have not shown yet, by kind. An entry goes as soon
/// as a read finds its cache caught up with it, so the log holds only the last moments.
#[derive(Debug, Default)]
struct WriteLog(Mutex<HashMap<String, WritesOfKind>>);

/// One kind's entries of a [`WriteLog`], by namespace and name.
type WritesOfKind = HashMap<(String, String), Written>;

impl WriteLog {
    fn record(&self, key: &ObjectKey, written: Written) {
        let mut log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        log.entry(key.kind.clone())
            .or_default()
            .insert((key.namespace.clone(), key.name.clone()), written);
    }

    /// The Clusters of the write of `key` its cache has not shown yet, if there is one.
    fn clusters_of(&self, key: &ObjectKey) -> Option<Option<BTreeSet<String>>> {
        let log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let written = log
            .get(&key.kind)?
            .get(&(key.namespace.clone(), key.name.clone()))?;
        Some(written.clusters.clone())
    }

    /// Forgets the writes of `kind` that `which` selects and `shown` says the cache shows;
    /// true when none of those selected is left.
    fn settle(
        &self,
        kind: &str,
        which: impl Fn(&Written) -> bool,
        shown: impl Fn(&Written) -> bool,
    ) -> bool {
        let mut log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(writes) = log.get_mut(kind) else {
            return true;
        };
        let mut settled = true;
        writes.retain(|_, w| {
            if !which(w) || shown(w) {
                return !which(w);
            }
            settled = false;
            true
        });
        settled
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
    to_json(&object, k).map_err(|e| StoreError::Invalid(e.to_string()))
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
        let namespace = Some(key.namespace.as_str()).filter(|ns| !ns.is_empty());
        let which = |w: &Written| w.namespace == key.namespace && w.name == key.name;
        if let Some(cache) = self.settled_cache(&key.kind, namespace, which).await {
            match cache.get(&key.namespace, &key.name) {
                Some(object) => return Ok(Some(object)),
                // A cache of only the labelled objects cannot say one is absent.
                None if !cache.partial() => return Ok(None),
                None => {}
            }
        }
        KubeStore::get_fresh(self, key).await
    }

    async fn get_fresh(&self, key: &ObjectKey) -> Result<Option<Value>, StoreError> {
        KubeStore::get_fresh(self, key).await
    }

    async fn list(
        &self,
        kind_name: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, StoreError> {
        let which = |w: &Written| namespace.is_none_or(|ns| w.namespace == ns);
        if let Some(cache) = self.settled_cache(kind_name, namespace, which).await
            && !cache.partial()
        {
            return Ok(cache.list(namespace));
        }
        self.list_fresh(kind_name, namespace).await
    }

    async fn list_labelled(
        &self,
        kind_name: &str,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> Result<Vec<Value>, StoreError> {
        if label == CLUSTER_LABEL {
            // Every object with the label is in the cache, partial or not.
            let which = |w: &Written| {
                w.namespace == namespace && w.clusters.as_ref().is_none_or(|c| c.contains(value))
            };
            if let Some(cache) = self.settled_cache(kind_name, Some(namespace), which).await {
                return Ok(cache.labelled(namespace, value));
            }
        }
        let mut all = self.list(kind_name, Some(namespace)).await?;
        all.retain(|o| capw_engine::store::has_label(o, label, value));
        Ok(all)
    }

    async fn create(&self, mut object: Value) -> Result<Value, StoreError> {
        let key = ObjectKey::of(&object)?;
        let (api, k) = self.api_for(&key)?;
        self.own(&mut object, &k).await?;
        let created = api
            .create(&PostParams::default(), &from_value(object)?)
            .await
            .map_err(|e| api_error(&key, e))?;
        let created = to_value(created, &k)?;
        self.wrote(&key, None, Some(&created));
        Ok(created)
    }

    async fn apply(&self, mut object: Value) -> Result<(Value, Applied), StoreError> {
        let key = ObjectKey::of(&object)?;
        let (api, k) = self.api_for(&key)?;
        // The cache first; after a conflict or an AlreadyExists, the API server.
        let mut fresh = false;
        for _ in 0..CONFLICT_RETRIES {
            let Some(existing) = self.read(&key, fresh).await? else {
                self.own(&mut object, &k).await?;
                match api
                    .create(&PostParams::default(), &from_value(object.clone())?)
                    .await
                {
                    Ok(created) => {
                        let created = to_value(created, &k)?;
                        self.wrote(&key, None, Some(&created));
                        return Ok((created, Applied::Created));
                    }
                    Err(e) => match api_error(&key, e) {
                        StoreError::AlreadyExists(_) => {
                            fresh = true;
                            continue;
                        }
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
                Ok(stored) => {
                    let stored = to_value(stored, &k)?;
                    self.wrote(&key, Some(&existing), Some(&stored));
                    return Ok((stored, Applied::Configured));
                }
                Err(e) => match api_error(&key, e) {
                    StoreError::Conflict { .. } => {
                        fresh = true;
                        tokio::time::sleep(CONFLICT_PAUSE).await;
                    }
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
        let written = self.update_object(key, change).await;
        if let Err(StoreError::NotFound(_)) = &written {
            // The cache may still show it.
            self.wrote(key, None, None);
        }
        written
    }

    async fn update_status(
        &self,
        key: &ObjectKey,
        status: Value,
        resource_version: Option<&str>,
    ) -> Result<Value, StoreError> {
        let (api, k) = self.api_for(key)?;
        // A pinned version is compared with the API server's, never with a cache's.
        let mut fresh = resource_version.is_some();
        for _ in 0..CONFLICT_RETRIES {
            let mut object = self
                .read(key, fresh)
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
                Ok(o) => {
                    let stored = to_value(o, &k)?;
                    self.wrote(key, None, Some(&stored));
                    return Ok(stored);
                }
                Err(e) => match api_error(key, e) {
                    // Only retry when the caller did not pin a version.
                    StoreError::Conflict { .. } if resource_version.is_none() => {
                        fresh = true;
                        tokio::time::sleep(CONFLICT_PAUSE).await;
                    }
                    other => return Err(other),
                },
            }
        }
        Err(conflict_exhausted(key))
    }

    async fn delete(&self, key: &ObjectKey) -> Result<Deleted, StoreError> {
        let (api, k) = self.api_for(key)?;
        match api.delete(&key.name, &DeleteParams::default()).await {
            Ok(either::Either::Left(marked)) => {
                self.wrote(key, None, Some(&to_value(marked, &k)?));
                Ok(Deleted::Marked)
            }
            Ok(either::Either::Right(_)) => {
                self.wrote(key, None, None);
                Ok(Deleted::Removed)
            }
            Err(e) => Err(api_error(key, e)),
        }
    }
}

impl KubeStore {
    /// [`ObjectStore::update`]: the cache first, the API server after a conflict.
    async fn update_object(
        &self,
        key: &ObjectKey,
        change: Change<'_>,
    ) -> Result<Option<Value>, StoreError> {
        let (api, k) = self.api_for(key)?;
        let mut fresh = false;
        for _ in 0..CONFLICT_RETRIES {
            let existing = match self.read(key, fresh).await? {
                Some(existing) => existing,
                // Someone else's create the cache has not shown yet.
                None if !fresh => {
                    fresh = true;
                    continue;
                }
                None => return Err(StoreError::NotFound(key.clone())),
            };
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
            let replaced = Self::write_changes(&api, &k, key, &existing, &changed).await?;
            match replaced {
                Replaced::Stored(stored) => {
                    self.wrote(key, Some(&existing), Some(&stored));
                    return Ok(Some(stored));
                }
                Replaced::Conflict => {
                    fresh = true;
                    tokio::time::sleep(CONFLICT_PAUSE).await;
                }
                Replaced::Gone => {
                    self.wrote(key, Some(&existing), None);
                    return Ok(None);
                }
            }
        }
        Err(conflict_exhausted(key))
    }

    /// Writes what `change` made of `existing`: the object when more than its status changed,
    /// then its status through the status subresource (a kind without one took it with the
    /// object).
    async fn write_changes(
        api: &Api<DynamicObject>,
        k: &Kind,
        key: &ObjectKey,
        existing: &Value,
        changed: &Value,
    ) -> Result<Replaced, StoreError> {
        let mut stored = existing.clone();
        if without_status(changed) != without_status(existing) {
            let replaced = api
                .replace(
                    &key.name,
                    &PostParams::default(),
                    &from_value(changed.clone())?,
                )
                .await;
            match written(key, k, replaced)? {
                Replaced::Stored(o) => stored = o,
                other => return Ok(other),
            }
            let deleting = stored.pointer("/metadata/deletionTimestamp").is_some();
            if deleting && finalizers_empty(&stored) {
                return Ok(Replaced::Gone);
            }
        }
        if k.status_subresource && changed.get("status") != existing.get("status") {
            let mut next = stored.clone();
            next["status"] = changed.get("status").cloned().unwrap_or(Value::Null);
            let replaced = api
                .replace_status(&key.name, &PostParams::default(), &from_value(next)?)
                .await;
            match written(key, k, replaced)? {
                Replaced::Stored(o) => stored = o,
                other => return Ok(other),
            }
        }
        Ok(Replaced::Stored(stored))
    }
}

/// What one replace of [`KubeStore::update_object`]'s loop came to.
enum Replaced {
    /// The object as the API server stored it.
    Stored(Value),
    /// Someone wrote it since it was read: read it again and retry.
    Conflict,
    /// It is gone (removing the last finalizer of an object being deleted removes it).
    Gone,
}

/// `result` of a replace (of the object or of its status) of `key`, as [`Replaced`]; any
/// other failure is the update's error.
fn written(
    key: &ObjectKey,
    k: &Kind,
    result: Result<DynamicObject, kube::Error>,
) -> Result<Replaced, StoreError> {
    match result {
        Ok(o) => Ok(Replaced::Stored(to_value(o, k)?)),
        Err(e) => match api_error(key, e) {
            StoreError::Conflict { .. } => Ok(Replaced::Conflict),
            StoreError::NotFound(_) => Ok(Replaced::Gone),
            other => Err(other),
        },
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
