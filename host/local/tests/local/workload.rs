//! Workload cluster access in the local mode, with real kube-apiservers standing in for the
//! workload clusters: the kubeconfig Secret's life, nodeRef and NodeHealthy from real Nodes,
//! ControlPlaneAvailable, and an unreachable cluster that holds up only itself.

use std::time::{Duration, Instant};

use capw_engine::store::ObjectKey;
use capw_engine::{ClusterCacheConfig, Executor, PassOutcome, WorkloadClusterAccess};
use capw_store::Store;
use capw_test_support::kube::KubeEnv;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::support::{Env, cluster, condition, machines, manifests};

fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced("Cluster", "default", name)
}

fn kubeconfig_secret(store: &Store, name: &str) -> Option<Value> {
    store
        .get(&ObjectKey::namespaced(
            "Secret",
            "default",
            &format!("{name}-kubeconfig"),
        ))
        .unwrap()
}

/// Passes over `name` until `done` holds, for at most a minute; `what` names the wait in the
/// failure (line numbers inside an async test point at the wrong wait).
async fn pass_until(
    executor: &Executor,
    store: &Store,
    name: &str,
    what: &str,
    done: impl Fn(&Store) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(store) {
        assert!(
            Instant::now() < deadline,
            "{name} never got to {what}: {:#}\nmachines: {:#}",
            cluster(store, name).unwrap_or_default()["status"],
            machine_statuses(store, name),
        );
        executor.reconcile(&key(name)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the host's own watch of `name`'s workload cluster (the executor's cache, the
/// connection its passes use) holds every Node of `machines` with Ready `Unknown`: the watch
/// delivers each Node's change on its own, and a pass between two of them would judge one
/// unhealthy machine, within the trigger, where the test means two at once.
async fn host_sees_not_ready(executor: &Executor, store: &Store, name: &str, machines: &[String]) {
    let cache = executor
        .cluster_cache()
        .expect("workload cluster access is on");
    let c = cluster(store, name).unwrap();
    let id = capw_workload::ClusterId {
        namespace: "default".into(),
        name: name.into(),
        uid: c["metadata"]["uid"].as_str().unwrap().into(),
    };
    let secret = kubeconfig_secret(store, name).unwrap();
    let kubeconfig = capw_engine::kubeconfig_value(&secret).unwrap();
    let wanted: Vec<String> = machines.iter().map(|m| format!("node-{m}")).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = cache.observe(&id, &kubeconfig).await.unwrap();
        let unknown: Vec<String> = (seen.nodes.unwrap_or_default().into_iter())
            .filter(|n| {
                n.ready
                    .as_ref()
                    .is_some_and(|r| r.status == capw_workload::ReadyStatus::Unknown)
            })
            .map(|n| n.name)
            .collect();
        if wanted.iter().all(|w| unknown.contains(w)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the host's watch never held {wanted:?} Unknown: {unknown:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The status of every Machine of `name`, for failure messages.
fn machine_statuses(store: &Store, name: &str) -> Value {
    Value::Array(
        machines(store, name)
            .iter()
            .map(|m| m["status"].clone())
            .collect(),
    )
}

fn machines_running(store: &Store, name: &str, count: usize) -> bool {
    let ms = machines(store, name);
    ms.len() == count && ms.iter().all(|m| m["status"]["phase"] == "Running")
}

/// The stored kubeconfig of `name`, swapped for `env`'s (the annotations stay, so the host
/// takes it as made for the current endpoint).
fn point_at(store: &Store, name: &str, env: &KubeEnv) {
    use base64::Engine as _;
    let value =
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(env.kubeconfig()).unwrap());
    store
        .update(
            &ObjectKey::namespaced("Secret", "default", &format!("{name}-kubeconfig")),
            |s| {
                s["data"]["value"] = value.clone().into();
                Ok(())
            },
        )
        .unwrap();
}

/// A Ready Node, named `node-<machine>`, for every Machine of `name` that has a provider id
/// and no Node in `env` yet: what the machines' kubelets would do as they come up. The join
/// tokens the host writes into `env` are registered with simcloud (at `sim`), as the cluster
/// would accept them.
async fn register_nodes(store: &Store, name: &str, env: &KubeEnv, sim: &str) {
    capw_test_support::kube::follow_join_tokens(
        &env.client().await,
        sim,
        super::support::TOKEN,
        // simcloud's name of a cluster in the default namespace.
        name,
    )
    .await;
    let api: Api<Node> = Api::all(env.client().await);
    for m in machines(store, name) {
        if !m["status"]["providerId"].is_string() {
            continue;
        }
        let node_name = format!("node-{}", m["metadata"]["name"].as_str().unwrap());
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": node_name},
            "spec": {"providerID": m["status"]["providerId"]},
        }))
        .unwrap();
        match api.create(&PostParams::default(), &node).await {
            Ok(_) => set_ready(env, &node_name, "True", "KubeletReady").await,
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("registering {node_name}: {e}"),
        }
    }
}

/// Passes over `name`, registering the Nodes of its new machines in `env`, until it is Ready.
async fn grow_until_ready(
    executor: &Executor,
    store: &Store,
    name: &str,
    env: &KubeEnv,
    sim: &str,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while condition(&cluster(store, name).unwrap(), "Ready")["status"] != "True" {
        assert!(
            Instant::now() < deadline,
            "{name} never got Ready: {:#}\nmachines: {:#}",
            cluster(store, name).unwrap_or_default()["status"],
            machine_statuses(store, name),
        );
        register_nodes(store, name, env, sim).await;
        executor.reconcile(&key(name)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sets Node `node`'s Ready condition, its transition now (as a kubelet or the node lifecycle
/// controller would), so that health checks count from this moment.
async fn set_ready(env: &KubeEnv, node: &str, status: &str, reason: &str) {
    let api: Api<Node> = Api::all(env.client().await);
    let now = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let patch = json!({"status": {"conditions": [{
        "type": "Ready", "status": status, "reason": reason, "message": format!("{reason} says so"),
        "lastHeartbeatTime": now, "lastTransitionTime": now,
    }]}});
    api.patch_status(node, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

fn machine_condition(m: &Value, type_: &str) -> Value {
    m["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_).cloned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodes_of_a_real_workload_api_drive_node_refs_health_and_readiness() {
    let (alpha_api, beta_api) = (KubeEnv::start(), KubeEnv::start());
    let mut env = Env::start(Duration::from_millis(5)).await;
    env.config.engine.workload_clusters = WorkloadClusterAccess::Connect(ClusterCacheConfig {
        probe_timeout: Duration::from_secs(1),
        ..ClusterCacheConfig::default()
    });
    env.apply(manifests(&env.sim, ""));
    let executor = env.executor().await;
    let store = &env.store;

    for (name, machines_wanted, api) in [("alpha", 3, &alpha_api), ("beta", 5, &beta_api)] {
        // Until the control plane is up, the cluster has no Nodes: it waits, and says why.
        pass_until(
            &executor,
            store,
            name,
            "a kubeconfig and its first machine running",
            |s| kubeconfig_secret(s, name).is_some() && machines_running(s, name, 1),
        )
        .await;
        // A member counts as ready only once its Node is Ready: while the workload API does
        // not answer, the control plane's provider is told its first member is not ready, and
        // nothing joins it.
        for _ in 0..5 {
            executor.reconcile(&key(name)).await.unwrap();
        }
        assert_eq!(
            machines(store, name).len(),
            1,
            "nothing joined an unseen member"
        );
        let c = cluster(store, name).unwrap();
        assert_eq!(c["status"]["phase"], "Provisioning");
        let secret = kubeconfig_secret(store, name).unwrap();
        assert_eq!(secret["type"], "cluster.x-k8s.io/secret");
        assert_eq!(
            secret["metadata"]["ownerReferences"][0]["uid"],
            c["metadata"]["uid"]
        );
        assert_eq!(secret["metadata"]["ownerReferences"][0]["kind"], "Cluster");
        let written = capw_engine::kubeconfig_value(&secret).unwrap();
        let endpoint = &c["status"]["controlPlaneEndpoint"];
        let server = format!(
            "{}:{}",
            endpoint["host"].as_str().unwrap(),
            endpoint["port"]
        );
        assert!(
            String::from_utf8_lossy(&written).contains(&server),
            "the kubeconfig names {server}"
        );

        point_at(store, name, api);
        grow_until_ready(&executor, store, name, api, &env.sim.base_url()).await;
        assert_eq!(machines(store, name).len(), machines_wanted);
        let c = cluster(store, name).unwrap();
        assert_eq!(c["status"]["phase"], "Provisioned");
        assert_eq!(condition(&c, "ControlPlaneAvailable")["status"], "True");
        for m in machines(store, name) {
            let machine = m["metadata"]["name"].as_str().unwrap();
            assert_eq!(m["status"]["nodeRef"]["name"], format!("node-{machine}"));
            assert_eq!(machine_condition(&m, "NodeHealthy")["status"], "True");
            assert_eq!(
                machine_condition(&m, "NodeHealthy")["reason"],
                "KubeletReady"
            );
        }
    }

    // A Node goes NotReady: its Machine says so with the Node's reason, alpha is not Ready.
    let worker = machines(store, "alpha")
        .into_iter()
        .find(|m| m["spec"]["role"] == "Worker")
        .unwrap();
    let worker_name = worker["metadata"]["name"].as_str().unwrap().to_owned();
    set_ready(
        &alpha_api,
        &format!("node-{worker_name}"),
        "False",
        "KubeletNotReady",
    )
    .await;
    let unhealthy = |s: &Store| {
        machines(s, "alpha").iter().any(|m| {
            m["metadata"]["name"] == worker_name.as_str()
                && machine_condition(m, "NodeHealthy")["status"] == "False"
        })
    };
    let flipped = Instant::now();
    pass_until(&executor, store, "alpha", "NodeHealthy=False", unhealthy).await;
    // The watch delivers the change at once: a pass or two, not a resync, sees it.
    assert!(
        flipped.elapsed() < Duration::from_secs(5),
        "the flip took {:?} to show",
        flipped.elapsed()
    );
    let m = machines(store, "alpha")
        .into_iter()
        .find(|m| m["metadata"]["name"] == worker_name.as_str())
        .unwrap();
    assert_eq!(
        machine_condition(&m, "NodeHealthy")["reason"],
        "KubeletNotReady"
    );
    assert_eq!(
        machine_condition(&m, "NodeHealthy")["message"],
        "KubeletNotReady says so"
    );
    assert_eq!(
        condition(&cluster(store, "alpha").unwrap(), "Ready")["status"],
        "False"
    );
    set_ready(
        &alpha_api,
        &format!("node-{worker_name}"),
        "True",
        "KubeletReady",
    )
    .await;
    pass_until(&executor, store, "alpha", "Ready again", |s| {
        condition(&cluster(s, "alpha").unwrap(), "Ready")["status"] == "True"
    })
    .await;

    // alpha's API goes away: alpha says so and waits; beta's pass completes meanwhile.
    drop(alpha_api);
    let started = Instant::now();
    let alpha_key = key("alpha");
    let (alpha_pass, beta_pass) = tokio::join!(executor.reconcile(&alpha_key), async {
        let started = Instant::now();
        let outcome = executor.reconcile(&key("beta")).await.unwrap();
        (outcome, started.elapsed())
    });
    let (beta_outcome, beta_took) = beta_pass;
    assert!(
        matches!(beta_outcome, PassOutcome::Converged(_)),
        "{beta_outcome:?}"
    );
    assert!(
        beta_took < Duration::from_secs(1),
        "beta's pass took {beta_took:?}"
    );
    let PassOutcome::Progress {
        requeue: Some(requeue),
        failed: true,
        ..
    } = alpha_pass.unwrap()
    else {
        panic!("alpha's pass does not ask for a later look");
    };
    assert!(
        requeue >= Duration::from_millis(100),
        "not hot: {requeue:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let c = cluster(store, "alpha").unwrap();
    let available = c["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "ControlPlaneAvailable")
        .unwrap()
        .clone();
    assert_eq!(available["status"], "False");
    assert_eq!(available["reason"], "WorkloadClusterUnreachable");
    let message = available["message"].as_str().unwrap();
    assert!(
        message.starts_with("127.0.0.1:"),
        "names the endpoint: {message}"
    );
    assert!(!message.contains("token"), "{message}");
    assert_eq!(condition(&c, "Ready")["status"], "False");

    // Deleting alpha removes its kubeconfig with it.
    store.delete(&key("alpha")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let PassOutcome::Gone = executor.reconcile(&key("alpha")).await.unwrap() {
            break;
        }
        assert!(Instant::now() < deadline, "alpha was never deleted");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(kubeconfig_secret(store, "alpha").is_none());
    assert!(kubeconfig_secret(store, "beta").is_some());
}

/// The quickstart's class as `healthy`, whose workers are unhealthy once their Node's Ready has
/// been Unknown for 5 s, replaced while at most one is.
fn class_with_health_check(objects: &[Value]) -> Value {
    let mut class = objects
        .iter()
        .find(|o| o["kind"] == "ClusterClass")
        .unwrap()
        .clone();
    class["metadata"]["name"] = "healthy".into();
    class["spec"]["workers"]["machineDeployments"][0]["healthCheck"] = json!({
        "checks": {"unhealthyNodeConditions": [
            {"type": "Ready", "status": "Unknown", "timeoutSeconds": 5},
        ]},
        "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": 1}},
    });
    class
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unhealthy_worker_is_replaced_within_its_trigger() {
    let api = KubeEnv::start();
    let mut env = Env::start(Duration::from_millis(5)).await;
    env.config.engine.workload_clusters = WorkloadClusterAccess::Connect(ClusterCacheConfig {
        probe_timeout: Duration::from_secs(1),
        ..ClusterCacheConfig::default()
    });
    let mut objects: Vec<Value> = manifests(&env.sim, "")
        .into_iter()
        .filter(|o| o["kind"] != "Cluster")
        .collect();
    objects.push(class_with_health_check(&objects));
    objects.push(json!({
        "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "gamma", "namespace": "default"},
        "spec": {"topology": {
            "classRef": {"name": "healthy"}, "version": "v1.34.4",
            "controlPlane": {"replicas": 1},
            "workers": {"machineDeployments": [
                {"class": "default-worker", "name": "md-0", "replicas": 3},
            ]},
        }},
    }));
    env.apply(objects);
    let executor = env.executor().await;
    let store = &env.store;
    pass_until(&executor, store, "gamma", "a kubeconfig", |s| {
        kubeconfig_secret(s, "gamma").is_some()
    })
    .await;
    point_at(store, "gamma", &api);
    grow_until_ready(&executor, store, "gamma", &api, &env.sim.base_url()).await;
    let c = cluster(store, "gamma").unwrap();
    assert_eq!(condition(&c, "RemediationAllowed")["status"], "True");
    let workers = || -> Vec<Value> {
        machines(store, "gamma")
            .into_iter()
            .filter(|m| m["spec"]["role"] == "Worker")
            .collect()
    };
    let names: Vec<String> = workers()
        .iter()
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    for m in workers() {
        assert_eq!(
            machine_condition(&m, "HealthCheckSucceeded")["status"],
            "True"
        );
    }

    // Two Nodes go Unknown (long ago): more than the trigger allows, so none is replaced,
    // and the Cluster says why.
    for name in &names[..2] {
        set_ready(
            &api,
            &format!("node-{name}"),
            "Unknown",
            "NodeStatusUnknown",
        )
        .await;
    }
    host_sees_not_ready(&executor, store, "gamma", &names[..2]).await;
    pass_until(&executor, store, "gamma", "RemediationAllowed=False", |s| {
        condition(&cluster(s, "gamma").unwrap(), "RemediationAllowed")["status"] == "False"
    })
    .await;
    for _ in 0..10 {
        executor.reconcile(&key("gamma")).await.unwrap();
    }
    let c = cluster(store, "gamma").unwrap();
    let held = condition(&c, "RemediationAllowed");
    assert_eq!(held["reason"], "TooManyUnhealthy");
    assert!(
        held["message"]
            .as_str()
            .unwrap()
            .contains("md-0: 2 unhealthy machines, more than the 1"),
        "{held:#}"
    );
    assert_eq!(workers().len(), 3, "nothing replaced past the trigger");
    assert!(
        workers()
            .iter()
            .all(|m| m["metadata"]["deletionTimestamp"].is_null())
    );
    let sick = workers()
        .into_iter()
        .find(|m| m["metadata"]["name"] == names[0].as_str())
        .unwrap();
    let judged = machine_condition(&sick, "HealthCheckSucceeded");
    assert_eq!(judged["status"], "False", "{sick:#}");
    assert_eq!(judged["reason"], "UnhealthyNode");
    assert!(
        judged["message"]
            .as_str()
            .unwrap()
            .contains("Ready is Unknown"),
        "{judged:#}"
    );

    // One recovers: the other is within the trigger and is replaced, its replacement
    // running before it goes.
    set_ready(&api, &format!("node-{}", names[1]), "True", "KubeletReady").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    // Other workers running in the last look where the sick one was still live.
    let mut running_before = 0;
    loop {
        register_nodes(store, "gamma", &api, &env.sim.base_url()).await;
        executor.reconcile(&key("gamma")).await.unwrap();
        let now = workers();
        let sick = now
            .iter()
            .find(|m| m["metadata"]["name"] == names[0].as_str());
        match sick {
            Some(m) if m["metadata"]["deletionTimestamp"].is_null() => {
                running_before = now
                    .iter()
                    .filter(|m| {
                        m["metadata"]["name"] != names[0].as_str()
                            && m["status"]["phase"] == "Running"
                    })
                    .count();
            }
            _ => {
                assert_eq!(
                    running_before, 3,
                    "the replacement ran before the sick one went"
                );
                if sick.is_none()
                    && condition(&cluster(store, "gamma").unwrap(), "Ready")["status"] == "True"
                {
                    break;
                }
            }
        }
        assert!(Instant::now() < deadline, "never replaced: {now:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after: Vec<String> = workers()
        .iter()
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(after.len(), 3);
    assert!(!after.contains(&names[0]));
    assert!(after.contains(&names[1]) && after.contains(&names[2]));
}
