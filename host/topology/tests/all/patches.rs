//! Patches: order, selection, values from variables and templates, failures.

use capw_api::ClusterClass;
use capw_topology::{ProviderSchemas, Subject, TopologyErrorKind as Kind, compute_desired_state};
use serde_json::{Value, json};

use crate::fixtures::{assert_error, class, cluster, errors};

fn patched(definitions: Value) -> ClusterClass {
    class(json!({
        "variables": [
            {"name": "region", "schema": {"openAPIV3Schema": {"type": "string"}}},
            {"name": "size", "schema": {"openAPIV3Schema": {"type": "string", "default": "m"}}},
        ],
        "workers": {"machineDeployments": [
            {"class": "w", "infrastructure": {"config": {"size": "s"}}, "bootstrap": {"provider": "boot", "config": {}}},
            {"class": "v", "infrastructure": {"config": {"size": "s"}}, "bootstrap": {"provider": "boot", "config": {}}},
        ]},
        "patches": [{"name": "p", "definitions": definitions}],
    }))
}

fn two_pools(extra: Value) -> capw_api::Cluster {
    let mut topology = json!({"workers": {"machineDeployments": [
        {"class": "w", "name": "pw", "variables": {"overrides": [{"name": "size", "value": "xl"}]}},
        {"class": "v", "name": "pv", "replicas": 4},
    ]}});
    if let (Some(t), Value::Object(e)) = (topology.as_object_mut(), extra) {
        t.extend(e);
    }
    cluster(topology)
}

#[test]
fn worker_patches_follow_class_selection_and_overrides() {
    let class = patched(json!([
        {"selector": {"target": "workerInfrastructure", "machineDeploymentClasses": ["w"]},
         "jsonPatches": [{"op": "replace", "path": "/size", "valueFrom": {"variable": "size"}}]},
        {"selector": {"target": "workerBootstrap"},
         "jsonPatches": [{"op": "add", "path": "/name", "valueFrom": {"template": "{{builtin/cluster/name}}-{{ builtin/machineDeployment/name }}x{{builtin/machineDeployment/replicas}}"}}]},
    ]));
    let state = compute_desired_state(&two_pools(json!({})), &class, &ProviderSchemas::new())
        .expect("valid");
    assert_eq!(state.pools[0].infrastructure.config["size"], "xl");
    assert_eq!(state.pools[1].infrastructure.config["size"], "s");
    assert_eq!(state.pools[0].bootstrap.config["name"], "c1-pwx1");
    assert_eq!(state.pools[1].bootstrap.config["name"], "c1-pvx4");
}

#[test]
fn patches_apply_in_order_with_pointers_into_variables() {
    let class = patched(json!([
        {"selector": {"target": "infrastructure"}, "jsonPatches": [
            {"op": "add", "path": "/net/zones", "value": []},
            {"op": "add", "path": "/net/zones/-", "valueFrom": {"variable": "region"}},
            {"op": "add", "path": "/net/k8s", "valueFrom": {"variable": "builtin/controlPlane/version"}},
            {"op": "remove", "path": "/region"},
        ]},
    ]));
    let cluster = two_pools(json!({"variables": [{"name": "region", "value": "eu"}]}));
    let state = compute_desired_state(&cluster, &class, &ProviderSchemas::new()).expect("valid");
    assert_eq!(
        Value::Object(state.infrastructure.config),
        json!({"net": {"zones": ["eu"], "k8s": "v1.34.1"}})
    );
}

#[test]
fn unset_optional_variable_skips_the_operation() {
    let class = patched(json!([
        {"selector": {"target": "infrastructure"}, "jsonPatches": [
            {"op": "replace", "path": "/region", "valueFrom": {"variable": "region"}},
            {"op": "add", "path": "/label", "valueFrom": {"template": "r-{{region}}"}},
            {"op": "add", "path": "/sized", "valueFrom": {"variable": "size"}},
        ]},
    ]));
    let state = compute_desired_state(&two_pools(json!({})), &class, &ProviderSchemas::new())
        .expect("valid");
    assert_eq!(
        Value::Object(state.infrastructure.config),
        json!({"region": "x", "net": {}, "sized": "m"})
    );
}

