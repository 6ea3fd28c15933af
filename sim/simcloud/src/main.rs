//! `simcloud`: the sim cloud as its own process. Prints `listening on http://ADDR` once it
//! serves, and stops cleanly on Ctrl-C or SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use capw_simcloud::{BootMode, FaultConfig, RealBoot, SimCloud, SimCloudConfig, Timings};
use clap::{Parser, ValueEnum};

/// How instances boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Boot {
    /// Check the bootstrap data and pretend: nothing runs.
    Simulated,
    /// Run each instance's control plane or node as local processes on loopback addresses
    /// (needs --kube-binaries and --machines-dir).
    Real,
}

/// A simulated cloud for capw's providers and tests.
#[derive(Debug, Parser)]
#[command(name = "simcloud", version)]
struct Args {
    /// Address to listen on; port 0 picks a free one (printed at start).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// State file, loaded at start and rewritten atomically on every change; in memory only
    /// when absent.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Bearer token every /v1 request must carry.
    #[arg(long, env = "SIMCLOUD_TOKEN", hide_env_values = true)]
    token: String,
    /// Zones, comma-separated; the first is the default.
    #[arg(long, value_delimiter = ',', default_value = "zone-a,zone-b,zone-c")]
    zones: Vec<String>,
    /// DNS suffix of endpoints (`lb-1.<domain>`).
    #[arg(long, default_value = "sim")]
    domain: String,
    /// Milliseconds an instance stays pending [default: 500].
    #[arg(long)]
    provision_delay_ms: Option<u64>,
    /// Milliseconds an instance stays booting [default: 1000].
    #[arg(long)]
    boot_delay_ms: Option<u64>,
    /// Milliseconds a load balancer stays provisioning [default: 500].
    #[arg(long)]
    lb_delay_ms: Option<u64>,
    /// Milliseconds a managed control plane stays creating [default: 2000].
    #[arg(long)]
    mcp_create_delay_ms: Option<u64>,
    /// Milliseconds a managed control plane stays updating [default: 2000].
    #[arg(long)]
    mcp_update_delay_ms: Option<u64>,
    /// Seconds a managed control plane's bootstrap token is valid; renewed past half of it
    /// [default: 86400].
    #[arg(long)]
    mcp_join_token_ttl_secs: Option<u64>,
    /// Seed of the fault sequence.
    #[arg(long, default_value_t = 0)]
    fault_seed: u64,
    /// Milliseconds added to every faultable request.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Probability of a 500.
    #[arg(long, default_value_t = 0.0)]
    error_rate: f64,
    /// Apply requests that get an injected 500 (their response is lost).
    #[arg(long)]
    error_after_apply: bool,
    /// Probability of a 429.
    #[arg(long, default_value_t = 0.0)]
    throttle_rate: f64,
    /// Retry-After of 429s, in seconds.
    #[arg(long, default_value_t = 1)]
    retry_after_secs: u32,
    /// Probability that a request never answers.
    #[arg(long, default_value_t = 0.0)]
    hang_rate: f64,
    /// How many of the next instances booted for real never register their Node.
    #[arg(long, default_value_t = 0)]
    unregistered_nodes: u32,
    /// How instances boot.
    #[arg(long, value_enum, default_value = "simulated")]
    boot: Boot,
    /// Real boot: the root holding <version>/bin/ for each Kubernetes version the cloud has
    /// (e.g. `tests/kube-env/kube-env.sh bin-root`).
    #[arg(long, required_if_eq("boot", "real"))]
    kube_binaries: Option<PathBuf>,
    /// Real boot: the directory of the machines' directories; machines outlive the sim and
    /// are adopted when it starts again on the same state.
    #[arg(long, required_if_eq("boot", "real"))]
    machines_dir: Option<PathBuf>,
}

impl Args {
    fn into_config(self) -> SimCloudConfig {
        let boot = match (self.boot, self.kube_binaries, self.machines_dir) {
            (Boot::Real, Some(kube_binaries), Some(machines_dir)) => BootMode::Real(RealBoot {
                kube_binaries,
                machines_dir,
            }),
            _ => BootMode::Simulated,
        };
        let defaults = Timings::default();
        let ms = |flag: Option<u64>, default: Duration| flag.map_or(default, Duration::from_millis);
        SimCloudConfig {
            listen: self.listen,
            state_file: self.state,
            token: self.token,
            zones: self.zones,
            domain: self.domain,
            timings: Timings {
                provision: ms(self.provision_delay_ms, defaults.provision),
                boot: ms(self.boot_delay_ms, defaults.boot),
                load_balancer: ms(self.lb_delay_ms, defaults.load_balancer),
                control_plane_create: ms(self.mcp_create_delay_ms, defaults.control_plane_create),
                control_plane_update: ms(self.mcp_update_delay_ms, defaults.control_plane_update),
                join_token_ttl: self
                    .mcp_join_token_ttl_secs
                    .map_or(defaults.join_token_ttl, Duration::from_secs),
            },
            faults: FaultConfig {
                seed: self.fault_seed,
                latency_ms: self.latency_ms,
                error_rate: self.error_rate,
                error_after_apply: self.error_after_apply,
                throttle_rate: self.throttle_rate,
                retry_after_secs: self.retry_after_secs,
                hang_rate: self.hang_rate,
                unregistered_nodes: self.unregistered_nodes,
            },
            boot,
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let config = Args::parse().into_config();
    let handle = SimCloud::start(config)
        .await
        .context("start the sim cloud")?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", handle.base_url())?;
    stdout.flush()?;
    shutdown_signal().await?;
    handle.shutdown().await.context("stop the sim cloud")?;
    Ok(())
}

async fn shutdown_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("listen for SIGTERM")?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.context("listen for Ctrl-C")?,
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await.context("listen for Ctrl-C")?;
    Ok(())
}
