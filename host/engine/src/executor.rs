//! The executor: one pass over one Cluster at a time, with the loaded providers. Each mode
//! decides when a cluster is passed over (capw-local until it settles, the Kubernetes mode
//! from its controller's queue).

use std::sync::Arc;

use capw_workload::ClusterCache;

use crate::config::{EngineConfig, WorkloadClusterAccess};
use crate::error::EngineError;
use crate::pass::env::Env;
use crate::pass::{PassOutcome, pass};
use crate::providers::ProviderRegistry;
use crate::store::{ObjectKey, ObjectStore};

/// Drives the Clusters of an object store with the loaded providers, one pass at a time.
#[derive(Clone)]
pub struct Executor {
    env: Env,
}

impl Executor {
    /// An executor on any object store (the Kubernetes mode's API server, say) with providers
    /// loaded elsewhere.
    ///
    /// With [`WorkloadClusterAccess::Connect`] it makes its own [`ClusterCache`]; use
    /// [`Executor::sharing_cluster_cache`] to keep another executor's clients instead.
    pub fn new(
        store: Arc<dyn ObjectStore>,
        registry: Arc<ProviderRegistry>,
        config: EngineConfig,
    ) -> Self {
        let cluster_cache = match &config.workload_clusters {
            WorkloadClusterAccess::Off => None,
            WorkloadClusterAccess::Connect(cache) => {
                Some(Arc::new(ClusterCache::new(cache.clone())))
            }
        };
        Executor {
            env: Env {
                store,
                registry,
                config,
                cluster_cache,
            },
        }
    }

    /// The same executor using `other`'s workload clients (when both have access on), so
    /// replacing an executor (new providers) keeps every connection and watch.
    pub fn sharing_cluster_cache(mut self, other: &Executor) -> Self {
        if self.env.cluster_cache.is_some() && other.env.cluster_cache.is_some() {
            self.env.cluster_cache = other.env.cluster_cache.clone();
        }
        self
    }

    /// The clients of workload clusters; `None` when access is off.
    pub fn cluster_cache(&self) -> Option<&Arc<ClusterCache>> {
        self.env.cluster_cache.as_ref()
    }

    /// What its actions work with.
    pub(crate) fn env(&self) -> &Env {
        &self.env
    }

    /// The store it works on.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.env.store
    }

    /// One pass over the Cluster at `key`: observe, decide, act, write its status. The
    /// Kubernetes mode's controller calls this from its reconcile function; the local mode
    /// calls it until the cluster settles.
    ///
    /// # Errors
    ///
    /// [`EngineError`] when the store fails; a provider's failure is in the status.
    pub async fn reconcile(&self, key: &ObjectKey) -> Result<PassOutcome, EngineError> {
        pass(&self.env, key).await
    }

    /// The loaded providers.
    pub fn registry(&self) -> &ProviderRegistry {
        &self.env.registry
    }

    /// How it runs.
    pub fn config(&self) -> &EngineConfig {
        &self.env.config
    }
}
