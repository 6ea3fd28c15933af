//! The quickstart's two clusters and a bad one: create, scale workers, delete.

use std::time::Duration;

use capw_local::ClusterOutcome;
use serde_json::Value;

use crate::support::{
    Env, cluster, condition, delete_and_settle, inventory, machines, manifests, set_workers, settle,
};

/// A cluster whose pod subnet the bootstrap provider refuses.
const BAD: &str = "apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {name: bad, namespace: default}
spec:
  topology:
    classRef: {name: sim-kubeadm}
    version: v1.34.4
    variables:
      - {name: podSubnet, value: not-a-cidr}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_scale_and_delete_clusters_with_the_real_providers() {
    let env = Env::start(Duration::from_millis(20)).await;
    let (sim, store) = (&env.sim, &env.store);
    env.apply(manifests(sim, BAD));
    let executor = env.executor().await;
    for p in store.list("WasmProvider", None).unwrap() {
        assert_eq!(condition(&p, "Loaded")["status"], "True", "{p:#}");
        assert!(
            p["status"]["digest"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
    }

    // Create: both clusters come up; the bad one is blocked with the field path.
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    assert_eq!(report.outcomes["default/beta"], ClusterOutcome::Converged);
    assert!(matches!(
        report.outcomes["default/bad"],
        ClusterOutcome::Blocked(_)
    ));
    let bad = cluster(store, "bad").unwrap();
    let topology = condition(&bad, "TopologyReconciled");
    assert_eq!(topology["status"], "False");
    assert!(
        topology["message"].as_str().unwrap().contains("podSubnet"),
        "{topology:#}"
    );
    assert!(machines(store, "bad").is_empty());
    for name in ["alpha", "beta"] {
        let c = cluster(store, name).unwrap();
        assert_eq!(condition(&c, "Ready")["status"], "True", "{c:#}");
        assert_eq!(c["status"]["phase"], "Provisioned");
        assert!(c["metadata"]["finalizers"][0] == "capw.dev/cluster");
    }
    assert_eq!(machines(store, "alpha").len(), 3);
    assert_eq!(machines(store, "beta").len(), 5);
    let inv = inventory(sim).await;
    assert_eq!(inv.clusters["alpha"].instances.len(), 3);
    assert_eq!(inv.clusters["beta"].instances.len(), 5);
    assert!(!inv.clusters.contains_key("bad"));
    let keys: Vec<Value> = machines(store, "alpha")
        .iter()
        .map(|m| m["spec"]["idempotencyKey"].clone())
        .collect();
    for i in &inv.clusters["alpha"].instances {
        assert!(keys.contains(&Value::from(i.client_token.clone())), "{i:?}");
    }

    // Converged clusters: another run writes nothing.
    let version = store.resource_version().unwrap();
    settle(&executor).await;
    assert_eq!(
        store.resource_version().unwrap(),
        version,
        "a converged run wrote"
    );

    // Scale alpha's workers up, then down.
    set_workers(store, "alpha", 3);
    assert_eq!(
        settle(&executor).await.outcomes["default/alpha"],
        ClusterOutcome::Converged
    );
    assert_eq!(inventory(sim).await.clusters["alpha"].instances.len(), 4);
    set_workers(store, "alpha", 1);
    assert_eq!(
        settle(&executor).await.outcomes["default/alpha"],
        ClusterOutcome::Converged
    );
    assert_eq!(machines(store, "alpha").len(), 2);
    assert_eq!(inventory(sim).await.clusters["alpha"].instances.len(), 2);

    // Delete alpha: nothing of it is left, beta is untouched.
    delete_and_settle(&executor, store, "alpha").await;
    assert!(machines(store, "alpha").is_empty());
    let inv = inventory(sim).await;
    // Nothing of alpha is left in the cloud, its bootstrap registration included.
    assert!(
        !inv.clusters.contains_key("alpha"),
        "{:?}",
        inv.clusters.get("alpha")
    );
    assert_eq!(inv.clusters["beta"].instances.len(), 5);
    assert!(
        store
            .list("Secret", Some("default"))
            .unwrap()
            .iter()
            .all(|s| s["metadata"]["name"] != "alpha-cluster-secrets")
    );
}
