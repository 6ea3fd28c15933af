//! `capw controller`: the Kubernetes mode, against the API server of a kubeconfig or the pod's
//! service account.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use capw_engine::{RequeueBounds, SecretSource};
use capw_kube::webhook::WebhookConfig;
use capw_kube::{CacheConfig, ControllerConfig, LeaseConfig, RequeuePolicy, ShardConfig};
use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, oneshot};

use crate::cli::GlobalArgs;

/// Flags of `capw controller`; the names follow controller-runtime's, as deploy/ uses them.
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// Whether to reach each workload cluster through its kubeconfig Secret (`connect`) or
    /// not (`off`).
    #[arg(long, value_enum, default_value_t = crate::cli::WorkloadClustersArg::Off)]
    pub workload_clusters: crate::cli::WorkloadClustersArg,
    /// Kubeconfig to use; default: $KUBECONFIG, ~/.kube/config, or the pod's service account.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    /// Reconcile only while holding a coordination.k8s.io Lease; other replicas wait.
    #[arg(long)]
    pub leader_elect: bool,
    /// Split the Clusters into this many shards, each held by one replica through its own
    /// Lease (`<lease-name>-shard-<i>`); above 1, used instead of --leader-elect. Every
    /// replica must be given the same number.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub shards: u32,
    /// Name of the leader Lease (with --shards, the prefix of the shard Leases).
    #[arg(long, default_value = "capw-controller")]
    pub lease_name: String,
    /// Namespace of the leader Lease, of provider ConfigMaps and of secret grants without a
    /// namespace.
    #[arg(long, env = "POD_NAMESPACE", default_value = "capw-system")]
    pub lease_namespace: String,
    /// Seconds a Lease holds without renewal (a killed leader is replaced after this).
    #[arg(long, default_value_t = 15)]
    pub lease_duration_seconds: u64,
    /// This replica's name in the Lease and in Events; default: the host name.
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
    /// Address of the Prometheus endpoint /metrics; `0` turns it off.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_bind_address: String,
    /// Address of /healthz and /readyz; `0` turns them off.
    #[arg(long, default_value = "0.0.0.0:8081")]
    pub health_probe_bind_address: String,
    /// Longest wait between passes over a cluster while work is under way, in seconds.
    #[arg(long, default_value_t = 10)]
    pub max_requeue_seconds: u64,
    /// Reconcile only the Clusters of this namespace (and their Machines and ClusterClasses);
    /// default: every namespace.
    #[arg(long, env = "CAPW_WATCH_NAMESPACE")]
    pub watch_namespace: Option<String>,
    /// Address of the validating admission webhook (HTTPS, `POST /validate`); `0` turns it
    /// off.
    #[arg(long, default_value = "0")]
    pub webhook_bind_address: String,
    /// The webhook's serving certificate: a `kubernetes.io/tls` Secret, `<namespace>/<name>`
    /// (a bare name is in the Lease's namespace); watched, so a rotated certificate is served
    /// without a restart.
    #[arg(long, default_value = "capw-webhook-tls")]
    pub webhook_cert_secret: String,
    /// Most passes over Clusters running at once; 0 for no bound.
    #[arg(long, default_value_t = 64)]
    pub max_concurrent_reconciles: u16,
}

fn address(flag: &str, value: &str) -> anyhow::Result<Option<SocketAddr>> {
    if value == "0" || value.is_empty() {
        return Ok(None);
    }
    value
        .parse()
        .map(Some)
        .with_context(|| format!("--{flag}={value:?} is not an address like 0.0.0.0:8080"))
}

async fn client(args: &ControllerArgs) -> anyhow::Result<kube::Client> {
    let config = match &args.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("using kubeconfig {}", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig and not in a pod")?,
    };
    kube::Client::try_from(config).context("building the Kubernetes client")
}

/// Every SIGTERM and Ctrl-C, as they come.
fn signals() -> anyhow::Result<mpsc::Receiver<()>> {
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(()) = term.recv() => {}
                Some(()) = interrupt.recv() => {}
                else => break,
            }
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    Ok(rx)
}

/// Runs the controller that `start` makes from its shutdown signal: the first signal stops it
/// gracefully (running passes finish, the Lease is released), a second one at once. Passes
/// cut short that way are safe: every machine's intent is stored before it is created.
async fn until_signalled<F, E>(
    start: impl FnOnce(oneshot::Receiver<()>) -> F,
    mut signals: mpsc::Receiver<()>,
) -> anyhow::Result<()>
where
    F: Future<Output = Result<(), E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (stop, stopped) = oneshot::channel();
    let running = start(stopped);
    tokio::pin!(running);
    tokio::select! {
        result = &mut running => return result.context("the controller stopped"),
        Some(()) = signals.recv() => {}
    }
    tracing::info!("shutting down: running passes finish first; a second signal stops at once");
    let _ = stop.send(());
    tokio::select! {
        result = &mut running => result.context("the controller stopped"),
        Some(()) = signals.recv() => {
            anyhow::bail!("stopped by a second signal before the running passes finished")
        }
    }
}

