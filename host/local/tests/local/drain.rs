//! Drain before delete, on a real workload cluster: real kube-scheduler, controller manager
//! (ReplicaSets, the disruption controller that keeps PodDisruptionBudgets' status) and API
//! server (the eviction API), and Pods of the pause image run by the kubelet stand-in.
//!
//! One cluster, three workers removed oldest first, two scale-downs:
//! - released: a Deployment of two pause Pods, both on the oldest worker, under a budget of
//!   `minAvailable: 1`. The drain evicts one, waits while the budget forbids the second, and
//!   evicts it once the first one's replacement is Ready on another Node; the machine goes
//!   before the timeout.
//! - held: two bare pause Pods on the next worker under the same kind of budget. Nothing
//!   replaces a bare Pod, so one is evicted and the other holds the drain: the Machine says
//!   which Pod and which budget, until the timeout passes and the deletion goes on.
//!
//! Every Pod that left did so through the eviction API: a `kubectl get pods --watch` records
//! each deletion, and the API server marks an evicted Pod `DisruptionTarget` with the reason
//! `EvictionByEvictionAPI`.

use std::io::Read as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use capw_engine::Executor;
use capw_engine::store::ObjectKey;
use capw_local::ClusterOutcome;
use capw_simcloud::FaultConfig;
use capw_test_support::real_boot::MachinesGuard;
use capw_test_support::real_boot::{KUBE_VERSIONS, kube_binaries};
use serde_json::{Value, json};

use crate::support::{
    Env, alpha_only, cluster, condition, env_with, kubectl, machines, set_workers, settle_within,
};

/// How long real machines may take to boot and join.
const REAL_SETTLE: Duration = Duration::from_secs(420);

/// The class's drain timeout in this test.
const DRAIN_TIMEOUT: u64 = 60;

/// The workers of alpha in the order a scale-down with `deletion.order: Oldest` removes them.
fn workers_oldest_first(env: &Env) -> Vec<Value> {
    let mut workers: Vec<Value> = machines(&env.store, "alpha")
        .into_iter()
        .filter(|m| m["spec"]["role"] == "Worker" && m["metadata"]["deletionTimestamp"].is_null())
        .collect();
    workers.sort_by_key(|m| {
        (
            m["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            m["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        )
    });
    workers
}

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap().to_owned()
}

fn node_of(m: &Value) -> String {
    m["status"]["nodeRef"]["name"]
        .as_str()
        .unwrap_or_else(|| panic!("no nodeRef: {m:#}"))
        .to_owned()
}

/// Applies `objects` to alpha's workload cluster.
fn apply(env: &Env, dir: &Path, file: &str, objects: &[Value]) {
    let path = dir.join(file);
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&path, serde_json::to_vec(&list).unwrap()).unwrap();
    kubectl(
        &env.store,
        "alpha",
        dir,
        &["apply", "-f", path.to_str().unwrap()],
    );
}

/// The Pods of alpha's `default` namespace labelled `app=<app>`.
fn pods(env: &Env, dir: &Path, app: &str) -> Vec<Value> {
    let out = kubectl(
        &env.store,
        "alpha",
        dir,
        &["get", "pods", "-l", &format!("app={app}"), "-o", "json"],
    );
    let list: Value = serde_json::from_slice(&out).unwrap();
    list["items"].as_array().cloned().unwrap_or_default()
}

fn pod_ready(p: &Value) -> bool {
    p["metadata"]["deletionTimestamp"].is_null()
        && p["status"]["phase"] == "Running"
        && p["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// Waits until `want` Pods of `app` are Ready, on `node` when given; their names.
async fn until_ready(env: &Env, dir: &Path, app: &str, want: usize, node: Option<&str>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let all = pods(env, dir, app);
        let ready = all
            .iter()
            .filter(|p| pod_ready(p) && node.is_none_or(|n| p["spec"]["nodeName"] == n))
            .count();
        if ready == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{want} Pods of {app} never Ready{}: {:#?}",
            node.map(|n| format!(" on {n}")).unwrap_or_default(),
            all.iter()
                .map(|p| (&p["spec"]["nodeName"], &p["status"]))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A pause container, as the Pods of this test run.
fn pause() -> Value {
    json!([{"name": "pause", "image": "registry.k8s.io/pause:3.10"}])
}

fn budget(app: &str) -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}},
    })
}

