//! `capw bench hosted`: hosted control planes at scale in the Kubernetes mode. Applies many
//! Clusters of a hosted class (plugins/hosted-control-plane, a dedicated etcd each, no
//! workers) to the API server of `--kubeconfig`, runs the controller in this process, and,
//! standing in for the management cluster's controllers and kubelets, marks every Deployment
//! and StatefulSet the host applies as rolled out (simulated Pods: Ready without running), or
//! with `--pods real` leaves them to a management cluster whose workloads run.
//! Once every Cluster is Ready it measures the steady state over `--settle`: this process's
//! CPU per hosted control plane, and its resident memory per hosted control plane above what
//! it held before the controller started; beside them the API server's and etcd's.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capw_api::parse_manifests;
use capw_engine::store::ObjectStore;
use capw_engine::store::management::HOSTED_CLUSTER_LABEL;
use capw_kube::KubeStore;
use capw_simcloud::{SimCloud, SimCloudConfig, Timings};
use futures::StreamExt as _;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::{Value, json};

use crate::bench_kube::{
    Usage, connect, controller_config, dynamic, mib, prepare, rss_kib, wait_ready,
};
use crate::cli::GlobalArgs;

const TOKEN: &str = "capw-bench";

/// The providers and the hosted class, in the bench's namespace, reaching `simcloud`.
fn class(ns: &str, simcloud: &str) -> String {
    format!(
        "apiVersion: capw.dev/v1alpha1\nkind: WasmProvider\nmetadata:\n  name: {ns}-sim-infra\n\
         spec:\n  source:\n    file:\n      path: capw_sim_infra.wasm\n  grants:\n    http: \
         [\"{simcloud}\"]\n    secrets:\n      - name: simcloud-token\n        secretRef: {{name: \
         simcloud, key: token}}\n---\napiVersion: capw.dev/v1alpha1\nkind: WasmProvider\n\
         metadata:\n  name: {ns}-hosted-control-plane\nspec:\n  source:\n    file:\n      path: \
         capw_hosted_control_plane.wasm\n---\napiVersion: capw.dev/v1alpha1\nkind: \
         ClusterClass\nmetadata:\n  name: hosted\n  namespace: {ns}\nspec:\n  infrastructure:\n    \
         provider: {ns}-sim-infra\n    config:\n      controlPlaneEndpoint: none\n      \
         endpoint: \"{simcloud}\"\n  controlPlane:\n    provider: {ns}-hosted-control-plane\n    \
         config:\n      datastore: {{type: dedicated}}\n"
    )
}

/// Hosted Cluster `i` with `replicas` API servers.
fn cluster(ns: &str, i: usize, replicas: u32) -> String {
    format!(
        "---\napiVersion: capw.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: hosted-{i:05}\n  \
         namespace: {ns}\nspec:\n  topology:\n    classRef: {{name: hosted}}\n    version: \
         v1.34.4\n    controlPlane:\n      replicas: {replicas}\n"
    )
}

