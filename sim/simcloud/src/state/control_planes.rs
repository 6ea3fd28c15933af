//! Managed control planes: created with a version and replicas; the version may move up one
//! minor at a time, the replicas never change.

use super::index::Indexed as _;
use super::{
    CloudSettings, CloudState, ControlPlaneRecord, Kind, MANAGED_API_PORT, MANAGED_REAL_API_PORT,
    Outcome, REPLICAS, Registration, StateError, millis, seconds, validate_name,
    validate_optional_token,
};
use crate::credentials::{JOIN_TOKEN_GROUP, ServiceCredentials};
use crate::model::{
    AutoUpgrade, ControlPlaneState, CreateManagedControlPlane, Endpoint, ManagedControlPlane,
    ManagedControlPlaneCredentials, UpdateManagedControlPlane,
};

impl CloudState {
    /// Creates the cluster's managed control plane with `credentials` (minted by the caller:
    /// [`ServiceCredentials::mint`]), or answers the one created with the same client token
    /// (`credentials` then unused). It is `creating`, without endpoint, until its create
    /// delay has passed (with real boot: until its service runs).
    ///
    /// # Guarantees
    ///
    /// The service's first bootstrap token and CA cert hash become the cluster's bootstrap
    /// registration, replacing any, so the cluster's joins must carry them. With real boot it
    /// gets a loopback address of its own.
    ///
    /// # Errors
    ///
    /// Invalid fields (version not `[v]X.Y.Z`, replicas outside 1..=5); a token used with
    /// other parameters; the cluster has one already; no loopback address is left.
    pub fn create_control_plane(
        &mut self,
        req: CreateManagedControlPlane,
        credentials: ServiceCredentials,
        now_ms: u64,
        settings: &CloudSettings,
    ) -> Result<(ManagedControlPlane, Outcome), StateError> {
        validate_name("cluster", &req.cluster)?;
        validate_name("name", &req.name)?;
        validate_optional_token(req.client_token.as_deref())?;
        parse_version(&req.version)?;
        if !REPLICAS.contains(&req.replicas) {
            return Err(StateError::InvalidField {
                field: "replicas",
                message: format!(
                    "{} is not between {} and {}",
                    req.replicas,
                    REPLICAS.start(),
                    REPLICAS.end()
                ),
            });
        }
        if let Some(token) = &req.client_token
            && let Some(existing) = self.with_token::<ControlPlaneRecord>(token)
        {
            if existing.cluster != req.cluster
                || existing.name != req.name
                || existing.replicas != req.replicas
            {
                return Err(StateError::TokenMismatch {
                    kind: Kind::ControlPlane.name(),
                    id: Kind::ControlPlane.id(existing.id),
                });
            }
            return Ok((cp_view(existing, settings), Outcome::Existing));
        }
        if let Some(existing) = self.first_in_cluster::<ControlPlaneRecord>(&req.cluster) {
            return Err(StateError::AlreadyExists {
                cluster: req.cluster,
                kind: Kind::ControlPlane.name(),
                id: Kind::ControlPlane.id(existing.id),
            });
        }
        let address = if settings.real_boot {
            Some(self.allocate_loopback(settings.loopback_seed)?)
        } else {
            None
        };
        self.bootstrap.insert(
            req.cluster.clone(),
            Registration {
                token: credentials.join_token(0),
                ca_cert_hash: credentials.ca_cert_hash.clone(),
                previous_token: None,
            },
        );
        self.counters.control_plane += 1;
        let record = ControlPlaneRecord {
            id: self.counters.control_plane,
            client_token: req.client_token,
            cluster: req.cluster,
            name: req.name,
            version: req.version,
            target_version: None,
            replicas: req.replicas,
            state: ControlPlaneState::Creating,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            credentials: Some(credentials),
            token_generation: 0,
            token_issued_at_ms: now_ms,
            address,
            failure: None,
        };
        let view = cp_view(&record, settings);
        self.index.add(&record);
        self.control_planes.insert(record.id, record);
        Ok((view, Outcome::Created))
    }