/// `kubectl get pods --watch` of the `default` namespace, every event as JSON into a file.
struct PodWatch {
    child: Child,
    file: std::path::PathBuf,
}

impl PodWatch {
    fn start(env: &Env, dir: &Path) -> PodWatch {
        // The kubeconfig file the support's kubectl wrote for alpha.
        kubectl(&env.store, "alpha", dir, &["version", "-o", "json"]);
        let file = dir.join("pod-events.json");
        let out = std::fs::File::create(&file).unwrap();
        let child = Command::new(kube_binaries().join(KUBE_VERSIONS[0]).join("bin/kubectl"))
            .arg("--kubeconfig")
            .arg(dir.join("alpha.kubeconfig"))
            .args([
                "get",
                "pods",
                "-n",
                "default",
                "--watch",
                "--output-watch-events",
                "-o",
                "json",
            ])
            .stdout(out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        PodWatch { child, file }
    }

    /// Stops the watch; each Pod deleted meanwhile, by name, with its last state.
    fn deleted(mut self) -> Vec<(String, Value)> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut text = String::new();
        std::fs::File::open(&self.file)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .filter_map(Result::ok)
            .filter(|e| e["type"] == "DELETED")
            .map(|e| (name(&e["object"]), e["object"].clone()))
            .collect()
    }
}

/// Whether Pod `p` was evicted through the eviction API (the API server marks it so).
fn evicted(p: &Value) -> bool {
    p["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter().any(|c| {
            c["type"] == "DisruptionTarget"
                && c["status"] == "True"
                && c["reason"] == "EvictionByEvictionAPI"
        })
    })
}

/// What a scale-down's drain showed, pass by pass, until machine `leaving` was gone.
#[derive(Default)]
struct Seen {
    /// Every distinct `DrainingSucceeded` of the leaving machine, in order.
    conditions: Vec<Value>,
    /// When the drain's first round was recorded, and when the machine was gone.
    started: Option<Instant>,
    gone: Option<Instant>,
}

