//! `capw bench`: how the local mode copes with many clusters.
//!
//! - `converge`: how long it takes to bring many clusters from nothing to Ready;
//! - `resync`: what one full pass over many converged clusters costs, with nothing to do (the
//!   steady state a controller lives in).
//!
//! Everything is real but the cloud: the three reference providers as components, the store
//! on disk in a fresh temporary state directory, simcloud in-process with short delays. The
//! clusters are the quickstart's class with `--control-plane` control-plane machines and
//! `--workers` workers each. Each prints wall time, CPU time (user + system, the whole process:
//! simcloud's share included), peak RSS and the latency of the provider calls made.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capw_api::{Cluster, Machine, parse_manifests};
use capw_engine::store::ObjectKey;
use capw_engine::{Executor, PassOutcome};
use capw_local::{ClusterOutcome, Progress};
use capw_simcloud::{SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use capw_store::Store;
use futures::StreamExt as _;
use kube::Resource as _;

use crate::bench_kube::{CallTimes, cpu_time, micros, peak_rss_kib, percentile};
use crate::cli::{BenchConvergeArgs, GlobalArgs};

const PROVIDERS: &str = include_str!("../../../examples/quickstart/00-providers.yaml");
const CLASS: &str = include_str!("../../../examples/quickstart/10-class.yaml");
const TOKEN: &str = "capw-bench";

pub async fn converge(global: &GlobalArgs, args: BenchConvergeArgs) -> anyhow::Result<()> {
    let bench = Bench::start(global, &args).await?;
    let converged = bench.converge(&args).await?;
    converged.print("converge");
    bench.stop().await?;
    converged.check()
}

pub async fn resync(global: &GlobalArgs, args: BenchConvergeArgs) -> anyhow::Result<()> {
    let bench = Bench::start(global, &args).await?;
    let converged = bench.converge(&args).await?;
    converged.print("converge (not the measure)");
    converged.check()?;

    let keys = bench
        .store
        .list(&Cluster::kind(&()), None)?
        .iter()
        .map(ObjectKey::of)
        .collect::<Result<Vec<_>, _>>()?;
    let writes_before = bench.store.resource_version()?;
    let measure = Measure::start(&bench.calls);
    let executor = &bench.executor;
    let outcomes: Vec<_> = futures::stream::iter(&keys)
        .map(|key| executor.reconcile(key))
        .buffer_unordered(bench.concurrency)
        .collect()
        .await;
    let mut resync = measure.finish(&bench, args.fleet.clusters);
    resync.settled = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(PassOutcome::Converged(_))))
        .count();
    let writes = bench.store.resource_version()? - writes_before;
    resync.print("resync: one pass over every cluster");
    println!("  objects written: {writes}");
    bench.stop().await?;
    if let Some(e) = outcomes.into_iter().find_map(Result::err) {
        return Err(anyhow::Error::new(e).context("a pass failed"));
    }
    resync.check()
}

/// A fresh state directory with the providers, the class and the clusters stored, simcloud
/// running and the providers loaded.
struct Bench {
    _state: tempfile::TempDir,
    sim: SimCloudHandle,
    store: Store,
    executor: Executor,
    calls: Arc<CallTimes>,
    concurrency: usize,
    machines_each: u32,
}

impl Bench {
    async fn start(global: &GlobalArgs, args: &BenchConvergeArgs) -> anyhow::Result<Self> {
        let state = tempfile::tempdir().context("creating a temporary state directory")?;
        let calls = Arc::new(CallTimes::default());
        let mut config = crate::state::config_in(global, state.path());
        config.engine.call_observer = Some(calls.clone());
        if let Some(n) = args.concurrency {
            config.engine.max_concurrent_passes = n.max(1);
        }
        let concurrency = config.engine.max_concurrent_passes;
        let plugin_dir = config.engine.plugin_dir.clone();
        let token_dir = config.secrets_dir().join("simcloud");
        std::fs::create_dir_all(&token_dir)?;
        std::fs::write(token_dir.join("token"), TOKEN)?;
        let sim = SimCloud::start(SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(
            Duration::from_millis(args.fleet.simcloud_delay_ms),
        )))
        .await
        .context("starting simcloud")?;

        let store = Store::open(&config.state_file())?;
        let mut text = format!("{PROVIDERS}\n---\n{CLASS}\n");
        for i in 0..args.fleet.clusters {
            text += &cluster_manifest(i, "v1.34.1", args.fleet.control_plane, args.fleet.workers);
        }
        let text = text.replace("http://127.0.0.1:7480", &sim.base_url());
        for object in parse_manifests(&text)? {
            store.apply(object.to_json()?)?;
        }

