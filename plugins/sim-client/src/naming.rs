//! The simcloud name of a cluster, the one name every simcloud provider must agree on: the
//! workers sim-infra creates for a cluster carry the bootstrap registration that
//! sim-managed-control-plane's service makes for the same name.
//!
//! It is derived from the call alone, so every retry of a call, on any host replica, computes
//! the same name.

use capw_sdk::types::ClusterRef;

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
}
