//! Watch-backed caches of what a pass reads: Clusters, Machines, ClusterClasses,
//! ClusterInfrastructures, and the Secrets capw writes (those with the `capw.dev/cluster`
//! label; never every Secret of the API server).
//!
//! Each kind is one kube-runtime reflector ([`reflector::reflector`] over a [`watcher`]).
//! Beside each store, an index by namespace and cluster label answers one cluster's read
//! without scanning the namespace, and a [`Seen`] counter says how far the watch has come
//! (the highest `resourceVersion` the store has applied), so that a reader can wait until the
//! store shows a write ([`crate::store`] explains why that is enough).
//!
//! Clusters, Machines and ClusterClasses are shared with the controller ([`SharedStreams`]):
//! one watch per kind feeds both the store a pass reads and the controller's triggers, and a
//! trigger is sent only after the store holds the change that caused it.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use capw_api::{Cluster, ClusterClass, ClusterInfrastructure, Machine};
use capw_engine::store::meta_str;
use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject};
use kube::runtime::reflector::{self, ObjectRef, Store, store::Writer};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::watch;

use crate::kinds::{CLUSTER_LABEL, Kind, kind_of};

/// How the caches behave.
#[derive(Clone, Debug)]
pub struct CacheConfig {
    /// Changes the controller may fall behind on before a shared watch waits for it; the
    /// first list of every Cluster or Machine is announced at once, so this is about the
    /// number of objects of the largest kind.
    pub subscriber_buffer: usize,
    /// How long a read waits for its cache to show what this store last wrote of the objects
    /// it reads, before it reads the API server instead.
    pub catch_up: Duration,
    /// How long a read waits for its cache's first list, before it reads the API server
    /// instead.
    pub first_list: Duration,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            subscriber_buffer: 16_384,
            catch_up: Duration::from_secs(5),
            first_list: Duration::from_secs(60),
        }
    }
}

/// How far a cache's watch has come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The first list is in.
    pub listed: bool,
    /// The highest `resourceVersion` applied to the store (etcd's revision of that change).
    pub version: u64,
}

/// One kind's cache, whatever Rust type it holds.
pub(crate) trait KindCache: Send + Sync {
    /// The object `namespace`/`name` (namespace empty for cluster-scoped kinds), as the JSON
    /// the executor works with.
    fn get(&self, namespace: &str, name: &str) -> Option<Value>;
    /// Whether the store holds `namespace`/`name`, without copying it.
    fn contains(&self, namespace: &str, name: &str) -> bool;
    /// Every object, in `namespace` when given, ordered by namespace and name.
    fn list(&self, namespace: Option<&str>) -> Vec<Value>;
    /// The objects of `namespace` labelled for `cluster`, ordered by name, from the index.
    fn labelled(&self, namespace: &str, cluster: &str) -> Vec<Value>;
    /// Whether the watch sees `namespace` (`None`: every namespace).
    fn covers(&self, namespace: Option<&str>) -> bool;
    /// Whether it holds only the labelled objects of its kind: a miss then says nothing.
    fn partial(&self) -> bool;
    /// How far the watch has come, and word of each step.
    fn seen(&self) -> watch::Receiver<Seen>;
}

/// The triggers of the controller, from the same watches as the caches, subscribed before
/// the watches start so that no object of the first list is missed.
pub struct SharedStreams {
    /// Every applied Cluster.
    pub clusters: BoxStream<'static, Arc<Cluster>>,
    /// The Cluster store the controller schedules from.
    pub cluster_store: Store<Cluster>,
    /// Every applied Machine.
    pub machines: BoxStream<'static, Arc<Machine>>,
    /// Every applied ClusterClass.
    pub classes: BoxStream<'static, Arc<ClusterClass>>,
}

impl Debug for SharedStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStreams").finish_non_exhaustive()
    }
}

/// The changes a shared writer announces (a shared writer always has a dispatcher; a writer
/// without one announces nothing).
fn subscribe<K>(writer: &Writer<K>) -> BoxStream<'static, Arc<K>>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Default + Send + Sync,
{
    match writer.subscribe() {
        Some(handle) => handle.boxed(),
        None => futures::stream::empty().boxed(),
    }
}

