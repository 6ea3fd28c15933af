//! How capw's identities become simcloud names.
//!
//! The simcloud cluster name is sim-infra's (`naming::sim_cluster` there), so that the workers
//! sim-infra creates for the cluster carry the bootstrap registration this control plane's
//! service makes for the same name.

use capw_sdk::types::ClusterRef;

/// The namespace whose clusters keep their plain name in simcloud.
const DEFAULT_NAMESPACE: &str = "default";

/// The name simcloud knows the cluster by: the Cluster's name in the `default` namespace
/// (always the case in embedded mode), `<namespace>.<name>` elsewhere. The managed control
/// plane gets it as its `cluster` and as its `name`.
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
    fn names_match_sim_infras() {
        assert_eq!(sim_cluster(&cluster("default", "c1")), "c1");
        assert_eq!(sim_cluster(&cluster("", "c1")), "c1");
        assert_eq!(sim_cluster(&cluster("team-a", "c1")), "team-a.c1");
    }
}
