//! A control plane that a service runs (examples/managed): simcloud's managed control-plane
//! service driven by sim-managed-control-plane through `reconcile-control-plane`, workers
//! joining it with the CA and token the service hands out, an upgrade of two minors taken as two
//! service updates, an upgrade the service made on its own shown and not fought, and a deletion
//! that leaves nothing in the cloud.

use std::time::Duration;

use capw_engine::store::ObjectKey;
use capw_local::ClusterOutcome;
use serde_json::Value;

use crate::support::{
    Env, TOKEN, cluster, condition, delete_and_settle, inventory, machines, settle, settle_within,
};

fn set_version(env: &Env, name: &str, version: &str) {
    env.store
        .update(&ObjectKey::namespaced("Cluster", "default", name), |c| {
            c["spec"]["topology"]["version"] = version.into();
            Ok(())
        })
        .unwrap();
}

fn machine_versions(env: &Env, name: &str) -> Vec<String> {
    let mut versions: Vec<String> = machines(&env.store, name)
        .iter()
        .map(|m| m["spec"]["version"].as_str().unwrap().to_owned())
        .collect();
    versions.sort();
    versions
}

/// The provider's conditions on the Cluster, by type without the prefix.
fn provider_conditions(c: &Value) -> Vec<(String, String)> {
    c["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| {
            let t = x["type"].as_str()?.strip_prefix("controlplane.capw.dev/")?;
            Some((t.to_owned(), x["status"].as_str()?.to_owned()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_control_plane_from_creation_through_upgrades_to_deletion() {
    let env = Env::start(Duration::from_millis(20)).await;
    env.apply(capw_test_support::managed_objects(&env.sim.base_url()));
    let executor = env.executor().await;

    // Created: the service's control plane, no load balancer, two workers joined with the
    // service's token and CA (simcloud's boot check refuses anything else).
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/gamma"], ClusterOutcome::Converged);
    let c = cluster(&env.store, "gamma").unwrap();
    assert_eq!(c["status"]["phase"], "Provisioned", "{c:#}");
    assert_eq!(condition(&c, "ControlPlaneInitialized")["status"], "True");
    assert_eq!(c["status"]["controlPlane"]["version"], "v1.34.4", "{c:#}");
    assert_eq!(c["status"]["controlPlane"]["replicas"], 3, "{c:#}");
    assert_eq!(c["status"]["controlPlane"]["failuresTolerated"], 1, "{c:#}");
    assert!(
        c["status"]["controlPlaneEndpoint"]["host"]
            .as_str()
            .unwrap()
            .starts_with("mcp-"),
        "{c:#}"
    );
    let conditions = provider_conditions(&c);
    assert!(!conditions.is_empty(), "{c:#}");
    assert!(
        conditions.iter().all(|(_, s)| s == "True"),
        "{conditions:?}"
    );
    let inv = inventory(&env.sim).await;
    let gamma = &inv.clusters["gamma"];
    assert_eq!(gamma.managed_control_planes.len(), 1, "{gamma:?}");
    assert!(gamma.load_balancers.is_empty(), "{gamma:?}");
    assert_eq!(gamma.instances.len(), 2, "{gamma:?}");
    assert!(
        (gamma.instances.iter()).all(|i| i.role == capw_simcloud::model::Role::Worker),
        "{gamma:?}"
    );
    assert_eq!(machine_versions(&env, "gamma"), ["v1.34.4", "v1.34.4"]);
    let mcp = gamma.managed_control_planes[0].id.clone();

    // Two minors in one change: two service updates, the workers after the last.
    set_version(&env, "gamma", "v1.36.1");
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/gamma"], ClusterOutcome::Converged);
    let c = cluster(&env.store, "gamma").unwrap();
    assert_eq!(c["status"]["controlPlane"]["version"], "v1.36.1", "{c:#}");
    assert_eq!(machine_versions(&env, "gamma"), ["v1.36.1", "v1.36.1"]);
    let inv = inventory(&env.sim).await;
    let service = &inv.clusters["gamma"].managed_control_planes[0];
    assert_eq!(service.id, mcp, "the same control plane, updated in place");
    assert_eq!(service.version.trim_start_matches('v'), "1.36.1");

    // The service moves on by itself: shown, not fought; the spec stays the user's.
    capw_test_support::simcloud_auto_upgrade(&env.sim.base_url(), TOKEN, &mcp, "v1.37.0").await;
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/gamma"], ClusterOutcome::Converged);
    let c = cluster(&env.store, "gamma").unwrap();
    assert_eq!(c["spec"]["topology"]["version"], "v1.36.1");
    assert_eq!(c["status"]["controlPlane"]["version"], "v1.37.0", "{c:#}");
    assert!(
        provider_conditions(&c)
            .iter()
            .any(|(t, s)| t == "VersionAhead" && s == "True"),
        "{c:#}"
    );
    assert_eq!(machine_versions(&env, "gamma"), ["v1.36.1", "v1.36.1"]);
    let inv = inventory(&env.sim).await;
    assert_eq!(
        inv.clusters["gamma"].managed_control_planes[0].version,
        "v1.37.0"
    );

    // Deleted: nothing of it is left in the cloud, and no Secret in the store.
    delete_and_settle(&executor, &env.store, "gamma").await;
    let inv = inventory(&env.sim).await;
    assert!(!inv.clusters.contains_key("gamma"), "{inv:?}");
    assert!(
        env.store
            .list("Secret", Some("default"))
            .unwrap()
            .iter()
            .all(|s| { s["metadata"]["labels"]["capw.dev/cluster"] != "gamma" })
    );
}

/// A service that fails while it upgrades: the Cluster shows it (the host's
/// `ControlPlaneReady` False, the provider's `ServiceReady` False naming the service's reason),
/// nothing more is asked of it, and deleting the Cluster still removes everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_control_plane_that_fails_is_shown_and_can_be_deleted() {
    // Each step of the cloud takes a second: long enough to fail the update while it runs.
    let env = Env::start(Duration::from_secs(1)).await;
    env.apply(capw_test_support::managed_objects(&env.sim.base_url()));
    let executor = env.executor().await;
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/gamma"], ClusterOutcome::Converged);

    set_version(&env, "gamma", "v1.35.0");
    let key = ObjectKey::namespaced("Cluster", "default", "gamma");
    let mut service = None;
    for _ in 0..50 {
        executor.reconcile(&key).await.unwrap();
        let inv = inventory(&env.sim).await;
        let cp = inv.clusters["gamma"].managed_control_planes[0].clone();
        if cp.state == capw_simcloud::model::ControlPlaneState::Updating {
            service = Some(cp);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let service = service.expect("the service never began the update");
    capw_test_support::simcloud_fail_control_plane(
        &env.sim.base_url(),
        TOKEN,
        &service.id,
        "etcd did not become healthy",
    )
    .await;

    let report = settle_within(&executor, Duration::from_secs(10)).await;
    assert_ne!(report.outcomes["default/gamma"], ClusterOutcome::Converged);
    let c = cluster(&env.store, "gamma").unwrap();
    assert_eq!(
        condition(&c, "ControlPlaneReady")["status"],
        "False",
        "{c:#}"
    );
    let failed = condition(&c, "controlplane.capw.dev/ServiceReady");
    assert_eq!(failed["status"], "False", "{c:#}");
    assert_eq!(failed["reason"], "ServiceFailed", "{c:#}");
    let message = failed["message"].as_str().unwrap();
    assert!(
        message.contains(&service.id) && message.contains("etcd did not become healthy"),
        "{message}"
    );
    // Nothing more was asked of it: still the one service, failed, at the old version.
    let inv = inventory(&env.sim).await;
    let cp = &inv.clusters["gamma"].managed_control_planes[0];
    assert_eq!(cp.state, capw_simcloud::model::ControlPlaneState::Failed);
    assert_eq!(cp.id, service.id);
    let record = env
        .store
        .get(&ObjectKey::namespaced(
            "ClusterInfrastructure",
            "default",
            "gamma",
        ))
        .unwrap()
        .unwrap();
    assert_eq!(
        record["status"]["controlPlane"]["state"], "NotReady",
        "{record:#}"
    );

    delete_and_settle(&executor, &env.store, "gamma").await;
    assert!(!inventory(&env.sim).await.clusters.contains_key("gamma"));
}
