//! The control-plane extension point: the next safe step toward the desired control plane.

use serde::{Deserialize, Serialize};

use super::types::{Condition, Endpoint, InProgress, KubernetesVersion, MachineRef};

/// An existing control-plane member as the host observes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Its Machine.
    pub machine: MachineRef,
    /// The Kubernetes version it runs.
    pub version: KubernetesVersion,
    /// The failure domain it was placed in, if any.
    pub failure_domain: Option<String>,
    /// Its node is ready.
    pub ready: bool,
    /// Creation time, seconds since the Unix epoch.
    pub created_at: u64,
    /// Being deleted already.
    pub deleting: bool,
    /// Its place in etcd as the host observed it; told to providers from 0.3 on.
    #[serde(default)]
    pub etcd: EtcdMembership,
    /// The inputs that differ from what is desired now (`version`, or a machine-shaping
    /// input's name); empty when up to date. Told to providers from 0.3 on.
    #[serde(default)]
    pub out_of_date: Vec<String>,
    /// Why the host's health checks judge it unhealthy and it may be replaced now; empty
    /// otherwise. Told to providers from 0.3 on.
    #[serde(default)]
    pub unhealthy: Vec<String>,
}

/// A member's place in the cluster's etcd, as the host observed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum EtcdMembership {
    /// The host does not observe etcd for this cluster.
    #[default]
    Unknown,
    /// etcd lists a member on this machine.
    Member,
    /// etcd lists no member on this machine.
    NotMember,
}

/// The desired control plane and what exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInput {
    /// The version the control plane is to run.
    pub version: KubernetesVersion,
    /// How many members it is to have.
    pub replicas: u32,
    /// The members that exist.
    pub members: Vec<Member>,
    /// Failure domains that may hold control-plane machines.
    pub failure_domains: Vec<String>,
    /// The endpoint from the infrastructure, when known.
    pub endpoint: Option<Endpoint>,
    /// The Cluster asks for a control plane that keeps serving with this many members
    /// failed, instead of a replica count (then `replicas` is 0). Told from 0.3 on.
    #[serde(default)]
    pub failures_tolerated: Option<u32>,
    /// Hosted shape: every object the host applied for this control plane, with its
    /// readiness. Told from 0.3 on.
    #[serde(default)]
    pub objects: Vec<HostedObject>,
}

/// An object the host applied to the management cluster for a hosted control plane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostedObject {
    /// `apps/v1` or `v1`.
    pub api_version: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Rolled out and ready (a Deployment or StatefulSet), given an address (a LoadBalancer
    /// Service), or present (the other kinds).
    pub ready: bool,
    /// Why it is not ready, when the host can say.
    pub message: Option<String>,
    /// A Deployment's or StatefulSet's Pod template images (init containers first).
    #[serde(default)]
    pub images: Vec<String>,
    /// A LoadBalancer Service's addresses (its `status.loadBalancer.ingress`).
    #[serde(default)]
    pub addresses: Vec<String>,
}

/// The cluster CA a minted certificate chains to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CertificateAuthority {
    /// The cluster CA.
    Cluster,
    /// The front-proxy CA.
    FrontProxy,
    /// The etcd CA.
    Etcd,
}

/// What a minted certificate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CertificateUsage {
    /// TLS server authentication.
    Server,
    /// TLS client authentication.
    Client,
    /// Both (an etcd peer).
    Peer,
}

/// One certificate the host mints into a Secret.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CertificateRequest {
    /// Data keys `<key>.crt`, `<key>.key` (and `<key>.conf`).
    pub key: String,
    /// The CA it chains to.
    pub authority: CertificateAuthority,
    /// What it is for.
    pub usage: CertificateUsage,
    /// Its subject's common name.
    pub common_name: String,
    /// Its subject's organizations.
    pub organizations: Vec<String>,
    /// DNS names and IP addresses it serves.
    pub sans: Vec<String>,
    /// The server URL of a kubeconfig written beside it, when asked.
    pub kubeconfig_server: Option<String>,
}

/// Material of the cluster's CAs written into a minted Secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SecretMaterial {
    /// `ca.crt`.
    ClusterCaCertificate,
    /// `ca.crt` and `ca.key`.
    ClusterCa,
    /// `front-proxy-ca.crt`.
    FrontProxyCaCertificate,
    /// `etcd-ca.crt`.
    EtcdCaCertificate,
    /// `sa.key` and `sa.pub`.
    ServiceAccountKeys,
}

