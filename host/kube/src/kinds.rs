//! The kinds the executor stores, as API resources of the Kubernetes API: derived from their
//! Rust types (group, version, kind, plural and scope), with what a type does not say as data.

use std::sync::LazyLock;

use capw_api::{Cluster, ClusterClass, ClusterInfrastructure, Machine, WasmProvider};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Resource;
use kube::core::{ApiResource, ClusterResourceScope, NamespaceResourceScope};

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

/// Whether a scope of the Kubernetes types is a namespace's.
trait Scope {
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// What the store needs to know of a kind beyond its type.
#[derive(Clone, Copy)]
struct Flags {
    status_subresource: bool,
    owned_by_cluster: bool,
}

/// capw's own kinds: their CRDs declare the status subresource.
const CAPW: Flags = Flags {
    status_subresource: true,
    owned_by_cluster: false,
};
/// capw's kinds the executor makes for one cluster.
const CAPW_OWNED: Flags = Flags {
    owned_by_cluster: true,
    ..CAPW
};
/// A core kind the executor makes for one cluster (its secrets, its kubeconfig).
const CORE_OWNED: Flags = Flags {
    status_subresource: false,
    owned_by_cluster: true,
};
/// A core kind the executor only reads (provider components in ConfigMaps).
const CORE_READ: Flags = Flags {
    status_subresource: false,
    owned_by_cluster: false,
};

fn of<K>(flags: Flags) -> Kind
where
    K: Resource<DynamicType = ()>,
    K::Scope: Scope,
{
    Kind {
        resource: ApiResource::erase::<K>(&()),
        namespaced: <K::Scope as Scope>::NAMESPACED,
        status_subresource: flags.status_subresource,
        owned_by_cluster: flags.owned_by_cluster,
    }
}

/// Every kind this store serves.
static KINDS: LazyLock<[Kind; 7]> = LazyLock::new(|| {
    [
        of::<WasmProvider>(CAPW),
        of::<ClusterClass>(CAPW),
        of::<Cluster>(CAPW),
        of::<Machine>(CAPW_OWNED),
        of::<ClusterInfrastructure>(CAPW_OWNED),
        of::<Secret>(CORE_OWNED),
        of::<ConfigMap>(CORE_READ),
    ]
});

/// The mapping of `kind`, or `None` for a kind this store does not serve.
pub fn kind(kind: &str) -> Option<Kind> {
    KINDS.iter().find(|k| k.resource.kind == kind).cloned()
}

/// The mapping of the kind of type `K`, or `None` for a type this store does not serve.
pub fn kind_of<K: Resource<DynamicType = ()>>() -> Option<Kind> {
    kind(&K::kind(&()))
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

    /// The table says of capw's kinds what their CRDs say: group, version, plural, scope and
    /// the status subresource.
    #[test]
    fn capws_kinds_are_their_crds() {
        for crd in capw_api::crds() {
            let name = &crd.spec.names.kind;
            let k = kind(name).unwrap_or_else(|| panic!("{name} is not served"));
            let version = &crd.spec.versions[0];
            assert_eq!(k.resource.group, crd.spec.group, "{name}");
            assert_eq!(k.resource.version, version.name, "{name}");
            assert_eq!(k.resource.plural, crd.spec.names.plural, "{name}");
            assert_eq!(k.namespaced, crd.spec.scope == "Namespaced", "{name}");
            let status = (version.subresources.as_ref()).is_some_and(|s| s.status.is_some());
            assert_eq!(k.status_subresource, status, "{name}");
        }
    }
}
