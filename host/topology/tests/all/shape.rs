//! The Cluster's own fields: class reference, version, replicas, pools.

use capw_topology::{ProviderSchemas, Subject::Cluster, TopologyErrorKind as Kind};
use serde_json::json;

use crate::fixtures::{assert_error, class, cluster, errors};

#[test]
fn wrong_class_is_refused() {
    let cluster = cluster(json!({"classRef": {"name": "other"}}));
    let found = errors(&cluster, &class(json!({})), &ProviderSchemas::new());
    assert_error(
        &found,
        Cluster,
        Kind::ClassMismatch,
        "spec.topology.classRef",
        "\"other\"",
    );
}

#[test]
fn every_shape_error_is_reported_at_once() {
    let cluster = cluster(json!({
        "version": "1.34",
        "controlPlane": {"replicas": -1},
        "workers": {"machineDeployments": [
            {"class": "w", "name": "md-0", "replicas": 100000},
            {"class": "nope", "name": "md-0"},
            {"class": "w", "name": "Bad_Name"},
        ]},
    }));
    let found = errors(&cluster, &class(json!({})), &ProviderSchemas::new());
    let base = "spec.topology.workers.machineDeployments";
    assert_error(
        &found,
        Cluster,
        Kind::InvalidVersion,
        "spec.topology.version",
        "v1.34.1",
    );
    assert_error(
        &found,
        Cluster,
        Kind::InvalidReplicas,
        "spec.topology.controlPlane.replicas",
        "-1",
    );
    assert_error(
        &found,
        Cluster,
        Kind::InvalidReplicas,
        &format!("{base}[0].replicas"),
        "100000",
    );
    assert_error(
        &found,
        Cluster,
        Kind::UnknownWorkerClass,
        &format!("{base}[1].class"),
        "\"nope\"",
    );
    assert_error(
        &found,
        Cluster,
        Kind::InvalidPoolName,
        &format!("{base}[1].name"),
        "used twice",
    );
    assert_error(
        &found,
        Cluster,
        Kind::InvalidPoolName,
        &format!("{base}[2].name"),
        "DNS label",
    );
    assert_eq!(found.len(), 6, "{found:#?}");
}

#[test]
fn replicas_default_to_one_on_machines_and_pools_may_be_empty() {
    let cluster = cluster(json!({"workers": {"machineDeployments": [
        {"class": "w", "name": "a"}, {"class": "w", "name": "b", "replicas": 0},
    ]}}));
    let on_machines = class(json!({"controlPlane": {"machineInfrastructure": {"config": {}}}}));
    let state =
        capw_topology::compute_desired_state(&cluster, &on_machines, &ProviderSchemas::new())
            .expect("valid");
    assert_eq!(state.control_plane.replicas, 1);
    assert_eq!(
        state.pools.iter().map(|p| p.replicas).collect::<Vec<_>>(),
        [1, 0]
    );
    // A control plane without machines (a service runs it): no count unless the Cluster
    // gives one; the service decides.
    let state =
        capw_topology::compute_desired_state(&cluster, &class(json!({})), &ProviderSchemas::new())
            .expect("valid");
    assert!(state.control_plane.machine_infrastructure.is_none());
    assert_eq!(state.control_plane.replicas, 0);
    // failuresTolerated instead of a count; never both.
    let asked = crate::fixtures::cluster(json!({"controlPlane": {"failuresTolerated": 1}}));
    let state = capw_topology::compute_desired_state(&asked, &on_machines, &ProviderSchemas::new())
        .expect("valid");
    assert_eq!(state.control_plane.replicas, 0);
    assert_eq!(state.control_plane.failures_tolerated, Some(1));
    let both =
        crate::fixtures::cluster(json!({"controlPlane": {"failuresTolerated": 1, "replicas": 3}}));
    let refused =
        capw_topology::compute_desired_state(&both, &on_machines, &ProviderSchemas::new())
            .expect_err("both refused");
    assert!(
        refused
            .to_string()
            .contains("spec.topology.controlPlane.failuresTolerated"),
        "{refused}"
    );
}

#[test]
fn provider_with_malformed_schema_is_named() {
    let schemas = ProviderSchemas::from([("cp".to_owned(), json!({"type": 12}))]);
    let found = errors(&cluster(json!({})), &class(json!({})), &schemas);
    let subject = capw_topology::Subject::WasmProvider;
    assert_error(
        &found,
        subject,
        Kind::InvalidConfig,
        "status.configSchema",
        "\"cp\"",
    );
}

/// The CRDs' CEL rules repeat the replica limits, so that the API server holds them even with
/// the admission webhook down: they must say the limits this crate checks.
#[test]
fn the_crds_cel_rules_say_the_replica_limits() {
    use capw_topology::{MAX_CONTROL_PLANE_REPLICAS, MAX_POOL_REPLICAS};
    let crds = serde_json::to_string(&capw_api::crds()).unwrap();
    for (rule, message) in [
        (
            format!("self >= 1 && self <= {MAX_CONTROL_PLANE_REPLICAS}"),
            format!("is outside 1..={MAX_CONTROL_PLANE_REPLICAS}"),
        ),
        (
            format!("self >= 0 && self <= {MAX_POOL_REPLICAS}"),
            format!("is outside 0..={MAX_POOL_REPLICAS}"),
        ),
    ] {
        assert!(crds.contains(&format!("\"rule\":\"{rule}\"")), "{rule}");
        assert!(
            crds.contains(&format!("\"message\":\"{message}\"")),
            "{message}"
        );
    }
}
