//! Why bootstrap data does not boot.

use super::KUBEADM_API_VERSION;

/// Why bootstrap data does not boot. Messages are precise enough to fix the data from them,
/// and never contain the token itself.
#[derive(Debug, thiserror::Error)]
pub enum BootCheckError {
    /// The bytes are not UTF-8.
    #[error("data is not UTF-8 text")]
    NotUtf8,
    /// The first line is not `#cloud-config`.
    #[error("data is not cloud-config: the first line must be `#cloud-config`")]
    NotCloudConfig,
    /// The cloud-config does not parse as YAML.
    #[error("cloud-config is not valid YAML: {0}")]
    InvalidYaml(#[source] serde_yaml_ng::Error),
    /// The cloud-config parses, but not to a mapping.
    #[error("cloud-config is not a YAML mapping")]
    NotAMapping,
    /// A cloud-config key has the wrong shape.
    #[error("cloud-config `{key}` is malformed: {expected}")]
    Malformed {
        /// The offending key, e.g. `write_files[1].content`.
        key: String,
        /// What it should be.
        expected: &'static str,
    },
    /// No `runcmd` entry runs `kubeadm init` or `kubeadm join`.
    #[error("runcmd runs neither `kubeadm init` nor `kubeadm join`")]
    NoKubeadmCommand,
    /// `runcmd` runs kubeadm more than once.
    #[error(
        "runcmd runs kubeadm {count} times (`kubeadm {first}` and `kubeadm {second}`); want one"
    )]
    SeveralKubeadmCommands {
        /// How many kubeadm commands were found.
        count: usize,
        /// The first subcommand.
        first: &'static str,
        /// The second subcommand.
        second: &'static str,
    },
    /// kubeadm runs without `--config`.
    #[error(
        "`kubeadm {command}` runs without `--config`; the sim reads {KUBEADM_API_VERSION} documents from the file it names"
    )]
    NoConfigFlag {
        /// `init` or `join`.
        command: &'static str,
    },
    /// The file named by `--config` is written by nothing in the cloud-config.
    #[error(
        "`kubeadm {command} --config {path}`, but no write_files entry or runcmd heredoc writes {path}"
    )]
    ConfigFileNotWritten {
        /// `init` or `join`.
        command: &'static str,
        /// The path after `--config`.
        path: String,
    },
    /// A `write_files` entry has an encoding the sim does not read.
    #[error(
        "write_files entry {path} has encoding `{encoding}`; the sim reads plain text and b64 only"
    )]
    UnsupportedEncoding {
        /// The entry's path.
        path: String,
        /// Its `encoding`.
        encoding: String,
    },
    /// A `write_files` entry's base64 content does not decode to UTF-8 text.
    #[error("write_files entry {path}: content is not valid base64 of UTF-8 text")]
    BadEncodedContent {
        /// The entry's path.
        path: String,
    },
    /// The kubeadm config file is not YAML.
    #[error("kubeadm config {path} is not valid YAML: {source}")]
    InvalidConfigYaml {
        /// The file's path.
        path: String,
        /// The parse error.
        #[source]
        source: serde_yaml_ng::Error,
    },
    /// A kubeadm document has another API version.
    #[error("kubeadm config {path} has a {kind} of apiVersion {found}; want {KUBEADM_API_VERSION}")]
    WrongApiVersion {
        /// The file's path.
        path: String,
        /// The document's kind.
        kind: String,
        /// Its apiVersion.
        found: String,
    },
    /// A document the command needs is missing.
    #[error("kubeadm config {path} has no {KUBEADM_API_VERSION} {kind} document")]
    MissingDocument {
        /// The file's path.
        path: String,
        /// `InitConfiguration`, `ClusterConfiguration` or `JoinConfiguration`.
        kind: &'static str,
    },
    /// A field the check needs is missing or not a string.
    #[error("{kind} has no {field}")]
    MissingField {
        /// The document's kind.
        kind: &'static str,
        /// The dotted field path.
        field: &'static str,
    },
    /// A worker runs `kubeadm init`.
    #[error(
        "a worker runs `kubeadm init`; only a control-plane instance may initialise the cluster"
    )]
    WorkerInit,
    /// A worker joins with a `controlPlane` section.
    #[error(
        "a worker joins as a control-plane node (its JoinConfiguration has a `controlPlane` section)"
    )]
    WorkerJoinsControlPlane,
    /// A control-plane instance joins without a `controlPlane` section.
    #[error(
        "a control-plane instance joins as a worker (its JoinConfiguration has no `controlPlane` section)"
    )]
    ControlPlaneJoinsAsWorker,
    /// File discovery is used instead of a bootstrap token.
    #[error("JoinConfiguration uses discovery.file; the sim checks bootstrap-token discovery only")]
    FileDiscovery,
    /// The cluster has no endpoint to check against.
    #[error(
        "cluster {cluster} has no endpoint (no load balancer and no ready managed control plane)"
    )]
    NoClusterEndpoint {
        /// The cluster.
        cluster: String,
    },
    /// An endpoint in the data does not parse as `host[:port]`.
    #[error("{field} `{found}` is not host[:port]")]
    BadEndpoint {
        /// The field, e.g. `controlPlaneEndpoint`.
        field: &'static str,
        /// Its value.
        found: String,
    },
    /// The data points at another endpoint than the cluster's.
    #[error("{verb} endpoint {found}, cluster endpoint is {expected}")]
    EndpointMismatch {
        /// `initialises with` or `joins`.
        verb: &'static str,
        /// The endpoint in the data, normalised to `host:port`.
        found: String,
        /// The cluster's endpoint.
        expected: String,
    },
    /// `init` in a cluster without a registration writes no CA to learn the hash from.
    #[error(
        "init writes no CA certificate to {path}, and cluster {cluster} has no registered CA cert hash for joins to pin"
    )]
    NoCaCert {
        /// Where kubeadm reads the CA from.
        path: &'static str,
        /// The cluster.
        cluster: String,
    },
    /// The CA written for `init` is not a PEM certificate.
    #[error("{path} is not a PEM certificate: {reason}")]
    BadCaCert {
        /// Where kubeadm reads the CA from.
        path: &'static str,
        /// What the parser said.
        reason: String,
    },
    /// No bootstrap secrets were registered for the cluster.
    #[error("no bootstrap token registered for cluster {cluster}")]
    NotRegistered {
        /// The cluster.
        cluster: String,
    },
    /// A bootstrap token is not `[a-z0-9]{6}.[a-z0-9]{16}`.
    #[error("{field} is not a bootstrap token of the form [a-z0-9]{{6}}.[a-z0-9]{{16}}")]
    TokenFormat {
        /// Where the token is.
        field: &'static str,
    },
    /// The token is not the cluster's registered one.
    #[error("{field} does not match the bootstrap token registered for cluster {cluster}")]
    TokenMismatch {
        /// Where the token is.
        field: &'static str,
        /// The cluster.
        cluster: String,
    },
    /// A join without CA pinning.
    #[error("join carries no discovery.bootstrapToken.caCertHashes")]
    NoCaCertHashes,
    /// A CA cert hash entry has the wrong form.
    #[error("caCertHashes entry `{found}` is not sha256:<64 hex digits>")]
    CaCertHashFormat {
        /// The entry.
        found: String,
    },
    /// None of the pinned hashes is the cluster's.
    #[error(
        "caCertHashes {found:?} do not include the CA cert hash registered for cluster {cluster} ({expected})"
    )]
    CaCertHashMismatch {
        /// The entries found.
        found: Vec<String>,
        /// The registered hash.
        expected: String,
        /// The cluster.
        cluster: String,
    },
}
