//! Per-cluster views: bootstrap registrations and the inventory.

use super::control_planes::cp_view;
use super::infrastructure::{lb_view, network_view};
use super::instances::instance_view;
use super::{
    CloudSettings, CloudState, ControlPlaneRecord, InstanceRecord, LoadBalancerRecord,
    NetworkRecord, Registration, StateError, validate_name,
};
use crate::boot_check;
use crate::model::{BootstrapRegistration, ClusterInventory, Inventory, RegisterBootstrap};

impl CloudState {
    /// Registers (or replaces) what `cluster`'s bootstrap data must carry. Instances check it
    /// when they finish booting, not when they are created.
    ///
    /// # Errors
    ///
    /// A malformed cluster name, token or hash.
    pub fn register_bootstrap(
        &mut self,
        cluster: &str,
        req: RegisterBootstrap,
    ) -> Result<BootstrapRegistration, StateError> {
        validate_name("cluster", cluster)?;
        if !boot_check::is_bootstrap_token(&req.token) {
            return Err(StateError::InvalidField {
                field: "token",
                message: "not of the form [a-z0-9]{6}.[a-z0-9]{16}".into(),
            });
        }
        if !boot_check::is_ca_cert_hash(&req.ca_cert_hash) {
            return Err(StateError::InvalidField {
                field: "ca_cert_hash",
                message: "not of the form sha256:<64 hex digits>".into(),
            });
        }
        let registration = Registration {
            token: req.token,
            ca_cert_hash: req.ca_cert_hash,
            previous_token: None,
        };
        let view = registration_view(&registration);
        self.bootstrap.insert(cluster.to_owned(), registration);
        Ok(view)
    }

    /// `cluster`'s registration, its token's id only.
    ///
    /// # Errors
    ///
    /// [`StateError::NotFound`] when none is registered.
    pub fn bootstrap(&self, cluster: &str) -> Result<BootstrapRegistration, StateError> {
        self.bootstrap
            .get(cluster)
            .map(registration_view)
            .ok_or_else(|| StateError::NotFound {
                kind: "bootstrap registration of cluster",
                id: cluster.to_owned(),
            })
    }

    /// Forgets `cluster`'s registration; `false` when there was none.
    pub fn delete_bootstrap(&mut self, cluster: &str) -> bool {
        self.bootstrap.remove(cluster).is_some()
    }

    // ---- inventory ----

    /// Everything alive, by cluster; only `cluster` when given (then reading only its
    /// records).
    pub fn inventory(&self, cluster: Option<&str>, settings: &CloudSettings) -> Inventory {
        let mut inventory = Inventory::default();
        fn entry<'a>(
            inventory: &'a mut Inventory,
            only: Option<&str>,
            cluster: &str,
        ) -> Option<&'a mut ClusterInventory> {
            only.is_none_or(|w| w == cluster)
                .then(|| inventory.clusters.entry(cluster.to_owned()).or_default())
        }
        for n in self.in_cluster::<NetworkRecord>(cluster) {
            if let Some(e) = entry(&mut inventory, cluster, &n.cluster) {
                e.networks.push(network_view(n));
            }
        }
        for lb in self.in_cluster::<LoadBalancerRecord>(cluster) {
            if let Some(e) = entry(&mut inventory, cluster, &lb.cluster) {
                e.load_balancers.push(lb_view(lb, settings));
            }
        }
        for i in self.in_cluster::<InstanceRecord>(cluster) {
            if let Some(e) = entry(&mut inventory, cluster, &i.cluster) {
                e.instances.push(instance_view(i));
            }
        }
        for cp in self.in_cluster::<ControlPlaneRecord>(cluster) {
            if let Some(e) = entry(&mut inventory, cluster, &cp.cluster) {
                e.managed_control_planes.push(cp_view(cp, settings));
            }
        }
        let registrations: Box<dyn Iterator<Item = (&String, &Registration)>> = match cluster {
            Some(c) => Box::new(self.bootstrap.get_key_value(c).into_iter()),
            None => Box::new(self.bootstrap.iter()),
        };
        for (c, r) in registrations {
            if let Some(e) = entry(&mut inventory, cluster, c) {
                e.bootstrap = Some(registration_view(r));
            }
        }
        inventory
    }
}

fn registration_view(r: &Registration) -> BootstrapRegistration {
    BootstrapRegistration {
        token_id: r.token.split('.').next().unwrap_or_default().to_owned(),
        ca_cert_hash: r.ca_cert_hash.clone(),
    }
}
