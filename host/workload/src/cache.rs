//! [`ClusterCache`]: one connection per workload cluster, bounded, rebuilt when its
//! kubeconfig changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest as _, Sha256};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::config::ClusterCacheConfig;
use crate::connection::Connection;
use crate::error::ClusterCacheError;
use crate::observation::{ApiAvailability, WorkloadObservation};

/// Node changes buffered per receiver of [`ClusterCache::node_changes`] before the oldest
/// are dropped: a receiver that falls this far behind misses changes, never blocks a watch.
const NODE_CHANGES_BUFFER: usize = 256;

/// Which workload cluster: the Cluster's namespace, name and uid (a Cluster recreated under
/// the same name is another cluster).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterId {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// One cached connection and what was learnt of it.
#[derive(Debug)]
struct Entry {
    /// SHA-256 of the kubeconfig it was built from.
    fingerprint: [u8; 32],
    connection: Arc<Connection>,
    last_used: Instant,
    /// Consecutive failed probes.
    failures: u32,
}

/// A bounded cache of clients, one per workload cluster, each with a watch of its Nodes.
///
/// # Guarantees
///
/// - A cluster's connection is rebuilt when its kubeconfig changes (compared by digest),
///   and dropped (its watch stopped) by [`ClusterCache::evict`] or when the cache holds more
///   than `max_clusters` and it is the least recently observed.
/// - The map's lock is never held across an await: connections are built, probed and
///   waited on outside it, so a slow cluster never delays another's observation.
/// - Every change of a watched cluster's Nodes that an observation would show is announced
///   on [`ClusterCache::node_changes`].
#[derive(Debug)]
pub struct ClusterCache {
    config: ClusterCacheConfig,
    entries: Mutex<HashMap<ClusterId, Entry>>,
    changes: broadcast::Sender<ClusterId>,
}

impl ClusterCache {
    /// An empty cache.
    pub fn new(config: ClusterCacheConfig) -> Self {
        ClusterCache {
            config,
            entries: Mutex::new(HashMap::new()),
            changes: broadcast::channel(NODE_CHANGES_BUFFER).0,
        }
    }

    /// The clusters whose Nodes changed, as their watches see it: a Node added or removed,
    /// or its providerID or Ready condition changed (a heartbeat alone is not a change). A
    /// driver passes over the cluster again on each, instead of waiting for its requeue.
    ///
    /// # Caveats
    ///
    /// Lossy: a receiver more than a few hundred changes behind gets
    /// [`broadcast::error::RecvError::Lagged`] and misses them, so the requeue stays the
    /// backstop. Only clusters with a live connection (observed since their last eviction)
    /// are watched; the first list of a new connection is announced too.
    pub fn node_changes(&self) -> broadcast::Receiver<ClusterId> {
        self.changes.subscribe()
    }

    /// Its settings.
    pub fn config(&self) -> &ClusterCacheConfig {
        &self.config
    }

