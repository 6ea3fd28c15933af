//! Networks and load balancers: what a cluster needs before its machines.

use std::net::Ipv4Addr;

use super::{
    CloudSettings, CloudState, DEFAULT_LB_PORT, FIRST_HOST, InstanceRecord, Kind,
    LoadBalancerRecord, NETWORK_PREFIX, NetworkRecord, Outcome, StateError, seconds, validate_name,
    validate_optional_token,
};
use crate::model::{
    CreateLoadBalancer, CreateNetwork, Endpoint, LoadBalancer, LoadBalancerState, Network,
};

impl CloudState {
    /// Creates the cluster's network, or answers the one created with the same client token.
    ///
    /// # Errors
    ///
    /// Invalid fields; a token used with other parameters; the cluster has a network already;
    /// no network block left.
    pub fn create_network(
        &mut self,
        req: CreateNetwork,
        now_ms: u64,
    ) -> Result<(Network, Outcome), StateError> {
        validate_name("cluster", &req.cluster)?;
        validate_name("name", &req.name)?;
        validate_optional_token(req.client_token.as_deref())?;
        if let Some(token) = &req.client_token
            && let Some(existing) = self.with_token::<NetworkRecord>(token)
        {
            if existing.cluster != req.cluster || existing.name != req.name {
                return Err(StateError::TokenMismatch {
                    kind: Kind::Network.name(),
                    id: Kind::Network.id(existing.id),
                });
            }
            return Ok((network_view(existing), Outcome::Existing));
        }
        if let Some(existing) = self.first_in_cluster::<NetworkRecord>(&req.cluster) {
            return Err(StateError::AlreadyExists {
                cluster: req.cluster,
                kind: Kind::Network.name(),
                id: Kind::Network.id(existing.id),
            });
        }
        let Some(block) = self.index.free_network_block() else {
            return Err(StateError::Exhausted {
                what: format!("network blocks (/{NETWORK_PREFIX}) of 10.0.0.0/8"),
            });
        };
        self.counters.network += 1;
        let record = NetworkRecord {
            id: self.counters.network,
            client_token: req.client_token,
            cluster: req.cluster,
            name: req.name,
            block,
            next_host: FIRST_HOST,
            created_at_ms: now_ms,
        };
        let view = network_view(&record);
        self.index.add(&record);
        self.networks.insert(record.id, record);
        Ok((view, Outcome::Created))
    }

