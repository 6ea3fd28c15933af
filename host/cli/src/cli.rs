//! The command-line surface: flags and subcommands, nothing else.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "capw",
    version,
    about = "Cluster lifecycle with sandboxed WebAssembly providers"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Default log filter when `CAPW_LOG` is not set.
    pub fn log_level(&self) -> &'static str {
        match self.global.verbose {
            // `capw apply` loads the providers and asks them as admission checks: a refusal is
            // printed with the object it refuses, and a provider that does not load is
            // reported by `capw up` and `capw get providers`; neither is warned of as well.
            0 if matches!(self.command, Command::Apply(_)) => {
                "warn,kube_client::client::builder=off,capw_runtime::call=error,capw_engine::providers::registry=error"
            }
            // kube's client logs every failed connection at ERROR; a workload cluster not up
            // yet is one, and it is reported as that Cluster's condition already.
            0 => "warn,kube_client::client::builder=off",
            1 => "info,capw=info",
            _ => "debug",
        }
    }
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Directory of compiled provider code, reused across runs.
    /// Defaults to $XDG_CACHE_HOME/capw/compiled (or ~/.cache/capw/compiled).
    #[arg(long, global = true, env = "CAPW_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile providers in memory only.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// More log output on stderr (-v, -vv); CAPW_LOG takes a full filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// State directory of the local mode: the object store, simcloud's state, secrets.
    #[arg(long, global = true, env = "CAPW_STATE_DIR", default_value = ".capw")]
    pub state_dir: PathBuf,
    /// Base directory of relative WasmProvider `file` sources.
    /// Defaults to <state-dir>/../target/wasm32-wasip2/plugin (where `make plugins` puts them).
    #[arg(long, global = true, env = "CAPW_PLUGIN_DIR")]
    pub plugin_dir: Option<PathBuf>,
}

impl GlobalArgs {
    /// The compile cache directory in force, if any.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        if let Some(dir) = &self.cache_dir {
            return Some(dir.clone());
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("capw").join("compiled"))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work with provider components.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Store the objects of manifest files (a file, or every .yaml/.yml of a directory).
    Apply(ApplyArgs),
    /// List objects as a table.
    Get(GetArgs),
    /// Show an object as a tree with its conditions.
    Describe(DescribeArgs),
    /// Delete an object (a Cluster is torn down by the next `capw up`).
    Delete(DeleteArgs),
    /// Start the in-process simcloud and reconcile every Cluster until it converges or is gone.
    Up(UpArgs),
    /// Measure the local mode (see docs/performance.md).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run the Kubernetes-mode controller against an API server.
    Controller(crate::controller::ControllerArgs),
    /// Print the CustomResourceDefinitions of every capw kind as YAML.
    Crds,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Bring many clusters from nothing to Ready in a fresh state directory, with the real
    /// providers and an in-process simcloud; print the time, the CPU, the peak memory and the
    /// provider calls' latency.
    Converge(BenchConvergeArgs),
    /// Converge many clusters, then measure one full pass over every one of them with
    /// nothing to do: the steady state a controller lives in.
    Resync(BenchConvergeArgs),
    /// Converge many clusters in the Kubernetes mode against a real API server; print the
    /// time, the CPU, the peak memory, the provider calls' latency and the API server's and
    /// etcd's CPU and memory.
    Kube(BenchKubeArgs),
    /// Converge many hosted control planes in the Kubernetes mode against a real API server,
    /// their Pods simulated (Ready without running); print the time to Ready and, over a
    /// settle window, the CPU and memory per hosted control plane of this process, the API
    /// server and etcd.
    Hosted(BenchHostedArgs),
    /// The same bootstrap provider built in several languages, side by side in one run:
    /// component size, cold compile, cached load, and a call's latency and CPU in a fresh
    /// instance and in a reused one (`scripts/bench-languages.sh` builds the components).
    Languages(BenchLanguagesArgs),
}

#[derive(Debug, Args)]
pub struct BenchLanguagesArgs {
    /// A component to measure, as LABEL=PATH (repeat it); each must answer
    /// `bootstrap.generate` as the first one does.
    #[arg(long = "component", value_parser = parse_bench_subject)]
    pub components: Vec<BenchSubject>,
    /// Loads measured per component, cold and cached each.
    #[arg(long, default_value_t = 3)]
    pub loads: usize,
    /// Calls measured per component, in fresh instances and in a reused one each.
    #[arg(long, default_value_t = 300)]
    pub calls: usize,
}