/// A watch task that ends with the caches.
struct Task(tokio::task::JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The caches of every kind a pass reads; the watches stop when it is dropped.
pub(crate) struct Caches {
    kinds: HashMap<String, Arc<dyn KindCache>>,
    /// How long reads wait for them.
    pub config: CacheConfig,
    _tasks: Vec<Task>,
}

impl Caches {
    /// Starts the watches (in `namespace`, else everywhere); must run inside a Tokio runtime.
    pub fn start(
        client: &Client,
        namespace: Option<&str>,
        config: CacheConfig,
    ) -> (Caches, SharedStreams) {
        let everything = watcher::Config::default();
        let (cluster_store, cluster_writer) =
            reflector::store_shared::<Cluster>(config.subscriber_buffer);
        let (machine_store, machine_writer) =
            reflector::store_shared::<Machine>(config.subscriber_buffer);
        let (class_store, class_writer) =
            reflector::store_shared::<ClusterClass>(config.subscriber_buffer);
        // Subscribed before the watches run, so that the first list reaches the controller.
        let streams = SharedStreams {
            clusters: subscribe(&cluster_writer),
            cluster_store: cluster_store.clone(),
            machines: subscribe(&machine_writer),
            classes: subscribe(&class_writer),
        };
        let scope = namespace.map(str::to_owned);
        let mut caches = Caches {
            kinds: HashMap::new(),
            config,
            _tasks: Vec::new(),
        };
        let typed = |kind: Option<Kind>| Spec {
            kind,
            namespace: scope.clone(),
            partial: false,
        };
        caches.add(
            typed_api(client, namespace),
            everything.clone(),
            cluster_writer,
            cluster_store,
            (),
            typed(kind_of::<Cluster>()),
        );
        caches.add(
            typed_api(client, namespace),
            everything.clone(),
            machine_writer,
            machine_store,
            (),
            typed(kind_of::<Machine>()),
        );
        caches.add(
            typed_api(client, namespace),
            everything.clone(),
            class_writer,
            class_store,
            (),
            typed(kind_of::<ClusterClass>()),
        );
        for (k, config, partial) in [
            (
                kind_of::<ClusterInfrastructure>(),
                everything.clone(),
                false,
            ),
            // Only the Secrets capw writes for clusters; grants are read directly.
            (
                kind_of::<Secret>(),
                everything.clone().labels(CLUSTER_LABEL),
                true,
            ),
        ] {
            let Some(k) = k else { continue };
            let api: Api<DynamicObject> = match namespace {
                Some(ns) => Api::namespaced_with(client.clone(), ns, &k.resource),
                None => Api::all_with(client.clone(), &k.resource),
            };
            let writer = Writer::new(k.resource.clone());
            let store = writer.as_reader();
            let spec = Spec {
                kind: Some(k.clone()),
                namespace: scope.clone(),
                partial,
            };
            caches.add(api, config, writer, store, k.resource.clone(), spec);
        }
        (caches, streams)
    }

    /// The cache of `kind` if it sees `namespace`.
    pub fn of(&self, kind: &str, namespace: Option<&str>) -> Option<&Arc<dyn KindCache>> {
        self.kinds.get(kind).filter(|c| c.covers(namespace))
    }

    /// Whether `kind` is cached at all (its writes are then remembered for reads).
    pub fn caches(&self, kind: &str) -> bool {
        self.kinds.contains_key(kind)
    }

    #[allow(clippy::too_many_arguments)]
    fn add<K>(
        &mut self,
        api: Api<K>,
        config: watcher::Config,
        writer: Writer<K>,
        store: Store<K>,
        dyntype: K::DynamicType,
        spec: Spec,
    ) where
        K: Resource + Clone + Serialize + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Send + Sync + 'static,
    {
        let Some(kind) = spec.kind else { return };
        let name = kind.resource.kind.clone();
        let watched = name.clone();
        let (seen_tx, seen) = watch::channel(Seen::default());
        let index = Arc::new(RwLock::new(ClusterIndex::default()));
        let cache = Reflected {
            store: store.clone(),
            dyntype,
            kind,
            index: index.clone(),
            seen,
            namespace: spec.namespace,
            partial: spec.partial,
        };
        let events = reflector::reflector(writer, watcher(api, config).default_backoff());
        let task = tokio::spawn(async move {
            events
                .for_each(|event| {
                    match event {
                        Ok(event) => {
                            index
                                .write()
                                .unwrap_or_else(PoisonError::into_inner)
                                .apply(&event);
                            let version = match &event {
                                watcher::Event::Apply(o) | watcher::Event::Delete(o) => {
                                    version_of(o.resource_version().as_deref())
                                }
                                watcher::Event::InitDone => store
                                    .state()
                                    .iter()
                                    .filter_map(|o| version_of(o.resource_version().as_deref()))
                                    .max(),
                                _ => None,
                            };
                            let listed = matches!(event, watcher::Event::InitDone);
                            seen_tx.send_if_modified(|s| {
                                let before = *s;
                                s.listed |= listed;
                                s.version = s.version.max(version.unwrap_or_default());
                                *s != before
                            });
                        }
                        Err(e) => {
                            tracing::debug!(kind = %watched, error = %e, "watch failed; retrying")
                        }
                    }
                    std::future::ready(())
                })
                .await;
        });
        self.kinds.insert(name, Arc::new(cache));
        self._tasks.push(Task(task));
    }
}

/// What one cache is.
struct Spec {
    kind: Option<Kind>,
    namespace: Option<String>,
    partial: bool,
}

fn typed_api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// A `resourceVersion` as the etcd revision it is. Kubernetes asks clients to treat it as
/// opaque; a version that is not a number is not remembered, and reads of that object then
/// never wait for it (they take the cache as it is, which the preconditions keep safe).
pub(crate) fn version_of(resource_version: Option<&str>) -> Option<u64> {
    resource_version?.parse().ok()
}

/// Objects of one kind by namespace and cluster label.
#[derive(Default)]
struct ClusterIndex {
    names: HashMap<(String, String), BTreeSet<String>>,
    cluster_of: HashMap<(String, String), String>,
    /// The index being built from a (re)list, swapped in when it is complete, as the store is.
    building: Option<Box<ClusterIndex>>,
}

impl ClusterIndex {
    fn insert<K: Resource>(&mut self, object: &K) {
        let namespace = object.namespace().unwrap_or_default();
        let name = object.name_any();
        self.remove(&namespace, &name);
        if let Some(cluster) = object.labels().get(CLUSTER_LABEL) {
            self.names
                .entry((namespace.clone(), cluster.clone()))
                .or_default()
                .insert(name.clone());
            self.cluster_of.insert((namespace, name), cluster.clone());
        }
    }

    fn remove(&mut self, namespace: &str, name: &str) {
        let key = (namespace.to_owned(), name.to_owned());
        if let Some(cluster) = self.cluster_of.remove(&key) {
            let group = (key.0, cluster);
            if let Some(names) = self.names.get_mut(&group) {
                names.remove(name);
                if names.is_empty() {
                    self.names.remove(&group);
                }
            }
        }
    }

    fn apply<K: Resource>(&mut self, event: &watcher::Event<K>) {
        match event {
            watcher::Event::Apply(o) => self.insert(o),
            watcher::Event::Delete(o) => {
                self.remove(&o.namespace().unwrap_or_default(), &o.name_any());
            }
            watcher::Event::Init => self.building = Some(Box::default()),
            watcher::Event::InitApply(o) => {
                if let Some(building) = &mut self.building {
                    building.insert(o);
                }
            }
            watcher::Event::InitDone => {
                if let Some(built) = self.building.take() {
                    *self = *built;
                }
            }
        }
    }

    fn names(&self, namespace: &str, cluster: &str) -> Vec<String> {
        self.names
            .get(&(namespace.to_owned(), cluster.to_owned()))
            .map(|names| names.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// A reflector's store with its index and progress.
struct Reflected<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash,
{
    store: Store<K>,
    dyntype: K::DynamicType,
    kind: Kind,
    index: Arc<RwLock<ClusterIndex>>,
    seen: watch::Receiver<Seen>,
    namespace: Option<String>,
    partial: bool,
}

impl<K> Reflected<K>
where
    K: Resource + Clone + Serialize + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    fn reference(&self, namespace: &str, name: &str) -> ObjectRef<K> {
        let reference = ObjectRef::new_with(name, self.dyntype.clone());
        if self.kind.namespaced {
            reference.within(namespace)
        } else {
            reference
        }
    }

    fn json(&self, object: &K) -> Option<Value> {
        match to_json(object, &self.kind) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(kind = %self.kind.resource.kind, error = %e, "a cached object does not serialize");
                None
            }
        }
    }
}

/// `object` as the JSON the executor works with, with `apiVersion` and `kind` always set
/// (list and watch responses leave them out of items).
pub(crate) fn to_json<K: Serialize>(object: &K, k: &Kind) -> Result<Value, serde_json::Error> {
    let mut value = serde_json::to_value(object)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), k.resource.api_version.clone().into());
        map.insert("kind".into(), k.resource.kind.clone().into());
    }
    Ok(value)
}

