//! The cloud's state: its records, the operations on them, and their timed transitions.
//!
//! Pure: every operation takes the current time in milliseconds since the Unix epoch and does
//! no I/O, so the whole lifecycle is unit-testable with made-up clocks. The HTTP layer calls
//! [`CloudState::advance`] before every operation, so states move on when they are looked at;
//! nothing runs in the background.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use crate::boot_check::{self, BootExpectations, ClusterSecrets};
use crate::config::Timings;
use crate::credentials::ServiceCredentials;
use crate::model::{ControlPlaneState, Endpoint, InstanceState, LoadBalancerState, Role};

mod clusters;
mod control_planes;
mod index;
mod infrastructure;
mod instances;
mod loopback;
mod machines;
mod services;
#[cfg(test)]
mod tests;

use control_planes::cp_endpoint;
use index::{Index, Indexed as _, Phase};
use infrastructure::lb_endpoint;
pub use instances::InstanceFilter;
pub use machines::{LaunchOrder, LoadBalancerPlan, MachineOutcome, MachinePlan};
pub use services::{ServiceLaunchOrder, ServicePlan};

/// Decoded bootstrap data larger than this is refused: cloud user data is small (16 KiB on
/// some clouds), and the sim keeps every instance's data in its state file.
pub const MAX_BOOTSTRAP_DATA: usize = 64 * 1024;

/// Names (clusters, resources, tag keys) and client tokens longer than this are refused.
const MAX_NAME_LEN: usize = 253;

/// Kubernetes control-plane replica counts a managed control plane accepts.
const REPLICAS: std::ops::RangeInclusive<u32> = 1..=5;

/// The port of a managed control plane's endpoint.
const MANAGED_API_PORT: u16 = 443;

/// The port of a real-boot managed control plane's API server, on its own loopback address.
pub const MANAGED_REAL_API_PORT: u16 = 6443;

/// The port of a load balancer when the request names none.
const DEFAULT_LB_PORT: u16 = 6443;

/// Networks are /22 blocks of 10.0.0.0/8 (14 bits of block number); block 0 is never used,
/// and a deleted network's block is handed out again.
const NETWORK_PREFIX: u32 = 22;
const MAX_BLOCK: u32 = (1 << (NETWORK_PREFIX - 8)) - 1;

/// Host numbers handed out in a network: .10 up to the one before broadcast.
const FIRST_HOST: u32 = 10;
const LAST_HOST: u32 = (1 << (32 - NETWORK_PREFIX)) - 2;

/// What the state needs from the configuration.
#[derive(Clone, Debug)]
pub struct CloudSettings {
    /// Zones, the first being the default.
    pub zones: Vec<String>,
    /// DNS suffix of endpoints.
    pub domain: String,
    /// Transition delays.
    pub timings: Timings,
    /// Real boot: instances and load balancers get loopback addresses, and instances stay
    /// `booting` until the machines side reports their outcome ([`CloudState::settle_machine`])
    /// instead of finishing on a timer with the boot check.
    pub real_boot: bool,
    /// Picks the loopback blocks of a real-boot cloud, so that clouds on one host rarely pick
    /// the same; any value works.
    pub loopback_seed: u64,
}