async fn until_gone(env: &Env, executor: &Executor, leaving: &str) -> Seen {
    let key = ObjectKey::namespaced("Cluster", "default", "alpha");
    let deadline = Instant::now() + Duration::from_secs(DRAIN_TIMEOUT + 180);
    let mut seen = Seen::default();
    loop {
        executor.reconcile(&key).await.unwrap();
        let all = machines(&env.store, "alpha");
        let Some(m) = all.iter().find(|m| m["metadata"]["name"] == leaving) else {
            seen.gone = Some(Instant::now());
            return seen;
        };
        let c = condition(m, "DrainingSucceeded");
        if !c.is_null() {
            seen.started.get_or_insert_with(Instant::now);
            let mut shown = c.clone();
            shown.as_object_mut().unwrap().remove("lastTransitionTime");
            if seen.conditions.last() != Some(&shown) {
                eprintln!("{leaving}: {shown}");
                seen.conditions.push(shown);
            }
        }
        assert!(
            Instant::now() < deadline,
            "{leaving} never deleted: {:#}",
            m["status"]
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_drain_waits_for_budgets_and_gives_up_at_its_timeout() {
    let machines_dir = tempfile::tempdir().unwrap();
    let _guard = MachinesGuard(machines_dir.path().to_owned());
    let dir = machines_dir.path();
    let env = env_with(FaultConfig::default(), Some(dir)).await;
    let mut objects = alpha_only(&env.sim);
    for o in objects.iter_mut() {
        if o["kind"] == "ClusterClass" {
            o["spec"]["workers"]["machineDeployments"][0]["deletion"] =
                json!({"order": "Oldest", "nodeDrainTimeoutSeconds": DRAIN_TIMEOUT});
        }
        if o["kind"] == "Cluster" {
            o["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 3.into();
        }
    }
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle_within(&executor, REAL_SETTLE).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let workers = workers_oldest_first(&env);
    assert_eq!(workers.len(), 3);
    let nodes: Vec<String> = workers.iter().map(node_of).collect();
    let watch = PodWatch::start(&env, dir);

    // Released: both Pods of a Deployment on the oldest worker (the others cordoned while the
    // scheduler places them, then uncordoned), under a budget that lets one go at a time.
    for n in &nodes[1..] {
        kubectl(&env.store, "alpha", dir, &["cordon", n]);
    }
    apply(
        &env,
        dir,
        "web.json",
        &[
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": pause()},
                    },
                },
            }),
            budget("web"),
        ],
    );
    until_ready(&env, dir, "web", 2, Some(&nodes[0])).await;
    for n in &nodes[1..] {
        kubectl(&env.store, "alpha", dir, &["uncordon", n]);
    }
    set_workers(&env.store, "alpha", 2);
    let released = until_gone(&env, &executor, &name(&workers[0])).await;
    // The first round evicted one Pod; the budget refused the second until the first one's
    // replacement was Ready on another Node.
    let waited = released.conditions.iter().any(|c| {
        c["reason"] == "Draining"
            && c["message"]
                .as_str()
                .is_some_and(|m| m.contains("PodDisruptionBudget web"))
    });
    assert!(
        waited,
        "the budget never held the drain: {:#?}",
        released.conditions
    );
    let last = released.conditions.last().expect("the drain was recorded");
    assert_eq!(last["reason"], "Drained", "{:#?}", released.conditions);
    assert_eq!(last["status"], "True");
    let took = released.gone.unwrap() - released.started.unwrap();
    assert!(
        took < Duration::from_secs(DRAIN_TIMEOUT),
        "released after {took:?}, not before the {DRAIN_TIMEOUT}s timeout"
    );
    until_ready(&env, dir, "web", 2, None).await;
    assert!(
        pods(&env, dir, "web")
            .iter()
            .all(|p| p["spec"]["nodeName"] != nodes[0].as_str()),
        "a web Pod is still on the drained Node"
    );

    // Held: two bare Pods on the next worker to go; nothing replaces the one evicted, so the
    // other holds the drain until the timeout.
    let bare = |i: usize| {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("held-{i}"), "namespace": "default", "labels": {"app": "held"}},
            "spec": {"nodeName": nodes[1], "containers": pause()},
        })
    };
    apply(&env, dir, "held.json", &[bare(0), bare(1), budget("held")]);
    until_ready(&env, dir, "held", 2, Some(&nodes[1])).await;
    set_workers(&env.store, "alpha", 1);
    let held = until_gone(&env, &executor, &name(&workers[1])).await;
    let named = held.conditions.iter().any(|c| {
        let message = c["message"].as_str().unwrap_or_default();
        c["reason"] == "Draining"
            && message.contains("Pod default/held-")
            && message.contains("PodDisruptionBudget held")
    });
    assert!(
        named,
        "the Machine never named the Pod and its budget: {:#?}",
        held.conditions
    );
    let last = held.conditions.last().unwrap();
    assert_eq!(last["reason"], "DrainTimedOut", "{:#?}", held.conditions);
    let took = held.gone.unwrap() - held.started.unwrap();
    assert!(
        took >= Duration::from_secs(DRAIN_TIMEOUT - 5),
        "the held drain ended after {took:?}, before its {DRAIN_TIMEOUT}s timeout"
    );

    // What left, left through the eviction API: both web Pods of the first Node and one of
    // the held Pods; none was deleted otherwise while the machines went.
    let deleted = watch.deleted();
    for (pod, state) in &deleted {
        assert!(
            evicted(state),
            "Pod {pod} was deleted without an eviction: {state:#}"
        );
    }
    let gone = |prefix: &str| {
        deleted
            .iter()
            .filter(|(p, _)| p.starts_with(prefix))
            .count()
    };
    assert!(
        gone("web-") >= 2,
        "{:?}",
        deleted.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    assert_eq!(
        gone("held-"),
        1,
        "{:?}",
        deleted.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    let alpha = cluster(&env.store, "alpha").unwrap();
    assert_eq!(machines(&env.store, "alpha").len(), 2, "{alpha:#}");
}