    /// Updates managed control plane `id`. A new version starts an update (`updating` until
    /// the update delay has passed); asking again for the version it is updating to, or for
    /// the version it has, changes nothing.
    ///
    /// # Errors
    ///
    /// Not found; replicas other than the current ([`StateError::Immutable`]); a version that
    /// is invalid, lower, or more than one minor higher; a new version while `creating` or
    /// `updating` ([`StateError::Busy`]); any version once `failed` ([`StateError::Failed`],
    /// which names the reason).
    pub fn update_control_plane(
        &mut self,
        id: &str,
        req: UpdateManagedControlPlane,
        now_ms: u64,
        settings: &CloudSettings,
    ) -> Result<ManagedControlPlane, StateError> {
        let cp = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.get_mut(&n))
            .ok_or_else(|| Kind::ControlPlane.not_found(id))?;
        if let Some(replicas) = req.replicas
            && replicas != cp.replicas
        {
            return Err(StateError::Immutable {
                field: "replicas",
                from: cp.replicas.to_string(),
                to: replicas.to_string(),
            });
        }
        if let Some(version) = req.version {
            let wanted = parse_version(&version)?;
            let busy_with = |state| StateError::Busy {
                kind: Kind::ControlPlane.name(),
                id: id.to_owned(),
                state,
            };
            match cp.state {
                // Even the version it has: a failed service serves nothing, so no version is
                // "already there", and the answer tells why nothing will be.
                ControlPlaneState::Failed => {
                    return Err(StateError::Failed {
                        kind: Kind::ControlPlane.name(),
                        id: id.to_owned(),
                        reason: cp
                            .failure
                            .as_ref()
                            .map_or_else(|| "no reason given".to_owned(), |f| f.reason.clone()),
                    });
                }
                ControlPlaneState::Updating => {
                    let target = cp.target_version.as_deref().map(parse_version);
                    if target != Some(Ok(wanted)) {
                        return Err(busy_with("updating"));
                    }
                }
                ControlPlaneState::Creating => {
                    if parse_version(&cp.version)? != wanted {
                        return Err(busy_with("creating"));
                    }
                }
                ControlPlaneState::Ready => {
                    let current = parse_version(&cp.version)?;
                    if wanted < current {
                        return Err(StateError::InvalidField {
                            field: "version",
                            message: format!("cannot downgrade from {} to {version}", cp.version),
                        });
                    }
                    if wanted.0 != current.0 || wanted.1 > current.1 + 1 {
                        return Err(StateError::InvalidField {
                            field: "version",
                            message: format!(
                                "can upgrade one minor version at a time: {} -> {version}",
                                cp.version
                            ),
                        });
                    }
                    if wanted != current {
                        cp.target_version = Some(version);
                        cp.state = ControlPlaneState::Updating;
                        cp.updated_at_ms = now_ms;
                        self.index.retime(None, cp.timer());
                    }
                }
            }
        }
        Ok(cp_view(cp, settings))
    }

    /// The managed control plane `id`.
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`].
    pub fn control_plane(
        &self,
        id: &str,
        settings: &CloudSettings,
    ) -> Result<ManagedControlPlane, StateError> {
        Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.get(&n))
            .map(|cp| cp_view(cp, settings))
            .ok_or_else(|| Kind::ControlPlane.not_found(id))
    }

    /// Managed control planes, of `cluster` when given, by id.
    pub fn control_planes(
        &self,
        cluster: Option<&str>,
        settings: &CloudSettings,
    ) -> Vec<ManagedControlPlane> {
        self.in_cluster(cluster)
            .map(|cp| cp_view(cp, settings))
            .collect()
    }

    /// Deletes managed control plane `id`, and the cluster's bootstrap registration when it
    /// is still the service's (its CA); `false` when there was none.
    pub fn delete_control_plane(&mut self, id: &str) -> bool {
        let Some(removed) = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.remove(&n))
        else {
            return false;
        };
        self.index.remove(&removed);
        if let Some(credentials) = &removed.credentials
            && self
                .bootstrap
                .get(&removed.cluster)
                .is_some_and(|r| r.ca_cert_hash == credentials.ca_cert_hash)
        {
            self.bootstrap.remove(&removed.cluster);
        }
        true
    }

    /// How to reach and join managed control plane `id`: its endpoint, CA, an admin
    /// kubeconfig and the bootstrap token valid now. A `failed` one answers as before it
    /// failed: its credentials when it had served (its CA and data are kept until it is
    /// deleted, and a client holding them already learns nothing new), none when it never
    /// did.
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`]; [`StateError::NotReady`] while it is `creating`, once it
    /// `failed` without having served (or when it was created by a sim too old to give it
    /// credentials).
    pub fn control_plane_credentials(
        &self,
        id: &str,
        settings: &CloudSettings,
    ) -> Result<ManagedControlPlaneCredentials, StateError> {
        let cp = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.get(&n))
            .ok_or_else(|| Kind::ControlPlane.not_found(id))?;
        let not_ready = |state, wanted| StateError::NotReady {
            kind: Kind::ControlPlane.name(),
            id: id.to_owned(),
            state,
            wanted,
        };
        let endpoint = cp_endpoint(cp, settings).ok_or_else(|| match cp.state {
            ControlPlaneState::Failed => not_ready(
                "failed",
                "it failed before it ever served, so it has no credentials; delete it",
            ),
            _ => not_ready(
                "creating",
                "its credentials exist once it is ready; wait for it",
            ),
        })?;
        let credentials = cp.credentials.as_ref().ok_or_else(|| {
            not_ready(
                "without credentials (created by an older sim)",
                "delete it and create it again",
            )
        })?;
        Ok(ManagedControlPlaneCredentials {
            admin_kubeconfig: credentials.admin_kubeconfig(&cp.cluster, &endpoint),
            endpoint,
            ca_certificate: credentials.ca_cert_pem.clone(),
            join_token: credentials.join_token(cp.token_generation),
            join_token_ttl_seconds: settings.timings.join_token_ttl.as_secs(),
            join_token_issued_at: seconds(cp.token_issued_at_ms),
            join_token_groups: vec![JOIN_TOKEN_GROUP.to_owned()],
        })
    }

    /// The service upgrades `ready` managed control plane `id` to `req.version` on its own:
    /// an update as [`CloudState::update_control_plane`] starts one.
    ///
    /// # Errors
    ///
    /// [`StateError::NotReady`] unless it is `ready`; otherwise as
    /// [`CloudState::update_control_plane`].
    pub fn auto_upgrade_control_plane(
        &mut self,
        id: &str,
        req: AutoUpgrade,
        now_ms: u64,
        settings: &CloudSettings,
    ) -> Result<ManagedControlPlane, StateError> {
        let state = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.get(&n))
            .map(|cp| cp.state)
            .ok_or_else(|| Kind::ControlPlane.not_found(id))?;
        if state != ControlPlaneState::Ready {
            return Err(StateError::NotReady {
                kind: Kind::ControlPlane.name(),
                id: id.to_owned(),
                state: state_name(state),
                wanted: "the service upgrades only a ready control plane",
            });
        }
        let update = UpdateManagedControlPlane {
            version: Some(req.version),
            replicas: None,
        };
        self.update_control_plane(id, update, now_ms, settings)
    }

    /// Renews managed control plane `n`'s bootstrap token at `now_ms` (its renewal timer fell
    /// due): the next token of its seed becomes current, and the cluster's registration,
    /// while it is still the service's, moves to it, keeping the renewed one as still valid.
    /// Returns whether anything changed.
    pub(super) fn renew_join_token(&mut self, n: u64, now_ms: u64) -> bool {
        let Some(cp) = self.control_planes.get_mut(&n) else {
            return false;
        };
        let Some(credentials) = &cp.credentials else {
            return false;
        };
        let renewed = credentials.join_token(cp.token_generation);
        cp.token_generation = cp.token_generation.saturating_add(1);
        cp.token_issued_at_ms = now_ms;
        let current = credentials.join_token(cp.token_generation);
        if let Some(registration) = self.bootstrap.get_mut(&cp.cluster)
            && registration.ca_cert_hash == credentials.ca_cert_hash
            && registration.token == renewed
        {
            registration.token = current;
            registration.previous_token = Some(renewed);
        }
        let timer = cp.renewal_timer();
        self.index.retime(None, timer);
        true
    }
}

