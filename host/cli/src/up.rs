//! `capw up`: start the in-process simcloud, load the providers, reconcile every Cluster
//! until it converged or is gone, and show each one's tree.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Instant;

use crate::sim::SimCloudHandle;
#[cfg(feature = "simcloud")]
use crate::sim::{RealBoot, SimCloud, SimCloudConfig, Timings};
use anyhow::{Context, bail};
use capw_api::WasmProvider;
use capw_engine::store::TypedObjects as _;
use capw_local::{ClusterOutcome, Progress};

#[cfg(feature = "simcloud")]
use crate::cli::BootArg;
use crate::cli::{GlobalArgs, UpArgs, WorkloadClustersArg};
use crate::get::{cell, condition, conditions};

/// Writes simcloud's token where the quickstart's sim-infra grant reads it:
/// `<state-dir>/secrets/simcloud/token`.
fn write_token(config: &capw_local::LocalConfig, token: &str) -> anyhow::Result<()> {
    let dir = config.secrets_dir().join("simcloud");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("token");
    std::fs::write(&path, token).with_context(|| format!("writing {}", path.display()))
}

/// Where the real boot finds the Kubernetes binaries and keeps its machines
/// (`<state-dir>/machines`).
#[cfg(feature = "simcloud")]
fn real_boot(config: &capw_local::LocalConfig, args: &UpArgs) -> anyhow::Result<RealBoot> {
    let kube_binaries = match &args.kube_binaries {
        Some(dir) => dir.clone(),
        None => std::env::var_os("CAPW_KUBE_ENV_CACHE")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(|h| std::path::PathBuf::from(h).join(".cache/capw-kube-env"))
            })
            .context("no --kube-binaries and no HOME to find the default")?,
    };
    if !kube_binaries.is_dir() {
        bail!(
            "no Kubernetes binaries in {}: run `make kube-env` (it builds them there), pass \
             --kube-binaries, or run with --boot simulated",
            kube_binaries.display()
        );
    }
    Ok(RealBoot {
        kube_binaries,
        machines_dir: config.state_dir.join("machines"),
    })
}

/// The in-process simcloud, with its state in the state directory.
#[cfg(feature = "simcloud")]
async fn start_simcloud(
    config: &capw_local::LocalConfig,
    args: &UpArgs,
) -> anyhow::Result<SimCloudHandle> {
    let mut sim_config =
        SimCloudConfig::new(args.simcloud_token.clone()).with_state_file(config.simcloud_state());
    sim_config.listen = args.simcloud_listen;
    if let Some(ms) = args.simcloud_delay_ms {
        sim_config =
            sim_config.with_timings(Timings::uniform(std::time::Duration::from_millis(ms)));
    }
    if args.boot == BootArg::Real {
        sim_config = sim_config.with_real_boot(real_boot(config, args)?);
    }
    SimCloud::start(sim_config)
        .await
        .with_context(|| format!("starting simcloud on {}", args.simcloud_listen))
}

#[cfg(not(feature = "simcloud"))]
async fn start_simcloud(
    _config: &capw_local::LocalConfig,
    _args: &UpArgs,
) -> anyhow::Result<SimCloudHandle> {
    Err(crate::sim::missing(
        "capw up (without --no-simcloud, which uses a cloud of your own)",
    ))
}

pub async fn run(global: &GlobalArgs, args: UpArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut config = crate::state::config(global);
    config.engine.workload_clusters = args.workload_clusters().access();
    let store = crate::state::open_store(global)?;
    let sim = if args.no_simcloud {
        None
    } else {
        write_token(&config, &args.simcloud_token)?;
        let sim = start_simcloud(&config, &args).await?;
        eprintln!("simcloud listening on {}", sim.base_url());
        Some(sim)
    };

    let executor = capw_local::open(store.clone(), config.engine).await?;
    for p in store.list_as::<WasmProvider>(None).await? {
        let status = p.status.as_ref();
        eprintln!(
            "provider {:<24} Loaded={} {}",
            cell(&p.metadata.name),
            condition(conditions(status.map(|s| &s.conditions)), "Loaded"),
            cell(&status.and_then(|s| s.digest.as_ref())),
        );
    }
    let progress = Arc::new(move |p: Progress| {
        let elapsed = started.elapsed().as_secs_f64();
        let _ = writeln!(
            std::io::stderr(),
            "[{elapsed:6.1}s] {}: {}",
            crate::get::printable(&p.cluster),
            crate::get::printable(&p.line)
        );
    });
    let report = capw_local::reconcile_until_settled(&executor, args.timeout, progress).await?;
    if let Some(sim) = sim {
        sim.shutdown().await.context("stopping simcloud")?;
    }

    for (cluster, outcome) in &report.outcomes {
        let (namespace, name) = cluster.split_once('/').unwrap_or(("default", cluster));
        match outcome {
            ClusterOutcome::Gone => println!("Cluster {cluster}: deleted\n"),
            _ => println!(
                "{}",
                crate::describe::render(&store, namespace, name).await?
            ),
        }
    }
    if args.workload_clusters() == WorkloadClustersArg::Connect {
        print_how_to_reach(&report);
    }
    eprintln!("done in {:.1}s", started.elapsed().as_secs_f64());
    if !report.all_settled() {
        let unsettled: Vec<String> = report
            .outcomes
            .iter()
            .filter(|(_, o)| !matches!(o, ClusterOutcome::Converged | ClusterOutcome::Gone))
            .map(|(c, o)| format!("{c}: {o:?}"))
            .collect();
        bail!("not every cluster settled:\n  {}", unsettled.join("\n  "));
    }
    Ok(())
}

/// How to reach each cluster that is up, through the kubeconfig Secret the host stored.
fn print_how_to_reach(report: &capw_local::SettleReport) {
    let clusters: Vec<&str> = report
        .outcomes
        .iter()
        .filter(|(_, o)| !matches!(o, ClusterOutcome::Gone))
        .map(|(c, _)| c.as_str())
        .collect();
    if clusters.is_empty() {
        return;
    }
    println!(
        "Reach a cluster with its admin kubeconfig (kubectl: `tests/kube-env/kube-env.sh bin-dir VERSION`):"
    );
    for cluster in clusters {
        let (namespace, name) = cluster.split_once('/').unwrap_or(("default", cluster));
        let ns = if namespace == "default" {
            String::new()
        } else {
            format!(" -n {namespace}")
        };
        println!("  kubectl --kubeconfig <(capw get kubeconfig {name}{ns}) get nodes");
    }
}