#[test]
fn failing_and_malformed_operations_are_named() {
    let class = patched(json!([
        {"selector": {"target": "controlPlane"}, "jsonPatches": [
            {"op": "replace", "path": "/missing", "value": 1},
            {"op": "remove", "path": "/gone"},
            {"op": "add", "path": "/a/b", "value": 1},
            {"op": "add", "path": "/x", "valueFrom": {"variable": "nosuch"}},
            {"op": "add", "path": "/y", "value": 1, "valueFrom": {"variable": "size"}},
            {"op": "remove", "path": "/z", "value": 1},
            {"op": "add", "path": "no-slash", "value": 1},
        ]},
        {"selector": {"target": "controlPlaneBootstrap"}, "jsonPatches": []},
        {"selector": {"target": "workerBootstrap", "machineDeploymentClasses": ["nope"]}, "jsonPatches": []},
    ]));
    let found = errors(&two_pools(json!({})), &class, &ProviderSchemas::new());
    let p = |k: usize| format!("spec.patches[0].definitions[0].jsonPatches[{k}]");
    let s = Subject::ClusterClass;
    assert_error(&found, s, Kind::PatchFailed, &p(0), "replace /missing");
    assert_error(&found, s, Kind::PatchFailed, &p(1), "remove /gone");
    assert_error(&found, s, Kind::PatchFailed, &p(2), "add /a/b");
    assert_error(
        &found,
        s,
        Kind::InvalidPatch,
        &p(3),
        "\"nosuch\" is not declared",
    );
    assert_error(&found, s, Kind::InvalidPatch, &p(4), "exactly one");
    assert_error(&found, s, Kind::InvalidPatch, &p(5), "takes no value");
    assert_error(&found, s, Kind::InvalidPatch, &p(6), "no-slash");
    let sel = "spec.patches[0].definitions[1].selector.target";
    assert_error(
        &found,
        s,
        Kind::InvalidPatch,
        sel,
        "spec.controlPlane.bootstrap",
    );
    let sel = "spec.patches[0].definitions[2].selector.machineDeploymentClasses[0]";
    assert_error(&found, s, Kind::InvalidPatch, sel, "\"nope\"");
    assert_eq!(found.len(), 9, "{found:#?}");
}

#[test]
fn class_errors_met_per_pool_are_reported_once() {
    let class = patched(json!([
        {"selector": {"target": "workerInfrastructure"}, "jsonPatches": [
            {"op": "replace", "path": "/nope", "value": 1},
        ]},
    ]));
    let found = errors(&two_pools(json!({})), &class, &ProviderSchemas::new());
    assert_eq!(found.len(), 1, "{found:#?}");
}

#[test]
fn a_class_alone_is_checked_for_what_needs_no_cluster() {
    let class = patched(json!([
        {"selector": {"target": "infrastructure"}, "jsonPatches": [
            {"op": "add", "path": "net/zones", "value": []},
            {"op": "replace", "path": "/size", "valueFrom": {"variable": "colour"}},
            {"op": "remove", "path": "/region", "value": 1},
            {"op": "add", "path": "/ok", "valueFrom": {"variable": "region"}},
        ]},
        {"selector": {"target": "controlPlane", "machineDeploymentClasses": ["w"]},
         "jsonPatches": []},
    ]));
    let found = capw_topology::check_class(&class).expect_err("refused");
    let paths: Vec<&str> = found.errors().iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "spec.patches[0].definitions[1].selector.machineDeploymentClasses",
            "spec.patches[0].definitions[0].jsonPatches[0]",
            "spec.patches[0].definitions[0].jsonPatches[1]",
            "spec.patches[0].definitions[0].jsonPatches[2]",
        ],
        "{found}"
    );
    assert!(found.errors()[1].message.contains("net/zones"), "{found}");
    assert!(
        found.errors()[2]
            .message
            .contains("\"colour\" is not declared"),
        "{found}"
    );
    assert!(
        found
            .errors()
            .iter()
            .all(|e| e.subject == Subject::ClusterClass),
        "{found}"
    );
    // The same class without its mistakes passes.
    let fine = patched(json!([
        {"selector": {"target": "infrastructure"}, "jsonPatches": [
            {"op": "add", "path": "/ok", "valueFrom": {"variable": "region"}},
        ]},
    ]));
    capw_topology::check_class(&fine).expect("admitted");
}