    /// The clusters it holds a connection for now.
    pub fn clusters(&self) -> Vec<ClusterId> {
        let mut ids: Vec<ClusterId> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Drops the connection of `cluster` (its watch stops); nothing when there is none.
    pub fn evict(&self, cluster: &ClusterId) {
        if self.lock().remove(cluster).is_some() {
            tracing::debug!(cluster = %cluster.name, namespace = %cluster.namespace, "workload client evicted");
        }
    }

    /// Drops every connection of a cluster named `namespace/name`, whatever its uid.
    pub fn evict_named(&self, namespace: &str, name: &str) {
        self.lock()
            .retain(|id, _| !(id.namespace == namespace && id.name == name));
    }

    /// What the workload cluster of `cluster`, reached through `kubeconfig`, looks like now.
    ///
    /// # Guarantees
    ///
    /// Returns within about `probe_timeout + sync_timeout` whatever the cluster does; an
    /// unreachable API is [`ApiAvailability::Unreachable`] with a retry hint that grows
    /// with consecutive failures.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when no client can be made from `kubeconfig`.
    pub async fn observe(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
    ) -> Result<WorkloadObservation, ClusterCacheError> {
        let connection = self.connection(cluster, kubeconfig).await?;
        let probe = connection.probe(self.config.probe_timeout).await;
        let failures = self.record(cluster, &connection, probe.is_ok());
        Ok(match probe {
            Ok(()) => WorkloadObservation {
                server: connection.server().to_owned(),
                api: ApiAvailability::Available,
                nodes: connection.nodes(self.config.sync_timeout).await,
                retry_after: None,
            },
            Err(error) => WorkloadObservation {
                server: connection.server().to_owned(),
                api: ApiAvailability::Unreachable { error },
                nodes: None,
                retry_after: Some(self.config.retry_after(failures.max(1))),
            },
        })
    }

    /// Deletes the Node `node` of `cluster` through the client built from `kubeconfig` (the
    /// cached one when the kubeconfig is the same).
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when no client can be made or the API refuses the delete; a
    /// Node already gone is not an error.
    pub async fn delete_node(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
        node: &str,
    ) -> Result<(), ClusterCacheError> {
        self.connection(cluster, kubeconfig)
            .await?
            .delete_node(node)
            .await
    }

    /// One round of draining Node `node` of `cluster` ([`crate::DrainRound`]): cordon it, evict
    /// what may leave now, and say what is left; the whole round within four probe timeouts.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when no client can be made, or the API refuses, fails or does
    /// not answer in time.
    pub async fn drain_node(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
        node: &str,
    ) -> Result<crate::DrainRound, ClusterCacheError> {
        self.connection(cluster, kubeconfig)
            .await?
            .drain_round(node, self.config.probe_timeout.saturating_mul(4))
            .await
    }

    /// Whether the workload cluster of `cluster` holds bootstrap token `id` (its Secret
    /// `kube-system/bootstrap-token-<id>`), and until when; asked within the probe timeout.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when no client can be made, or the API fails or does not answer
    /// in time.
    pub async fn bootstrap_token(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
        id: &str,
    ) -> Result<crate::TokenPresence, ClusterCacheError> {
        self.connection(cluster, kubeconfig)
            .await?
            .bootstrap_token(id, self.config.probe_timeout)
            .await
    }

    /// Writes bootstrap token `token` into the workload cluster of `cluster` as the Secret
    /// the API server reads; one already there under its id is kept.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when no client can be made, or the API refuses, fails or does
    /// not answer within the probe timeout.
    pub async fn write_bootstrap_token(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
        token: &crate::BootstrapToken,
    ) -> Result<(), ClusterCacheError> {
        self.connection(cluster, kubeconfig)
            .await?
            .write_bootstrap_token(token, self.config.probe_timeout)
            .await
    }

    /// Applies into the workload cluster of `cluster` what joins need when no machine
    /// initialised it ([`crate::JoinAccess`]), each object within the probe timeout.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when no client can be made, or the API refuses, fails or does
    /// not answer in time.
    pub async fn apply_join_access(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
        access: &crate::JoinAccess,
    ) -> Result<(), ClusterCacheError> {
        self.connection(cluster, kubeconfig)
            .await?
            .apply_join_access(access, self.config.probe_timeout)
            .await
    }

    /// The connection for `cluster` built from `kubeconfig`: the cached one when the
    /// kubeconfig is the same, else a new one (replacing the old, evicting beyond the bound).
    async fn connection(
        &self,
        cluster: &ClusterId,
        kubeconfig: &[u8],
    ) -> Result<Arc<Connection>, ClusterCacheError> {
        let fingerprint: [u8; 32] = Sha256::digest(kubeconfig).into();
        if let Some(entry) = self.lock().get_mut(cluster)
            && entry.fingerprint == fingerprint
        {
            entry.last_used = Instant::now();
            return Ok(entry.connection.clone());
        }
        let changes = self.changes.clone();
        let id = cluster.clone();
        let changed = move || {
            // No receiver is no error: nobody is listening.
            let _ = changes.send(id.clone());
        };
        let connection = Arc::new(Connection::open(kubeconfig, &self.config, changed).await?);
        tracing::debug!(cluster = %cluster.name, namespace = %cluster.namespace, server = %connection.server(), "workload client built");
        let mut entries = self.lock();
        entries.insert(
            cluster.clone(),
            Entry {
                fingerprint,
                connection: connection.clone(),
                last_used: Instant::now(),
                failures: 0,
            },
        );
        while entries.len() > self.config.max_clusters.max(1) {
            let Some(oldest) = entries
                .iter()
                .filter(|(id, _)| *id != cluster)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            entries.remove(&oldest);
        }
        Ok(connection)
    }

    /// Records a probe of `connection` (if it is still the cluster's): the consecutive
    /// failures after it.
    fn record(&self, cluster: &ClusterId, connection: &Arc<Connection>, ok: bool) -> u32 {
        let mut entries = self.lock();
        let Some(entry) = entries
            .get_mut(cluster)
            .filter(|e| Arc::ptr_eq(&e.connection, connection))
        else {
            return u32::from(!ok);
        };
        entry.failures = if ok {
            0
        } else {
            entry.failures.saturating_add(1)
        };
        entry.failures
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ClusterId, Entry>> {
        // A poisoned map only means a panic elsewhere mid-insert of whole entries.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
