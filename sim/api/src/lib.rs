//! simcloud's API as JSON: the request and response shapes, shared by simcloud (which serves
//! them) and the sim-infra provider (which calls them), so the two cannot drift apart.
//!
//! These types are the wire contract described in `sim/simcloud/README.md`. Requests reject
//! unknown fields, so a misspelt field is a 400 naming it rather than a silently ignored value;
//! responses ignore fields they do not name. Timestamps are seconds since the Unix epoch.
//!
//! serde only: the crate builds for the host and for `wasm32-wasip2` alike.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// What an instance is for. Whether a control-plane instance initialises the cluster or joins
/// it is read from its bootstrap data, not declared here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Runs the API server (and etcd); may run `kubeadm init` or a control-plane join.
    ControlPlane,
    /// Runs workloads; may only run a worker join.
    Worker,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::ControlPlane => "control-plane",
            Role::Worker => "worker",
        })
    }
}

/// Lifecycle of an instance: `pending` -> `booting` -> `running` | `failed`. `running` and
/// `failed` are final; a failed instance stays until deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstanceState {
    /// Accepted; not started yet.
    Pending,
    /// Started; reading its bootstrap data.
    Booting,
    /// Booted: its bootstrap data passed the check.
    Running,
    /// Its bootstrap data failed the check; `reason` says why.
    Failed,
}

/// A network address of an instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    /// Always `private-ip` for now.
    #[serde(rename = "type")]
    pub kind: String,
    /// An IPv4 address from the instance's network.
    pub address: String,
}

/// The instance type of an instance created without one.
pub const DEFAULT_INSTANCE_TYPE: &str = "standard";

/// `POST /v1/instances`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateInstance {
    /// Idempotency key: a second create with the same token answers the first instance (200)
    /// instead of creating another (201).
    pub client_token: String,
    /// Display name, e.g. the Machine's name.
    pub name: String,
    /// The cluster it belongs to; the cluster must have a network.
    pub cluster: String,
    pub role: Role,
    /// One of `GET /v1/zones`; the first zone when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// The instance's size, a name such as `small`; [`DEFAULT_INSTANCE_TYPE`] when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// Free-form key/value tags; `GET /v1/instances?tag=key=value` filters on them.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Cloud-init user data, standard base64. Never returned by the API.
    pub bootstrap_data: String,
}

/// An instance as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// `i-<n>`.
    pub id: String,
    /// `sim://instances/<id>`.
    pub provider_id: String,
    pub client_token: String,
    pub name: String,
    pub cluster: String,
    pub role: Role,
    pub zone: String,
    /// The instance's size.
    #[serde(default)]
    pub instance_type: String,
    pub network_id: String,
    pub addresses: Vec<Address>,
    pub state: InstanceState,
    /// Why the instance failed; empty otherwise.
    pub reason: String,
    pub tags: BTreeMap<String, String>,
    pub created_at: u64,
}

/// `GET /v1/instances`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceList {
    /// Ordered by id (creation order).
    pub instances: Vec<Instance>,
}

/// `POST /v1/networks`. A cluster has at most one network.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateNetwork {
    /// Optional idempotency key, as for instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_token: Option<String>,
    pub cluster: String,
    pub name: String,
}

/// A network: a /20 block of 10.0.0.0/8 from which its instances get addresses in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Network {
    /// `net-<n>`.
    pub id: String,
    pub client_token: Option<String>,
    pub cluster: String,
    pub name: String,
    /// E.g. `10.0.4.0/22`.
    pub cidr: String,
    pub created_at: u64,
}

/// `GET /v1/networks`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkList {
    pub networks: Vec<Network>,
}

/// Where an API server is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for Endpoint {
    /// `host:port`, with brackets around an IPv6 literal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// `POST /v1/load-balancers`. A cluster has at most one load balancer: its control-plane
/// endpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateLoadBalancer {
    /// Optional idempotency key, as for instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_token: Option<String>,
    pub cluster: String,
    pub name: String,
    /// Listener port; 6443 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

/// Lifecycle of a load balancer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBalancerState {
    /// Created; not serving yet.
    Provisioning,
    /// Serving; its endpoint is usable.
    Active,
}

/// A load balancer: the control-plane endpoint of its cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadBalancer {
    /// `lb-<n>`.
    pub id: String,
    pub client_token: Option<String>,
    pub cluster: String,
    pub name: String,
    /// `lb-<n>.<domain>:<port>`; known from creation, usable once `active`.
    pub endpoint: Endpoint,
    pub state: LoadBalancerState,
    pub created_at: u64,
}

