//! The quickstart's ClusterClass and Clusters: a valid base that fuzz targets vary, so that
//! every input gets past parsing into variables, patches and schemas.

use std::sync::OnceLock;

use capw_api::{Cluster, ClusterClass, Object, parse_manifests};

const CLASS: &str = include_str!("../../../examples/quickstart/10-class.yaml");
const CLUSTERS: &str = include_str!("../../../examples/quickstart/20-clusters.yaml");

/// The providers the quickstart's class names, each one's config schema a target may vary.
pub const PROVIDERS: [&str; 3] = ["sim-infra", "kubeadm-control-plane", "kubeadm-bootstrap"];

struct Base {
    class: ClusterClass,
    clusters: Vec<Cluster>,
}

fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let class = match parse_manifests(CLASS).as_deref() {
            Ok([Object::ClusterClass(class)]) => class.clone(),
            other => panic!("examples/quickstart/10-class.yaml: one ClusterClass, got {other:?}"),
        };
        let clusters = match parse_manifests(CLUSTERS) {
            Ok(objects) => objects
                .into_iter()
                .filter_map(|o| match o {
                    Object::Cluster(cluster) => Some(cluster),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            Err(e) => panic!("examples/quickstart/20-clusters.yaml: {e}"),
        };
        assert!(!clusters.is_empty(), "the quickstart has Clusters");
        Base { class, clusters }
    })
}

/// The quickstart's ClusterClass (`sim-kubeadm`).
pub fn class() -> ClusterClass {
    base().class.clone()
}

/// The quickstart's Clusters (`alpha`, `beta`).
pub fn clusters() -> &'static [Cluster] {
    &base().clusters
}
