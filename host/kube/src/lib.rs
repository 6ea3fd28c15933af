//! capw's Kubernetes mode: the shared executor driven by a kube-apiserver.
//!
//! Start with [`ControllerConfig`] and [`run`]: it serves the health and metrics endpoints,
//! waits for the leader Lease (when configured), loads every `WasmProvider` (file and
//! `configMap` sources, secret grants from `Secret` objects), and runs kube-runtime's
//! controller on Clusters, each reconcile one pass of [`capw_engine::Executor`] over
//! [`KubeStore`] until the shutdown signal.
//!
//! # Guarantees
//!
//! - One reconcile per Cluster at a time, at most `concurrency` at once; passes read from
//!   watch-backed caches that show every write of this replica before they answer, and a
//!   Machine's intent (name and idempotency key) is stored before any provider is asked to
//!   create it, so a lagging cache, a restart or a leader change never creates a machine
//!   twice (the `store` module docs give the argument).
//! - With leader election, only the Lease holder reconciles; a replica that loses the Lease
//!   stops reconciling before another can take it.
//! - A provider that fails to load (not a component, a missing ConfigMap) is `Loaded=False`
//!   with the reason on its WasmProvider; the others keep working.

mod cache;
pub mod controller;
mod error;
pub mod kinds;
pub mod leader;
pub mod management;
pub mod metrics;
mod providers;
pub mod shards;
mod store;
pub mod webhook;

use std::net::SocketAddr;
use std::sync::Arc;

use capw_engine::EngineConfig;
use capw_engine::store::ObjectStore;
use controller::ExecutorSlot;
use futures::FutureExt as _;
use kube::Client;
use tokio::sync::mpsc;

pub use cache::{CacheConfig, SharedStreams};
pub use controller::{CONTROLLER_NAME, RequeuePolicy};
pub use error::{KubeModeError, chain};
pub use kinds::CLUSTER_LABEL;
pub use leader::{LeaderLease, LeaseConfig, LeaseError};
pub use management::{KubeManagement, ManagementError};
pub use metrics::{Metrics, Readiness};
pub use shards::{ShardConfig, Shards, shard_of};
pub use store::KubeStore;

/// A task of [`run`] that must not outlive it: aborted when dropped, so a `run` that is
/// cancelled (its future dropped) stops renewing the Lease and watching at once, as a killed
/// process would.
struct Background<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for Background<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How to run the controller.
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// Plugin directory, compile cache, retry bounds, `secrets` (set to
    /// [`capw_engine::SecretSource::Store`] for Kubernetes Secrets) and `workload_clusters`
    /// (whether each Cluster's kubeconfig Secret is written and its workload cluster reached).
    /// [`run`] sets `management`, when `None`, to the API server it runs against
    /// ([`KubeManagement`]): hosted control planes run beside their Clusters.
    pub engine: EngineConfig,
    /// Namespace whose ConfigMaps are watched for provider changes, and where secret grants
    /// without a namespace are looked up.
    pub provider_namespace: String,
    /// Reconcile only the Clusters of this namespace (with their Machines and
    /// ClusterClasses); `None` for every namespace.
    pub watch_namespace: Option<String>,
    /// This replica's name in Events and the Lease.
    pub identity: String,
    /// Leader election, when more than one replica may run.
    pub leader_election: Option<LeaseConfig>,
    /// Shards, when replicas split the Clusters between them ([`shards`]); used instead of
    /// leader election.
    pub sharding: Option<ShardConfig>,
    /// Address of `/metrics`, if served.
    pub metrics_address: Option<SocketAddr>,
    /// Address of `/healthz` and `/readyz`, if served.
    pub health_address: Option<SocketAddr>,
    /// When Clusters are looked at again.
    pub requeue: RequeuePolicy,
    /// Most passes running at once (kube-runtime's controller `concurrency`; 0: no bound).
    pub concurrency: u16,
    /// How reads wait for the watch-backed caches.
    pub cache: CacheConfig,
    /// The validating admission webhook, if served.
    pub webhook: Option<webhook::WebhookConfig>,
}

/// The error of an endpoint `what` that cannot be served at `address`.
fn serving(
    what: &'static str,
    address: SocketAddr,
) -> impl FnOnce(std::io::Error) -> KubeModeError {
    move |source| KubeModeError::Serve {
        what,
        address: address.to_string(),
        source,
    }
}

/// The executor a standby's webhook checks with: the providers loaded through an overlay, so
/// that a replica that does not lead writes no status (the leader does), and no workload
/// cluster reached.
async fn standby_executor(
    client: &Client,
    engine: &EngineConfig,
) -> Result<Arc<capw_engine::Executor>, KubeModeError> {
    let direct: Arc<dyn ObjectStore> = Arc::new(KubeStore::new(client.clone()));
    let mut engine = engine.clone();
    engine.workload_clusters = capw_engine::WorkloadClusterAccess::Off;
    let registry = capw_engine::ProviderRegistry::load_all(
        &capw_engine::store::Overlay::new(direct.clone()),
        &engine,
    )
    .await
    .map_err(KubeModeError::Providers)?;
    Ok(Arc::new(capw_engine::Executor::new(
        direct,
        Arc::new(registry),
        engine,
    )))
}

