//! Instances: idempotent creates, addresses, lookups and deletes.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::infrastructure::network_base;
use super::{
    CloudSettings, CloudState, InstanceRecord, Kind, LAST_HOST, MAX_BOOTSTRAP_DATA, NetworkRecord,
    Outcome, StateError, seconds, validate_name, validate_token,
};
use crate::model::{Address, CreateInstance, Instance, InstanceState};

/// Filters of `GET /v1/instances`.
#[derive(Clone, Debug, Default)]
pub struct InstanceFilter {
    /// Only this cluster's.
    pub cluster: Option<String>,
    /// Only those created with this client token.
    pub client_token: Option<String>,
    /// Only those carrying every one of these tags.
    pub tags: Vec<(String, String)>,
}

impl InstanceFilter {
    /// Whether an instance of `cluster`, created with `client_token` and carrying `tags`,
    /// passes.
    pub(super) fn matches(
        &self,
        cluster: &str,
        client_token: &str,
        tags: &BTreeMap<String, String>,
    ) -> bool {
        self.cluster.as_ref().is_none_or(|c| c == cluster)
            && self.client_token.as_ref().is_none_or(|t| t == client_token)
            && self.tags.iter().all(|(k, v)| tags.get(k) == Some(v))
    }
}

impl CloudState {
    /// Creates an instance in its cluster's network, or answers the one created with the same
    /// client token.
    ///
    /// # Guarantees
    ///
    /// One client token makes at most one instance, ever: a token whose instance was deleted
    /// is refused rather than making a second.
    ///
    /// # Errors
    ///
    /// Invalid fields (bad base64, data over [`MAX_BOOTSTRAP_DATA`], unknown zone); a token
    /// used with other parameters or by a deleted instance; no network; no address left.
    pub fn create_instance(
        &mut self,
        req: CreateInstance,
        now_ms: u64,
        settings: &CloudSettings,
    ) -> Result<(Instance, Outcome), StateError> {
        validate_token("client_token", &req.client_token)?;
        validate_name("cluster", &req.cluster)?;
        validate_name("name", &req.name)?;
        for key in req.tags.keys() {
            validate_name("tags", key)?;
        }
        if let Some(instance_type) = &req.instance_type {
            validate_name("instance_type", instance_type)?;
        }
        let data = BASE64
            .decode(&req.bootstrap_data)
            .map_err(|e| StateError::InvalidField {
                field: "bootstrap_data",
                message: format!("not standard base64: {e}"),
            })?;
        if data.len() > MAX_BOOTSTRAP_DATA {
            return Err(StateError::InvalidField {
                field: "bootstrap_data",
                message: format!(
                    "decodes to {} bytes; at most {MAX_BOOTSTRAP_DATA}",
                    data.len()
                ),
            });
        }
        if let Some(&id) = self.instance_tokens.get(&req.client_token) {
            let Some(existing) = self.instances.get(&id) else {
                return Err(StateError::TokenOfDeleted {
                    id: Kind::Instance.id(id),
                });
            };
            if existing.cluster != req.cluster
                || existing.name != req.name
                || existing.role != req.role
            {
                return Err(StateError::TokenMismatch {
                    kind: Kind::Instance.name(),
                    id: Kind::Instance.id(id),
                });
            }
            return Ok((instance_view(existing), Outcome::Existing));
        }
        let zone = match req.zone {
            None => settings.zones.first().cloned().unwrap_or_default(),
            Some(zone) if settings.zones.contains(&zone) => zone,
            Some(zone) => {
                return Err(StateError::InvalidField {
                    field: "zone",
                    message: format!(
                        "unknown zone `{zone}`; zones are {}",
                        settings.zones.join(", ")
                    ),
                });
            }
        };
        let network = self
            .first_in_cluster::<NetworkRecord>(&req.cluster)
            .map(|n| n.id)
            .and_then(|n| self.networks.get_mut(&n))
            .ok_or_else(|| StateError::NoNetwork {
                cluster: req.cluster.clone(),
            })?;
        let network_id = network.id;
        let address = if settings.real_boot {
            // A machine on this host: its own loopback address instead of one of the network.
            self.allocate_loopback(settings.loopback_seed)?
        } else {
            if network.next_host > LAST_HOST {
                return Err(StateError::Exhausted {
                    what: format!("addresses of network {}", Kind::Network.id(network.id)),
                });
            }
            let address = Ipv4Addr::from(network_base(network) + network.next_host);
            network.next_host += 1;
            address
        };

        self.counters.instance += 1;
        let record = InstanceRecord {
            id: self.counters.instance,
            client_token: req.client_token,
            name: req.name,
            cluster: req.cluster,
            role: req.role,
            zone,
            instance_type: (req.instance_type)
                .unwrap_or_else(|| capw_sim_api::DEFAULT_INSTANCE_TYPE.to_owned()),
            network_id,
            address,
            tags: req.tags,
            state: InstanceState::Pending,
            reason: String::new(),
            bootstrap_data: req.bootstrap_data,
            created_at_ms: now_ms,
            api_port: None,
            deleting: false,
        };
        let view = instance_view(&record);
        self.instance_tokens
            .insert(record.client_token.clone(), record.id);
        self.index.add(&record);
        self.instances.insert(record.id, record);
        Ok((view, Outcome::Created))
    }