/// `GET /v1/load-balancers`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadBalancerList {
    pub load_balancers: Vec<LoadBalancer>,
}

/// `POST /v1/managed-control-planes`. A cluster has at most one.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateManagedControlPlane {
    /// Optional idempotency key, as for instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_token: Option<String>,
    pub cluster: String,
    pub name: String,
    /// Kubernetes version, `1.31.2` or `v1.31.2`.
    pub version: String,
    /// API server replicas, 1 to 5; fixed at creation.
    pub replicas: u32,
}

/// `PATCH /v1/managed-control-planes/{id}`. Fields left out keep their value.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateManagedControlPlane {
    /// Upgrade to this version: same minor or the next one, never lower.
    #[serde(default)]
    pub version: Option<String>,
    /// Accepted only when equal to the current value: replicas cannot change after creation.
    #[serde(default)]
    pub replicas: Option<u32>,
}

/// Lifecycle of a managed control plane: `creating` -> `ready` -> `updating` -> `ready`, and
/// `failed` from `creating` or `updating`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControlPlaneState {
    /// Being created; no endpoint yet.
    Creating,
    /// Serving `version` at `endpoint`.
    Ready,
    /// Serving `version` at `endpoint` while it upgrades to `target_version`.
    Updating,
    /// Its service could not start (from `creating`) or could not upgrade (from `updating`)
    /// and serves nothing; `failure_reason` says why. Final: the service does not repair it
    /// and refuses updates; the only way on is to delete it (and create another).
    Failed,
}

/// A managed control plane: an API server the cloud runs for a cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedControlPlane {
    /// `mcp-<n>`.
    pub id: String,
    pub client_token: Option<String>,
    pub cluster: String,
    pub name: String,
    /// The version it serves now.
    pub version: String,
    /// The version an update in progress goes to; absent when not `updating`, except for a
    /// control plane that `failed` during an update: the version it failed to reach.
    pub target_version: Option<String>,
    pub replicas: u32,
    /// How many API server replicas (and etcd members) may fail with the control plane still
    /// serving: the service's promise, `(replicas - 1) / 2`.
    pub failures_tolerated: u32,
    pub state: ControlPlaneState,
    /// Why the service failed, once it is `failed`: one line, at most
    /// [`MAX_FAILURE_REASON_LEN`] bytes, never a secret. Absent otherwise (and left out of the
    /// JSON then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// `mcp-<n>.<domain>:443`; absent while `creating`, and once `failed` if it never served
    /// (it failed while `creating`).
    pub endpoint: Option<Endpoint>,
    pub created_at: u64,
    pub updated_at: u64,
}

/// The longest [`ManagedControlPlane::failure_reason`], in bytes: a reason is a condition's
/// message on the provider's side, not a log; a longer one is cut, ending in `…`.
pub const MAX_FAILURE_REASON_LEN: usize = 512;

/// `GET /v1/managed-control-planes/{id}/credentials`: how to reach and join a managed control
/// plane that is `ready` or `updating` (what EKS's DescribeCluster and a bootstrap token give);
/// `409 failed_precondition` while it is `creating`. Once `failed`, what it answered before:
/// the credentials of one that had served (it failed while `updating`; its data and CA are
/// kept until it is deleted), `409 failed_precondition` for one that never did.
///
/// The service issues its own certificate authority at creation, and a bootstrap token it
/// registers as the cluster's (`/v1/clusters/{cluster}/bootstrap`, so instances joining the
/// cluster must carry it) and renews, with a new id, once past half its life: each answer has
/// the token valid now.
///
/// Its `Debug` leaves out the kubeconfig and the token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedControlPlaneCredentials {
    /// Where the API server is reached.
    pub endpoint: Endpoint,
    /// The service's cluster CA certificate (PEM).
    pub ca_certificate: String,
    /// An admin kubeconfig (YAML) for `endpoint`. Secret.
    pub admin_kubeconfig: String,
    /// A kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`. Secret.
    pub join_token: String,
    /// How long the token is valid from `join_token_issued_at`.
    pub join_token_ttl_seconds: u64,
    /// When the token was issued, seconds since the Unix epoch.
    pub join_token_issued_at: u64,
    /// Groups the token authenticates as besides `system:bootstrappers`.
    pub join_token_groups: Vec<String>,
}

impl fmt::Debug for ManagedControlPlaneCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedControlPlaneCredentials")
            .field("endpoint", &self.endpoint)
            .field("ca_certificate", &self.ca_certificate)
            .field("admin_kubeconfig", &"<redacted>")
            .field("join_token", &"<redacted>")
            .field("join_token_ttl_seconds", &self.join_token_ttl_seconds)
            .field("join_token_issued_at", &self.join_token_issued_at)
            .field("join_token_groups", &self.join_token_groups)
            .finish()
    }
}