/// Binds the admission webhook over the executor in `slot`.
async fn serve_webhook(
    client: &Client,
    config: &webhook::WebhookConfig,
    slot: &ExecutorSlot,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Background<()>, KubeModeError> {
    let server = webhook::serve(client.clone(), config.clone(), slot.clone(), shutdown)
        .await
        .map_err(serving("admission webhook", config.address))?;
    Ok(Background(server))
}

/// Runs the controller until `shutdown` resolves (then running passes finish and the Lease is
/// released) or the Lease is lost.
///
/// # Errors
///
/// [`KubeModeError`] when an endpoint cannot be bound, the providers cannot be loaded (the
/// API server fails), or the Lease is lost or cannot be taken.
pub async fn run(
    client: Client,
    mut config: ControllerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), KubeModeError> {
    let shutdown = shutdown.shared();
    // Before the standby's executor is made: its webhook checks hosted Clusters too.
    config
        .engine
        .management
        .get_or_insert_with(|| Arc::new(KubeManagement::new(client.clone())));
    let metrics = Arc::new(Metrics::default());
    // The caller's observer (`capw bench kube`'s) hears every call too.
    config.engine.call_observer = Some(match config.engine.call_observer.take() {
        Some(theirs) => Arc::new(metrics::Both(metrics.clone(), theirs)),
        None => metrics.clone(),
    });
    let readiness = Arc::new(Readiness::default());
    let mut servers = Vec::new();
    if let Some(address) = config.metrics_address {
        let health = config.health_address.unwrap_or(address);
        servers = metrics::serve(
            address,
            health,
            metrics.clone(),
            readiness.clone(),
            shutdown.clone(),
        )
        .await
        .map_err(serving("metrics and health", address))?;
    } else if let Some(address) = config.health_address {
        // Metrics only on the health address would be a surprise: serve both there.
        servers = metrics::serve(
            address,
            address,
            metrics.clone(),
            readiness.clone(),
            shutdown.clone(),
        )
        .await
        .map_err(serving("health", address))?;
    }

    let mut servers: Vec<Background<()>> = servers.into_iter().map(Background).collect();
    // Every replica serves the webhook, leading or not: the API server calls any of them. One
    // that may wait for the Lease serves it at once, with the providers as they are now; the
    // others once their providers are loaded below, with those.
    let standby = match (&config.webhook, &config.leader_election) {
        (Some(webhook), Some(_)) => {
            let slot = ExecutorSlot::new(standby_executor(&client, &config.engine).await?);
            servers.push(serve_webhook(&client, webhook, &slot, shutdown.clone()).await?);
            Some(slot)
        }
        _ => None,
    };
    let lease = config
        .leader_election
        .clone()
        .map(|c| LeaderLease::new(client.clone(), c));
    if let Some(lease) = &lease {
        // A standby is healthy and ready: it is doing its job, waiting.
        readiness.set_ready();
        tracing::info!(identity = %config.identity, "waiting for the leader lease");
        tokio::select! {
            acquired = lease.acquire() => acquired?,
            () = shutdown.clone() => return Ok(()),
        }
        tracing::info!(identity = %config.identity, "leading");
    }
    metrics.leader.set(1);
    let shards = config
        .sharding
        .clone()
        .map(|c| Shards::new(client.clone(), c));
    let sharder = shards
        .clone()
        .map(|s| Background(tokio::spawn(async move { s.run().await })));

    let (store, streams) = KubeStore::cached(
        client.clone(),
        config.watch_namespace.as_deref(),
        config.cache.clone(),
    );
    let store: Arc<dyn ObjectStore> = Arc::new(store);
    let fingerprint = providers::fingerprint(store.as_ref(), &config.provider_namespace).await?;
    let executor = providers::load(&store, &config.engine, &metrics, None).await?;
    let executors = match standby {
        Some(slot) => {
            slot.replace(executor);
            slot
        }
        None => {
            let slot = ExecutorSlot::new(executor);
            if let Some(webhook) = &config.webhook {
                servers.push(serve_webhook(&client, webhook, &slot, shutdown.clone()).await?);
            }
            slot
        }
    };
    readiness.set_ready();
    let ctx = Arc::new(controller::Context {
        executor: executors,
        store,
        recorder: controller::recorder(client.clone(), &config.identity),
        metrics: metrics.clone(),
        policy: config.requeue.clone(),
        requeues: std::sync::Mutex::default(),
        shards: shards.clone(),
    });
    let (reload_tx, reload_rx) = mpsc::channel(1);
    let watch = Background(tokio::spawn(providers::watch(
        client.clone(),
        config.provider_namespace.clone(),
        config.engine.clone(),
        ctx.clone(),
        fingerprint,
        reload_tx,
    )));

    // Stop reconciling when asked to, or at once when the Lease is lost.
    let (lost_tx, lost_rx) = tokio::sync::oneshot::channel();
    let holder = lease.clone().map(|lease| {
        Background(tokio::spawn(async move {
            let why = lease.hold().await;
            let _ = lost_tx.send(Arc::new(why));
        }))
    });
    let lost = lost_rx.shared();
    let stop = {
        let lost = lost.clone();
        let shutdown = shutdown.clone();
        async move {
            tokio::select! {
                () = shutdown => {}
                // Without leader election there is no holder and the sender is dropped at
                // once: that `Err` is not a lost Lease, so the branch is disabled.
                Ok(_) = lost => {}
            }
        }
    };
    let workloads = management::watched_workloads(&client, config.watch_namespace.as_deref());
    controller::run(streams, workloads, config.concurrency, ctx, reload_rx, stop).await;
    drop(watch);
    metrics.leader.set(0);
    drop(holder);
    drop(sharder);
    if let Some(shards) = &shards {
        shards.release_all().await;
    }
    if let Some(Ok(why)) = lost.now_or_never() {
        return Err(KubeModeError::Lease(why));
    }
    if let Some(lease) = &lease
        && let Err(e) = lease.release().await
    {
        tracing::warn!(error = %chain(&e), "releasing the lease");
    }
    for mut server in servers {
        let _ = (&mut server.0).await;
    }
    tracing::info!("stopped");
    Ok(())
}
