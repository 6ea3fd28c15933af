//! The Python control-plane provider (plugins/other-languages/py-control-plane, written with
//! capw's Python SDK for contract 0.2, built by `make py-control-plane`) in place of
//! kubeadm-control-plane, through the engine with real boot: a control plane of one member
//! scaled to three and back to one, then upgraded one minor, etcd's members checked by name
//! after each step.

use std::time::Duration;

use capw_engine::store::ObjectKey;
use capw_local::ClusterOutcome;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::{EtcdClient, KUBE_VERSIONS, MachinesGuard};
use serde_json::Value;

use crate::support::{
    alpha_with_three_etcd_members, cluster, condition, delete_and_settle, env_with, example_built,
    inventory, machines, secret_items, settle_within,
};

/// The Python provider's component in the plugin directory.
const COMPONENT: &str = "capw_py_control_plane.wasm";

/// How long real machines may take to boot, join and leave.
const REAL_SETTLE: Duration = Duration::from_secs(420);

/// The control-plane Machines of alpha, by name.
fn control_plane(env: &crate::support::Env) -> Vec<Value> {
    let mut cp: Vec<Value> = machines(&env.store, "alpha")
        .into_iter()
        .filter(|m| m["spec"]["role"] != "Worker")
        .collect();
    cp.sort_by_key(|m| m["metadata"]["name"].as_str().unwrap().to_owned());
    cp
}

/// Alpha is Ready with `count` control-plane machines at `version`, and etcd's members are
/// those machines, by name (asked of etcd through the first of them).
fn assert_settled(env: &crate::support::Env, etcd: &EtcdClient, count: usize, version: &str) {
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(condition(&alpha, "Ready")["status"], "True", "{alpha:#}");
    let cp = control_plane(env);
    assert_eq!(cp.len(), count, "{cp:#?}");
    assert!(
        cp.iter().all(|m| m["spec"]["version"] == version),
        "not all at {version}: {cp:#?}"
    );
    let names: Vec<String> = (cp.iter())
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    let through = cp[0]["status"]["addresses"][0]["address"].as_str().unwrap();
    let mut members: Vec<String> = (etcd.member_list(through).into_iter())
        .map(|m| m.name)
        .collect();
    members.sort();
    assert_eq!(
        members, names,
        "etcd's members are the control-plane machines"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_python_control_plane_scales_one_three_one_and_upgrades_one_minor() {
    if !example_built(COMPONENT, "py-control-plane") {
        return;
    }
    let [v1, v2] = KUBE_VERSIONS;
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let env = env_with(FaultConfig::default(), Some(machines_dir.path())).await;
    let mut objects = alpha_with_three_etcd_members(&env.sim);
    for o in &mut objects {
        if o["kind"] == "WasmProvider" && o["metadata"]["name"] == "kubeadm-control-plane" {
            o["spec"]["source"]["file"]["path"] = COMPONENT.into();
        }
        if o["kind"] == "Cluster" {
            o["spec"]["topology"]["controlPlane"]["replicas"] = 1.into();
        }
    }
    env.apply(objects);
    let executor = env.executor().await;
    let key = ObjectKey::namespaced("Cluster", "default", "alpha");
    let settle = || async {
        let report = settle_within(&executor, REAL_SETTLE).await;
        assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    };
    settle().await;
    let etcd = EtcdClient::from_secret_items(&secret_items(&env.store, "alpha"));
    assert_settled(&env, &etcd, 1, v1);

    for (replicas, version) in [(3, v1), (1, v1)] {
        env.store
            .update(&key, |c| {
                c["spec"]["topology"]["controlPlane"]["replicas"] = replicas.into();
                Ok(())
            })
            .unwrap();
        settle().await;
        assert_settled(&env, &etcd, replicas, version);
    }

    env.store
        .update(&key, |c| {
            c["spec"]["topology"]["version"] = v2.into();
            Ok(())
        })
        .unwrap();
    settle().await;
    assert_settled(&env, &etcd, 1, v2);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(alpha["status"]["controlPlane"]["version"], v2, "{alpha:#}");

    delete_and_settle(&executor, &env.store, "alpha").await;
    assert!(
        !inventory(&env.sim).await.clusters.contains_key("alpha"),
        "alpha left something in the cloud"
    );
}
