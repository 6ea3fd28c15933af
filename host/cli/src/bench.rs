//! `capw bench converge`: how long the local mode takes to bring many clusters from nothing
//! to Ready, and how much memory it needs on the way.
//!
//! Everything is real but the cloud: the three reference providers as components, the store
//! on disk in a fresh temporary state directory, simcloud in-process with short delays. The
//! clusters are the quickstart's class with `--control-plane` control-plane machines and
//! `--workers` workers each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capw_api::parse_manifests;
use capw_local::{ClusterOutcome, Executor, Progress};
use capw_simcloud::{SimCloud, SimCloudConfig, Timings};
use capw_store::Store;

use crate::cli::{BenchConvergeArgs, GlobalArgs};

const PROVIDERS: &str = include_str!("../../../examples/quickstart/00-providers.yaml");
const CLASS: &str = include_str!("../../../examples/quickstart/10-class.yaml");
const TOKEN: &str = "capw-bench";

pub async fn converge(global: &GlobalArgs, args: BenchConvergeArgs) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("creating a temporary state directory")?;
    let mut config = crate::state::config(global);
    config.state_dir = tmp.path().to_path_buf();
    let token_dir = config.secrets_dir().join("simcloud");
    std::fs::create_dir_all(&token_dir)?;
    std::fs::write(token_dir.join("token"), TOKEN)?;
    let sim = SimCloud::start(SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(
        Duration::from_millis(args.simcloud_delay_ms),
    )))
    .await
    .context("starting simcloud")?;

    let mut text = format!("{PROVIDERS}\n---\n{CLASS}\n");
    for i in 0..args.clusters {
        text += &format!(
            "---
apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: bench-{i:03}, namespace: default}}
spec:
  topology:
    classRef: {{name: sim-kubeadm}}
    version: v1.34.1
    controlPlane: {{replicas: {cp}}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: {workers}}}
",
            cp = args.control_plane,
            workers = args.workers
        );
    }
    let text = text.replace("http://127.0.0.1:7480", &sim.base_url());
    let store = Store::open(&config.state_file())?;
    for object in parse_manifests(&text)? {
        store.apply(object.to_json()?)?;
    }

    let rss_before = peak_rss_kib();
    let started = Instant::now();
    let executor = Executor::open(store.clone(), config).await?;
    let loaded = started.elapsed();
    let quiet = Arc::new(|_: Progress| {});
    let report = executor
        .reconcile_until_settled(args.timeout, quiet)
        .await?;
    let elapsed = started.elapsed();
    sim.shutdown().await.context("stopping simcloud")?;

    let converged = report
        .outcomes
        .values()
        .filter(|o| **o == ClusterOutcome::Converged)
        .count();
    let machines = store.list("Machine", None)?.len();
    let peak = peak_rss_kib();
    println!(
        "clusters: {} ({} control-plane + {} workers each)",
        args.clusters, args.control_plane, args.workers
    );
    println!("converged: {converged}/{}", args.clusters);
    println!("machines: {machines}");
    println!("providers loaded in: {:.2}s", loaded.as_secs_f64());
    println!("time to converge: {:.1}s", elapsed.as_secs_f64());
    println!(
        "machines per second: {:.1}",
        machines as f64 / elapsed.as_secs_f64()
    );
    if let (Some(before), Some(peak)) = (rss_before, peak) {
        println!(
            "peak RSS: {:.0} MiB (before loading providers: {:.0} MiB)",
            peak as f64 / 1024.0,
            before as f64 / 1024.0
        );
    }
    if converged != args.clusters {
        bail!("{} clusters did not converge", args.clusters - converged);
    }
    Ok(())
}

/// The process's peak resident set (VmHWM), in KiB, where /proc tells.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
