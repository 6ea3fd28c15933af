//! Managed control planes: created with a version and replicas; the version may move up one
//! minor at a time, the replicas never change.

use super::index::Indexed as _;
use super::{
    CloudSettings, CloudState, ControlPlaneRecord, Kind, MANAGED_API_PORT, Outcome, REPLICAS,
    StateError, seconds, validate_name, validate_optional_token,
};
use crate::model::{
    ControlPlaneState, CreateManagedControlPlane, Endpoint, ManagedControlPlane,
    UpdateManagedControlPlane,
};

impl CloudState {
    /// Creates the cluster's managed control plane, or answers the one created with the same
    /// client token. It is `creating`, without endpoint, until its create delay has passed.
    ///
    /// # Errors
    ///
    /// Invalid fields (version not `[v]X.Y.Z`, replicas outside 1..=5); a token used with
    /// other parameters; the cluster has one already.
    pub fn create_control_plane(
        &mut self,
        req: CreateManagedControlPlane,
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
    /// `updating` ([`StateError::Busy`]).
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

    /// Deletes managed control plane `id`; `false` when there was none.
    pub fn delete_control_plane(&mut self, id: &str) -> bool {
        let removed = Kind::ControlPlane
            .parse(id)
            .and_then(|n| self.control_planes.remove(&n));
        removed.map(|r| self.index.remove(&r)).is_some()
    }
}

pub(super) fn cp_endpoint(cp: &ControlPlaneRecord, settings: &CloudSettings) -> Option<Endpoint> {
    (cp.state != ControlPlaneState::Creating).then(|| Endpoint {
        host: format!("{}.{}", Kind::ControlPlane.id(cp.id), settings.domain),
        port: MANAGED_API_PORT,
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
        state: cp.state,
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
