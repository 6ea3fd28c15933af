//! Lifecycle hooks through the local executor with the example provider as the hook provider:
//! each point is called and recorded once it proceeds; a hold stops only its own cluster.

use std::sync::Arc;
use std::time::Duration;

use capw_engine::store::ObjectKey;
use capw_local::{ClusterOutcome, Progress};
use serde_json::{Value, json};

use crate::support::{
    Env, cluster, condition, first_of_kind, inventory, machines, manifests, settle,
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
    for o in objects
        .iter_mut()
        .filter(|o| o["metadata"]["name"] == "alpha")
    {
        o["spec"]["topology"]["classRef"]["name"] = "hooked".into();
    }
    objects.push(held);
    env.apply(objects);
    let executor = env.executor().await;

    let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
    let report = capw_local::reconcile_until_settled(&executor, Duration::from_secs(30), progress)
        .await
        .unwrap();
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
    env.store
        .update(
            &ObjectKey::namespaced("ClusterClass", "default", "held"),
            |c| {
                c["spec"]["lifecycleHooks"][0]["config"] = json!({"region": "eu-1"});
                Ok(())
            },
        )
        .unwrap();
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
