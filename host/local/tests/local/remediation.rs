//! A worker whose kubelet stops, on a real workload cluster: its Node turns `Ready=Unknown`
//! through the cluster's own node lifecycle controller, the pool's health check judges it
//! unhealthy, and the pool replaces it, the replacement first.

use std::time::{Duration, Instant};

use capw_engine::store::ObjectKey;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::MachinesGuard;
use serde_json::{Value, json};

use crate::support::{
    TOKEN, cluster, condition, env_with, machines, manifests, nodes, ready, settle_within,
};
use capw_local::ClusterOutcome;

/// How long real machines may take to boot, join and be replaced.
const REAL_SETTLE: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_kubelet_stops_turns_not_ready_and_is_replaced() {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let env = env_with(FaultConfig::default(), Some(machines_dir.path())).await;
    let mut objects: Vec<Value> = manifests(&env.sim, "")
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    for o in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        o["spec"]["workers"]["machineDeployments"][0]["healthCheck"] = json!({
            "checks": {"unhealthyNodeConditions": [
                {"type": "Ready", "status": "Unknown", "timeoutSeconds": 5},
                {"type": "Ready", "status": "False", "timeoutSeconds": 5},
            ]},
        });
    }
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let workers = || -> Vec<Value> {
        machines(&env.store, "alpha")
            .into_iter()
            .filter(|m| m["spec"]["role"] == "Worker")
            .collect()
    };
    let before = workers();
    assert_eq!(before.len(), 2);
    let sick = before[0]["metadata"]["name"].as_str().unwrap().to_owned();
    let provider_id = before[0]["status"]["providerId"]
        .as_str()
        .unwrap()
        .to_owned();
    let instance = provider_id.rsplit('/').next().unwrap().to_owned();
    let other = before[1]["metadata"]["name"].as_str().unwrap().to_owned();

    // The kubelet stops: no more heartbeats or Lease renewals.
    capw_test_support::simcloud_kubelet(&env.sim.base_url(), TOKEN, &instance, true).await;
    let key = ObjectKey::namespaced("Cluster", "default", "alpha");
    let deadline = Instant::now() + REAL_SETTLE;
    let mut judged: Option<Value> = None;
    loop {
        executor.reconcile(&key).await.unwrap();
        let now = workers();
        if judged.is_none()
            && let Some(m) = now.iter().find(|m| m["metadata"]["name"] == sick.as_str())
        {
            let c = condition(m, "HealthCheckSucceeded");
            if c["status"] == "False" {
                judged = Some(c.clone());
            }
        }
        let gone = !now.iter().any(|m| m["metadata"]["name"] == sick.as_str());
        if gone && condition(&cluster(&env.store, "alpha").unwrap(), "Ready")["status"] == "True" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{sick} never replaced: {:#?}",
            now.iter().map(|m| &m["status"]).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Judged from the Node the controller manager marked, not from anything capw did to it.
    let judged = judged.expect("the sick machine said why it went");
    assert_eq!(judged["reason"], "UnhealthyNode", "{judged:#}");
    let message = judged["message"].as_str().unwrap();
    assert!(message.contains("Ready is Unknown"), "{message}");

    let after = workers();
    assert_eq!(after.len(), 2);
    assert!(
        after
            .iter()
            .any(|m| m["metadata"]["name"] == other.as_str())
    );
    assert!(!after.iter().any(|m| m["metadata"]["name"] == sick.as_str()));
    for m in &after {
        assert_eq!(
            condition(m, "HealthCheckSucceeded")["status"],
            "True",
            "{m:#}"
        );
    }
    // The workload cluster: one Ready Node per Machine, the sick one's Node gone with it.
    let nodes = nodes(&env.store, "alpha", machines_dir.path());
    assert_eq!(nodes.len(), 3, "{nodes:#?}");
    assert!(nodes.iter().all(ready), "{nodes:#?}");
    assert!(
        !nodes
            .iter()
            .any(|n| n["spec"]["providerID"] == provider_id.as_str())
    );
}