    /// The network `id`.
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`].
    pub fn network(&self, id: &str) -> Result<Network, StateError> {
        Kind::Network
            .parse(id)
            .and_then(|n| self.networks.get(&n))
            .map(network_view)
            .ok_or_else(|| Kind::Network.not_found(id))
    }

    /// Networks, of `cluster` when given, by id.
    pub fn networks(&self, cluster: Option<&str>) -> Vec<Network> {
        self.in_cluster(cluster).map(network_view).collect()
    }

    /// Deletes network `id`; `false` when there was none.
    ///
    /// # Errors
    ///
    /// [`StateError::NetworkInUse`] while instances are in it.
    pub fn delete_network(&mut self, id: &str) -> Result<bool, StateError> {
        let Some(network) = Kind::Network.parse(id).and_then(|n| self.networks.get(&n)) else {
            return Ok(false);
        };
        // An instance is in its cluster's network, so only the cluster's need a look.
        let count = self
            .in_cluster::<InstanceRecord>(Some(&network.cluster))
            .filter(|i| i.network_id == network.id)
            .count();
        if count > 0 {
            return Err(StateError::NetworkInUse {
                id: id.to_owned(),
                count,
            });
        }
        let n = network.id;
        let removed = self.networks.remove(&n);
        Ok(removed.map(|r| self.index.remove(&r)).is_some())
    }

    // ---- load balancers ----

    /// Creates the cluster's load balancer, or answers the one created with the same client
    /// token.
    ///
    /// # Errors
    ///
    /// Invalid fields; a token used with other parameters; the cluster has one already.
    pub fn create_load_balancer(
        &mut self,
        req: CreateLoadBalancer,
        now_ms: u64,
        settings: &CloudSettings,
    ) -> Result<(LoadBalancer, Outcome), StateError> {
        validate_name("cluster", &req.cluster)?;
        validate_name("name", &req.name)?;
        validate_optional_token(req.client_token.as_deref())?;
        let port = req.port.unwrap_or(DEFAULT_LB_PORT);
        if port == 0 {
            return Err(StateError::InvalidField {
                field: "port",
                message: "must be 1 to 65535".into(),
            });
        }
        if let Some(token) = &req.client_token
            && let Some(existing) = self.with_token::<LoadBalancerRecord>(token)
        {
            if existing.cluster != req.cluster || existing.name != req.name || existing.port != port
            {
                return Err(StateError::TokenMismatch {
                    kind: Kind::LoadBalancer.name(),
                    id: Kind::LoadBalancer.id(existing.id),
                });
            }
            return Ok((lb_view(existing, settings), Outcome::Existing));
        }
        if let Some(existing) = self.first_in_cluster::<LoadBalancerRecord>(&req.cluster) {
            return Err(StateError::AlreadyExists {
                cluster: req.cluster,
                kind: Kind::LoadBalancer.name(),
                id: Kind::LoadBalancer.id(existing.id),
            });
        }
        let address = if settings.real_boot {
            Some(self.allocate_loopback(settings.loopback_seed)?)
        } else {
            None
        };
        self.counters.load_balancer += 1;
        let record = LoadBalancerRecord {
            id: self.counters.load_balancer,
            client_token: req.client_token,
            cluster: req.cluster,
            name: req.name,
            port,
            state: LoadBalancerState::Provisioning,
            created_at_ms: now_ms,
            address,
        };
        let view = lb_view(&record, settings);
        self.index.add(&record);
        self.load_balancers.insert(record.id, record);
        Ok((view, Outcome::Created))
    }

    /// The load balancer `id`.
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`].
    pub fn load_balancer(
        &self,
        id: &str,
        settings: &CloudSettings,
    ) -> Result<LoadBalancer, StateError> {
        Kind::LoadBalancer
            .parse(id)
            .and_then(|n| self.load_balancers.get(&n))
            .map(|lb| lb_view(lb, settings))
            .ok_or_else(|| Kind::LoadBalancer.not_found(id))
    }

    /// Load balancers, of `cluster` when given, by id.
    pub fn load_balancers(
        &self,
        cluster: Option<&str>,
        settings: &CloudSettings,
    ) -> Vec<LoadBalancer> {
        self.in_cluster(cluster)
            .map(|lb| lb_view(lb, settings))
            .collect()
    }

    /// Deletes load balancer `id`; `false` when there was none.
    pub fn delete_load_balancer(&mut self, id: &str) -> bool {
        let removed = Kind::LoadBalancer
            .parse(id)
            .and_then(|n| self.load_balancers.remove(&n));
        removed.map(|r| self.index.remove(&r)).is_some()
    }
}

/// The first address of `network`'s block.
pub(super) fn network_base(network: &NetworkRecord) -> u32 {
    (10 << 24) | (network.block() << (32 - NETWORK_PREFIX))
}

pub(super) fn network_view(n: &NetworkRecord) -> Network {
    Network {
        id: Kind::Network.id(n.id),
        client_token: n.client_token.clone(),
        cluster: n.cluster.clone(),
        name: n.name.clone(),
        cidr: format!("{}/{NETWORK_PREFIX}", Ipv4Addr::from(network_base(n))),
        created_at: seconds(n.created_at_ms),
    }
}

/// `lb-<n>.<domain>:<port>`, or `<its loopback address>:<port>` in a real-boot cloud, where
/// clients must reach it without DNS.
pub(super) fn lb_endpoint(lb: &LoadBalancerRecord, settings: &CloudSettings) -> Endpoint {
    let host = match lb.address {
        Some(address) => address.to_string(),
        None => format!("{}.{}", Kind::LoadBalancer.id(lb.id), settings.domain),
    };
    Endpoint {
        host,
        port: lb.port,
    }
}

pub(super) fn lb_view(lb: &LoadBalancerRecord, settings: &CloudSettings) -> LoadBalancer {
    LoadBalancer {
        id: Kind::LoadBalancer.id(lb.id),
        client_token: lb.client_token.clone(),
        cluster: lb.cluster.clone(),
        name: lb.name.clone(),
        endpoint: lb_endpoint(lb, settings),
        state: lb.state,
        created_at: seconds(lb.created_at_ms),
    }
}
