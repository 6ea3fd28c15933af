//! kubeadm's configuration API, `kubeadm.k8s.io/v1beta4`: the few fields the provider sets,
//! as typed documents.
//!
//! Field names follow the upstream Go types; a field left out takes kubeadm's default.

use serde::Serialize;

/// The configuration API version written into every document.
pub const API_VERSION: &str = "kubeadm.k8s.io/v1beta4";

/// The groups kubeadm gives its default node bootstrap token.
pub const TOKEN_GROUPS: [&str; 1] = ["system:bootstrappers:kubeadm:default-node-token"];
/// What the bootstrap token may be used for: signing the cluster-info ConfigMap (discovery)
/// and authenticating the kubelet's first request (TLS bootstrap).
const TOKEN_USAGES: [&str; 2] = ["signing", "authentication"];

/// The kubeadm config file of one machine: what `kubeadm init` or `kubeadm join` reads.
#[derive(Debug, Clone, PartialEq)]
pub enum KubeadmConfig {
    /// The first control-plane machine.
    Init {
        /// Node-local settings and the bootstrap token to create.
        init: InitConfiguration,
        /// Cluster-wide settings.
        cluster: ClusterConfiguration,
    },
    /// Any other machine.
    Join(JoinConfiguration),
}

impl KubeadmConfig {
    /// The file's text: the documents separated by `---`.
    ///
    /// # Errors
    ///
    /// The serializer's error (not expected for these types).
    pub fn to_yaml(&self) -> Result<String, serde_yaml_ng::Error> {
        match self {
            KubeadmConfig::Init { init, cluster } => Ok(format!(
                "{}---\n{}",
                serde_yaml_ng::to_string(init)?,
                serde_yaml_ng::to_string(cluster)?
            )),
            KubeadmConfig::Join(join) => serde_yaml_ng::to_string(join),
        }
    }
}

/// `InitConfiguration`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitConfiguration {
    api_version: &'static str,
    kind: &'static str,
    /// Tokens `kubeadm init` creates; the first is the one joins use.
    pub bootstrap_tokens: Vec<BootstrapToken>,
    /// This node.
    pub node_registration: NodeRegistration,
    /// Where this node's API server listens.
    #[serde(rename = "localAPIEndpoint")]
    pub local_api_endpoint: LocalApiEndpoint,
}

impl InitConfiguration {
    /// An `InitConfiguration` creating `token` and registering the node `node_name`.
    pub fn new(token: BootstrapToken, node_name: &str, bind_port: u16) -> Self {
        Self {
            api_version: API_VERSION,
            kind: "InitConfiguration",
            bootstrap_tokens: vec![token],
            node_registration: NodeRegistration {
                name: node_name.to_owned(),
            },
            local_api_endpoint: LocalApiEndpoint { bind_port },
        }
    }
}

/// One entry of `InitConfiguration.bootstrapTokens`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapToken {
    /// `[a-z0-9]{6}.[a-z0-9]{16}`. Secret.
    pub token: String,
    /// Lifetime as a Go duration, e.g. `24h0m0s`.
    pub ttl: String,
    /// Groups the token authenticates as.
    pub groups: Vec<&'static str>,
    /// What it may be used for.
    pub usages: Vec<&'static str>,
}

impl BootstrapToken {
    /// kubeadm's default node token, `token`, living `ttl_hours`.
    pub fn new(token: &str, ttl_hours: u32) -> Self {
        Self {
            token: token.to_owned(),
            ttl: format!("{ttl_hours}h0m0s"),
            groups: TOKEN_GROUPS.to_vec(),
            usages: TOKEN_USAGES.to_vec(),
        }
    }
}

/// `nodeRegistration`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeRegistration {
    /// The Node's name: the Machine's name, so the host can match them.
    pub name: String,
}

/// `localAPIEndpoint`. The advertise address is left to kubeadm, which takes the address of
/// the default route's interface: the request does not carry the machine's own address.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalApiEndpoint {
    /// Port the API server listens on.
    pub bind_port: u16,
}

/// `ClusterConfiguration`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterConfiguration {
    api_version: &'static str,
    kind: &'static str,
    /// The Cluster's name.
    pub cluster_name: String,
    /// `v1.x.y`.
    pub kubernetes_version: String,
    /// `host:port` of the cluster endpoint (a load balancer in front of the API servers).
    pub control_plane_endpoint: String,
    /// Where the PKI files are; kubeadm's default, written out because the bootstrap data
    /// puts the shared CAs there.
    pub certificates_dir: &'static str,
    /// `RSA-2048` or `ECDSA-P256`: the algorithm of the keys kubeadm creates on the node.
    pub encryption_algorithm: &'static str,
    /// Pod and service ranges.
    pub networking: Networking,
}

impl ClusterConfiguration {
    /// A `ClusterConfiguration`; the other fields are set by the caller.
    pub fn new(
        cluster_name: &str,
        kubernetes_version: String,
        control_plane_endpoint: String,
        encryption_algorithm: &'static str,
        networking: Networking,
    ) -> Self {
        Self {
            api_version: API_VERSION,
            kind: "ClusterConfiguration",
            cluster_name: cluster_name.to_owned(),
            kubernetes_version,
            control_plane_endpoint,
            certificates_dir: crate::cloud_init::PKI_DIR,
            encryption_algorithm,
            networking,
        }
    }
}

/// `ClusterConfiguration.networking`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Networking {
    /// CIDR of the pods.
    pub pod_subnet: String,
    /// CIDR of the services.
    pub service_subnet: String,
    /// DNS domain of the services.
    pub dns_domain: String,
}

/// `JoinConfiguration`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JoinConfiguration {
    api_version: &'static str,
    kind: &'static str,
    /// How the node finds and trusts the cluster.
    pub discovery: Discovery,
    /// This node.
    pub node_registration: NodeRegistration,
    /// Present exactly for control-plane joins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<JoinControlPlane>,
}

impl JoinConfiguration {
    /// A join of node `node_name` through `discovery`; a control-plane join when
    /// `control_plane` is set.
    pub fn new(
        discovery: BootstrapTokenDiscovery,
        node_name: &str,
        control_plane: Option<JoinControlPlane>,
    ) -> Self {
        Self {
            api_version: API_VERSION,
            kind: "JoinConfiguration",
            discovery: Discovery {
                bootstrap_token: discovery,
            },
            node_registration: NodeRegistration {
                name: node_name.to_owned(),
            },
            control_plane,
        }
    }
}

/// `JoinConfiguration.discovery`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    /// Token-based discovery, pinned to the CA.
    pub bootstrap_token: BootstrapTokenDiscovery,
}

/// `discovery.bootstrapToken`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapTokenDiscovery {
    /// `host:port` of the cluster endpoint.
    pub api_server_endpoint: String,
    /// The bootstrap token. Secret.
    pub token: String,
    /// `sha256:<hex>` of the cluster CA's public key: the node trusts only that CA.
    pub ca_cert_hashes: Vec<String>,
}

/// `JoinConfiguration.controlPlane`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JoinControlPlane {
    /// Where this node's API server listens.
    #[serde(rename = "localAPIEndpoint")]
    pub local_api_endpoint: LocalApiEndpoint,
}
