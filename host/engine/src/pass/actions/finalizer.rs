//! `RemoveFinalizer`: the last action of a deleted cluster. What the executor kept for it
//! goes, then the Cluster's finalizer, which lets it go.

use capw_api::{Cluster, ClusterInfrastructure};

use crate::objects::kubeconfig::kubeconfig_secret_name;
use crate::objects::{CLUSTER_FINALIZER, SECRET_KIND, cluster_secret_name};
use crate::pass::env::Env;
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::{ObjectKey, StoreError, key_of};

/// `RemoveFinalizer`: drop what the executor kept for the cluster, then its finalizer.
pub(crate) async fn remove_finalizer(env: &Env, s: &Snapshot) -> ActionNote {
    if let Some(cache) = &env.cluster_cache {
        cache.evict(&s.cluster_id());
    }
    let owned = [
        ObjectKey::namespaced(SECRET_KIND, &s.namespace, &cluster_secret_name(&s.name)),
        ObjectKey::namespaced(SECRET_KIND, &s.namespace, &kubeconfig_secret_name(&s.name)),
        key_of::<ClusterInfrastructure>(&s.namespace, &s.name),
    ];
    for key in owned {
        match env.store.delete(&key).await {
            Ok(_) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Env::store_failed("Ready", &e),
        }
    }
    let key = key_of::<Cluster>(&s.namespace, &s.name);
    match env.remove_finalizer(&key, CLUSTER_FINALIZER).await {
        Ok(()) => ActionNote::done(),
        Err(e) => Env::store_failed("Ready", &e),
    }
}
