//! Inputs for the tests: the demo manifest shared with capw-api, and a small class builder.

use capw_api::{Cluster, ClusterClass, Object, parse_manifests};
use capw_topology::{
    ProviderSchemas, Subject, TopologyError, TopologyErrorKind, TopologyErrors,
    compute_desired_state,
};
use serde_json::{Value, json};

/// The demo manifest: sim-infra + kubeadm bootstrap + kubeadm control plane.
const DEMO: &str = include_str!("../../../api/tests/fixtures/demo.yaml");

/// The demo's ClusterClass and Cluster.
pub fn demo() -> (Cluster, ClusterClass) {
    let objects = parse_manifests(DEMO).expect("demo parses");
    let class = objects.iter().find_map(|o| match o {
        Object::ClusterClass(c) => Some(c.clone()),
        _ => None,
    });
    let cluster = objects.iter().find_map(|o| match o {
        Object::Cluster(c) => Some(c.clone()),
        _ => None,
    });
    (cluster.expect("cluster"), class.expect("class"))
}

/// A minimal class `small` (providers `infra`, `cp`, `boot`, worker class `w`), with
/// `spec` merged over it.
pub fn class(spec: Value) -> ClusterClass {
    let mut base = json!({
        "infrastructure": {"provider": "infra", "config": {"region": "x", "net": {}}},
        "controlPlane": {"provider": "cp", "config": {}},
        "workers": {"machineDeployments": [
            {"class": "w", "infrastructure": {"config": {"size": "s"}},
             "bootstrap": {"provider": "boot", "config": {}}}
        ]},
    });
    merge(&mut base, spec);
    let mut class = ClusterClass::new("small", serde_json::from_value(base).expect("class spec"));
    class.metadata.namespace = Some("ns".into());
    class
}

/// A Cluster of class `small` at v1.34.1, with `topology` merged over it.
pub fn cluster(topology: Value) -> Cluster {
    let mut base = json!({"classRef": {"name": "small"}, "version": "v1.34.1"});
    merge(&mut base, topology);
    let spec = serde_json::from_value(json!({"topology": base})).expect("cluster spec");
    let mut cluster = Cluster::new("c1", spec);
    cluster.metadata.namespace = Some("ns".into());
    cluster
}

fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o,
    }
}

/// The errors of a computation that must fail.
pub fn errors(
    cluster: &Cluster,
    class: &ClusterClass,
    schemas: &ProviderSchemas,
) -> Vec<TopologyError> {
    let TopologyErrors(errors) =
        compute_desired_state(cluster, class, schemas).expect_err("must fail");
    errors
}

/// Asserts one error at `path` of `kind`, whose message contains `text`.
pub fn assert_error(
    errors: &[TopologyError],
    subject: Subject,
    kind: TopologyErrorKind,
    path: &str,
    text: &str,
) {
    let found = errors.iter().find(|e| e.path == path);
    let Some(error) = found else {
        panic!("no error at {path}: {errors:#?}")
    };
    assert_eq!((error.subject, error.kind), (subject, kind), "{error}");
    assert!(error.message.contains(text), "{error:?} lacks {text:?}");
}
