//! The state's side of real-boot managed control planes: what each service should run (its
//! version, its current bootstrap token) and what its agent reports back. Pure, like the rest
//! of the state: the processes are [`crate::machines`]'s.

use std::net::Ipv4Addr;

use super::control_planes::{parse_version, token_expiry};
use super::index::Indexed as _;
use super::{CloudSettings, CloudState, Kind, MANAGED_REAL_API_PORT};
use crate::model::ControlPlaneState;

/// A managed control plane's service as it should run now.
#[derive(Clone, PartialEq, Eq)]
pub struct ServicePlan {
    /// `mcp-<n>`.
    pub id: String,
    /// `creating`, `ready` or `updating`.
    pub state: ControlPlaneState,
    /// The version it should serve: the update's target while `updating`.
    pub version: String,
    /// The current bootstrap token, whose Secret the service's cluster must hold. Secret.
    pub join_token: String,
    /// When that token expires, in seconds since the Unix epoch.
    pub join_token_expires: u64,
}

impl std::fmt::Debug for ServicePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServicePlan")
            .field("id", &self.id)
            .field("state", &self.state)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// What a managed control plane's service is started with.
#[derive(Clone, PartialEq, Eq)]
pub struct ServiceLaunchOrder {
    /// `mcp-<n>`.
    pub id: String,
    /// Its cluster's name, the workload cluster's `clusterName`.
    pub cluster: String,
    /// Its loopback address.
    pub address: Ipv4Addr,
    /// Its API server's port.
    pub port: u16,
    /// The version to serve.
    pub version: String,
    /// The cluster CA certificate (PEM).
    pub ca_cert_pem: String,
    /// The CA's key (PKCS#8 PEM). Secret.
    pub ca_key_pem: String,
    /// The current bootstrap token. Secret.
    pub join_token: String,
    /// When it expires, in seconds since the Unix epoch.
    pub join_token_expires: u64,
}

impl std::fmt::Debug for ServiceLaunchOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceLaunchOrder")
            .field("id", &self.id)
            .field("address", &self.address)
            .field("port", &self.port)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl CloudState {
    /// Every real-boot managed control plane's service, as it should run.
    pub fn service_plan(&self, settings: &CloudSettings) -> Vec<ServicePlan> {
        self.control_planes
            .values()
            .filter(|cp| cp.address.is_some())
            .filter_map(|cp| {
                let credentials = cp.credentials.as_ref()?;
                Some(ServicePlan {
                    id: Kind::ControlPlane.id(cp.id),
                    state: cp.state,
                    version: cp.target_version.clone().unwrap_or(cp.version.clone()),
                    join_token: credentials.join_token(cp.token_generation),
                    join_token_expires: token_expiry(cp, settings),
                })
            })
            .collect()
    }

    /// What managed control plane `id`'s service is started with; `None` unless it exists
    /// with an address and credentials.
    pub fn service_launch_order(
        &self,
        id: &str,
        settings: &CloudSettings,
    ) -> Option<ServiceLaunchOrder> {
        let cp = self.control_planes.get(&Kind::ControlPlane.parse(id)?)?;
        let credentials = cp.credentials.as_ref()?;
        Some(ServiceLaunchOrder {
            id: Kind::ControlPlane.id(cp.id),
            cluster: cp.cluster.clone(),
            address: cp.address?,
            port: MANAGED_REAL_API_PORT,
            version: cp.target_version.clone().unwrap_or(cp.version.clone()),
            ca_cert_pem: credentials.ca_cert_pem.clone(),
            ca_key_pem: credentials.ca_key_pem.clone(),
            join_token: credentials.join_token(cp.token_generation),
            join_token_expires: token_expiry(cp, settings),
        })
    }

    /// Applies what managed control plane `id`'s service reported: its API server answers
    /// and serves `served` (`vX.Y.Z`). `creating` turns `ready` when that is its version;
    /// `updating` turns `ready` at its target version when that is the target. Returns
    /// whether anything changed.
    pub fn settle_service(&mut self, id: &str, served: &str, now_ms: u64) -> bool {
        let Some(cp) = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.get_mut(&n))
        else {
            return false;
        };
        let Ok(served) = parse_version(served) else {
            return false;
        };
        let is = |version: &str| parse_version(version).is_ok_and(|v| v == served);
        let before = cp.timer();
        let changed = match cp.state {
            ControlPlaneState::Creating if is(&cp.version) => true,
            ControlPlaneState::Updating if cp.target_version.as_deref().is_some_and(is) => {
                if let Some(target) = cp.target_version.take() {
                    cp.version = target;
                }
                cp.updated_at_ms = now_ms;
                true
            }
            _ => false,
        };
        if changed {
            cp.state = ControlPlaneState::Ready;
            self.index.retime(before, cp.timer());
        }
        changed
    }
}