/// An operation the state refuses.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// A request field is invalid.
    #[error("{field}: {message}")]
    InvalidField {
        /// The dotted field path.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// No such resource.
    #[error("{kind} {id} not found")]
    NotFound {
        /// `instance`, `network`, ...
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The client token was used for a resource with other parameters.
    #[error("client token already used for {kind} {id} with a different cluster, name or role")]
    TokenMismatch {
        /// The resource kind.
        kind: &'static str,
        /// The resource created with the token.
        id: String,
    },
    /// The client token belonged to an instance that has been deleted since.
    #[error("client token belonged to instance {id}, which has been deleted; use a new token")]
    TokenOfDeleted {
        /// The deleted instance.
        id: String,
    },
    /// The cluster already has a resource of a kind it may have only one of.
    #[error("cluster {cluster} already has a {kind}: {id}")]
    AlreadyExists {
        /// The cluster.
        cluster: String,
        /// The resource kind.
        kind: &'static str,
        /// The existing resource.
        id: String,
    },
    /// Instances need their cluster's network.
    #[error("cluster {cluster} has no network; create one first")]
    NoNetwork {
        /// The cluster.
        cluster: String,
    },
    /// A network still holds instances.
    #[error("network {id} still holds {count} instance(s)")]
    NetworkInUse {
        /// The network.
        id: String,
        /// How many instances.
        count: usize,
    },
    /// Out of addresses or network blocks.
    #[error("{what} exhausted")]
    Exhausted {
        /// What ran out.
        what: String,
    },
    /// A field that cannot change after creation was changed.
    #[error("{field} cannot change after creation ({from} -> {to})")]
    Immutable {
        /// The field.
        field: &'static str,
        /// Its value.
        from: String,
        /// The value asked for.
        to: String,
    },
    /// The resource is not in the state the request needs.
    #[error("{kind} {id} is {state}; {wanted}")]
    NotReady {
        /// The resource kind.
        kind: &'static str,
        /// The resource.
        id: String,
        /// Its state.
        state: &'static str,
        /// What the request needs, e.g. `credentials exist once it is ready`.
        wanted: &'static str,
    },
    /// The resource is busy with an earlier change.
    #[error("{kind} {id} is {state}; wait until it is ready")]
    Busy {
        /// The resource kind.
        kind: &'static str,
        /// The resource.
        id: String,
        /// Its state.
        state: &'static str,
    },
    /// The managed control plane's service failed: it takes no change any more.
    #[error("{kind} {id} failed ({reason}) and cannot be updated; delete it and create another")]
    Failed {
        /// The resource kind.
        kind: &'static str,
        /// The resource.
        id: String,
        /// Why its service failed.
        reason: String,
    },
}

/// Resource kinds, their id prefixes and names in messages.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `net-`.
    Network,
    /// `lb-`.
    LoadBalancer,
    /// `i-`.
    Instance,
    /// `mcp-`.
    ControlPlane,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Network => "net-",
            Kind::LoadBalancer => "lb-",
            Kind::Instance => "i-",
            Kind::ControlPlane => "mcp-",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Network => "network",
            Kind::LoadBalancer => "load balancer",
            Kind::Instance => "instance",
            Kind::ControlPlane => "managed control plane",
        }
    }

    pub(crate) fn id(self, n: u64) -> String {
        format!("{}{n}", self.prefix())
    }

    /// The number in `id`, when it is an id of this kind.
    pub(crate) fn parse(self, id: &str) -> Option<u64> {
        id.strip_prefix(self.prefix())?.parse().ok()
    }

    fn not_found(self, id: &str) -> StateError {
        StateError::NotFound {
            kind: self.name(),
            id: id.to_owned(),
        }
    }
}

/// Whether a create made something new or answered an earlier create with the same token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Made now.
    Created,
    /// Existed already (same client token).
    Existing,
}

/// The last id given out, per kind.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Counters {
    network: u64,
    load_balancer: u64,
    instance: u64,
    control_plane: u64,
}

/// A network as stored; `next_host` is the host number its next instance gets.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct NetworkRecord {
    id: u64,
    client_token: Option<String>,
    cluster: String,
    name: String,
    /// Its block of 10.0.0.0/8: the lowest free one when it was created. A state written
    /// before blocks were stored has none (0): such a network's block is its id.
    #[serde(default)]
    block: u32,
    next_host: u32,
    created_at_ms: u64,
}

impl NetworkRecord {
    fn block(&self) -> u32 {
        if self.block == 0 {
            u32::try_from(self.id).unwrap_or(u32::MAX) & MAX_BLOCK
        } else {
            self.block
        }
    }
}

/// A load balancer as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct LoadBalancerRecord {
    id: u64,
    client_token: Option<String>,
    cluster: String,
    name: String,
    port: u16,
    state: LoadBalancerState,
    created_at_ms: u64,
    /// Its own loopback address in a real-boot cloud.
    #[serde(default)]
    address: Option<Ipv4Addr>,
}

/// An instance as stored, with its bootstrap data.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct InstanceRecord {
    id: u64,
    client_token: String,
    name: String,
    cluster: String,
    role: Role,
    zone: String,
    /// Its size; records stored before sizes existed read as the default.
    #[serde(default = "default_instance_type")]
    instance_type: String,
    network_id: u64,
    address: Ipv4Addr,
    tags: BTreeMap<String, String>,
    state: InstanceState,
    reason: String,
    /// Base64, as received: checked when the instance boots.
    bootstrap_data: String,
    created_at_ms: u64,
    /// The port its API server listens on, once a real-boot control-plane instance runs.
    #[serde(default)]
    api_port: Option<u16>,
    /// A delete has begun: a real-boot machine is being destroyed (it leaves etcd, then
    /// stops). It stays listed until the destroy is done, so that a delete retried meanwhile
    /// is not told it is gone while its etcd member is still there; it is no longer launched
    /// nor a load balancer's backend.
    #[serde(default)]
    deleting: bool,
}

