//! `reconcile-cluster` and `delete-cluster`: the cluster's network and load balancer.
//!
//! With `controlPlaneEndpoint: none` (a control plane that a service runs) only the network is
//! made: the cluster is ready once it exists, with no endpoint.
//!
//! simcloud allows one network and one load balancer per cluster. Each is looked up by
//! cluster first and created only when absent, with a client token derived from the call's
//! idempotency key, so a create whose answer was lost is answered, not repeated. A create that
//! meets `409 conflict` (the cluster got one meanwhile, under another token) adopts the one
//! that exists.

use std::time::Duration;

use capw_sdk::infrastructure::{ClusterInfrastructure, ClusterState, FailureDomain};
use capw_sdk::types::{
    Condition, ConditionStatus, Deletion, Endpoint, ErrorCode, InProgress, ProviderError,
};
use capw_sdk::{Context, log};
use capw_sim_client::{ClientError, query};

use crate::api::{
    CreateLoadBalancer, CreateNetwork, LoadBalancer, LoadBalancerList, LoadBalancerState, Network,
    NetworkList, ZoneList, codes,
};
use crate::config::{ControlPlaneEndpoint, SimInfraConfig};
use crate::{Client, naming};

/// When to look again at a load balancer that is not active yet.
pub const LOAD_BALANCER_REQUEUE: Duration = Duration::from_secs(2);

/// When to try again to delete a network that still holds instances.
pub const NETWORK_IN_USE_REQUEUE: Duration = Duration::from_secs(5);

/// Why the cluster's infrastructure could not be reconciled or deleted.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A simcloud request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// `zones` names zones simcloud does not have. Permanent until the config changes.
    #[error("config `/zones`: simcloud has no zone {}; its zones are {}", list(.missing), list(.available))]
    UnknownZones {
        /// The configured zones simcloud lacks.
        missing: Vec<String>,
        /// simcloud's zones.
        available: Vec<String>,
    },
    /// A create said the cluster already has a `kind`, and the lookup then found none (it was
    /// deleted in between). Retryable: the next call creates it.
    #[error("simcloud refused a second {kind} for cluster `{cluster}` but lists none")]
    Vanished {
        /// `network` or `load balancer`.
        kind: &'static str,
        /// The simcloud cluster name.
        cluster: String,
        /// simcloud's refusal.
        #[source]
        source: Box<ClientError>,
    },
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|z| format!("`{z}`")).collect();
    quoted.join(", ")
}

/// Unknown zones are bad input; a vanished resource a conflict that resolves itself;
/// client errors as [`ClientError`] says.
impl From<ClusterError> for ProviderError {
    fn from(e: ClusterError) -> Self {
        match e {
            ClusterError::Client(e) => e.into(),
            e @ ClusterError::UnknownZones { .. } => {
                ProviderError::permanent(ErrorCode::InvalidInput, e.to_string())
            }
            e @ ClusterError::Vanished { .. } => {
                ProviderError::retryable(ErrorCode::Conflict, e.to_string())
            }
        }
    }
}

/// Ensures the network and the load balancer exist; `ready` once the load balancer is active.
/// With `controlPlaneEndpoint: none`, ensures the network only and is `ready` without an
/// endpoint once it exists.
///
/// # Errors
///
/// [`ClusterError`]: a failed request, unknown configured zones, a resource that vanished.
pub fn reconcile(
    client: &Client<'_>,
    ctx: &Context<SimInfraConfig>,
) -> Result<ClusterState, ClusterError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    let network = ensure(
        "network",
        &cluster,
        || find_network(client, &cluster),
        || {
            let token = naming::network_token(ctx.idempotency_key());
            let name = naming::network_name(&cluster);
            let body = CreateNetwork {
                client_token: Some(token),
                cluster: cluster.clone(),
                name,
            };
            client.post("/v1/networks", &body)
        },
    )?;
    let network_ready = Condition::new(
        "NetworkReady",
        ConditionStatus::True,
        "NetworkCreated",
        format!("network {}", network.id),
    );
    if ctx.config.control_plane_endpoint == ControlPlaneEndpoint::None {
        let zones: ZoneList = client.get("/v1/zones")?;
        let failure_domains = failure_domains(&zones.zones, &ctx.config.zones)?;
        return Ok(ready_without_endpoint(failure_domains, network_ready));
    }
    let load_balancer = ensure(
        "load balancer",
        &cluster,
        || find_load_balancer(client, &cluster),
        || {
            let token = naming::load_balancer_token(ctx.idempotency_key());
            let name = naming::load_balancer_name(&cluster);
            let body = CreateLoadBalancer {
                client_token: Some(token),
                cluster: cluster.clone(),
                name,
                port: None,
            };
            client.post("/v1/load-balancers", &body)
        },
    )?;
    if load_balancer.state != LoadBalancerState::Active {
        return Ok(ClusterState::InProgress(waiting_for(
            &load_balancer,
            network_ready,
        )));
    }
    let zones: ZoneList = client.get("/v1/zones")?;
    let failure_domains = failure_domains(&zones.zones, &ctx.config.zones)?;
    Ok(ClusterState::Ready(ClusterInfrastructure {
        control_plane_endpoint: Some(Endpoint {
            host: load_balancer.endpoint.host.clone(),
            port: load_balancer.endpoint.port,
        }),
        failure_domains,
        conditions: vec![
            network_ready,
            Condition::new(
                "LoadBalancerReady",
                ConditionStatus::True,
                "LoadBalancerActive",
                format!(
                    "load balancer {} at {}:{}",
                    load_balancer.id, load_balancer.endpoint.host, load_balancer.endpoint.port
                ),
            ),
        ],
    }))
}

