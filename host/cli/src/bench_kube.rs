//! `capw bench kube`: the Kubernetes mode at scale against a real API server. Applies many
//! clusters to the API server of `--kubeconfig` (start one with
//! `tests/kube-env/kube-env.sh start DIR`), runs the controller in this process with the real
//! providers and an in-process simcloud (simulated boot) until every cluster is Ready, and
//! prints the time, this process's CPU (user + system) and peak RSS, the provider calls'
//! latency, and the CPU and memory the kube-apiserver and etcd processes spent meanwhile.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capw_api::{Cluster, Machine, Object, is_condition_true, parse_manifests};
use capw_engine::store::{ObjectStore, TypedObjects as _};
use capw_engine::{RequeueBounds, SecretSource};
use capw_kube::{CacheConfig, ControllerConfig, KubeStore, RequeuePolicy};
use capw_runtime::CallObserver;
use capw_simcloud::{SimCloud, SimCloudConfig, Timings};
use futures::StreamExt as _;
use kube::Resource as _;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use crate::cli::GlobalArgs;

const PROVIDERS: &str = include_str!("../../../examples/quickstart/00-providers.yaml");
const CLASS: &str = include_str!("../../../examples/quickstart/10-class.yaml");
const TOKEN: &str = "capw-bench";

/// A client of the API server of `kubeconfig`, its server URL and its processes on this
/// machine (their CPU and RSS are measured when found).
pub(crate) async fn connect(
    kubeconfig: &std::path::Path,
) -> anyhow::Result<(kube::Client, ApiServerProcesses)> {
    let kubeconfig_file = Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading kubeconfig {}", kubeconfig.display()))?;
    let server = kubeconfig_file
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| c.server.clone())
        .unwrap_or_default();
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig_file, &KubeConfigOptions::default())
            .await
            .context("using the kubeconfig")?;
    let client = kube::Client::try_from(config).context("building the Kubernetes client")?;
    let apiserver = ApiServerProcesses::find(&server);
    if apiserver.apiserver.is_none() {
        eprintln!(
            "no kube-apiserver process serving {server} on this machine: its CPU and RSS are not measured"
        );
    }
    Ok((client, apiserver))
}

/// capw's CRDs and namespace `ns` on the API server.
pub(crate) async fn prepare(client: &kube::Client, ns: &str) -> anyhow::Result<()> {
    apply_crds(client).await?;
    let namespaces = dynamic(client, "", "v1", "Namespace", "namespaces", None);
    namespaces
        .patch(
            ns,
            &PatchParams::apply("capw-bench").force(),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            ),
        )
        .await
        .context("creating the namespace")?;
    Ok(())
}

/// The controller a bench runs in its own process: the Clusters, providers and secrets of
/// namespace `ns`, `concurrency` passes at once, short requeues, no leader election.
pub(crate) fn controller_config(
    global: &GlobalArgs,
    ns: &str,
    concurrency: u16,
) -> anyhow::Result<ControllerConfig> {
    let mut engine = crate::state::config_in(global, &tempfile::tempdir()?.keep()).engine;
    engine.requeue = RequeueBounds {
        max: Duration::from_secs(1),
        ..RequeueBounds::CONTROLLER
    };
    engine.secrets = SecretSource::Store {
        default_namespace: ns.to_owned(),
    };
    Ok(ControllerConfig {
        engine,
        provider_namespace: ns.to_owned(),
        watch_namespace: Some(ns.to_owned()),
        identity: "capw-bench".into(),
        leader_election: None,
        sharding: None,
        metrics_address: None,
        health_address: None,
        requeue: RequeuePolicy::default(),
        concurrency,
        cache: CacheConfig::default(),
        webhook: None,
    })
}

/// Looks every 2 s until all `clusters` Clusters of `ns` are Ready, `timeout` passed since
/// `started` or the controller ended; how many are Ready.
pub(crate) async fn wait_ready<T>(
    store: &KubeStore,
    ns: &str,
    clusters: usize,
    started: Instant,
    timeout: Duration,
    controller: &tokio::task::JoinHandle<T>,
) -> anyhow::Result<usize> {
    let mut ready = 0;
    while started.elapsed() < timeout && !controller.is_finished() {
        tokio::time::sleep(Duration::from_secs(2)).await;
        ready = store
            .list_as::<Cluster>(Some(ns))
            .await?
            .iter()
            .filter(|c| is_ready(c))
            .count();
        if ready == clusters {
            break;
        }
    }
    Ok(ready)
}

