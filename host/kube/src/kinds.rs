//! The kinds the executor stores, as API resources of the Kubernetes API.

use kube::core::{ApiResource, GroupVersionKind};

/// Label the executor puts on every object it makes for a cluster; the controller sets the
/// owner reference to that Cluster from it.
pub use capw_api::CLUSTER_LABEL;

/// How one kind of the [`capw_engine::store::ObjectStore`] API maps to the Kubernetes API.
#[derive(Clone, Debug)]
pub struct Kind {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Namespaced (or cluster-scoped).
    pub namespaced: bool,
    /// Writes to `status` go through the status subresource.
    pub status_subresource: bool,
    /// Objects of this kind that carry the cluster label are owned by that Cluster.
    pub owned_by_cluster: bool,
}

/// The mapping of `kind`, or `None` for a kind this store does not serve.
pub fn kind(kind: &str) -> Option<Kind> {
    let capw = |plural: &str, namespaced: bool, owned: bool| Kind {
        resource: ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("capw.dev", "v1alpha1", kind),
            plural,
        ),
        namespaced,
        status_subresource: true,
        owned_by_cluster: owned,
    };
    let core = |plural: &str, owned: bool| Kind {
        resource: ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", kind), plural),
        namespaced: true,
        status_subresource: false,
        owned_by_cluster: owned,
    };
    Some(match kind {
        "WasmProvider" => capw("wasmproviders", false, false),
        "ClusterClass" => capw("clusterclasses", true, false),
        "Cluster" => capw("clusters", true, false),
        "Machine" => capw("machines", true, true),
        "ClusterInfrastructure" => capw("clusterinfrastructures", true, true),
        "Secret" => core("secrets", true),
        "ConfigMap" => core("configmaps", false),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_executor_kind_maps_and_others_do_not() {
        for k in [
            "WasmProvider",
            "ClusterClass",
            "Cluster",
            "Machine",
            "ClusterInfrastructure",
            "Secret",
            "ConfigMap",
        ] {
            let m = kind(k).unwrap_or_else(|| panic!("{k} maps"));
            assert_eq!(m.resource.kind, k);
        }
        assert_eq!(kind("Secret").unwrap().resource.api_version, "v1");
        assert_eq!(kind("Machine").unwrap().resource.plural, "machines");
        assert!(!kind("WasmProvider").unwrap().namespaced);
        assert!(kind("Pod").is_none());
    }
}