/// One component `capw bench languages` measures: its label and file. Read only by the
/// benchmarks, which a build without the simulated cloud (the image's) leaves out.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "simcloud"), allow(dead_code))]
pub struct BenchSubject {
    pub label: String,
    pub path: PathBuf,
}

/// `LABEL=PATH`.
fn parse_bench_subject(text: &str) -> Result<BenchSubject, String> {
    match text.split_once('=') {
        Some((label, path)) if !label.is_empty() && !path.is_empty() => Ok(BenchSubject {
            label: label.to_owned(),
            path: PathBuf::from(path),
        }),
        _ => Err(format!(
            "`{text}`: give LABEL=PATH, e.g. rust=provider.wasm"
        )),
    }
}

/// The clusters a benchmark brings up: the same flags in both modes.
#[derive(Debug, Args)]
pub struct BenchFleet {
    /// How many clusters.
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    /// Control-plane machines per cluster.
    #[arg(long, default_value_t = 3)]
    pub control_plane: u32,
    /// Workers per cluster.
    #[arg(long, default_value_t = 3)]
    pub workers: u32,
    /// simcloud's delay per step (provisioning, boot, load balancer), in milliseconds.
    #[arg(long, default_value_t = 50)]
    pub simcloud_delay_ms: u64,
}

#[derive(Debug, Args)]
pub struct BenchConvergeArgs {
    #[command(flatten)]
    pub fleet: BenchFleet,
    /// Passes that may run at once (default: the local mode's, 64).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Give up after this long.
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A manifest file or a directory of them.
    #[arg(short = 'f', long = "filename", required = true)]
    pub files: Vec<PathBuf>,
}

/// Kinds `get`, `describe` and `delete` take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Resource {
    #[value(alias = "cluster", alias = "cl")]
    Clusters,
    #[value(alias = "machine", alias = "ma")]
    Machines,
    #[value(alias = "provider", alias = "wasmproviders", alias = "wp")]
    Providers,
    #[value(alias = "clusterclass", alias = "cc")]
    Clusterclasses,
    /// A cluster's admin kubeconfig (`get` only, with the cluster's name): its
    /// `<cluster>-kubeconfig` Secret's `value`.
    #[value(alias = "kubeconfigs")]
    Kubeconfig,
    /// A cluster's secrets (`get` only, with the cluster's name): the names of the items of
    /// its `<cluster>-cluster-secrets` Secret, or with an item's name its bytes (the CAs an
    /// admin signs client certificates with, e.g. `etcd/ca.crt` and `etcd/ca.key` for etcd).
    #[value(alias = "cluster-secret")]
    ClusterSecrets,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// What to list.
    #[arg(value_enum)]
    pub resource: Resource,
    /// The cluster whose kubeconfig or secrets to print (`get kubeconfig CLUSTER`,
    /// `get cluster-secrets CLUSTER [ITEM]`).
    pub name: Option<String>,
    /// The item of the cluster's secrets to print (`get cluster-secrets CLUSTER ITEM`).
    pub item: Option<String>,
    /// Only this namespace (all when absent; `default` for a kubeconfig).
    #[arg(short, long)]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub cluster: crate::source::ClusterSource,
}

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// What to describe (only `cluster`).
    #[arg(value_enum)]
    pub resource: Resource,
    /// Its name.
    pub name: String,
    #[arg(short, long, default_value = "default")]
    pub namespace: String,
    #[command(flatten)]
    pub cluster: crate::source::ClusterSource,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// What to delete (`cluster` or `provider`).
    #[arg(value_enum)]
    pub resource: Resource,
    /// Its name.
    pub name: String,
    #[arg(short, long, default_value = "default")]
    pub namespace: String,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Give up after this long (`90s`, `10m`, `1h`).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// Address of the in-process simcloud; the quickstart's grants and configs name it.
    #[arg(long, default_value = "127.0.0.1:7480")]
    pub simcloud_listen: std::net::SocketAddr,
    /// simcloud's bearer token; also written to <state-dir>/secrets/simcloud/token for the
    /// providers granted it.
    #[arg(
        long,
        env = "CAPW_SIMCLOUD_TOKEN",
        default_value = "capw-local-simcloud"
    )]
    pub simcloud_token: String,
    /// Start no simcloud: the providers' configs and grants name a cloud that runs on its own
    /// (a `simcloud` process, say), and their secrets are already in <state-dir>/secrets.
    #[arg(long)]
    pub no_simcloud: bool,
    /// Scale simcloud's delays (provisioning, boot, load balancer) to this many
    /// milliseconds each; its defaults when absent.
    #[arg(long)]
    pub simcloud_delay_ms: Option<u64>,
    /// How simcloud boots its instances: `real` runs each cluster's etcd, kube-apiserver,
    /// kube-controller-manager and kube-scheduler and registers its Nodes, from the Kubernetes binaries that
    /// `make kube-env` builds; `simulated` only checks the bootstrap data (nothing runs, no
    /// cluster to reach).
    #[arg(long, value_enum, default_value_t = BootArg::Real)]
    pub boot: BootArg,
    /// Real boot: the directory holding `<version>/bin/` for each Kubernetes version the cloud
    /// has; default `$HOME/.cache/capw-kube-env`, where `make kube-env` builds them.
    #[arg(long, env = "CAPW_KUBE_BINARIES")]
    pub kube_binaries: Option<std::path::PathBuf>,
    /// Whether to reach each workload cluster through its kubeconfig (`connect`) or not
    /// (`off`); default `connect` when the in-process simcloud boots for real, `off`
    /// otherwise.
    #[arg(long, value_enum)]
    pub workload_clusters: Option<WorkloadClustersArg>,
}