pub async fn hosted(global: &GlobalArgs, args: crate::cli::BenchHostedArgs) -> anyhow::Result<()> {
    let (client, apiserver) = connect(&args.kubeconfig).await?;
    let ns = &args.namespace;
    prepare(&client, ns).await?;
    let store = KubeStore::new(client.clone());
    let sim = SimCloud::start(
        SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(Duration::from_millis(20))),
    )
    .await
    .context("starting simcloud")?;
    store
        .apply(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "simcloud", "namespace": ns},
            "stringData": {"token": TOKEN},
        }))
        .await?;
    let mut text = class(ns, &sim.base_url());
    for i in 0..args.clusters {
        text += &cluster(ns, i, args.api_servers);
    }
    let mut objects = Vec::new();
    for object in parse_manifests(&text)? {
        objects.push(object.to_json()?);
    }
    let applied: Vec<_> = futures::stream::iter(objects)
        .map(|o| store.apply(o))
        .buffer_unordered(16)
        .collect()
        .await;
    for result in applied {
        result.context("applying the clusters")?;
    }

    // Simulated Pods: every applied workload is reported rolled out. Real ones: the management
    // cluster rolls them out.
    let simulated = args.pods == crate::cli::HostedPods::Simulated;
    let simulator = simulated.then(|| tokio::spawn(simulate_rollouts(client.clone(), ns.clone())));

    let config = controller_config(global, ns, args.concurrency)?;
    let rss_before = rss_kib("self", "VmRSS:").unwrap_or_default();
    let before = Usage::now(&apiserver);
    let started = Instant::now();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn(capw_kube::run(client.clone(), config, async {
        let _ = stopped.await;
    }));
    let ready = wait_ready(
        &store,
        ns,
        args.clusters,
        started,
        args.timeout,
        &controller,
    )
    .await?;
    let converged = started.elapsed();
    let at_ready = Usage::now(&apiserver);

    // The steady state: every control plane Ready, nothing to do but resyncs and watches.
    tokio::time::sleep(args.settle).await;
    let after = Usage::now(&apiserver);
    let rss_after = rss_kib("self", "VmRSS:").unwrap_or_default();
    let objects = count_hosted(&client, ns).await?;
    let _ = stop.send(());
    match tokio::time::timeout(Duration::from_secs(60), controller).await {
        Ok(Ok(Err(e))) => eprintln!("the controller failed: {}", capw_kube::chain(&e)),
        Err(_) => eprintln!("the controller did not stop within a minute"),
        _ => {}
    }
    if let Some(simulator) = simulator {
        simulator.abort();
    }
    sim.shutdown().await.context("stopping simcloud")?;

    let n = args.clusters.max(1) as f64;
    let settle = args.settle.as_secs_f64().max(f64::EPSILON);
    let steady = after
        .capw_cpu
        .saturating_sub(at_ready.capw_cpu)
        .as_secs_f64();
    println!(
        "hosted control planes: {ready}/{} Clusters Ready ({} API servers each, {} Pods), \
         {objects} objects applied, in {:.1} s (concurrency {})",
        args.clusters,
        args.api_servers,
        if simulated { "simulated" } else { "real" },
        converged.as_secs_f64(),
        args.concurrency
    );
    println!(
        "  capw to Ready: CPU {:.1} s (user+sys), {:.1} ms per control plane",
        at_ready
            .capw_cpu
            .saturating_sub(before.capw_cpu)
            .as_secs_f64(),
        at_ready
            .capw_cpu
            .saturating_sub(before.capw_cpu)
            .as_secs_f64()
            * 1000.0
            / n
    );
    println!(
        "  capw steady over {settle:.0} s: CPU {steady:.2} s, {:.3} mCPU per control plane; RSS \
         {} now, {:.3} MiB per control plane above the {} before the controller",
        steady * 1000.0 / settle / n,
        mib(Some(rss_after)),
        rss_after.saturating_sub(rss_before) as f64 / 1024.0 / n,
        mib(Some(rss_before)),
    );
    for (what, b, a, pid) in [
        (
            "kube-apiserver",
            at_ready.apiserver,
            after.apiserver,
            &apiserver.apiserver,
        ),
        ("etcd", at_ready.etcd, after.etcd, &apiserver.etcd),
    ] {
        if let (Some(b), Some(a), Some(pid)) = (b, a, pid) {
            println!(
                "  {what} (pid {pid}) steady: CPU {:.2} s, RSS {} now",
                a.saturating_sub(b).as_secs_f64(),
                mib(rss_kib(pid, "VmRSS:"))
            );
        }
    }
    if ready < args.clusters {
        bail!("{} Clusters did not become Ready", args.clusters - ready);
    }
    Ok(())
}

/// How many objects the host applied for hosted control planes in `ns`.
async fn count_hosted(client: &kube::Client, ns: &str) -> anyhow::Result<usize> {
    let mut count = 0;
    for (group, kind, plural) in [
        ("apps", "Deployment", "deployments"),
        ("apps", "StatefulSet", "statefulsets"),
        ("", "Service", "services"),
        ("", "Secret", "secrets"),
        ("", "ConfigMap", "configmaps"),
    ] {
        let api = dynamic(client, group, "v1", kind, plural, Some(ns));
        let params = kube::api::ListParams::default().labels(HOSTED_CLUSTER_LABEL);
        count += api.list(&params).await?.items.len();
    }
    Ok(count)
}

