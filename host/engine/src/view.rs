//! What the executor knows of one cluster at the start of a pass ([`Snapshot`]), and its
//! translation into the reconcile core's [`ClusterView`].

use capw_api::{Cluster, Machine, MachinePhase as ApiPhase, MachineRole as ApiRole};
use capw_reconcile::{
    ClusterView, Hook, HooksView, InfraView, MachinePhase, MachineRole, MachineView, PoolSpec,
    Version, WorkloadView,
};
use capw_topology::DesiredState;

use crate::kubeconfig::{StoredKubeconfig, endpoint_text};
use crate::objects::{InfrastructureRecord, SecretItems};

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

    /// The machine named `name`.
    pub fn machine(&self, name: &str) -> Option<&Machine> {
        self.machines
            .iter()
            .find(|m| m.metadata.name.as_deref() == Some(name))
    }

    /// The core's view with `workload` as observed; `plan` and `orphans` are left
    /// unobserved.
    pub fn view(&self, workload: &WorkloadView) -> ClusterView {
        let desired = self.desired.as_ref().ok();
        ClusterView {
            deleting: self.deleting(),
            paused: self.cluster.spec.paused.unwrap_or(false),
            version: parse_version(&self.cluster.spec.topology.version),
            control_plane_replicas: desired.map_or(0, |d| d.control_plane.replicas),
            pools: desired
                .map(|d| {
                    d.pools
                        .iter()
                        .map(|p| PoolSpec {
                            name: p.name.clone(),
                            replicas: p.replicas,
                            failure_domain: p.failure_domain.clone(),
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
                endpoint_text(self).is_some_and(|endpoint| endpoint == k.endpoint)
            }),
            workload: workload.clone(),
            plan: None,
            machines: self.machines.iter().filter_map(machine_view).collect(),
            orphans: None,
            hooks: HooksView {
                configured: desired.is_some_and(|d| !d.hooks.is_empty()),
                passed: self
                    .cluster
                    .status
                    .iter()
                    .flat_map(|s| s.hooks.iter())
                    .filter_map(|(hook, version)| {
                        Some((Hook::from_name(hook)?, parse_version(version)?))
                    })
                    .collect(),
            },
        }
    }
}

/// `v1.34.1` (or `1.34.1`) as a [`Version`].
pub(crate) fn parse_version(text: &str) -> Option<Version> {
    let mut parts = text.strip_prefix('v').unwrap_or(text).split('.');
    let mut next = || parts.next()?.parse::<u32>().ok();
    Some(Version {
        major: next()?,
        minor: next()?,
        patch: next()?,
    })
}

pub(crate) fn role(role: ApiRole) -> MachineRole {
    match role {
        ApiRole::Init => MachineRole::Init,
        ApiRole::JoinControlPlane => MachineRole::JoinControlPlane,
        ApiRole::Worker => MachineRole::Worker,
    }
}

pub(crate) fn api_role(role: MachineRole) -> ApiRole {
    match role {
        MachineRole::Init => ApiRole::Init,
        MachineRole::JoinControlPlane => ApiRole::JoinControlPlane,
        MachineRole::Worker => ApiRole::Worker,
    }
}

/// A Machine as the core sees it; `None` when its version is unreadable (never written so).
pub(crate) fn machine_view(m: &Machine) -> Option<MachineView> {
    let phase = match m.status.as_ref().map(|s| s.phase).unwrap_or_default() {
        ApiPhase::Pending => MachinePhase::Pending,
        ApiPhase::Provisioning | ApiPhase::Deleting => MachinePhase::Provisioning,
        ApiPhase::Running => MachinePhase::Running,
        ApiPhase::Failed => MachinePhase::Failed,
    };
    Some(MachineView {
        name: m.metadata.name.clone()?,
        role: role(m.spec.role),
        pool: m.spec.pool.clone(),
        version: parse_version(&m.spec.version)?,
        failure_domain: m.spec.failure_domain.clone(),
        created_at: m
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(0, |t| u64::try_from(t.0.as_second()).unwrap_or(0)),
        phase,
        deleting: m.metadata.deletion_timestamp.is_some(),
        provider_id: m.status.as_ref().and_then(|s| s.provider_id.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_or_without_v() {
        let v = parse_version("v1.34.1").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (1, 34, 1));
        assert_eq!(parse_version("1.34.1"), Some(v));
        assert_eq!(parse_version("v1.34"), None);
    }
}