pub async fn kube(global: &GlobalArgs, args: crate::cli::BenchKubeArgs) -> anyhow::Result<()> {
    let (client, apiserver) = connect(&args.kubeconfig).await?;
    let ns = &args.namespace;
    prepare(&client, ns).await?;
    let store = KubeStore::new(client.clone());
    let sim = SimCloud::start(SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(
        Duration::from_millis(args.fleet.simcloud_delay_ms),
    )))
    .await
    .context("starting simcloud")?;
    store
        .apply(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "simcloud", "namespace": ns},
            "stringData": {"token": TOKEN},
        }))
        .await?;
    let mut objects = Vec::new();
    let mut text = format!("{PROVIDERS}\n---\n{CLASS}\n");
    for i in 0..args.fleet.clusters {
        text += &crate::bench::cluster_manifest(
            i,
            "v1.34.4",
            args.fleet.control_plane,
            args.fleet.workers,
        );
    }
    let text = text
        .replace("http://127.0.0.1:7480", &sim.base_url())
        .replace("namespace: default", &format!("namespace: {ns}"));
    for object in parse_manifests(&text)? {
        let namespaced = !matches!(object, Object::WasmProvider(_));
        let needs_namespace = namespaced && object.namespace().is_none();
        let mut object = object.to_json()?;
        if needs_namespace {
            object["metadata"]["namespace"] = ns.clone().into();
        }
        objects.push(object);
    }
    let applied: Vec<_> = futures::stream::iter(objects)
        .map(|o| store.apply(o))
        .buffer_unordered(16)
        .collect()
        .await;
    for result in applied {
        result.context("applying the clusters")?;
    }

    let calls = Arc::new(CallTimes::default());
    let mut config = controller_config(global, ns, args.concurrency)?;
    config.engine.call_observer = Some(calls.clone());
    let before = Usage::now(&apiserver);
    let started = Instant::now();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn(capw_kube::run(client.clone(), config, async {
        let _ = stopped.await;
    }));
    let ready = wait_ready(
        &store,
        ns,
        args.fleet.clusters,
        started,
        args.timeout,
        &controller,
    )
    .await?;
    let elapsed = started.elapsed();
    let after = Usage::now(&apiserver);
    let machines = store.list(&Machine::kind(&()), Some(ns)).await?.len();
    let _ = stop.send(());
    match tokio::time::timeout(Duration::from_secs(60), controller).await {
        Ok(Ok(Err(e))) => eprintln!("the controller failed: {}", capw_kube::chain(&e)),
        Err(_) => eprintln!("the controller did not stop within a minute"),
        _ => {}
    }
    sim.shutdown().await.context("stopping simcloud")?;

    let mut durations = calls.take();
    durations.sort();
    println!(
        "kubernetes mode: {ready}/{} clusters Ready, {machines} machines, in {:.1} s (concurrency {})",
        args.fleet.clusters,
        elapsed.as_secs_f64(),
        args.concurrency
    );
    println!(
        "  capw: CPU {:.1} s (user+sys), peak RSS {}",
        after.capw_cpu.saturating_sub(before.capw_cpu).as_secs_f64(),
        mib(peak_rss_kib("self"))
    );
    println!(
        "  provider calls: {}, p50 {}, p99 {}",
        durations.len(),
        micros(percentile(&durations, 50.0)),
        micros(percentile(&durations, 99.0))
    );
    for (what, b, a, pid) in [
        (
            "kube-apiserver",
            before.apiserver,
            after.apiserver,
            &apiserver.apiserver,
        ),
        ("etcd", before.etcd, after.etcd, &apiserver.etcd),
    ] {
        if let (Some(b), Some(a), Some(pid)) = (b, a, pid) {
            println!(
                "  {what} (pid {pid}): CPU {:.1} s, RSS {} now, peak {}",
                a.saturating_sub(b).as_secs_f64(),
                mib(rss_kib(pid, "VmRSS:")),
                mib(peak_rss_kib(pid))
            );
        }
    }
    if ready < args.fleet.clusters {
        bail!(
            "{} clusters did not become Ready",
            args.fleet.clusters - ready
        );
    }
    Ok(())
}

pub(crate) fn is_ready(cluster: &Cluster) -> bool {
    cluster
        .status
        .as_ref()
        .is_some_and(|s| is_condition_true(&s.conditions, "Ready"))
}