impl UpArgs {
    /// `--workload-clusters`, or what the cloud this run starts implies: a real boot has
    /// clusters to reach, a simulated one or an outside cloud says nothing of its own.
    pub fn workload_clusters(&self) -> WorkloadClustersArg {
        self.workload_clusters
            .unwrap_or(if !self.no_simcloud && self.boot == BootArg::Real {
                WorkloadClustersArg::Connect
            } else {
                WorkloadClustersArg::Off
            })
    }
}

/// Whether the host reaches workload clusters (`--workload-clusters`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadClustersArg {
    /// Store each cluster's admin kubeconfig and reach the cluster through it: nodeRef,
    /// NodeHealthy and ControlPlaneAvailable come from the workload cluster itself.
    Connect,
    /// Reach no workload cluster (simulated boots, whose endpoints are not real hosts).
    #[default]
    Off,
}

impl WorkloadClustersArg {
    /// The engine's setting for this flag.
    pub fn access(self) -> capw_engine::WorkloadClusterAccess {
        match self {
            WorkloadClustersArg::Connect => capw_engine::WorkloadClusterAccess::Connect(
                capw_engine::ClusterCacheConfig::default(),
            ),
            WorkloadClustersArg::Off => capw_engine::WorkloadClusterAccess::Off,
        }
    }
}

/// How the in-process simcloud boots instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BootArg {
    /// Real control planes and Nodes as local processes.
    Real,
    /// The bootstrap data checked, nothing run.
    Simulated,
}

/// `90s`, `10m`, `1h`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("not a duration: {text:?}"))?;
    let secs = match unit {
        "ms" => return Ok(std::time::Duration::from_millis(n)),
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("unknown unit in {text:?}: use ms, s, m or h")),
    };
    Ok(std::time::Duration::from_secs(secs))
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Show a component's contract version, extension points and config schema.
    Inspect(InspectArgs),
    /// Publish a component to an OCI registry (Wasm OCI artifact layout), annotated with the
    /// provider's name, version, contract version and extension points.
    Push(PushArgs),
    /// Download a component from an OCI registry, checking its digests.
    Pull(PullArgs),
    /// Create a starter provider that builds and passes the conformance suite as it is.
    New(NewArgs),
    /// Run the conformance suite: the contract's rules for every extension point it declares.
    Test(crate::plugin_test::TestArgs),
}