/// Deletes the load balancer, then the network, then the bootstrap registration the cluster's
/// first `kubeadm init` made in simcloud (its token and CA cert hash).
///
/// # Guarantees
///
/// `deleted` once simcloud accepted every delete (it deletes at once, and answers `204` for
/// what is already gone). A network that still holds instances answers `in-progress`: the
/// host calls delete-cluster only after deleting every machine, so they are on their way out.
///
/// # Errors
///
/// [`ClusterError::Client`] when a request fails.
pub fn delete(
    client: &Client<'_>,
    ctx: &Context<SimInfraConfig>,
) -> Result<Deletion, ClusterError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    let in_cluster = query(&[("cluster", &cluster)]);
    let load_balancers: LoadBalancerList =
        client.get(&format!("/v1/load-balancers{in_cluster}"))?;
    for lb in &load_balancers.load_balancers {
        client.delete(&format!("/v1/load-balancers/{}", lb.id))?;
        log::info(
            "load balancer deleted",
            &[("cluster", &cluster), ("loadBalancer", &lb.id)],
        );
    }
    let networks: NetworkList = client.get(&format!("/v1/networks{in_cluster}"))?;
    for network in &networks.networks {
        match client.delete(&format!("/v1/networks/{}", network.id)) {
            Ok(()) => log::info(
                "network deleted",
                &[("cluster", &cluster), ("network", &network.id)],
            ),
            Err(e) if e.is_api(409, codes::CONFLICT) => {
                let detail = e.api_message().unwrap_or_default().to_owned();
                return Ok(Deletion::InProgress(
                    InProgress::new(
                        "WaitingForInstances",
                        format!("network {} is not empty yet: {detail}", network.id),
                    )
                    .requeue_after(NETWORK_IN_USE_REQUEUE),
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
    client.delete(&format!("/v1/clusters/{cluster}/bootstrap"))?;
    Ok(Deletion::Deleted)
}

/// The one `kind` of `cluster`: found, else created, else (a create refused because the
/// cluster has one already) found again.
fn ensure<T>(
    kind: &'static str,
    cluster: &str,
    find: impl Fn() -> Result<Option<T>, ClientError>,
    create: impl FnOnce() -> Result<T, ClientError>,
) -> Result<T, ClusterError> {
    if let Some(found) = find()? {
        return Ok(found);
    }
    match create() {
        Ok(created) => {
            log::info(&format!("{kind} created"), &[("cluster", cluster)]);
            Ok(created)
        }
        Err(e) if e.is_api(409, codes::CONFLICT) => find()?.ok_or(ClusterError::Vanished {
            kind,
            cluster: cluster.to_owned(),
            source: Box::new(e),
        }),
        Err(e) => Err(e.into()),
    }
}

fn find_network(client: &Client<'_>, cluster: &str) -> Result<Option<Network>, ClientError> {
    let list: NetworkList =
        client.get(&format!("/v1/networks{}", query(&[("cluster", cluster)])))?;
    Ok(list.networks.into_iter().next())
}

fn find_load_balancer(
    client: &Client<'_>,
    cluster: &str,
) -> Result<Option<LoadBalancer>, ClientError> {
    let list: LoadBalancerList = client.get(&format!(
        "/v1/load-balancers{}",
        query(&[("cluster", cluster)])
    ))?;
    Ok(list.load_balancers.into_iter().next())
}

/// The answer once the network exists for a cluster whose control plane is not on machines:
/// ready, with no endpoint and the network's condition only.
pub fn ready_without_endpoint(
    failure_domains: Vec<FailureDomain>,
    network_ready: Condition,
) -> ClusterState {
    ClusterState::Ready(ClusterInfrastructure {
        control_plane_endpoint: None,
        failure_domains,
        conditions: vec![network_ready],
    })
}

/// The answer while `load_balancer` is not active.
pub fn waiting_for(load_balancer: &LoadBalancer, network_ready: Condition) -> InProgress {
    let state = match load_balancer.state {
        LoadBalancerState::Provisioning => "provisioning",
        LoadBalancerState::Active => "active",
    };
    let message = format!("load balancer {} is {state}", load_balancer.id);
    InProgress::new("WaitingForLoadBalancer", message.clone())
        .requeue_after(LOAD_BALANCER_REQUEUE)
        .with_condition(network_ready)
        .with_condition(Condition::new(
            "LoadBalancerReady",
            ConditionStatus::False,
            "LoadBalancerProvisioning",
            message,
        ))
}

/// The failure domains: simcloud's `available` zones in its order, only those in `wanted`
/// unless `wanted` is empty; control-plane machines may go in each.
///
/// # Errors
///
/// [`ClusterError::UnknownZones`] when `wanted` names a zone simcloud does not have.
pub fn failure_domains(
    available: &[String],
    wanted: &[String],
) -> Result<Vec<FailureDomain>, ClusterError> {
    let missing: Vec<String> = wanted
        .iter()
        .filter(|zone| !available.contains(zone))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(ClusterError::UnknownZones {
            missing,
            available: available.to_vec(),
        });
    }
    Ok(available
        .iter()
        .filter(|zone| wanted.is_empty() || wanted.contains(zone))
        .map(|zone| FailureDomain {
            name: zone.clone(),
            control_plane: true,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api;

    fn zones(names: &[&str]) -> Vec<String> {
        names.iter().map(|z| (*z).to_owned()).collect()
    }

    fn names(domains: &[FailureDomain]) -> Vec<&str> {
        domains.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn every_zone_when_none_is_configured() {
        let domains = failure_domains(&zones(&["a", "b", "c"]), &[]).unwrap_or_default();
        assert_eq!(names(&domains), ["a", "b", "c"]);
        assert!(domains.iter().all(|d| d.control_plane));
    }

    #[test]
    fn configured_zones_filter_in_simclouds_order() {
        let domains =
            failure_domains(&zones(&["a", "b", "c"]), &zones(&["c", "a"])).unwrap_or_default();
        assert_eq!(names(&domains), ["a", "c"]);
    }

    #[test]
    fn unknown_configured_zones_are_bad_input() {
        let Err(e) = failure_domains(&zones(&["a", "b"]), &zones(&["a", "x"])) else {
            panic!("unknown zone accepted");
        };
        let e = ProviderError::from(e);
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
        assert_eq!(
            e.message,
            "config `/zones`: simcloud has no zone `x`; its zones are `a`, `b`"
        );
    }

    #[test]
    fn a_provisioning_load_balancer_is_waited_for() {
        let lb = LoadBalancer {
            id: "lb-1".into(),
            client_token: None,
            cluster: "c1".into(),
            name: "c1-lb".into(),
            endpoint: api::Endpoint {
                host: "lb-1.sim".into(),
                port: 6443,
            },
            state: LoadBalancerState::Provisioning,
            created_at: 1,
        };
        let ready = Condition::new("NetworkReady", ConditionStatus::True, "NetworkCreated", "");
        let p = waiting_for(&lb, ready);
        assert_eq!(p.reason, "WaitingForLoadBalancer");
        assert_eq!(p.message, "load balancer lb-1 is provisioning");
        assert_eq!(p.requeue_after_ms, 2000);
        assert_eq!(p.conditions.len(), 2);
        assert_eq!(p.conditions[1].status, ConditionStatus::False);
    }

    #[test]
    fn without_a_load_balancer_the_cluster_is_ready_with_no_endpoint() {
        let ready = Condition::new("NetworkReady", ConditionStatus::True, "NetworkCreated", "");
        let domains = failure_domains(&zones(&["a", "b"]), &[]).unwrap_or_default();
        let ClusterState::Ready(infra) = ready_without_endpoint(domains, ready) else {
            panic!("not ready");
        };
        assert_eq!(infra.control_plane_endpoint, None);
        assert_eq!(names(&infra.failure_domains), ["a", "b"]);
        let types: Vec<&str> = infra.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["NetworkReady"]);
    }

    #[test]
    fn a_vanished_resource_is_a_retryable_conflict() {
        let e = ProviderError::from(ClusterError::Vanished {
            kind: "network",
            cluster: "c1".into(),
            source: Box::new(ClientError::NoTimeLeft {
                request: "POST /v1/networks".into(),
            }),
        });
        assert_eq!((e.code, e.retryable), (ErrorCode::Conflict, true));
    }
}