/// `PUT /v1/admin/managed-control-planes/{id}/auto-upgrade`: the service upgrades a `ready`
/// managed control plane on its own, as managed services do at the end of a version's
/// support: an update to `version` starts as if a client had asked for it (one minor up at
/// most). `409` when it is not `ready`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoUpgrade {
    /// The version the service moves it to.
    pub version: String,
}

/// `PUT /v1/admin/managed-control-planes/{id}/fail`: the service of a `creating` or
/// `updating` managed control plane of a simulated cloud fails, as a real-boot service does
/// when its agent cannot start or upgrade it: it turns `failed` with this reason. Failing a
/// `failed` one again changes nothing (its first reason stays); `409` when it is `ready`, and
/// in a real-boot cloud, whose services fail for real.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailService {
    /// Why, one line; cut to [`MAX_FAILURE_REASON_LEN`] bytes.
    pub reason: String,
}

/// `GET /v1/managed-control-planes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedControlPlaneList {
    pub managed_control_planes: Vec<ManagedControlPlane>,
}

/// `PUT /v1/clusters/{cluster}/bootstrap`: what a cluster's bootstrap data must carry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterBootstrap {
    /// A kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`.
    pub token: String,
    /// `sha256:<64 hex digits>`: the hash joins must pin in `caCertHashes`.
    pub ca_cert_hash: String,
}

/// A cluster's bootstrap registration as the API shows it: the token's public id only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapRegistration {
    /// The part of the token before the dot.
    pub token_id: String,
    pub ca_cert_hash: String,
}

/// `GET /v1/zones`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneList {
    pub zones: Vec<String>,
}

/// Everything alive for one cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterInventory {
    pub networks: Vec<Network>,
    pub load_balancers: Vec<LoadBalancer>,
    pub instances: Vec<Instance>,
    pub managed_control_planes: Vec<ManagedControlPlane>,
    pub bootstrap: Option<BootstrapRegistration>,
}

/// `GET /v1/inventory`: every cluster that has anything alive, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    pub clusters: BTreeMap<String, ClusterInventory>,
}

/// `PUT /v1/admin/instances/{id}/faults`: faults of one instance of a real-boot cloud. Every
/// field is optional: only those given are applied, and the answer echoes them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InstanceFaults {
    /// Whether the instance's kubelet runs: `stopped` stops its heartbeats and Pod updates (its
    /// Node turns NotReady through the cluster's node lifecycle controller, as when a kubelet
    /// dies); `running` resumes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<ComponentState>,
    /// Whether the kube-apiserver of a control-plane instance runs: `stopped` kills it (SIGKILL,
    /// as a crash) and keeps it down; `running` starts it again with the same command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server: Option<ComponentState>,
    /// Whether the etcd member of a control-plane instance runs, as for `apiServer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd: Option<ComponentState>,
    /// Whether the instance's Node may register: `unregistered` holds back a kubelet that has
    /// not registered its Node yet (the instance still runs, its Node never appears);
    /// `registered` lets it register. A Node that registered already stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeRegistration>,
}

/// A component of an instance (its kubelet, kube-apiserver or etcd), as a fault sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComponentState {
    Running,
    Stopped,
}

/// The kubelet of an instance, as a fault sets it: the name [`InstanceFaults::kubelet`] had
/// when it was the only fault.
pub type KubeletState = ComponentState;

/// Whether an instance's kubelet may register its Node, as a fault sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeRegistration {
    Registered,
    Unregistered,
}

/// `PUT /v1/admin/clusters/{cluster}/faults`: faults of one cluster of a real-boot cloud.
/// Every field is optional: only those given are applied, and the answer echoes them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterFaults {
    /// What the cluster's load balancers do with connections: `silent` accepts them and never
    /// forwards, answers nor closes them (a hung API server; connections it forwarded are cut);
    /// `forwarding` resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<LoadBalancerTraffic>,
}

/// What a load balancer does with connections, as a fault sets it. (Its lifecycle is
/// [`LoadBalancerState`].)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancerTraffic {
    /// Connections go to a healthy backend.
    Forwarding,
    /// Connections are accepted and left hanging.
    Silent,
}

