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
            Value::Array(
                machines(store, name)
                    .iter()
                    .map(|m| m["status"].clone())
                    .collect()
            ),
        );
        executor.reconcile(&key(name)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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

/// A Ready Node for every Machine of `name` in `env`, named `node-<machine>`.
async fn register_nodes(store: &Store, name: &str, env: &KubeEnv) {
    let api: Api<Node> = Api::all(env.client().await);
    for m in machines(store, name) {
        let node_name = format!("node-{}", m["metadata"]["name"].as_str().unwrap());
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": node_name},
            "spec": {"providerID": m["status"]["providerId"]},
        }))
        .unwrap();
        api.create(&PostParams::default(), &node).await.unwrap();
        set_ready(env, &node_name, "True", "KubeletReady").await;
    }
}

async fn set_ready(env: &KubeEnv, node: &str, status: &str, reason: &str) {
    let api: Api<Node> = Api::all(env.client().await);
    let patch = json!({"status": {"conditions": [{
        "type": "Ready", "status": status, "reason": reason, "message": format!("{reason} says so"),
        "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z",
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
            "a kubeconfig and running machines",
            |s| kubeconfig_secret(s, name).is_some() && machines_running(s, name, machines_wanted),
        )
        .await;
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
        register_nodes(store, name, api).await;
        pass_until(&executor, store, name, "Ready", |s| {
            condition(&cluster(s, name).unwrap(), "Ready")["status"] == "True"
        })
        .await;
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
