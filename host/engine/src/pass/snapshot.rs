//! What the executor knows of one cluster at the start of a pass ([`Snapshot`]), and its
//! translation into the reconcile core's [`ClusterView`].

use capw_api::{Cluster, Machine};
use capw_reconcile::{
    ClusterView, Hook, HooksView, InfraView, MachineView, PoolSpec, WorkloadView,
};
use capw_runtime::types::Endpoint;
use capw_topology::DesiredState;
use capw_workload::ClusterId;

use super::convert::{
    core_deletion_order, core_health_check, core_phase, core_role, core_rollout, core_version,
};
use crate::objects::kubeconfig::StoredKubeconfig;
use crate::objects::{InfrastructureRecord, SERVICE_CA_ITEM, SERVICE_JOIN_TOKEN_ITEM, SecretItems};

/// One cluster and everything of it, read from the store.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub cluster: Cluster,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The desired state, or why there is none (topology or config errors, with paths).
    pub desired: Result<DesiredState, Vec<String>>,
    /// The cluster's Machines.
    pub machines: Vec<Machine>,
    /// The infrastructure record, when it belongs to this cluster's uid.
    pub infrastructure: Option<InfrastructureRecord>,
    /// The stored cluster secrets, when they belong to this cluster's uid.
    pub secrets: Option<SecretItems>,
    /// The stored admin kubeconfig, when it belongs to this cluster's uid.
    pub kubeconfig: Option<StoredKubeconfig>,
}

impl Snapshot {
    pub fn deleting(&self) -> bool {
        self.cluster.metadata.deletion_timestamp.is_some()
    }

    /// The stored cluster secrets as the contract passes them to the bootstrap provider.
    pub fn contract_secrets(&self) -> Option<Vec<capw_runtime::bootstrap::SecretItem>> {
        self.secrets.as_ref().map(|secrets| {
            secrets
                .iter()
                .map(|(name, data)| capw_runtime::bootstrap::SecretItem {
                    name: name.clone(),
                    data: data.clone(),
                })
                .collect()
        })
    }

    /// The machine named `name`.
    pub fn machine(&self, name: &str) -> Option<&Machine> {
        self.machines
            .iter()
            .find(|m| m.metadata.name.as_deref() == Some(name))
    }

