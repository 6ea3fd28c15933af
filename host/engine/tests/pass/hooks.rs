//! Lifecycle hooks through the executor with the example provider as the hook provider:
//! each point is called and recorded once it proceeds; a hold stops only its own cluster.

use std::time::Duration;

use capw_engine::store::ObjectKey;
use serde_json::{Value, json};

use crate::support::{
    ClusterOutcome, Env, cluster, condition, first_of_kind, inventory, machines, manifests, settle,
    settle_within,
};

const EXAMPLE: &str = "apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {name: example}
spec:
  source: {file: {path: capw_example_provider.wasm}}
";

/// The quickstart's class as `name`, with the example provider as its hook provider.
fn class_with_hooks(class: &Value, name: &str, hook_config: Value) -> Value {
    let mut class = class.clone();
    class["metadata"]["name"] = name.into();
    class["spec"]["lifecycleHooks"] = json!([{"provider": "example", "config": hook_config}]);
    class
}

fn hooks(c: &Value) -> Value {
    c["status"]["hooks"].clone()
}

/// Points the Cluster `cluster` in `objects` at the class `class`.
fn use_class(objects: &mut [Value], cluster: &str, class: &str) {
    for o in objects
        .iter_mut()
        .filter(|o| o["metadata"]["name"] == cluster)
    {
        o["spec"]["topology"]["classRef"]["name"] = class.into();
    }
}