/// A Secret the host mints from the cluster's CAs for a hosted control plane.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CertificateSecret {
    /// The Secret's name.
    pub name: String,
    /// The certificates in it.
    pub certificates: Vec<CertificateRequest>,
    /// The CA material in it.
    pub materials: Vec<SecretMaterial>,
}

/// A machine the host is to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineToCreate {
    /// `true` for the first machine, which initialises the cluster.
    pub init: bool,
    /// The version it is to run.
    pub version: KubernetesVersion,
    /// The failure domain to place it in; `None` leaves the choice to the host.
    pub failure_domain: Option<String>,
}

/// The single next step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    /// Nothing to do: the control plane is as desired.
    None,
    /// Machines shape: create this machine.
    CreateMachine(MachineToCreate),
    /// Machines shape: delete this machine, which is no longer an etcd member.
    DeleteMachine(MachineRef),
    /// Take this member out of etcd, then delete its machine: the host deletes the machine
    /// only once the removal is confirmed. Asked for from 0.2 on; a host that cannot change
    /// etcd membership refuses the step and deletes nothing.
    RemoveEtcdMember(MachineRef),
    /// Hosted shape: apply these manifests (YAML) to the management cluster.
    ApplyManifests(Vec<String>),
    /// Something is under way; plan again.
    Wait(InProgress),
}

/// The plan and the counts the host shows in the Cluster's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanOutput {
    /// The one step the host is to take now.
    pub step: Step,
    /// The control plane has been initialised (the API server answered once).
    pub initialized: bool,
    /// Members the control plane has.
    pub replicas: u32,
    /// Members that are ready.
    pub ready_replicas: u32,
    /// Members that run the desired version.
    pub up_to_date_replicas: u32,
    /// Where its API server is reached, when known.
    pub endpoint: Option<Endpoint>,
    /// Conditions the host shows on the Cluster.
    pub conditions: Vec<Condition>,
    /// The control plane serves requests now, as the provider sees it: what the host shows
    /// for the hosted and managed shapes, which have no machines to count. `None` from a 0.1
    /// provider, which does not say.
    pub ready: Option<bool>,
    /// The Kubernetes version the control plane runs, when the provider knows it. `None` from
    /// a 0.1 provider.
    pub version: Option<KubernetesVersion>,
    /// How many members may fail with the control plane still serving, as it runs now (for a
    /// managed shape, the service's promise). `None` before 0.3 or when the provider does not
    /// say.
    #[serde(default)]
    pub failures_tolerated: Option<u32>,
    /// Hosted shape: the Secrets the host mints from the cluster's CAs beside the manifests.
    /// Empty before 0.3.
    #[serde(default)]
    pub certificates: Vec<CertificateSecret>,
    /// Hosted shape: the shared etcd the control plane keeps its state in, when it has no
    /// datastore of its own. `None` before 0.3.
    #[serde(default)]
    pub shared_datastore: Option<SharedDatastore>,
}

/// A hosted control plane's place in a shared etcd (contract 0.3's `shared-datastore`): the
/// host makes the cluster's etcd user and prefix and writes their access into `secret`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedDatastore {
    /// The datastore's Secret (type `capw.dev/datastore`) in the provider namespace.
    pub name: String,
    /// The Secret the host writes the cluster's access into.
    pub secret: String,
}

/// How a control plane that a service runs is reached and joined (contract 0.3's
/// `control-plane-access`). Its kubeconfig and token are secret: `Debug` leaves them out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlPlaneAccess {
    /// Where its API server is reached.
    pub endpoint: Endpoint,
    /// The certificate authority its API server's certificate chains to (PEM).
    pub ca_certificate: String,
    /// An admin kubeconfig (YAML). Secret.
    pub admin_kubeconfig: String,
    /// The token workers join with, when the service issues one.
    pub join_token: Option<super::bootstrap::JoinToken>,
}

impl std::fmt::Debug for ControlPlaneAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlaneAccess")
            .field("endpoint", &self.endpoint)
            .field(
                "ca_certificate",
                &format_args!("{} bytes", self.ca_certificate.len()),
            )
            .field("admin_kubeconfig", &format_args!("<secret>"))
            .field("join_token", &self.join_token)
            .finish()
    }
}

/// The answer of `reconcile-control-plane` (0.3 on): the plan as it stands after the call,
/// and how to reach the control plane once it can be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileOutput {
    /// Its step is `None` or `Wait`; the status and counts are the control plane's.
    pub plan: PlanOutput,
    /// How to reach and join it, once it can be.
    pub access: Option<ControlPlaneAccess>,
}