/// The body of every error response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `invalid_request`, `unauthorized`, `not_found`, `conflict`,
    /// `idempotency_mismatch`, `failed_precondition`, `immutable_field`, `rate_limited`,
    /// `internal`, `unavailable`.
    pub code: String,
    /// For people; may change between versions.
    pub message: String,
    /// The request field at fault (a dotted path), when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_refuse_unknown_fields_and_leave_out_what_is_absent() {
        let misspelt = r#"{"cluster": "c1", "name": "n", "clientToken": "k"}"#;
        let e = serde_json::from_str::<CreateNetwork>(misspelt).unwrap_err();
        assert!(e.to_string().contains("unknown field `clientToken`"), "{e}");

        let body = CreateLoadBalancer {
            client_token: None,
            cluster: "c1".into(),
            name: "c1-lb".into(),
            port: None,
        };
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            serde_json::json!({"cluster": "c1", "name": "c1-lb"})
        );
    }

    #[test]
    fn responses_ignore_fields_they_do_not_name() {
        let json = r#"{"id": "lb-1", "client_token": null, "cluster": "c1", "name": "n",
            "endpoint": {"host": "lb-1.sim", "port": 6443}, "state": "active",
            "created_at": 1, "added_later": [1, 2]}"#;
        let lb: LoadBalancer = serde_json::from_str(json).unwrap();
        assert_eq!(lb.state, LoadBalancerState::Active);
        assert_eq!(lb.endpoint.to_string(), "lb-1.sim:6443");
    }

    #[test]
    fn faults_apply_only_the_fields_given_and_echo_them() {
        let kubelet: InstanceFaults = serde_json::from_str(r#"{"kubelet": "stopped"}"#).unwrap();
        assert_eq!(
            kubelet,
            InstanceFaults {
                kubelet: Some(ComponentState::Stopped),
                ..InstanceFaults::default()
            }
        );
        assert_eq!(
            serde_json::to_value(&kubelet).unwrap(),
            serde_json::json!({"kubelet": "stopped"})
        );
        let all = r#"{"kubelet": "running", "apiServer": "stopped", "etcd": "running",
            "node": "unregistered"}"#;
        let all: InstanceFaults = serde_json::from_str(all).unwrap();
        assert_eq!(all.api_server, Some(ComponentState::Stopped));
        assert_eq!(all.node, Some(NodeRegistration::Unregistered));
        let e = serde_json::from_str::<InstanceFaults>(r#"{"api_server": "stopped"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `api_server`"), "{e}");
        let silent: ClusterFaults = serde_json::from_str(r#"{"loadBalancer": "silent"}"#).unwrap();
        assert_eq!(silent.load_balancer, Some(LoadBalancerTraffic::Silent));
    }

    #[test]
    fn a_failure_reason_is_shown_only_once_failed_and_older_answers_still_read() {
        let json = r#"{"id": "mcp-1", "client_token": null, "cluster": "m1", "name": "cp",
            "version": "1.34.4", "target_version": null, "replicas": 3,
            "failures_tolerated": 1, "state": "ready",
            "endpoint": {"host": "mcp-1.sim", "port": 443}, "created_at": 1, "updated_at": 1}"#;
        let mut cp: ManagedControlPlane = serde_json::from_str(json).unwrap();
        assert_eq!(
            cp.failure_reason, None,
            "an answer from before failures reads"
        );
        assert!(
            serde_json::to_value(&cp)
                .unwrap()
                .get("failure_reason")
                .is_none()
        );
        cp.state = ControlPlaneState::Failed;
        cp.failure_reason = Some("etcd did not start".into());
        let shown = serde_json::to_value(&cp).unwrap();
        assert_eq!(
            (&shown["state"], &shown["failure_reason"]),
            (
                &serde_json::json!("failed"),
                &serde_json::json!("etcd did not start")
            )
        );
        assert_eq!(
            serde_json::from_value::<ManagedControlPlane>(shown).unwrap(),
            cp
        );
        let e = serde_json::from_str::<FailService>(r#"{"reason": "x", "why": "y"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `why`"), "{e}");
    }

    #[test]
    fn credentials_debug_leaves_out_the_kubeconfig_and_the_token() {
        let creds = ManagedControlPlaneCredentials {
            endpoint: Endpoint {
                host: "10.0.0.1".into(),
                port: 6443,
            },
            ca_certificate: "-----BEGIN CERTIFICATE-----".into(),
            admin_kubeconfig: "client-key-data: c2VjcmV0LWtleQ==".into(),
            join_token: "abcdef.0123456789abcdef".into(),
            join_token_ttl_seconds: 600,
            join_token_issued_at: 1,
            join_token_groups: vec!["system:bootstrappers:workers".into()],
        };
        let shown = format!("{creds:?} {creds:#?}");
        assert!(!shown.contains("c2VjcmV0LWtleQ"), "{shown}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        assert!(
            shown.contains("10.0.0.1") && shown.contains("600"),
            "{shown}"
        );
    }
}
