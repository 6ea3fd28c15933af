//! Joins after a day, on a real workload cluster: the bootstrap token the first machines
//! joined with is gone from the cluster (the token cleaner deletes it at its expiry; here it
//! is deleted at once), and a worker added afterwards still joins, through a token the host
//! renewed in the workload cluster before making the worker's join data.

use std::time::Duration;

use capw_local::ClusterOutcome;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::MachinesGuard;
use serde_json::Value;

use crate::support::{
    alpha_only, cluster, condition, env_with, kubectl, machines, nodes, ready, secret_items,
    set_workers, settle_within,
};

/// How long real machines may take to boot and join.
const REAL_SETTLE: Duration = Duration::from_secs(420);

/// The ids of the bootstrap tokens workload cluster `name` holds.
fn token_ids(env: &crate::support::Env, dir: &std::path::Path) -> Vec<String> {
    let out = kubectl(
        &env.store,
        "alpha",
        dir,
        &[
            "get",
            "secrets",
            "-n",
            "kube-system",
            "--field-selector",
            "type=bootstrap.kubernetes.io/token",
            "-o",
            "json",
        ],
    );
    let list: Value = serde_json::from_slice(&out).unwrap();
    let mut ids: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["metadata"]["name"]
                .as_str()
                .unwrap()
                .trim_start_matches("bootstrap-token-")
                .to_owned()
        })
        .collect();
    ids.sort();
    ids
}

/// The token id the cluster's secrets hold now (the part before the dot).
fn stored_token_id(env: &crate::support::Env) -> String {
    let items = secret_items(&env.store, "alpha");
    let (_, token) = items
        .iter()
        .find(|(name, _)| name == "bootstrap-token")
        .expect("kubeadm-bootstrap's token item");
    String::from_utf8_lossy(token)
        .split('.')
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_added_after_the_clusters_token_was_deleted_joins_and_is_ready() {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let dir = machines_dir.path();
    let env = env_with(FaultConfig::default(), Some(dir)).await;
    let mut objects = alpha_only(&env.sim);
    for o in objects.iter_mut().filter(|o| o["kind"] == "Cluster") {
        o["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 1.into();
    }
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);

    // The first worker joined with the token `kubeadm init` made, which the cluster holds.
    let first = stored_token_id(&env);
    assert_eq!(token_ids(&env, dir), std::slice::from_ref(&first));
    let alpha = cluster(&env.store, "alpha").unwrap();
    let valid = condition(&alpha, "JoinTokenValid");
    assert_eq!(valid["status"], "True", "{alpha:#}");
    assert!(
        valid["message"].as_str().unwrap().contains(&first),
        "{valid}"
    );

    // A day later: the token is gone from the workload cluster.
    kubectl(
        &env.store,
        "alpha",
        dir,
        &[
            "delete",
            "secrets",
            "-n",
            "kube-system",
            "--field-selector",
            "type=bootstrap.kubernetes.io/token",
        ],
    );
    assert!(token_ids(&env, dir).is_empty());

    set_workers(&env.store, "alpha", 2);
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(
        report.outcomes["default/alpha"],
        ClusterOutcome::Converged,
        "{:#}",
        Value::Array(
            machines(&env.store, "alpha")
                .iter()
                .map(|m| m["status"].clone())
                .collect()
        )
    );

    // A fresh token, in the workload cluster and in the cluster's secrets, which the new
    // worker joined with: its Node is Ready beside the others.
    let renewed = stored_token_id(&env);
    assert_ne!(renewed, first);
    assert_eq!(token_ids(&env, dir), std::slice::from_ref(&renewed));
    let all = nodes(&env.store, "alpha", dir);
    assert_eq!(all.len(), 3, "{all:#?}");
    assert!(all.iter().all(ready), "{all:#?}");
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert!(
        condition(&alpha, "JoinTokenValid")["message"]
            .as_str()
            .unwrap()
            .contains(&renewed),
        "{alpha:#}"
    );
}