        let executor = capw_local::open(store.clone(), config.engine).await?;
        let registry = executor.registry();
        let failed: Vec<String> = registry
            .failed()
            .iter()
            .map(|(name, why)| format!("  {name}: {why}"))
            .collect();
        if !failed.is_empty() || registry.loaded_names().next().is_none() {
            bail!(
                "the providers did not load from {} (build them with `make plugins`, or name \
                 their directory with --plugin-dir or CAPW_PLUGIN_DIR):\n{}",
                plugin_dir.display(),
                failed.join("\n")
            );
        }
        Ok(Bench {
            _state: state,
            sim,
            store,
            executor,
            calls,
            concurrency,
            machines_each: args.fleet.control_plane + args.fleet.workers,
        })
    }

    /// Reconciles every cluster until each settled, measured.
    async fn converge(&self, args: &BenchConvergeArgs) -> anyhow::Result<Measured> {
        let measure = Measure::start(&self.calls);
        let quiet = Arc::new(|_: Progress| {});
        let report =
            capw_local::reconcile_until_settled(&self.executor, args.timeout, quiet).await?;
        let mut measured = measure.finish(self, args.fleet.clusters);
        measured.settled = report
            .outcomes
            .values()
            .filter(|o| **o == ClusterOutcome::Converged)
            .count();
        measured.machines = self.store.list(&Machine::kind(&()), None)?.len();
        Ok(measured)
    }

    async fn stop(self) -> anyhow::Result<()> {
        self.sim.shutdown().await.context("stopping simcloud")
    }
}

/// Cluster `bench-<i>` of the quickstart's class in namespace `default`, at `version`.
pub(crate) fn cluster_manifest(
    i: usize,
    version: &str,
    control_plane: u32,
    workers: u32,
) -> String {
    format!(
        "---
apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: bench-{i:05}, namespace: default}}
spec:
  topology:
    classRef: {{name: sim-kubeadm}}
    version: {version}
    controlPlane: {{replicas: {control_plane}}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: {workers}}}
"
    )
}

/// The start of a measured phase.
struct Measure {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Measure {
    fn start(calls: &CallTimes) -> Self {
        calls.take();
        Measure {
            wall: Instant::now(),
            cpu: cpu_time("self"),
        }
    }

    fn finish(self, bench: &Bench, clusters: usize) -> Measured {
        let mut calls = bench.calls.take();
        calls.sort();
        Measured {
            clusters,
            machines_each: bench.machines_each,
            settled: 0,
            machines: 0,
            wall: self.wall.elapsed(),
            cpu: cpu_time("self").zip(self.cpu).map(|(now, then)| now - then),
            peak_rss_kib: peak_rss_kib("self"),
            calls,
        }
    }
}

/// What a phase measured.
struct Measured {
    clusters: usize,
    machines_each: u32,
    /// Clusters that ended converged.
    settled: usize,
    /// Machines stored at the end (converge only).
    machines: usize,
    wall: Duration,
    cpu: Option<Duration>,
    peak_rss_kib: Option<u64>,
    /// Every call's duration, sorted.
    calls: Vec<Duration>,
}

impl Measured {
    fn print(&self, what: &str) {
        println!("{what}");
        println!(
            "  clusters: {} ({} machines each), converged: {}",
            self.clusters, self.machines_each, self.settled
        );
        if self.machines > 0 {
            println!("  machines: {}", self.machines);
        }
        println!("  time: {:.2} s", self.wall.as_secs_f64());
        if let Some(cpu) = self.cpu {
            let per = |n: usize| cpu.as_secs_f64() * 1000.0 / n.max(1) as f64;
            println!(
                "  CPU (user + sys): {:.2} s, {:.2} ms per cluster, {:.3} ms per machine",
                cpu.as_secs_f64(),
                per(self.clusters),
                per(self.clusters * self.machines_each as usize),
            );
        }
        if let Some(peak) = self.peak_rss_kib {
            println!("  peak RSS: {:.0} MiB", peak as f64 / 1024.0);
        }
        println!(
            "  provider calls: {}, p50 {}, p99 {}",
            self.calls.len(),
            micros(percentile(&self.calls, 50.0)),
            micros(percentile(&self.calls, 99.0)),
        );
    }

    fn check(&self) -> anyhow::Result<()> {
        if self.settled != self.clusters {
            bail!(
                "{} of {} clusters did not converge",
                self.clusters - self.settled,
                self.clusters
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&values, 50.0), Some(Duration::from_millis(50)));
        assert_eq!(percentile(&values, 99.0), Some(Duration::from_millis(99)));
        assert_eq!(
            percentile(&values[..1], 99.0),
            Some(Duration::from_millis(1))
        );
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let before = cpu_time("self").expect("/proc/self/stat");
        let mut x = 0u64;
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(100) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(cpu_time("self").unwrap() > before, "{x}");
    }
}
