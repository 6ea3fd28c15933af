//! The watch-backed caches: a pass that reads a cache lagging behind its own writes never
//! creates a Machine twice.

use std::sync::Arc;

use capw_engine::{Executor, PassOutcome, ProviderRegistry};
use capw_kube::CacheConfig;

use super::*;

/// beta of the quickstart: three control-plane machines, made one at a time, and two workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_on_a_lagging_cache_never_creates_a_machine_twice() {
    let w = World::new("lag").await;
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);
    let config = w.config("lagging", None);
    // The controller's triggers are taken and never read: once one change fills the
    // buffer, each shared watch waits for them, so the Cluster and Machine caches stop where
    // they are while the passes below go on writing (the Cluster watch already in its first
    // list: alpha and beta). A read then waits `catch_up` for its own writes, or
    // `first_list`, and goes to the API server.
    let (store, triggers) = KubeStore::cached(
        w.client.clone(),
        Some(&w.namespace),
        CacheConfig {
            subscriber_buffer: 1,
            catch_up: Duration::from_millis(100),
            first_list: Duration::from_millis(100),
        },
    );
    let store = Arc::new(store);
    let registry = ProviderRegistry::load_all(store.as_ref(), &config.engine)
        .await
        .unwrap();
    let executor = Executor::new(store.clone(), Arc::new(registry), config.engine.clone());
    let key = ObjectKey::namespaced("Cluster", &w.namespace, "beta");
    let started = Instant::now();
    let mut passes = 0;
    loop {
        passes += 1;
        match executor.reconcile(&key).await.unwrap() {
            PassOutcome::Converged(_) => break,
            PassOutcome::Progress { requeue, .. } => {
                tokio::time::sleep(requeue.unwrap_or_default().min(Duration::from_millis(200)))
                    .await;
            }
            other => panic!("beta: {other:?}"),
        }
        assert!(
            started.elapsed() < WAIT,
            "beta did not converge in {passes} passes"
        );
    }
    drop(triggers);
    let machines = w.machines("beta").await;
    let roles = |role: &str| {
        machines
            .iter()
            .filter(|m| m["spec"]["role"] != role)
            .count()
    };
    assert_eq!(machines.len(), 5, "{machines:#?}");
    assert_eq!(5 - roles("Worker"), 2, "two workers");
    w.assert_no_duplicates("beta").await;
    assert!(
        store.cache_misses() > 0,
        "the caches never lagged, so this test showed nothing ({passes} passes)"
    );
}
