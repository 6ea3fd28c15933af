//! How capw's identities become simcloud names, client tokens and tags. The cluster's simcloud
//! name is shared with sim-managed-control-plane ([`capw_sim_client::naming`]).
//!
//! Everything here is derived from the call alone, so every retry of a call, on any host
//! replica, computes the same names and tokens: that is what makes creates idempotent.

pub use capw_sim_client::naming::sim_cluster;

/// Tag holding the simcloud cluster name an instance was created for.
pub const TAG_CLUSTER: &str = "capw.dev/cluster";
/// Tag holding the name of the Machine an instance was created for.
pub const TAG_MACHINE: &str = "capw.dev/machine";
/// Tag holding the pool of the Machine (`control-plane` or a worker pool's name).
pub const TAG_POOL: &str = "capw.dev/pool";

/// Client token of the cluster's network, from the reconcile-cluster idempotency key.
pub fn network_token(idempotency_key: &str) -> String {
    format!("{idempotency_key}-net")
}

/// Client token of the cluster's load balancer, from the reconcile-cluster idempotency key.
pub fn load_balancer_token(idempotency_key: &str) -> String {
    format!("{idempotency_key}-lb")
}

/// Name of the cluster's network in simcloud.
pub fn network_name(sim_cluster: &str) -> String {
    format!("{sim_cluster}-net")
}

/// Name of the cluster's load balancer in simcloud.
pub fn load_balancer_name(sim_cluster: &str) -> String {
    format!("{sim_cluster}-lb")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_names_are_derived_per_resource() {
        assert_eq!(network_token("k1"), "k1-net");
        assert_eq!(load_balancer_token("k1"), "k1-lb");
        assert_ne!(network_token("k1"), load_balancer_token("k1"));
        assert_eq!(network_name("c1"), "c1-net");
        assert_eq!(load_balancer_name("c1"), "c1-lb");
    }
}
