//! Variables: declaration, defaults, validation, overrides.

use capw_topology::{ProviderSchemas, Subject, TopologyErrorKind as Kind, compute_desired_state};
use serde_json::{Value, json};

use crate::fixtures::{assert_error, class, cluster, errors};

fn net_class() -> capw_api::ClusterClass {
    class(json!({"variables": [
        {"name": "region", "required": true, "schema": {"openAPIV3Schema": {"type": "string"}}},
        {"name": "net", "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {
                "cidr": {"type": "string", "pattern": "^[0-9.]+/[0-9]+$"},
                "mtu": {"type": "integer", "default": 1500, "maximum": 9000}
            }
        }}},
        {"name": "size", "schema": {"openAPIV3Schema": {"type": "string", "default": "s"}}},
    ]}))
}

#[test]
fn structural_defaults_fill_missing_fields() {
    let cluster = cluster(json!({"variables": [
        {"name": "region", "value": "eu"}, {"name": "net", "value": {"cidr": "10.0.0.0/8"}},
    ]}));
    let state =
        compute_desired_state(&cluster, &net_class(), &ProviderSchemas::new()).expect("valid");
    assert_eq!(
        state.variables["net"],
        json!({"cidr": "10.0.0.0/8", "mtu": 1500})
    );
    assert_eq!(state.variables["size"], "s");
}

#[test]
fn value_errors_carry_the_path_inside_the_value() {
    let cluster = cluster(json!({"variables": [
        {"name": "region", "value": "eu"}, {"name": "net", "value": {"cidr": "x", "mtu": 10000}},
    ]}));
    let found = errors(&cluster, &net_class(), &ProviderSchemas::new());
    let base = "spec.topology.variables[1].value";
    assert_error(
        &found,
        Subject::Cluster,
        Kind::InvalidVariableValue,
        &format!("{base}.cidr"),
        "\"x\" does not match",
    );
    assert_error(
        &found,
        Subject::Cluster,
        Kind::InvalidVariableValue,
        &format!("{base}.mtu"),
        "maximum",
    );
    assert_eq!(found.len(), 2);
}

#[test]
fn unknown_duplicate_and_missing_required() {
    let cluster = cluster(json!({"variables": [
        {"name": "colour", "value": 1}, {"name": "size", "value": "m"}, {"name": "size", "value": "l"},
    ]}));
    let found = errors(&cluster, &net_class(), &ProviderSchemas::new());
    let vars = "spec.topology.variables";
    assert_error(
        &found,
        Subject::Cluster,
        Kind::UnknownVariable,
        &format!("{vars}[0].name"),
        "\"colour\" is not declared",
    );
    assert_error(
        &found,
        Subject::Cluster,
        Kind::UnknownVariable,
        &format!("{vars}[2].name"),
        "set twice",
    );
    assert_error(
        &found,
        Subject::Cluster,
        Kind::MissingVariable,
        vars,
        "\"region\"",
    );
}

#[test]
fn pool_overrides_are_checked_and_take_precedence() {
    let pools = |size: Value| {
        json!({"variables": [{"name": "region", "value": "eu"}], "workers": {"machineDeployments": [
            {"class": "w", "name": "a"},
            {"class": "w", "name": "b", "variables": {"overrides": [{"name": "size", "value": size}]}},
        ]}})
    };
    let state = compute_desired_state(
        &cluster(pools(json!("xl"))),
        &net_class(),
        &ProviderSchemas::new(),
    )
    .expect("valid");
    assert_eq!(
        (
            state.pools[0].variables["size"].as_str(),
            state.pools[1].variables["size"].as_str()
        ),
        (Some("s"), Some("xl"))
    );
    assert_eq!(state.variables["size"], "s");
    let found = errors(
        &cluster(pools(json!(3))),
        &net_class(),
        &ProviderSchemas::new(),
    );
    let path = "spec.topology.workers.machineDeployments[1].variables.overrides[0].value";
    assert_error(
        &found,
        Subject::Cluster,
        Kind::InvalidVariableValue,
        path,
        "not of type",
    );
}

#[test]
fn bad_declarations_are_class_errors() {
    let class = class(json!({"variables": [
        {"name": "builtin", "schema": {"openAPIV3Schema": {}}},
        {"name": "a", "schema": {"openAPIV3Schema": {"type": "nonsense"}}},
        {"name": "b", "schema": {"openAPIV3Schema": {"type": "integer", "default": "one"}}},
        {"name": "b", "schema": {"openAPIV3Schema": {}}},
    ]}));
    let found = errors(&cluster(json!({})), &class, &ProviderSchemas::new());
    let s = Subject::ClusterClass;
    assert_error(
        &found,
        s,
        Kind::InvalidVariableDeclaration,
        "spec.variables[0].name",
        "reserved",
    );
    assert_error(
        &found,
        s,
        Kind::InvalidVariableDeclaration,
        "spec.variables[1].schema.openAPIV3Schema",
        "invalid schema",
    );
    assert_error(
        &found,
        s,
        Kind::InvalidVariableDeclaration,
        "spec.variables[2].schema.openAPIV3Schema.default",
        "not of type",
    );
    assert_error(
        &found,
        s,
        Kind::InvalidVariableDeclaration,
        "spec.variables[3].name",
        "declared twice",
    );
}
