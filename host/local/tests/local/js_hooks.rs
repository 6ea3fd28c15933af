//! The JavaScript hooks provider (plugins/other-languages/js-hooks, written with capw's
//! JavaScript SDK for contract 0.3, built by `make js-hooks`) as the quickstart class's hook
//! provider, through the engine: `before-cluster-create` held until a time a few seconds
//! away, answered with a retryable error whose retry-after is the time left. The host waits
//! as told: nothing is created before that time, the hook answers retry-after exactly once,
//! and the cluster comes up after it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capw_local::ClusterOutcome;
use capw_runtime::CallObserver;
use capw_simcloud::FaultConfig;
use serde_json::{Value, json};

use crate::support::{
    alpha_only, cluster, condition, env_with, example_built, inventory, machines, settle_within,
};

/// The JavaScript provider's component in the plugin directory.
const COMPONENT: &str = "capw_js_hooks.wasm";

/// How long the hook holds the cluster's creation, from when the class is applied.
const HOLD: Duration = Duration::from_secs(8);

/// Every finished call of the hook provider: when, and whether it answered.
#[derive(Debug, Default)]
struct HookCalls(Mutex<Vec<(Instant, Result<(), &'static str>)>>);

impl CallObserver for HookCalls {
    fn call_finished(
        &self,
        provider: &str,
        operation: &'static str,
        _elapsed: Duration,
        outcome: Result<(), &'static str>,
    ) {
        if provider == "js-hooks" && operation == "lifecycle-hooks.handle" {
            self.0.lock().unwrap().push((Instant::now(), outcome));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_js_hook_answers_retry_after_once_and_the_host_waits_as_told() {
    if !example_built(COMPONENT, "js-hooks") {
        return;
    }
    let mut env = env_with(FaultConfig::default(), None).await;
    let calls = Arc::new(HookCalls::default());
    env.config.engine.call_observer = Some(calls.clone());
    // The host follows a provider's hint within its requeue bounds: room for the whole hold.
    env.config.engine.requeue.max = Duration::from_secs(30);

    let mut objects = alpha_only(&env.sim);
    objects.push(json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "WasmProvider",
        "metadata": {"name": "js-hooks"},
        "spec": {"source": {"file": {"path": COMPONENT}}},
    }));
    // The providers first: opening the executor loads them, and compiling js-hooks (12 MB) on
    // a cold compile cache can take longer than the hold. Its clock starts once the cluster
    // can be reconciled.
    let (providers, mut objects): (Vec<Value>, Vec<Value>) = objects
        .into_iter()
        .partition(|o| o["kind"] == "WasmProvider");
    env.apply(providers);
    let executor = env.executor().await;

    let started = Instant::now();
    let until = jiff::Timestamp::now() + HOLD;
    for class in objects.iter_mut().filter(|o| o["kind"] == "ClusterClass") {
        class["spec"]["lifecycleHooks"] = json!([{
            "provider": "js-hooks",
            "config": {"holdUntil": {
                "hook": "before-cluster-create",
                "at": until.to_string(),
                "answer": "retry-after",
            }},
        }]);
    }
    env.apply(objects);

    // One settle, as `capw up` runs it: a second would start over and ask the hook again.
    let settle = tokio::spawn({
        let executor = executor.clone();
        async move { settle_within(&executor, Duration::from_secs(120)).await }
    });

    // While it waits: the hook's answer on the Cluster, nothing created, in the cloud or the
    // store.
    let c = loop {
        let alpha = cluster(&env.store, "alpha").unwrap();
        let conditions = alpha["status"]["conditions"].as_array().cloned();
        let hooks =
            (conditions.into_iter().flatten()).find(|c| c["type"] == "LifecycleHooksPassed");
        if let Some(c) = hooks {
            break c;
        }
        assert!(
            started.elapsed() < HOLD / 2,
            "no pass in the first half of the hold: {alpha:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        started.elapsed() < HOLD,
        "the hold ended before it was seen"
    );
    assert_eq!(c["status"], "False", "{c:#}");
    let message = c["message"].as_str().unwrap();
    assert!(
        message.contains("before-cluster-create to v1.34.4 held until"),
        "{c:#}"
    );
    assert!(machines(&env.store, "alpha").is_empty());
    assert!(!inventory(&env.sim).await.clusters.contains_key("alpha"));

    let report = settle.await.unwrap();
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(alpha["status"]["hooks"]["beforeClusterCreate"], "v1.34.4");
    assert_eq!(
        condition(&alpha, "LifecycleHooksPassed")["status"],
        "True",
        "{alpha:#}"
    );

    // One retry-after, then the call after the wait proceeded: the host called back once the
    // time left had passed, not sooner, and never asked again before it.
    let calls = calls.0.lock().unwrap().clone();
    let refused: Vec<_> = calls.iter().filter(|(_, o)| o.is_err()).collect();
    assert_eq!(refused.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1, Err("ProviderError"), "{calls:?}");
    let (proceeded_at, outcome) = calls[1];
    assert_eq!(outcome, Ok(()), "{calls:?}");
    assert!(
        proceeded_at.duration_since(started) >= HOLD - Duration::from_millis(50),
        "called back after {:?}, before the hold of {HOLD:?} ended",
        proceeded_at.duration_since(started)
    );
    // Every machine was created after the hold: the hook ran before anything was made.
    // (The store's timestamps are whole seconds.)
    let until_second = jiff::Timestamp::from_second(until.as_second()).unwrap();
    for m in machines(&env.store, "alpha") {
        let created: jiff::Timestamp = (m["metadata"]["creationTimestamp"].as_str())
            .unwrap()
            .parse()
            .unwrap();
        assert!(created >= until_second, "{created} {m:#}");
    }
}