/// Stands in for the management cluster's Deployment and StatefulSet controllers, its
/// kubelets and its load balancers: every workload the host applied in `ns` is given the
/// status of one whose replicas are all updated and ready, as simulated Pods would make it,
/// and every LoadBalancer Service an address ([`SIMULATED_LOAD_BALANCER`]).
async fn simulate_rollouts(client: kube::Client, ns: String) {
    let kinds = [
        ("apps", "Deployment", "deployments"),
        ("apps", "StatefulSet", "statefulsets"),
        ("", "Service", "services"),
    ];
    let streams = kinds.map(|(group, kind, plural)| {
        let api = dynamic(&client, group, "v1", kind, plural, Some(&ns));
        let config = watcher::Config::default().labels(HOSTED_CLUSTER_LABEL);
        watcher(api.clone(), config)
            .default_backoff()
            .applied_objects()
            .map(move |o| (api.clone(), o))
            .boxed()
    });
    futures::stream::select_all(streams)
        .for_each_concurrent(16, |(api, object)| async move {
            let Ok(object) = object else { return };
            let object = serde_json::to_value(&object).unwrap_or_default();
            let status = if object["kind"] == "Service" {
                load_balanced(&object)
            } else {
                rolled_out(&object)
            };
            let Some(status) = status else {
                return;
            };
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            if let Err(e) = api
                .patch_status(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": status})),
                )
                .await
            {
                tracing::debug!(object = name, error = %e, "simulated rollout");
            }
        })
        .await;
}

/// The address the simulated load balancers give: a loopback address nothing listens on, so
/// the host's connections to the control planes are refused at once.
const SIMULATED_LOAD_BALANCER: &str = "127.0.0.97";

/// The status of a LoadBalancer Service given an address, unless it has one already.
fn load_balanced(service: &Value) -> Option<Value> {
    let wants = service["spec"]["type"] == "LoadBalancer";
    let has = service["status"]["loadBalancer"]["ingress"]
        .as_array()
        .is_some_and(|i| !i.is_empty());
    (wants && !has).then(|| json!({"loadBalancer": {"ingress": [{"ip": SIMULATED_LOAD_BALANCER}]}}))
}

/// The status of `object` rolled out, unless it says so already.
fn rolled_out(object: &Value) -> Option<Value> {
    let replicas = object["spec"]["replicas"].as_i64().unwrap_or(1);
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
    let status = &object["status"];
    let done = status["observedGeneration"].as_i64() == Some(generation)
        && [
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
        ]
        .iter()
        .all(|f| status[*f].as_i64() == Some(replicas));
    (!done).then(|| {
        json!({
            "observedGeneration": generation,
            "replicas": replicas, "updatedReplicas": replicas, "currentReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_balancer_service_without_an_address_is_given_one() {
        let service = |kind: &str, status: Value| json!({"spec": {"type": kind}, "status": status});
        let given = load_balanced(&service("LoadBalancer", json!({}))).unwrap();
        assert_eq!(
            given["loadBalancer"]["ingress"][0]["ip"],
            SIMULATED_LOAD_BALANCER
        );
        assert_eq!(
            load_balanced(&service(
                "LoadBalancer",
                json!({"loadBalancer": given["loadBalancer"]})
            )),
            None
        );
        assert_eq!(load_balanced(&service("ClusterIP", json!({}))), None);
    }

    #[test]
    fn a_rolled_out_workload_is_left_alone_and_any_other_rolled_out() {
        let d = |status: Value| json!({"metadata": {"generation": 3}, "spec": {"replicas": 2}, "status": status});
        let status = rolled_out(&d(json!({}))).unwrap();
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["availableReplicas"], 2);
        assert!(rolled_out(&d(status)).is_none());
        let stale = json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
            "readyReplicas": 2, "availableReplicas": 2});
        assert!(rolled_out(&d(stale)).is_some());
    }

    #[test]
    fn the_manifests_parse() {
        let text = class("bench", "http://127.0.0.1:7480") + &cluster("bench", 7, 2);
        let objects = parse_manifests(&text).unwrap();
        assert_eq!(objects.len(), 4);
    }
}