/// A managed control plane as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ControlPlaneRecord {
    id: u64,
    client_token: Option<String>,
    cluster: String,
    name: String,
    version: String,
    target_version: Option<String>,
    replicas: u32,
    state: ControlPlaneState,
    created_at_ms: u64,
    updated_at_ms: u64,
    /// Its CA, admin certificate and token seed; absent in a record written before managed
    /// control planes had credentials.
    #[serde(default)]
    credentials: Option<ServiceCredentials>,
    /// Which of the seed's tokens is current (renewals so far).
    #[serde(default)]
    token_generation: u32,
    /// When the current token was issued.
    #[serde(default)]
    token_issued_at_ms: u64,
    /// Its own loopback address in a real-boot cloud, where its API server listens on
    /// [`MANAGED_REAL_API_PORT`].
    #[serde(default)]
    address: Option<Ipv4Addr>,
    /// How its service failed, once it is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<ServiceFailure>,
}

/// How a managed control plane's service failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ServiceFailure {
    /// Why, one line: what `failure_reason` shows.
    reason: String,
    /// It had served before it failed (it failed while `updating`, not `creating`): its
    /// endpoint and credentials are still shown, as before the failure.
    had_served: bool,
}

/// A cluster's bootstrap secrets as registered, token included.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Registration {
    token: String,
    ca_cert_hash: String,
    /// The token this one renewed (a managed control plane's), still valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_token: Option<String>,
}

/// Everything the cloud holds. Serialisable as a whole: that is the state file.
///
/// # Caveats
///
/// Its index is not serialised: a state deserialised by other means than
/// [`crate::store::load`] must call `rebuild_index` before use.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CloudState {
    counters: Counters,
    networks: BTreeMap<u64, NetworkRecord>,
    load_balancers: BTreeMap<u64, LoadBalancerRecord>,
    instances: BTreeMap<u64, InstanceRecord>,
    control_planes: BTreeMap<u64, ControlPlaneRecord>,
    /// Every instance client token ever used, deleted instances' included, so a late retry
    /// of a create never makes a second instance.
    instance_tokens: BTreeMap<String, u64>,
    /// Bootstrap registrations by cluster.
    bootstrap: BTreeMap<String, Registration>,
    /// The loopback blocks real-boot addresses come from.
    #[serde(default)]
    loopback: loopback::LoopbackPool,
    /// Derived from the records above, never stored.
    #[serde(skip)]
    index: Index,
}

impl CloudState {
    /// Moves every resource whose delay has passed at `now_ms` to its next state, running the
    /// boot check of instances that finish booting. Returns whether anything changed.
    ///
    /// Visits only the resources that are due, whatever the number of resources.
    pub fn advance(&mut self, now_ms: u64, settings: &CloudSettings) -> bool {
        let t = &settings.timings;
        let mut changed = false;
        for due in self
            .index
            .take_due(Phase::LoadBalancerProvisioning, now_ms, t)
        {
            if let Some(lb) = self.load_balancers.get_mut(&due.id) {
                lb.state = LoadBalancerState::Active;
                changed = true;
            }
        }
        for due in self.index.take_due(Phase::JoinTokenRenewal, now_ms, t) {
            changed |= self.renew_join_token(due.id, now_ms);
        }
        // A real-boot control plane is ready, or updated, when its service says so.
        if !settings.real_boot {
            for due in self.index.take_due(Phase::ControlPlaneCreating, now_ms, t) {
                if let Some(cp) = self.control_planes.get_mut(&due.id) {
                    cp.state = ControlPlaneState::Ready;
                    changed = true;
                }
            }
            for due in self.index.take_due(Phase::ControlPlaneUpdating, now_ms, t) {
                if let Some(cp) = self.control_planes.get_mut(&due.id) {
                    if let Some(target) = cp.target_version.take() {
                        cp.version = target;
                    }
                    cp.state = ControlPlaneState::Ready;
                    changed = true;
                }
            }
        }
        for due in self.index.take_due(Phase::InstancePending, now_ms, t) {
            if let Some(instance) = self.instances.get_mut(&due.id) {
                instance.state = InstanceState::Booting;
                self.index.retime(None, instance.timer());
                changed = true;
            }
        }
        // A real boot ends when its machine says so, not on a timer.
        if settings.real_boot {
            return changed;
        }
        let mut finished: Vec<u64> = self
            .index
            .take_due(Phase::InstanceBooting, now_ms, t)
            .into_iter()
            .map(|due| due.id)
            .collect();
        // In id order: an init that registers its cluster's secrets comes before the joins
        // created after it, which are checked against them.
        finished.sort_unstable();
        for id in finished {
            changed |= self.finish_boot(id, settings);
        }
        changed
    }