/// `creating`, `ready`, `updating` or `failed`.
pub(super) fn state_name(state: ControlPlaneState) -> &'static str {
    match state {
        ControlPlaneState::Creating => "creating",
        ControlPlaneState::Ready => "ready",
        ControlPlaneState::Updating => "updating",
        ControlPlaneState::Failed => "failed",
    }
}

/// When the current token of `cp` expires, in seconds since the Unix epoch.
pub(super) fn token_expiry(cp: &ControlPlaneRecord, settings: &CloudSettings) -> u64 {
    seconds(
        cp.token_issued_at_ms
            .saturating_add(millis(settings.timings.join_token_ttl)),
    )
}

/// Where the control plane serves, once it does: `mcp-<n>.<domain>:443`, or with real boot
/// its loopback address and [`MANAGED_REAL_API_PORT`]. A failed one keeps the endpoint it
/// had, if it had served: what it was is still what its clients and credentials name.
pub(super) fn cp_endpoint(cp: &ControlPlaneRecord, settings: &CloudSettings) -> Option<Endpoint> {
    let served = match cp.state {
        ControlPlaneState::Creating => false,
        ControlPlaneState::Ready | ControlPlaneState::Updating => true,
        ControlPlaneState::Failed => cp.failure.as_ref().is_some_and(|f| f.had_served),
    };
    served.then(|| match cp.address {
        Some(address) => Endpoint {
            host: address.to_string(),
            port: MANAGED_REAL_API_PORT,
        },
        None => Endpoint {
            host: format!("{}.{}", Kind::ControlPlane.id(cp.id), settings.domain),
            port: MANAGED_API_PORT,
        },
    })
}