pub async fn run(global: &GlobalArgs, args: ControllerArgs) -> anyhow::Result<()> {
    let mut engine = crate::state::config(global).engine;
    engine.secrets = SecretSource::Store {
        default_namespace: args.lease_namespace.clone(),
    };
    engine.requeue = RequeueBounds {
        max: Duration::from_secs(args.max_requeue_seconds.max(1)),
        ..RequeueBounds::CONTROLLER
    };
    engine.workload_clusters = args.workload_clusters.access();
    let identity = match &args.identity {
        Some(id) => id.clone(),
        None => {
            std::env::var("HOSTNAME").unwrap_or_else(|_| format!("capw-{}", std::process::id()))
        }
    };
    let duration = Duration::from_secs(args.lease_duration_seconds.max(2));
    let lease = LeaseConfig {
        name: args.lease_name.clone(),
        namespace: args.lease_namespace.clone(),
        identity: identity.clone(),
        duration,
        renew_every: duration / 3,
    };
    let sharded = args.shards > 1;
    let config = ControllerConfig {
        engine,
        provider_namespace: args.lease_namespace.clone(),
        watch_namespace: args.watch_namespace.clone(),
        identity,
        leader_election: (args.leader_elect && !sharded).then(|| lease.clone()),
        sharding: sharded.then_some(ShardConfig {
            shards: args.shards,
            lease,
        }),
        metrics_address: address("metrics-bind-address", &args.metrics_bind_address)?,
        health_address: address("health-probe-bind-address", &args.health_probe_bind_address)?,
        requeue: RequeuePolicy::default(),
        concurrency: args.max_concurrent_reconciles,
        cache: CacheConfig::default(),
        webhook: match address("webhook-bind-address", &args.webhook_bind_address)? {
            None => None,
            Some(address) => {
                let (namespace, name) = match args.webhook_cert_secret.split_once('/') {
                    Some((ns, name)) => (ns.to_owned(), name.to_owned()),
                    None => (
                        args.lease_namespace.clone(),
                        args.webhook_cert_secret.clone(),
                    ),
                };
                Some(WebhookConfig {
                    address,
                    cert_secret_namespace: namespace,
                    cert_secret_name: name,
                })
            }
        },
    };
    let client = client(&args).await?;
    let signals = signals()?;
    until_signalled(
        |stopped| {
            capw_kube::run(client, config, async {
                let _ = stopped.await;
            })
        },
        signals,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    type Outcome = Result<(), std::io::Error>;

    /// A controller whose passes, once stopping, take `finishing` to finish.
    fn controller(
        finishing: Duration,
    ) -> impl FnOnce(oneshot::Receiver<()>) -> std::pin::Pin<Box<dyn Future<Output = Outcome>>>
    {
        move |stopped| {
            Box::pin(async move {
                let _ = stopped.await;
                tokio::time::sleep(finishing).await;
                Ok(())
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn one_signal_lets_running_passes_finish() {
        let (tx, rx) = mpsc::channel(4);
        tx.send(()).await.unwrap();
        let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mark = finished.clone();
        let started = tokio::time::Instant::now();
        until_signalled(
            move |stopped| async move {
                let _ = stopped.await;
                // A pass still running when the signal came: it takes a minute to end.
                tokio::time::sleep(Duration::from_secs(60)).await;
                mark.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok::<(), std::io::Error>(())
            },
            rx,
        )
        .await
        .unwrap();
        assert!(
            finished.load(std::sync::atomic::Ordering::SeqCst),
            "returned before the running pass ended"
        );
        assert!(started.elapsed() >= Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_signal_stops_at_once() {
        let (tx, rx) = mpsc::channel(4);
        tx.send(()).await.unwrap();
        tx.send(()).await.unwrap();
        let started = tokio::time::Instant::now();
        let err = until_signalled(controller(Duration::from_secs(3600)), rx)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("second signal"), "{err:#}");
        assert!(started.elapsed() < Duration::from_secs(3600));
    }

    #[tokio::test]
    async fn a_controller_that_fails_says_so_without_a_signal() {
        let (_tx, rx) = mpsc::channel(4);
        let err = until_signalled(
            |_stopped| async { Err::<(), _>(std::io::Error::other("lease lost")) },
            rx,
        )
        .await
        .unwrap_err();
        assert_eq!(format!("{err:#}"), "the controller stopped: lease lost");
    }
}
