//! How capw's identities become simcloud names, client tokens and tags.
//!
//! Everything here is derived from the call alone, so every retry of a call, on any host
//! replica, computes the same names and tokens: that is what makes creates idempotent.

use capw_sdk::types::ClusterRef;

/// Tag holding the simcloud cluster name an instance was created for.
pub const TAG_CLUSTER: &str = "capw.dev/cluster";
/// Tag holding the name of the Machine an instance was created for.
pub const TAG_MACHINE: &str = "capw.dev/machine";
/// Tag holding the pool of the Machine (`control-plane` or a worker pool's name).
pub const TAG_POOL: &str = "capw.dev/pool";

/// The namespace whose clusters keep their plain name in simcloud.
const DEFAULT_NAMESPACE: &str = "default";

/// The name simcloud knows the cluster by: the Cluster's name in the `default` namespace
/// (always the case in embedded mode), `<namespace>.<name>` elsewhere.
///
/// # Caveats
///
/// Clusters of the same name in different namespaces get different simcloud names, since a
/// Kubernetes namespace never contains a `.`. A cluster in `default` whose own name has the
/// form `<namespace>.<name>` would share its simcloud name with that cluster: avoid such
/// names.
pub fn sim_cluster(cluster: &ClusterRef) -> String {
    if cluster.namespace.is_empty() || cluster.namespace == DEFAULT_NAMESPACE {
        cluster.name.clone()
    } else {
        format!("{}.{}", cluster.namespace, cluster.name)
    }
}

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
    use capw_sdk::testing::cluster;

    use super::*;

    #[test]
    fn default_namespace_keeps_the_plain_name() {
        assert_eq!(sim_cluster(&cluster("default", "c1")), "c1");
        assert_eq!(sim_cluster(&cluster("", "c1")), "c1");
        assert_eq!(sim_cluster(&cluster("team-a", "c1")), "team-a.c1");
        assert_ne!(
            sim_cluster(&cluster("team-a", "c1")),
            sim_cluster(&cluster("team-b", "c1"))
        );
    }

    #[test]
    fn tokens_and_names_are_derived_per_resource() {
        assert_eq!(network_token("k1"), "k1-net");
        assert_eq!(load_balancer_token("k1"), "k1-lb");
        assert_ne!(network_token("k1"), load_balancer_token("k1"));
        assert_eq!(network_name("c1"), "c1-net");
        assert_eq!(load_balancer_name("c1"), "c1-lb");
    }
}
