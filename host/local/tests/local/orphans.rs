//! An orphan that never goes away: the infrastructure keeps listing a machine no Machine
//! names, and answers `deleted` each time it is asked to delete it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use capw_local::{ClusterOutcome, Progress};
use capw_runtime::CallObserver;
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

/// Counts the delete-machine calls.
#[derive(Debug, Default)]
struct Deletes(AtomicUsize);

impl CallObserver for Deletes {
    fn call_finished(
        &self,
        _provider: &str,
        operation: &'static str,
        _elapsed: Duration,
        _outcome: Result<(), &'static str>,
    ) {
        if operation.ends_with("delete-machine") {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The quickstart's class (the first of `objects`) named `name`, with the example provider as
/// its infrastructure with `config` and only the kubeadm patches (the simcloud endpoint is
/// not the example's).
fn example_class(objects: &[Value], name: &str, config: Value) -> Value {
    let mut class = first_of_kind(objects, "ClusterClass");
    class["metadata"]["name"] = name.into();
    class["spec"]["infrastructure"] = json!({"provider": "example", "config": config});
    class["spec"]["controlPlane"]["machineInfrastructure"]["config"] = config.clone();
    class["spec"]["workers"]["machineDeployments"][0]["infrastructure"]["config"] = config;
    let patches: Vec<Value> = class["spec"]["patches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] != "simcloud-endpoint")
        .cloned()
        .collect();
    class["spec"]["patches"] = patches.into();
    class
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_that_never_goes_away_is_asked_again_with_backoff() {
    let mut env = Env::start(Duration::from_millis(10)).await;
    let deletes = Arc::new(Deletes::default());
    env.config.engine.call_observer = Some(deletes.clone());
    // The local mode's default: the tests' environment waits at most 100 ms.
    env.config.engine.requeue.max = Duration::from_secs(1);
    let mut objects: Vec<Value> = manifests(&env.sim, EXAMPLE)
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    // The example provider as the infrastructure, listing a machine "ghost" for ever.
    objects.push(example_class(
        &objects,
        "haunted",
        json!({"region": "eu-1", "existingMachines": ["ghost"]}),
    ));
    for o in objects
        .iter_mut()
        .filter(|o| o["metadata"]["name"] == "alpha")
    {
        o["spec"]["topology"]["classRef"]["name"] = "haunted".into();
        o["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 0.into();
    }
    env.apply(objects);
    let executor = env.executor().await;

    let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
    let report = capw_local::reconcile_until_settled(&executor, Duration::from_secs(6), progress)
        .await
        .unwrap();
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::TimedOut);
    let asked = deletes.0.load(Ordering::SeqCst);
    eprintln!("the orphan was asked to go {asked} times in 6 s");
    // Asked again and again, but waiting longer each time up to `max_requeue` (1 s): about
    // a dozen times in 6 s, not every few milliseconds.
    assert!(asked >= 2, "asked {asked} times");
    assert!(asked <= 20, "asked {asked} times in 6 s: no backoff");
    // And the cluster says why it is not done.
    let alpha = cluster(&env.store, "alpha").unwrap();
    let infra = condition(&alpha, "OrphansDeleted");
    assert_eq!(infra["status"], "False", "{infra}");
    assert_eq!(infra["reason"], "DeletingOrphan", "{infra}");
    let message = infra["message"].as_str().unwrap();
    assert!(message.contains("machine ghost"), "{message}");
}

/// A provider that lists another cluster's machines as its own (the keys of alpha's
/// Machines, as a cloud account shared between clusters would show them): the host deletes
/// none of them, and the lying cluster says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn machines_another_cluster_owns_are_never_deleted_as_orphans() {
    let mut env = Env::start(Duration::from_millis(10)).await;
    let deletes = Arc::new(Deletes::default());
    env.config.engine.call_observer = Some(deletes.clone());
    let objects: Vec<Value> = manifests(&env.sim, EXAMPLE)
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    env.apply(objects.clone());
    let executor = env.executor().await;
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let keys = || -> Vec<String> {
        machines(&env.store, "alpha")
            .iter()
            .map(|m| m["spec"]["idempotencyKey"].as_str().unwrap().to_owned())
            .collect()
    };
    let alpha_keys = keys();
    let alpha_instances = inventory(&env.sim).await.clusters["alpha"].instances.len();
    assert!(!alpha_keys.is_empty());

    let mut liar = first_of_kind(&objects, "Cluster");
    liar["metadata"]["name"] = "liar".into();
    liar["spec"]["topology"]["classRef"]["name"] = "lying".into();
    liar["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 0.into();
    env.apply(vec![
        example_class(
            &objects,
            "lying",
            json!({"region": "eu-1", "foreignMachines": alpha_keys}),
        ),
        liar,
    ]);
    let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
    let report = capw_local::reconcile_until_settled(&executor, Duration::from_secs(4), progress)
        .await
        .unwrap();
    assert_eq!(report.outcomes["default/liar"], ClusterOutcome::TimedOut);

    assert_eq!(deletes.0.load(Ordering::SeqCst), 0, "a machine was deleted");
    assert_eq!(keys(), alpha_keys, "alpha's Machines changed");
    assert_eq!(
        inventory(&env.sim).await.clusters["alpha"].instances.len(),
        alpha_instances
    );
    let liar = cluster(&env.store, "liar").unwrap();
    let listed = condition(&liar, "ListedMachinesOwned");
    assert_eq!(listed["status"], "False", "{listed}");
    assert_eq!(listed["reason"], "ForeignMachinesListed", "{listed}");
    let message = listed["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{} machine(s)", alpha_keys.len()))
            && alpha_keys.iter().any(|k| message.contains(k.as_str())),
        "{message}"
    );
}
