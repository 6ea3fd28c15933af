//! The state's side of managed control planes' services: what each should run (its version,
//! its current bootstrap token) and what it reports back: that it serves a version, or that it
//! failed. Pure, like the rest of the state: the processes of a real-boot cloud are
//! [`crate::machines`]'s; a simulated cloud's services fail through the admin API.

use std::net::Ipv4Addr;

use super::control_planes::{parse_version, state_name, token_expiry};
use super::index::Indexed as _;
use super::{CloudSettings, CloudState, Kind, MANAGED_REAL_API_PORT, ServiceFailure, StateError};
use crate::model::{ControlPlaneState, MAX_FAILURE_REASON_LEN};

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
    /// Every real-boot managed control plane's service, as it should run. A `failed` one's
    /// is not run any more: its agent is not started again, and what it left (its logs, its
    /// data) stays for people to read until it is deleted.
    pub fn service_plan(&self, settings: &CloudSettings) -> Vec<ServicePlan> {
        self.control_planes
            .values()
            .filter(|cp| cp.address.is_some() && cp.state != ControlPlaneState::Failed)
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
    /// with an address and credentials and has not failed.
    pub fn service_launch_order(
        &self,
        id: &str,
        settings: &CloudSettings,
    ) -> Option<ServiceLaunchOrder> {
        let cp = self.control_planes.get(&Kind::ControlPlane.parse(id)?)?;
        if cp.state == ControlPlaneState::Failed {
            return None;
        }
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

    /// Applies that managed control plane `id`'s service failed for `reason` (with real boot,
    /// its agent's verdict, already rid of secrets): a `creating` or `updating` one turns
    /// `failed`, keeping `reason` as one line of at most [`MAX_FAILURE_REASON_LEN`] bytes, and
    /// leaves its timed state. Returns whether anything changed.
    ///
    /// # Guarantees
    ///
    /// Idempotent: a `failed` one stays as it is, with its first reason, whatever the reason
    /// reported again (a failure is final; the first cause is the one worth reading). Its
    /// bootstrap registration and token renewals stay until it is deleted, as its credentials
    /// do when it had served ([`CloudState::control_plane_credentials`]).
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`]; [`StateError::InvalidField`] on `reason` when it is blank;
    /// [`StateError::NotReady`] when it is `ready`: only a service that is starting or
    /// upgrading fails here.
    pub fn fail_control_plane(
        &mut self,
        id: &str,
        reason: &str,
        now_ms: u64,
    ) -> Result<bool, StateError> {
        let cp = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.get_mut(&n))
            .ok_or_else(|| Kind::ControlPlane.not_found(id))?;
        let reason = one_line(reason, MAX_FAILURE_REASON_LEN);
        if reason.is_empty() {
            return Err(StateError::InvalidField {
                field: "reason",
                message: "must say why the service failed".to_owned(),
            });
        }
        let had_served = match cp.state {
            ControlPlaneState::Failed => return Ok(false),
            ControlPlaneState::Creating => false,
            ControlPlaneState::Updating => true,
            ControlPlaneState::Ready => {
                return Err(StateError::NotReady {
                    kind: Kind::ControlPlane.name(),
                    id: id.to_owned(),
                    state: state_name(cp.state),
                    wanted: "only a service that is creating or updating fails",
                });
            }
        };
        let before = cp.timer();
        cp.state = ControlPlaneState::Failed;
        cp.failure = Some(ServiceFailure { reason, had_served });
        cp.updated_at_ms = now_ms;
        self.index.retime(before, cp.timer());
        Ok(true)
    }
}

/// `text` as one line of at most `max` bytes: control characters (line breaks included) and
/// runs of whitespace become one space; a longer text is cut at a character boundary and ends
/// in `…`.
fn one_line(text: &str, max: usize) -> String {
    let line = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty());
    let line = line.collect::<Vec<_>>().join(" ");
    if line.len() <= max {
        return line;
    }
    const CUT: char = '…';
    let mut end = max.saturating_sub(CUT.len_utf8());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{CUT}", line[..end].trim_end())
}