pub(super) fn cp_view(cp: &ControlPlaneRecord, settings: &CloudSettings) -> ManagedControlPlane {
    ManagedControlPlane {
        id: Kind::ControlPlane.id(cp.id),
        client_token: cp.client_token.clone(),
        cluster: cp.cluster.clone(),
        name: cp.name.clone(),
        version: cp.version.clone(),
        target_version: cp.target_version.clone(),
        replicas: cp.replicas,
        failures_tolerated: cp.replicas.saturating_sub(1) / 2,
        state: cp.state,
        failure_reason: cp.failure.as_ref().map(|f| f.reason.clone()),
        endpoint: cp_endpoint(cp, settings),
        created_at: seconds(cp.created_at_ms),
        updated_at: seconds(cp.updated_at_ms),
    }
}

/// `X.Y.Z` or `vX.Y.Z` as a comparable triple.
pub(super) fn parse_version(version: &str) -> Result<(u64, u64, u64), StateError> {
    let invalid = || StateError::InvalidField {
        field: "version",
        message: format!("`{version}` is not a Kubernetes version like 1.31.2 or v1.31.2"),
    };
    let digits = version.strip_prefix('v').unwrap_or(version);
    let mut parts = digits.split('.').map(|p| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u64>().ok())
            .flatten()
    });
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(Some(major)), Some(Some(minor)), Some(Some(patch)), None) => {
            Ok((major, minor, patch))
        }
        _ => Err(invalid()),
    }
}