    /// The core's view with `workload` as observed; `plan` and `orphans` are left
    /// unobserved.
    /// The cluster as the workload cluster cache names it.
    pub fn cluster_id(&self) -> ClusterId {
        ClusterId {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }

    /// The control plane's endpoint as recorded: the infrastructure's, or for a control
    /// plane a service runs (no load balancer of the infrastructure's) the service's.
    fn recorded_endpoint(&self) -> Option<(String, u16)> {
        let record = self.infrastructure.as_ref()?;
        (record.endpoint.clone()).or_else(|| record.control_plane.as_ref()?.endpoint.clone())
    }

    /// The cluster's control-plane endpoint as the contract spells it (empty until the
    /// infrastructure or the control plane's service gave one).
    pub fn endpoint(&self) -> Endpoint {
        let (host, port) = self.recorded_endpoint().unwrap_or_default();
        Endpoint { host, port }
    }

    /// The cluster's control-plane endpoint, `host:port`, once known.
    pub fn endpoint_text(&self) -> Option<String> {
        let (host, port) = self.recorded_endpoint()?;
        Some(format!("{host}:{port}"))
    }

    /// Whether a service runs the control plane (the class gives it no machines): its
    /// provider drives it through `reconcile-control-plane`.
    pub fn service_control_plane(&self) -> bool {
        (self.desired.as_ref()).is_ok_and(|d| d.control_plane.machine_infrastructure.is_none())
    }

    /// How a worker joins a control plane a service runs, as its provider's access was
    /// stored with the cluster's secrets; `None` before it was.
    pub fn join_credentials(&self) -> Option<capw_runtime::bootstrap::JoinCredentials> {
        let items = self.secrets.as_ref()?;
        let item = |name: &str| items.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        let ca_certificate = String::from_utf8(item(SERVICE_CA_ITEM)?.clone()).ok()?;
        let token = item(SERVICE_JOIN_TOKEN_ITEM).and_then(|v| serde_json::from_slice(v).ok());
        Some(capw_runtime::bootstrap::JoinCredentials {
            ca_certificate,
            token,
        })
    }

    pub fn view(&self, workload: &WorkloadView) -> ClusterView {
        let desired = self.desired.as_ref().ok();
        let service = self.service_control_plane();
        ClusterView {
            control_plane_shape: if service {
                capw_reconcile::ControlPlaneShape::Service
            } else {
                capw_reconcile::ControlPlaneShape::Machines
            },
            service: None,
            service_deleted: (self.infrastructure.as_ref())
                .and_then(|r| r.control_plane.as_ref())
                .is_some_and(|c| c.state == "Deleted"),
            deleting: self.deleting(),
            paused: self.cluster.spec.paused.unwrap_or(false),
            version: core_version(&self.cluster.spec.topology.version),
            control_plane_replicas: desired.map_or(0, |d| d.control_plane.replicas),
            control_plane_drain_timeout: desired.map_or(
                u64::from(capw_api::DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS),
                |d| u64::from(d.control_plane.node_drain_timeout_seconds),
            ),
            control_plane_health: desired
                .and_then(|d| d.control_plane.health_check.as_ref())
                .map(core_health_check),
            // The provider's contract decides; the pass knows it (`control_plane::rolls_inputs`).
            control_plane_told_members: false,
            last_remediation: (self.cluster.status.as_ref())
                .and_then(|s| s.control_plane.as_ref()?.last_remediation.as_ref())
                .map(|r| capw_reconcile::LastRemediation {
                    machine: r.machine.clone(),
                    at: u64::try_from(r.time.0.as_second()).unwrap_or(0),
                    retries: u32::try_from(r.retry_count).unwrap_or(0),
                }),
            pools: desired
                .map(|d| {
                    d.pools
                        .iter()
                        .map(|p| PoolSpec {
                            name: p.name.clone(),
                            replicas: p.replicas,
                            failure_domain: p.failure_domain.clone(),
                            rollout: core_rollout(p.rollout),
                            deletion_order: core_deletion_order(p.deletion_order),
                            health: p.health_check.as_ref().map(core_health_check),
                            drain_timeout: u64::from(p.node_drain_timeout_seconds),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            infrastructure: match &self.infrastructure {
                None => InfraView::Unknown,
                Some(r) => match r.state.as_str() {
                    "Ready" => InfraView::Ready {
                        failure_domains: r.failure_domains.clone(),
                    },
                    "Deleted" => InfraView::Deleted,
                    _ => InfraView::InProgress,
                },
            },
            secrets_ready: self.secrets.is_some(),
            kubeconfig_current: self.kubeconfig.as_ref().is_some_and(|k| {
                self.endpoint_text()
                    .is_some_and(|endpoint| endpoint == k.endpoint)
            }),
            workload: workload.clone(),
            now: now_seconds(),
            plan: None,
            machines: (self.machines.iter())
                .filter_map(|m| machine_view(m, desired))
                .collect(),
            orphans: None,
            etcd: capw_reconcile::EtcdView::Unmanaged,
            // Looked at only when a join is to be made, and only where the workload cluster
            // can be seen.
            // A service keeps its own join token valid.
            join_token: match workload {
                WorkloadView::Off => capw_reconcile::JoinTokenView::Unmanaged,
                _ if service => capw_reconcile::JoinTokenView::Unmanaged,
                _ => capw_reconcile::JoinTokenView::NotObserved,
            },
            hooks: HooksView {
                configured: desired.is_some_and(|d| !d.hooks.is_empty()),
                passed: self
                    .cluster
                    .status
                    .iter()
                    .flat_map(|s| s.hooks.iter())
                    .filter_map(|(hook, version)| {
                        Some((Hook::from_name(hook)?, core_version(version)?))
                    })
                    .collect(),
            },
        }
    }
}

/// What the core is told of Machine `m`; `None` when its version is not three numbers.
pub(crate) fn machine_view(m: &Machine, desired: Option<&DesiredState>) -> Option<MachineView> {
    let phase = core_phase(m.status.as_ref().map(|s| s.phase).unwrap_or_default());
    Some(MachineView {
        name: m.metadata.name.clone()?,
        role: core_role(m.spec.role),
        pool: m.spec.pool.clone(),
        version: core_version(&m.spec.version)?,
        failure_domain: m.spec.failure_domain.clone(),
        created_at: m
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(0, |t| u64::try_from(t.0.as_second()).unwrap_or(0)),
        phase,
        deleting: m.metadata.deletion_timestamp.is_some(),
        provider_id: m.status.as_ref().and_then(|s| s.provider_id.clone()),
        changed: changed_inputs(m, desired),
        node: (m.status.as_ref())
            .and_then(|s| s.node_ref.as_ref())
            .map(|n| n.name.clone()),
        drain: drain_view(m),
    })
}

/// How far `m`'s drain went, as its `DrainingSucceeded` condition records it.
fn drain_view(m: &Machine) -> capw_reconcile::DrainView {
    let condition = (m.status.as_ref())
        .and_then(|s| (s.conditions.iter()).find(|c| c.type_ == capw_reconcile::DRAINING_SUCCEEDED))
        .map(|c| {
            let status = match c.status {
                capw_api::ConditionStatus::True => Some(true),
                capw_api::ConditionStatus::False => Some(false),
                capw_api::ConditionStatus::Unknown => None,
            };
            let since = u64::try_from(c.last_transition_time.0.as_second()).unwrap_or(0);
            (status, c.reason.as_str(), since)
        });
    capw_reconcile::DrainView::of_condition(condition)
}

/// The inputs that shaped `m` differently from its pool's current ones, or for a
/// control-plane machine from the control plane's (its provider acts on them:
/// [`control_plane_changes`]). A machine that recorded no shape (made before capw recorded it)
/// is taken as up to date.
pub(crate) fn changed_inputs(m: &Machine, desired: Option<&DesiredState>) -> Vec<String> {
    let current = desired.and_then(|d| {
        if m.spec.role == capw_api::MachineRole::Worker {
            (d.pools.iter())
                .find(|p| p.name == m.spec.pool)
                .map(|p| &p.shape)
        } else {
            d.control_plane.machine_shape.as_ref()
        }
    });
    match (&m.spec.shape, current) {
        (Some(made), Some(current)) => made.changed_inputs(current),
        _ => Vec::new(),
    }
}

/// What makes control-plane machine `m` out of date, as its provider is told (contract
/// 0.3's `member.out-of-date`): `version` when it runs another version than `version`, then
/// the inputs that shaped it differently from the class's current ones. A machine that
/// recorded no shape is taken as shaped as desired.
pub(crate) fn control_plane_changes(
    m: &Machine,
    desired: &DesiredState,
    version: &str,
) -> Vec<String> {
    let version = (m.spec.version != version).then(|| "version".to_owned());
    version
        .into_iter()
        .chain(changed_inputs(m, Some(desired)))
        .collect()
}

/// Now, in seconds since the Unix epoch.
pub(crate) fn now_seconds() -> u64 {
    u64::try_from(jiff::Timestamp::now().as_second()).unwrap_or(0)
}
