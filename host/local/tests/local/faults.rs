//! simcloud's faults on a real workload cluster, and what the host makes of them:
//! - a workload API that accepts connections and never answers (the cluster's load balancer
//!   turned silent) is judged unreachable within the client's connect and probe timeouts,
//!   nothing is deleted for it, and the cluster is available again once it answers;
//! - a worker whose Node never registers is judged by the pool's `nodeStartupTimeoutSeconds`
//!   and replaced.

use std::time::{Duration, Instant};

use capw_engine::store::ObjectKey;
use capw_local::ClusterOutcome;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::MachinesGuard;
use serde_json::{Value, json};

use crate::support::{
    TOKEN, alpha_only, cluster, condition, env_with, machines, nodes, ready, set_workers,
    settle_within,
};

/// How long real machines may take to boot, join and be replaced.
const REAL_SETTLE: Duration = Duration::from_secs(420);

fn names(machines: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = machines
        .iter()
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_api_is_judged_within_the_client_timeouts_and_a_node_that_never_registers_is_replaced()
 {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let dir = machines_dir.path();
    let env = env_with(FaultConfig::default(), Some(dir)).await;
    let mut objects = alpha_only(&env.sim);
    for o in objects.iter_mut() {
        if o["kind"] == "ClusterClass" {
            o["spec"]["workers"]["machineDeployments"][0]["healthCheck"] = json!({
                "checks": {"nodeStartupTimeoutSeconds": 30},
            });
        }
        if o["kind"] == "Cluster" {
            o["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 1.into();
        }
    }
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let key = ObjectKey::namespaced("Cluster", "default", "alpha");
    let base = env.sim.base_url();
    let before = names(&machines(&env.store, "alpha"));

    // The load balancer accepts connections and never answers: a pass still ends, the API is
    // unreachable with the probe's timeout named, and nothing is deleted for it.
    capw_test_support::simcloud_cluster_faults(
        &base,
        TOKEN,
        "alpha",
        json!({"loadBalancer": "silent"}),
    )
    .await;
    // The balancer looks for its fault every second.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let started = Instant::now();
    executor.reconcile(&key).await.unwrap();
    let took = started.elapsed();
    let alpha = cluster(&env.store, "alpha").unwrap();
    let available = condition(&alpha, "ControlPlaneAvailable");
    assert_eq!(available["status"], "False", "{alpha:#}");
    assert_eq!(
        available["reason"], "WorkloadClusterUnreachable",
        "{available}"
    );
    // The balancer takes the connection and never answers the TLS handshake, so the client's
    // connect timeout (which covers the handshake) ends it, or the probe's own timeout when a
    // connection was open before: either names a deadline.
    let message = available["message"].as_str().unwrap();
    assert!(
        message.contains("deadline has elapsed") || message.contains("no answer within"),
        "{available}"
    );
    // Bounded by those timeouts (seconds), not by the silence: a client without a deadline
    // would wait here for ever.
    assert!(took < Duration::from_secs(60), "a pass took {took:?}");
    for _ in 0..3 {
        executor.reconcile(&key).await.unwrap();
    }
    assert_eq!(names(&machines(&env.store, "alpha")), before);
    capw_test_support::simcloud_cluster_faults(
        &base,
        TOKEN,
        "alpha",
        json!({"loadBalancer": "forwarding"}),
    )
    .await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(
        condition(&alpha, "ControlPlaneAvailable")["status"],
        "True",
        "{alpha:#}"
    );
    assert_eq!(names(&machines(&env.store, "alpha")), before);

    // The next instance never registers its Node: the pool's startup timeout judges its
    // machine, which is replaced; the replacement registers.
    capw_test_support::simcloud_set_faults(&base, TOKEN, json!({"unregistered_nodes": 1})).await;
    set_workers(&env.store, "alpha", 2);
    let deadline = Instant::now() + REAL_SETTLE;
    let mut judged: Option<(String, Value)> = None;
    loop {
        executor.reconcile(&key).await.unwrap();
        let all = machines(&env.store, "alpha");
        for m in &all {
            let c = condition(m, "HealthCheckSucceeded");
            if judged.is_none() && c["status"] == "False" {
                judged = Some((
                    m["metadata"]["name"].as_str().unwrap().to_owned(),
                    c.clone(),
                ));
            }
        }
        let workers: Vec<&Value> = all
            .iter()
            .filter(|m| m["spec"]["role"] == "Worker")
            .collect();
        let replaced = judged
            .as_ref()
            .is_some_and(|(name, _)| all.iter().all(|m| m["metadata"]["name"] != name.as_str()));
        if replaced
            && workers.len() == 2
            && condition(&cluster(&env.store, "alpha").unwrap(), "Ready")["status"] == "True"
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never replaced: {:#?}",
            all.iter().map(|m| &m["status"]).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (name, why) = judged.unwrap();
    assert!(!before.contains(&name), "{name} was there before the fault");
    assert_eq!(why["reason"], "NodeStartupTimeout", "{why:#}");
    let all = nodes(&env.store, "alpha", dir);
    assert_eq!(all.len(), 3, "{all:#?}");
    assert!(all.iter().all(ready), "{all:#?}");
}
