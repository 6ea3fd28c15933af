//! A worker whose kubelet stops, on a real workload cluster: its Node turns `Ready=Unknown`
//! through the cluster's own node lifecycle controller, the pool's health check judges it
//! unhealthy, and the pool replaces it, the replacement first. A control-plane member whose
//! kube-apiserver is killed (its kubelet reports through it, so its Node turns `Unknown` too)
//! is judged the same way by the control plane's health check and replaced through
//! kubeadm-control-plane's plan (contract 0.3): out of etcd first, then a new member.

use std::time::{Duration, Instant};

use capw_engine::store::ObjectKey;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::MachinesGuard;
use serde_json::{Value, json};

use capw_test_support::real_boot::EtcdClient;

use capw_engine::Executor;

use crate::support::{
    Env, TOKEN, alpha_only, alpha_with_three_etcd_members, cluster, condition, env_with, machines,
    nodes, ready, secret_items, settle_within,
};
use capw_local::ClusterOutcome;

/// How long real machines may take to boot, join and be replaced.
const REAL_SETTLE: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_kubelet_stops_turns_not_ready_and_is_replaced() {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let env = env_with(FaultConfig::default(), Some(machines_dir.path())).await;
    let mut objects = alpha_only(&env.sim);
    for o in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        o["spec"]["workers"]["machineDeployments"][0]["healthCheck"] = json!({
            "checks": ready_lost_for_five_seconds(),
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
    let other = before[1]["metadata"]["name"].as_str().unwrap().to_owned();
    let provider_id = stop_kubelet(&env, &before[0]).await;
    let judged = until_replaced(&env, &executor, &sick, 2, workers, |_| {}).await;
    // Judged from the Node the controller manager marked, not from anything capw did to it.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_control_plane_member_whose_kube_apiserver_is_killed_is_replaced_through_the_plan() {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let env = env_with(FaultConfig::default(), Some(machines_dir.path())).await;
    let mut objects = alpha_with_three_etcd_members(&env.sim);
    for o in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        o["spec"]["controlPlane"]["healthCheck"] = json!({
            "checks": ready_lost_for_five_seconds(),
            "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": 1}},
        });
    }
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let control_plane = || -> Vec<Value> {
        machines(&env.store, "alpha")
            .into_iter()
            .filter(|m| m["spec"]["role"] != "Worker")
            .collect()
    };
    let name = |m: &Value| m["metadata"]["name"].as_str().unwrap().to_owned();
    let address = |m: &Value| {
        m["status"]["addresses"][0]["address"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let before = control_plane();
    assert_eq!(before.len(), 3);
    let sick = name(&before[1]);
    let etcd = EtcdClient::from_secret_items(&secret_items(&env.store, "alpha"));
    // Its kube-apiserver dies and stays down; its kubelet, which talks to it, can no longer
    // report, and the Node turns `Ready=Unknown` as on a kubeadm machine.
    let instance = before[1]["status"]["providerId"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    capw_test_support::simcloud_instance_faults(
        &env.sim.base_url(),
        TOKEN,
        &instance,
        json!({"apiServer": "stopped"}),
    )
    .await;
    let mut left_etcd_while_kept = false;
    let judged = until_replaced(&env, &executor, &sick, 3, control_plane, |now| {
        let leaving = now.iter().find(|m| name(m) == sick);
        if leaving.is_some_and(|m| condition(m, "EtcdMember")["reason"] == "Removed") {
            left_etcd_while_kept = true;
        }
        // Never more than one member replaced at a time: at most one extra machine.
        assert!(now.len() <= 4, "{} control-plane machines", now.len());
    })
    .await;
    assert_eq!(judged["reason"], "UnhealthyNode", "{judged:#}");
    assert!(
        left_etcd_while_kept,
        "the member's machine went before it left etcd"
    );

    // etcd is back to three members, by name the three control-plane machines.
    let after = control_plane();
    let mut expected: Vec<String> = after.iter().map(name).collect();
    expected.sort();
    let mut members: Vec<String> = (etcd.member_list(&address(&after[0])).into_iter())
        .map(|m| m.name)
        .collect();
    members.sort();
    assert_eq!(members, expected);
    assert!(!members.contains(&sick));
    let alpha = cluster(&env.store, "alpha").unwrap();
    // The host recorded the replacement it asked for, the first of a row.
    let last = &alpha["status"]["controlPlane"]["lastRemediation"];
    assert_eq!(last["machine"], sick.as_str(), "{alpha:#}");
    assert_eq!(last["retryCount"], 1, "{alpha:#}");
    assert_eq!(
        condition(&alpha, "RemediationAllowed")["status"],
        "True",
        "{alpha:#}"
    );
}

/// The checks both tests use: a Node whose Ready has been Unknown or False for five seconds.
fn ready_lost_for_five_seconds() -> Value {
    json!({"unhealthyNodeConditions": [
        {"type": "Ready", "status": "Unknown", "timeoutSeconds": 5},
        {"type": "Ready", "status": "False", "timeoutSeconds": 5},
    ]})
}

/// Stops the kubelet of machine `m`'s instance (no more heartbeats, Lease renewals or Pod
/// updates); its
/// provider id.
async fn stop_kubelet(env: &Env, m: &Value) -> String {
    let provider_id = m["status"]["providerId"].as_str().unwrap().to_owned();
    let instance = provider_id.rsplit('/').next().unwrap();
    capw_test_support::simcloud_kubelet(&env.sim.base_url(), TOKEN, instance, true).await;
    provider_id
}

/// Runs passes of alpha until machine `sick` is gone from `of()`, `want` machines remain and
/// alpha is Ready, calling `each` with `of()` after every pass; the sick machine's
/// `HealthCheckSucceeded` from when it was first judged unhealthy.
async fn until_replaced(
    env: &Env,
    executor: &Executor,
    sick: &str,
    want: usize,
    of: impl Fn() -> Vec<Value>,
    mut each: impl FnMut(&[Value]),
) -> Value {
    let key = ObjectKey::namespaced("Cluster", "default", "alpha");
    let deadline = Instant::now() + REAL_SETTLE;
    let mut judged: Option<Value> = None;
    loop {
        executor.reconcile(&key).await.unwrap();
        let now = of();
        each(&now);
        let leaving = now.iter().find(|m| m["metadata"]["name"] == sick);
        if let Some(m) = leaving
            && judged.is_none()
            && condition(m, "HealthCheckSucceeded")["status"] == "False"
        {
            judged = Some(condition(m, "HealthCheckSucceeded").clone());
        }
        if leaving.is_none()
            && now.len() == want
            && condition(&cluster(&env.store, "alpha").unwrap(), "Ready")["status"] == "True"
        {
            return judged.expect("the sick machine said why it went");
        }
        assert!(
            Instant::now() < deadline,
            "{sick} never replaced: {:#?}",
            now.iter().map(|m| &m["status"]).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