/// The hook provider of `class` lets go: its config stops asking for a hold.
fn let_go(store: &capw_store::Store, class: &str) {
    store
        .update(
            &ObjectKey::namespaced("ClusterClass", "default", class),
            |c| {
                c["spec"]["lifecycleHooks"][0]["config"] = json!({"region": "eu-1"});
                Ok(())
            },
        )
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_are_called_at_their_points_and_a_hold_stops_only_its_cluster() {
    let env = Env::start(Duration::from_millis(10)).await;
    let mut objects: Vec<Value> = manifests(&env.sim, EXAMPLE)
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    let class = first_of_kind(&objects, "ClusterClass");
    objects.push(class_with_hooks(
        &class,
        "hooked",
        json!({"region": "eu-1"}),
    ));
    objects.push(class_with_hooks(
        &class,
        "held",
        json!({"region": "eu-1", "simulate": "in-progress"}),
    ));
    let mut held = objects
        .iter()
        .find(|o| o["metadata"]["name"] == "alpha")
        .unwrap()
        .clone();
    held["metadata"]["name"] = "held".into();
    held["spec"]["topology"]["classRef"]["name"] = "held".into();
    use_class(&mut objects, "alpha", "hooked");
    objects.push(held);
    env.apply(objects);
    let executor = env.executor().await;

    let report = settle_within(&executor, Duration::from_secs(30)).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    assert_eq!(report.outcomes["default/held"], ClusterOutcome::TimedOut);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(
        hooks(&alpha),
        json!({"beforeClusterCreate": "v1.34.4", "afterControlPlaneInitialized": "v1.34.4"})
    );
    assert_eq!(condition(&alpha, "LifecycleHooksPassed")["status"], "True");

    // The held cluster: nothing created, the hold's reason on the condition.
    let held = cluster(&env.store, "held").unwrap();
    let c = condition(&held, "LifecycleHooksPassed");
    assert_eq!(c["status"], "False", "{held:#}");
    assert_eq!(c["reason"], "BeforeClusterCreateHeld", "{c:#}");
    assert!(c["message"].as_str().unwrap().contains("example"), "{c:#}");
    assert!(machines(&env.store, "held").is_empty());
    assert!(!inventory(&env.sim).await.clusters.contains_key("held"));

    // An upgrade passes its three points, in the status once each.
    env.store
        .update(&ObjectKey::namespaced("Cluster", "default", "alpha"), |c| {
            c["spec"]["topology"]["version"] = "v1.34.5".into();
            Ok(())
        })
        .unwrap();
    // The hook provider of the held cluster lets go: it goes on from where it was held.
    let_go(&env.store, "held");
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    assert_eq!(report.outcomes["default/held"], ClusterOutcome::Converged);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(
        hooks(&alpha),
        json!({
            "beforeClusterCreate": "v1.34.4",
            "afterControlPlaneInitialized": "v1.34.4",
            "beforeClusterUpgrade": "v1.34.5",
            "afterControlPlaneUpgrade": "v1.34.5",
            "afterClusterUpgrade": "v1.34.5",
        })
    );
    assert!(
        machines(&env.store, "alpha")
            .iter()
            .all(|m| m["spec"]["version"] == "v1.34.5")
    );
    let held = cluster(&env.store, "held").unwrap();
    assert_eq!(hooks(&held)["beforeClusterCreate"], "v1.34.4");
    assert_eq!(machines(&env.store, "held").len(), 3);
    assert_eq!(condition(&held, "LifecycleHooksPassed")["status"], "True");
}

/// A lifecycle-hooks provider built from the frozen 0.1 WIT (tests/plugins/hooks-v0_1), the
/// same config schema as the example's hook side.
const HOOKS_V0_1: &str = "apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {name: hooks-v0-1}
spec:
  source: {file: {path: capw_hooks_v0_1_provider.wasm}}
";

/// One cluster served by both contract versions at once: the quickstart's infrastructure,
/// bootstrap and control-plane providers are built with the SDK (0.2), its hook provider from
/// the 0.1 WIT. The cluster comes up, the 0.1 provider's hooks are called at their points, and
/// a hold from it stops the cluster with its message, as from a 0.2 provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_comes_up_with_a_0_1_provider_beside_0_2_ones() {
    let env = Env::start(Duration::from_millis(10)).await;
    let mut objects: Vec<Value> = manifests(&env.sim, HOOKS_V0_1)
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    let mut class = first_of_kind(&objects, "ClusterClass");
    class["metadata"]["name"] = "mixed".into();
    class["spec"]["lifecycleHooks"] =
        json!([{"provider": "hooks-v0-1", "config": {"region": "hold"}}]);
    objects.push(class);
    use_class(&mut objects, "alpha", "mixed");
    env.apply(objects);
    let executor = env.executor().await;

    // Each provider loaded at its own contract version.
    let versions: std::collections::BTreeMap<String, String> = env
        .store
        .list("WasmProvider", None)
        .unwrap()
        .iter()
        .map(|p| {
            let name = p["metadata"]["name"].as_str().unwrap().to_owned();
            let version = p["status"]["contractVersion"].as_str();
            (name, version.unwrap_or_else(|| panic!("{p:#}")).to_owned())
        })
        .collect();
    assert_eq!(versions["hooks-v0-1"], "0.1.0", "{versions:?}");
    for sdk_built in ["sim-infra", "kubeadm-bootstrap", "kubeadm-control-plane"] {
        assert_eq!(versions[sdk_built], "0.3.0", "{sdk_built}: {versions:?}");
    }

    // The 0.1 provider holds: its answer, with the cluster's name it read from the 0.1
    // context record, stops the cluster before anything is created.
    let report = settle_within(&executor, Duration::from_secs(5)).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::TimedOut);
    let alpha = cluster(&env.store, "alpha").unwrap();
    let c = condition(&alpha, "LifecycleHooksPassed");
    assert_eq!(c["reason"], "BeforeClusterCreateHeld", "{c:#}");
    assert!(
        c["message"].as_str().unwrap().contains("default/alpha"),
        "{c:#}"
    );
    assert!(machines(&env.store, "alpha").is_empty());

    // It lets go: the 0.2 providers bring the cluster up, the 0.1 one passes its points.
    let_go(&env.store, "mixed");
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(
        hooks(&alpha),
        json!({"beforeClusterCreate": "v1.34.4", "afterControlPlaneInitialized": "v1.34.4"})
    );
    assert_eq!(condition(&alpha, "LifecycleHooksPassed")["status"], "True");
    assert_eq!(condition(&alpha, "Ready")["status"], "True", "{alpha:#}");
    assert_eq!(machines(&env.store, "alpha").len(), 3);
    assert!(inventory(&env.sim).await.clusters.contains_key("alpha"));
}