fn by_name(items: &mut [Value]) {
    let key = |v: &Value| {
        (
            meta_str(v, "namespace").map(str::to_owned),
            meta_str(v, "name").map(str::to_owned),
        )
    };
    items.sort_by_cached_key(key);
}

impl<K> KindCache for Reflected<K>
where
    K: Resource + Clone + Serialize + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    fn get(&self, namespace: &str, name: &str) -> Option<Value> {
        let object = self.store.get(&self.reference(namespace, name))?;
        self.json(&object)
    }

    fn contains(&self, namespace: &str, name: &str) -> bool {
        self.store.get(&self.reference(namespace, name)).is_some()
    }

    fn list(&self, namespace: Option<&str>) -> Vec<Value> {
        let mut items: Vec<Value> = self
            .store
            .state()
            .iter()
            .filter(|o| namespace.is_none_or(|ns| o.namespace().as_deref() == Some(ns)))
            .filter_map(|o| self.json(o))
            .collect();
        by_name(&mut items);
        items
    }

    fn labelled(&self, namespace: &str, cluster: &str) -> Vec<Value> {
        let names = self
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .names(namespace, cluster);
        // The index is updated just after the store: an object may be gone from the store
        // or have lost the label in between; the store has the last word.
        names
            .iter()
            .filter_map(|name| self.store.get(&self.reference(namespace, name)))
            .filter(|o| o.labels().get(CLUSTER_LABEL).map(String::as_str) == Some(cluster))
            .filter_map(|o| self.json(&o))
            .collect()
    }

    fn covers(&self, namespace: Option<&str>) -> bool {
        match (&self.namespace, namespace) {
            (None, _) => true,
            (Some(_), _) if !self.kind.namespaced => true,
            (Some(scope), Some(ns)) => scope == ns,
            (Some(_), None) => false,
        }
    }

    fn partial(&self) -> bool {
        self.partial
    }

    fn seen(&self) -> watch::Receiver<Seen> {
        self.seen.clone()
    }
}