pub(crate) fn dynamic(
    client: &kube::Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// Server-side applies capw's CRDs and waits until they serve.
async fn apply_crds(client: &kube::Client) -> anyhow::Result<()> {
    let api = dynamic(
        client,
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        None,
    );
    for crd in capw_api::crds() {
        let mut crd = serde_json::to_value(crd)?;
        crd["apiVersion"] = "apiextensions.k8s.io/v1".into();
        crd["kind"] = "CustomResourceDefinition".into();
        let name = crd["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        api.patch(
            &name,
            &PatchParams::apply("capw-bench").force(),
            &Patch::Apply(&crd),
        )
        .await
        .with_context(|| format!("applying CRD {name}"))?;
    }
    let clusters = Api::<Cluster>::all(client.clone());
    for _ in 0..100 {
        if clusters.list(&Default::default()).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the CRDs did not become established")
}

/// The kube-apiserver serving the kubeconfig's port, and the etcd it stores in.
#[derive(Debug, Default)]
pub(crate) struct ApiServerProcesses {
    pub(crate) apiserver: Option<String>,
    pub(crate) etcd: Option<String>,
}

impl ApiServerProcesses {
    fn find(server: &str) -> Self {
        let port = server
            .rsplit(':')
            .next()
            .unwrap_or_default()
            .trim_end_matches('/');
        let processes = processes();
        let apiserver = processes.iter().find(|(_, args)| {
            args.first().is_some_and(|a| a.ends_with("kube-apiserver"))
                && flag(args, "--secure-port") == Some(port)
        });
        let etcd_port = apiserver.and_then(|(_, args)| {
            flag(args, "--etcd-servers")
                .and_then(|s| s.split(',').next())
                .and_then(|s| s.rsplit(':').next())
                .map(str::to_owned)
        });
        let etcd = etcd_port.and_then(|port| {
            processes.iter().find(|(_, args)| {
                args.first().is_some_and(|a| a.ends_with("etcd"))
                    && args.iter().any(|a| a.contains(&format!(":{port}")))
            })
        });
        ApiServerProcesses {
            apiserver: apiserver.map(|(pid, _)| pid.clone()),
            etcd: etcd.map(|(pid, _)| pid.clone()),
        }
    }
}

/// The value of flag `name` in a command line, given as `--name=value` or `--name value`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, a)| {
        let rest = a.strip_prefix(name)?;
        match rest.strip_prefix('=') {
            Some(value) => Some(value),
            None if rest.is_empty() => args.get(i + 1).map(String::as_str),
            None => None,
        }
    })
}

/// Every process's id and command line.
fn processes() -> Vec<(String, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().into_owned();
            pid.bytes().all(|b| b.is_ascii_digit()).then_some(pid)
        })
        .filter_map(|pid| {
            let line = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args = line
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            Some((pid, args))
        })
        .collect()
}

/// CPU time of this process, the API server and etcd at one moment.
pub(crate) struct Usage {
    pub(crate) capw_cpu: Duration,
    pub(crate) apiserver: Option<Duration>,
    pub(crate) etcd: Option<Duration>,
}

impl Usage {
    pub(crate) fn now(p: &ApiServerProcesses) -> Self {
        Usage {
            capw_cpu: cpu_time("self").unwrap_or_default(),
            apiserver: p.apiserver.as_deref().and_then(cpu_time),
            etcd: p.etcd.as_deref().and_then(cpu_time),
        }
    }
}

/// A process's CPU time so far (user + system), from /proc/<pid>/stat, in clock ticks of
/// 1/100 s on Linux (`USER_HZ`).
pub(crate) fn cpu_time(pid: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

pub(crate) fn rss_kib(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub(crate) fn peak_rss_kib(pid: &str) -> Option<u64> {
    rss_kib(pid, "VmHWM:")
}

pub(crate) fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "-".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0))
}

/// The `p`th percentile of sorted `values` (nearest rank).
pub(crate) fn percentile(values: &[Duration], p: f64) -> Option<Duration> {
    if values.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values.get(rank.clamp(1, values.len()) - 1).copied()
}

pub(crate) fn micros(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".into(), |d| format!("{} µs", d.as_micros()))
}

/// The duration of every provider call.
#[derive(Debug, Default)]
pub(crate) struct CallTimes(Mutex<Vec<Duration>>);

impl CallTimes {
    pub(crate) fn take(&self) -> Vec<Duration> {
        std::mem::take(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl CallObserver for CallTimes {
    fn call_finished(
        &self,
        _provider: &str,
        _operation: &'static str,
        elapsed: Duration,
        _outcome: Result<(), &'static str>,
    ) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(elapsed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_read_in_both_spellings() {
        let args: Vec<String> = [
            "kube-apiserver",
            "--secure-port",
            "38669",
            "--etcd-servers=http://127.0.0.1:2379",
            "--secure-port-extra=1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(flag(&args, "--secure-port"), Some("38669"));
        assert_eq!(flag(&args, "--etcd-servers"), Some("http://127.0.0.1:2379"));
        assert_eq!(flag(&args, "--bind-address"), None);
    }
}
