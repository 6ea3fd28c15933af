//! The store contract of `capw-store-contract` on the Kubernetes store against the real API
//! server: writing through to it, and reading from the watch caches as the controller does.

use capw_kube::CacheConfig;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubernetes_store_keeps_the_store_contract() {
    let w = World::new("contract").await;
    capw_store_contract::check(&w.store, &w.namespace).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cached_kubernetes_store_keeps_the_store_contract() {
    let w = World::new("contract-cached").await;
    let (store, _triggers) =
        KubeStore::cached(w.client.clone(), Some(&w.namespace), CacheConfig::default());
    capw_store_contract::check(&store, &w.namespace).await;
}
