//! Two clusters, one whose infrastructure provider hangs: the other converges meanwhile, the
//! hung one shows `DeadlineExceeded`, and it goes on to Ready once the provider answers again.
//!
//! The hanging provider is the hostile test component in its `gated` behaviour: it GETs a URL
//! with no timeout of its own, and the test's gate holds the request until it is opened, so
//! each `reconcile-cluster` call hangs until the host's one-second deadline ends it.

#[path = "../local/support.rs"]
#[allow(
    dead_code,
    unused_imports,
    reason = "the local tests' shared set-up; this binary uses a part of it"
)]
mod support;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use capw_local::{ClusterOutcome, Progress};
use serde_json::Value;
use tokio::sync::watch;

use crate::support::{Env, cluster, condition, inventory, manifests};

/// A server whose every request waits until the gate opens, then answers 200.
async fn start_gate() -> (String, watch::Sender<bool>) {
    let (open, rx) = watch::channel(false);
    async fn pass(State(mut rx): State<watch::Receiver<bool>>) -> StatusCode {
        let _ = rx.wait_for(|open| *open).await;
        StatusCode::OK
    }
    let app = Router::new().route("/gate", get(pass)).with_state(rx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (origin, open)
}

/// The hostile component as an infrastructure provider with a one-second deadline, a class
/// that uses it with the kubeadm providers, and a cluster of that class.
fn gated(origin: &str) -> String {
    format!(
        r#"apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {{name: gated-infra}}
spec:
  source: {{file: {{path: capw_hostile_provider.wasm}}}}
  grants: {{http: ["{origin}"], callTimeoutSeconds: 1}}
---
apiVersion: capw.dev/v1alpha1
kind: ClusterClass
metadata: {{name: gated, namespace: default}}
spec:
  infrastructure:
    provider: gated-infra
    config: {{behaviour: gated, url: "{origin}/gate"}}
  controlPlane:
    provider: kubeadm-control-plane
    config: {{}}
    machineInfrastructure:
      config: {{behaviour: healthy}}
    bootstrap:
      provider: kubeadm-bootstrap
      config: {{keyAlgorithm: ecdsa-p256}}
  workers:
    machineDeployments:
      - class: default-worker
        infrastructure:
          config: {{behaviour: healthy}}
        bootstrap:
          provider: kubeadm-bootstrap
          config: {{keyAlgorithm: ecdsa-p256}}
---
apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: stuck, namespace: default}}
spec:
  topology:
    classRef: {{name: gated}}
    version: v1.34.1
    controlPlane: {{replicas: 1}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: 1}}
"#
    )
}

/// Polls the store until `ok` holds for cluster `name`, for at most two minutes.
async fn until(env: &Env, name: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..1200 {
        if let Some(c) = cluster(&env.store, name)
            && ok(&c)
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{name} never got {what}: {:#}",
        cluster(&env.store, name).unwrap_or_default()
    );
}

fn ready(c: &Value) -> bool {
    condition(c, "Ready")["status"] == "True"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_provider_holds_up_only_its_own_cluster_and_recovers() {
    let env = Env::start(Duration::from_millis(10)).await;
    let (origin, gate) = start_gate().await;
    let objects: Vec<Value> = manifests(&env.sim, &gated(&origin))
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    env.apply(objects);
    let executor = Arc::new(env.executor().await);
    let run = {
        let executor = executor.clone();
        tokio::spawn(async move {
            let progress = Arc::new(|p: Progress| eprintln!("{}: {}", p.cluster, p.line));
            capw_local::reconcile_until_settled(&executor, Duration::from_secs(180), progress)
                .await
                .unwrap()
        })
    };

    // While the gate is shut, alpha comes up and stuck waits on its deadline.
    until(&env, "alpha", "Ready", ready).await;
    let stuck = until(&env, "stuck", "DeadlineExceeded", |c| {
        condition(c, "InfrastructureReady")["reason"] == "DeadlineExceeded"
    })
    .await;
    assert!(!ready(&stuck), "{stuck:#}");
    assert_eq!(condition(&stuck, "InfrastructureReady")["status"], "False");
    assert!(
        crate::support::machines(&env.store, "stuck").is_empty(),
        "machines before the infrastructure was ready"
    );
    assert_eq!(
        inventory(&env.sim).await.clusters["alpha"].instances.len(),
        3
    );

    // The provider answers again: stuck goes on to Ready in the same run.
    gate.send(true).unwrap();
    let report = run.await.unwrap();
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    assert_eq!(
        report.outcomes["default/stuck"],
        ClusterOutcome::Converged,
        "{report:?}"
    );
    let stuck = cluster(&env.store, "stuck").unwrap();
    assert!(ready(&stuck), "{stuck:#}");
    assert_eq!(condition(&stuck, "InfrastructureReady")["status"], "True");
    assert_eq!(crate::support::machines(&env.store, "stuck").len(), 2);
}