    /// The instance `id`.
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`], deleted instances included.
    pub fn instance(&self, id: &str) -> Result<Instance, StateError> {
        Kind::Instance
            .parse(id)
            .and_then(|n| self.instances.get(&n))
            .map(instance_view)
            .ok_or_else(|| Kind::Instance.not_found(id))
    }

    /// Instances matching `filter`, by id.
    ///
    /// Reads only the instance of the client token when there is one, else only the cluster's
    /// instances when there is one.
    pub fn instances(&self, filter: &InstanceFilter) -> Vec<Instance> {
        let candidates: Box<dyn Iterator<Item = &InstanceRecord>> = match &filter.client_token {
            Some(token) => Box::new(
                self.instance_tokens
                    .get(token)
                    .and_then(|id| self.instances.get(id))
                    .into_iter(),
            ),
            None => self.in_cluster(filter.cluster.as_deref()),
        };
        candidates
            .filter(|i| filter.matches(&i.cluster, &i.client_token, &i.tags))
            .map(instance_view)
            .collect()
    }

    /// Marks instance `id` as being deleted (see `InstanceRecord::deleting`); `false` when
    /// there is none.
    pub fn begin_delete_instance(&mut self, id: &str) -> bool {
        Kind::Instance
            .parse(id)
            .and_then(|n| self.instances.get_mut(&n))
            .map(|i| i.deleting = true)
            .is_some()
    }

    /// Deletes instance `id`; `false` when there was none (never created, or deleted before).
    pub fn delete_instance(&mut self, id: &str) -> bool {
        let removed = Kind::Instance
            .parse(id)
            .and_then(|n| self.instances.remove(&n));
        removed.map(|r| self.index.remove(&r)).is_some()
    }
}

pub(super) fn instance_view(i: &InstanceRecord) -> Instance {
    let id = Kind::Instance.id(i.id);
    Instance {
        provider_id: format!("sim://instances/{id}"),
        id,
        client_token: i.client_token.clone(),
        name: i.name.clone(),
        cluster: i.cluster.clone(),
        role: i.role,
        zone: i.zone.clone(),
        instance_type: i.instance_type.clone(),
        network_id: Kind::Network.id(i.network_id),
        addresses: vec![Address {
            kind: "private-ip".into(),
            address: i.address.to_string(),
        }],
        state: i.state,
        reason: i.reason.clone(),
        tags: i.tags.clone(),
        created_at: seconds(i.created_at_ms),
    }
}