    /// Ends the boot of instance `id` with the boot check: `running` (an init registering its
    /// cluster's secrets) or `failed` with the reason. Returns whether it did.
    fn finish_boot(&mut self, id: u64, settings: &CloudSettings) -> bool {
        let Some(verdict) = self.instances.get(&id).map(|i| self.boot(i, settings)) else {
            return false;
        };
        let Some(instance) = self.instances.get_mut(&id) else {
            return false;
        };
        match verdict {
            Ok(registers) => {
                instance.state = InstanceState::Running;
                if let Some(learned) = registers {
                    let cluster = instance.cluster.clone();
                    self.bootstrap.insert(
                        cluster,
                        Registration {
                            token: learned.token,
                            ca_cert_hash: learned.ca_cert_hash,
                            previous_token: None,
                        },
                    );
                }
            }
            Err(reason) => {
                instance.state = InstanceState::Failed;
                instance.reason = reason;
            }
        }
        true
    }

    /// The boot check of `instance` against its cluster as it is now: the registration an
    /// `init` makes, or the failure reason.
    fn boot(
        &self,
        instance: &InstanceRecord,
        settings: &CloudSettings,
    ) -> Result<Option<boot_check::LearnedSecrets>, String> {
        self.boot_verdict(instance, settings)
            .map(|verdict| verdict.registers)
    }

    /// The full verdict of the boot check of `instance`, or the failure reason.
    fn boot_verdict(
        &self,
        instance: &InstanceRecord,
        settings: &CloudSettings,
    ) -> Result<boot_check::Verdict, String> {
        let data = BASE64
            .decode(&instance.bootstrap_data)
            .map_err(|_| "bootstrap: data is not valid base64".to_owned())?;
        let endpoint = self.cluster_endpoint(&instance.cluster, settings);
        let secrets = self
            .bootstrap
            .get(&instance.cluster)
            .map(|r| ClusterSecrets {
                token: &r.token,
                ca_cert_hash: &r.ca_cert_hash,
                previous_token: r.previous_token.as_deref(),
            });
        let expect = BootExpectations {
            cluster: &instance.cluster,
            role: instance.role,
            endpoint: endpoint.as_ref(),
            secrets,
            // A real boot leaves the token to the cluster's own discovery: the host renews
            // tokens in the workload cluster, which the cloud does not see.
            cluster_judges_token: settings.real_boot,
        };
        boot_check::check(&data, &expect).map_err(|e| format!("bootstrap: {e}"))
    }

    /// The cluster's endpoint: its load balancer's, else its managed control plane's once that
    /// has one.
    pub fn cluster_endpoint(&self, cluster: &str, settings: &CloudSettings) -> Option<Endpoint> {
        if let Some(lb) = self.first_in_cluster::<LoadBalancerRecord>(cluster) {
            return Some(lb_endpoint(lb, settings));
        }
        self.first_in_cluster::<ControlPlaneRecord>(cluster)
            .and_then(|cp| cp_endpoint(cp, settings))
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn seconds(ms: u64) -> u64 {
    ms / 1000
}

fn validate_name(field: &'static str, value: &str) -> Result<(), StateError> {
    if value.is_empty() || value.len() > MAX_NAME_LEN || value.chars().any(char::is_control) {
        return Err(StateError::InvalidField {
            field,
            message: format!(
                "must be 1 to {MAX_NAME_LEN} characters, none of them control characters"
            ),
        });
    }
    Ok(())
}

fn validate_token(field: &'static str, token: &str) -> Result<(), StateError> {
    validate_name(field, token)
}

fn validate_optional_token(token: Option<&str>) -> Result<(), StateError> {
    token.map_or(Ok(()), |t| validate_token("client_token", t))
}

fn default_instance_type() -> String {
    capw_sim_api::DEFAULT_INSTANCE_TYPE.to_owned()
}
