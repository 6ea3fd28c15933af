//! etcd membership kept by the host, on a real workload cluster: a member no machine has is
//! removed, and a control plane scaled 3 → 1 loses each member before its machine, so that
//! whenever no step is in flight etcd's members are the control-plane machines, by name and
//! peer URL.

use std::time::{Duration, Instant};

use capw_engine::store::ObjectKey;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::{EtcdClient, MachinesGuard};
use serde_json::Value;

use crate::support::{
    alpha_with_three_etcd_members, cluster, condition, env_with, kubectl, machines, secret_items,
    settle_within,
};
use capw_local::ClusterOutcome;

/// How long real machines may take to boot, join and leave.
const REAL_SETTLE: Duration = Duration::from_secs(420);

fn name(m: &Value) -> String {
    m["metadata"]["name"].as_str().unwrap().to_owned()
}

fn address(m: &Value) -> String {
    m["status"]["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_follow_the_control_plane_machines_through_a_scale_down() {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let env = env_with(FaultConfig::default(), Some(machines_dir.path())).await;
    let objects = alpha_with_three_etcd_members(&env.sim);
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);

    let etcd = EtcdClient::from_secret_items(&secret_items(&env.store, "alpha"));
    let control_plane = || -> Vec<Value> {
        let mut cp: Vec<Value> = machines(&env.store, "alpha")
            .into_iter()
            .filter(|m| m["spec"]["role"] != "Worker")
            .collect();
        cp.sort_by_key(name);
        cp
    };
    // (name, peer URL) of every member, and of every control-plane machine.
    let members = |through: &str| -> Vec<(String, String)> {
        let mut m: Vec<(String, String)> = etcd
            .member_list(through)
            .into_iter()
            .map(|m| (m.name, m.peer_urls.join(",")))
            .collect();
        m.sort();
        m
    };
    let expected = |cp: &[Value]| -> Vec<(String, String)> {
        cp.iter()
            .map(|m| (name(m), format!("https://{}:2380", address(m))))
            .collect()
    };
    let cp = control_plane();
    assert_eq!(cp.len(), 3);
    assert_eq!(members(&address(&cp[0])), expected(&cp));
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(
        condition(&alpha, "EtcdMembership")["status"],
        "True",
        "{alpha:#}"
    );
    for m in &cp {
        assert_eq!(condition(m, "EtcdMember")["reason"], "Member", "{m:#}");
    }
    kubectl(
        &env.store,
        "alpha",
        machines_dir.path(),
        &["create", "configmap", "day-two", "--from-literal=kept=yes"],
    );

    // A member no machine has (a machine that died after `member add`) goes.
    etcd.add_member(&address(&cp[0]), "ghost", "https://127.0.0.254:2380");
    assert_eq!(members(&address(&cp[0])).len(), 4);
    let key = ObjectKey::namespaced("Cluster", "default", "alpha");
    let deadline = Instant::now() + Duration::from_secs(60);
    while members(&address(&cp[0])).len() == 4 {
        assert!(Instant::now() < deadline, "the ghost member stayed");
        executor.reconcile(&key).await.unwrap();
    }
    assert_eq!(members(&address(&cp[0])), expected(&cp));

    // 3 → 1, one pass at a time.
    env.store
        .update(&key, |c| {
            c["spec"]["topology"]["controlPlane"]["replicas"] = 1.into();
            Ok(())
        })
        .unwrap();
    let deadline = Instant::now() + REAL_SETTLE;
    let mut left_before_deleted = Vec::new();
    loop {
        executor.reconcile(&key).await.unwrap();
        let cp = control_plane();
        let staying: Vec<&Value> = cp
            .iter()
            .filter(|m| m["metadata"]["deletionTimestamp"].is_null())
            .collect();
        let through = address(staying[0]);
        let now = members(&through);
        if staying.len() == cp.len() {
            // No step in flight: the members are the machines.
            assert_eq!(now, expected(&cp));
        }
        for m in cp
            .iter()
            .filter(|m| !m["metadata"]["deletionTimestamp"].is_null())
        {
            // A machine being deleted that says it left etcd has left, while it still runs.
            if condition(m, "EtcdMember")["reason"] == "Removed" {
                assert!(!now.iter().any(|(n, _)| *n == name(m)), "{now:?}");
                if !left_before_deleted.contains(&name(m)) {
                    left_before_deleted.push(name(m));
                }
            }
        }
        if cp.len() == 1
            && condition(&cluster(&env.store, "alpha").unwrap(), "Ready")["status"] == "True"
        {
            break;
        }
        assert!(Instant::now() < deadline, "never scaled down: {cp:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Both machines left etcd through the host, each before its machine was deleted.
    assert_eq!(left_before_deleted.len(), 2, "{left_before_deleted:?}");
    let cp = control_plane();
    assert_eq!(members(&address(&cp[0])), expected(&cp));
    let kept = kubectl(
        &env.store,
        "alpha",
        machines_dir.path(),
        &["get", "configmap", "day-two", "-o", "jsonpath={.data.kept}"],
    );
    assert_eq!(String::from_utf8_lossy(&kept), "yes");
}