/// How to reach a registry.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// Speak plain HTTP to the reference's registry (local test registries only).
    #[arg(long)]
    pub insecure: bool,
    /// User name for basic authentication.
    #[arg(long, env = "CAPW_REGISTRY_USERNAME", requires = "password")]
    pub username: Option<String>,
    /// Password for basic authentication.
    #[arg(long, env = "CAPW_REGISTRY_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// Bearer token, instead of a user name and password.
    #[arg(
        long,
        env = "CAPW_REGISTRY_TOKEN",
        hide_env_values = true,
        conflicts_with = "username"
    )]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The provider component (.wasm).
    pub file: PathBuf,
    /// Where to publish it: `registry/repository:tag`.
    pub reference: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// What to download: `registry/repository:tag` or `registry/repository@sha256:…`.
    pub reference: String,
    /// Where to write the component.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Refuse anything but this manifest digest.
    #[arg(long)]
    pub digest: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The provider's name: 1-63 characters of a-z, 0-9 and '-', starting with a letter.
    pub name: String,
    /// The language of the starter.
    #[arg(short, long, value_enum)]
    pub lang: Lang,
    /// The extension point the starter implements.
    #[arg(short, long, value_enum, default_value = "bootstrap")]
    pub point: Point,
    /// The directory to create (default: ./NAME); it must not exist or be empty.
    #[arg(short, long)]
    pub dir: Option<PathBuf>,
    /// The `sdk` directory of a capw checkout: the starter builds with the SDK found there.
    /// Without it a Rust starter takes capw-sdk from the capw repository, and a Go, Python or
    /// JavaScript starter gets a copy of its SDK, in `capw-sdk/`, from this capw.
    #[arg(long)]
    pub sdk: Option<PathBuf>,
}

/// The extension points `capw plugin new` writes a starter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Point {
    Infrastructure,
    Bootstrap,
    ControlPlane,
    LifecycleHooks,
}

impl Point {
    /// The contract's name of the point.
    pub fn name(self) -> &'static str {
        match self {
            Point::Infrastructure => "infrastructure",
            Point::Bootstrap => "bootstrap",
            Point::ControlPlane => "control-plane",
            Point::LifecycleHooks => "lifecycle-hooks",
        }
    }
}

/// Languages `capw plugin new` has a starter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    Rust,
    C,
    Python,
    Js,
    Go,
}

impl Lang {
    /// The language's name for humans.
    pub fn label(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::C => "C",
            Lang::Python => "Python",
            Lang::Js => "JavaScript",
            Lang::Go => "Go",
        }
    }
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The provider component (.wasm).
    pub file: PathBuf,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

/// Flags of `capw bench kube`.
#[derive(Debug, Args)]
pub struct BenchKubeArgs {
    /// Kubeconfig of the API server to measure against; use a fresh one for each run.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: PathBuf,
    #[command(flatten)]
    pub fleet: BenchFleet,
    /// Passes that may run at once (`capw controller --max-concurrent-reconciles`).
    #[arg(long, default_value_t = 64)]
    pub concurrency: u16,
    /// Namespace of the clusters, providers' secret and class.
    #[arg(long, default_value = "capw-bench")]
    pub namespace: String,
    /// Give up after this long.
    #[arg(long, default_value = "60m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct BenchHostedArgs {
    /// Kubeconfig of the API server to measure against; use a fresh one for each run.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: PathBuf,
    /// How many hosted Clusters.
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    /// API servers per hosted control plane.
    #[arg(long, default_value_t = 2)]
    pub api_servers: u32,
    /// Passes that may run at once (`capw controller --max-concurrent-reconciles`).
    #[arg(long, default_value_t = 64)]
    pub concurrency: u16,
    /// Namespace of the clusters, providers' secret and class.
    #[arg(long, default_value = "capw-bench")]
    pub namespace: String,
    /// How long the steady state is measured once every Cluster is Ready.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub settle: std::time::Duration,
    /// Give up after this long.
    #[arg(long, default_value = "60m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// `simulated`: the bench marks every Deployment and StatefulSet rolled out and gives every
    /// LoadBalancer Service an address, without running anything; `real`: the management
    /// cluster's own controllers, kubelet and load balancers run them (a cluster whose
    /// workloads run, such as tests/kube-env's with `CAPW_KUBE_ENV_WORKLOADS=run`).
    #[arg(long, value_enum, default_value_t = HostedPods::Simulated)]
    pub pods: HostedPods,
}

/// Whether `capw bench hosted` stands in for the management cluster's workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HostedPods {
    /// Marked rolled out without running.
    Simulated,
    /// Run by the management cluster.
    Real,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bench_subject_is_label_equals_path() {
        let s = parse_bench_subject("go=/tmp/a=b.wasm").unwrap();
        assert_eq!(s.label, "go");
        assert_eq!(s.path, PathBuf::from("/tmp/a=b.wasm"));
        for bad in ["provider.wasm", "=x.wasm", "go="] {
            let err = parse_bench_subject(bad).unwrap_err();
            assert!(err.contains("LABEL=PATH"), "{bad}: {err}");
        }
    }
}
