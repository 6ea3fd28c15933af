//! The checks that hold of every desired state `compute_desired_state` returns, from its
//! documented guarantees.

use capw_api::{Cluster, ClusterClass, ClusterVariable};
use capw_topology::{
    DesiredState, MAX_CONTROL_PLANE_REPLICAS, MAX_POOL_REPLICAS, ProviderSchemas, TopologyErrors,
    compute_desired_state,
};
use serde_json::Value;

/// Computes `cluster`'s desired state and checks it.
///
/// # Panics
///
/// When a guarantee of [`compute_desired_state`] does not hold: the same inputs give another
/// output the second time; an error list is empty; a given variable value was changed by
/// defaulting (only missing properties may be added); replicas are out of their bounds.
pub fn compute_and_check(
    cluster: &Cluster,
    class: &ClusterClass,
    schemas: &ProviderSchemas,
) -> Result<DesiredState, TopologyErrors> {
    let first = compute_desired_state(cluster, class, schemas);
    let second = compute_desired_state(cluster, class, schemas);
    assert_eq!(first, second, "the same inputs gave another desired state");
    match &first {
        Err(errors) => {
            assert!(!errors.0.is_empty(), "an error without any problem in it");
            for error in &errors.0 {
                let _ = error.to_string();
            }
            let _ = errors.to_string();
        }
        Ok(state) => check_state(cluster, state),
    }
    first
}

fn check_state(cluster: &Cluster, state: &DesiredState) {
    let topology = &cluster.spec.topology;
    check_given(&topology.variables, &state.variables, "the Cluster");
    let cp = state.control_plane.replicas;
    assert!(
        (1..=MAX_CONTROL_PLANE_REPLICAS).contains(&cp),
        "control plane replicas {cp}"
    );
    let mds = &topology.workers.machine_deployments;
    assert_eq!(
        state.pools.len(),
        mds.len(),
        "one pool per machine deployment"
    );
    for (md, pool) in mds.iter().zip(&state.pools) {
        assert_eq!(md.name, pool.name, "pools in the Cluster's order");
        assert!(
            pool.replicas <= MAX_POOL_REPLICAS,
            "pool replicas {}",
            pool.replicas
        );
        let overrides = md.variables.as_ref().map(|v| v.overrides.as_slice());
        let overrides = overrides.unwrap_or_default();
        check_given(overrides, &pool.variables, &md.name);
        for (name, value) in &state.variables {
            if !overrides.iter().any(|o| &o.name == name) {
                assert_eq!(
                    pool.variables.get(name),
                    Some(value),
                    "pool {:?} has another value of the Cluster's variable {name:?}",
                    md.name
                );
            }
        }
    }
    for config in state.provider_configs() {
        assert!(!config.provider.is_empty(), "a config without a provider");
    }
}

/// Each given value is in `resolved`, with at most missing properties added.
fn check_given(given: &[ClusterVariable], resolved: &capw_topology::Variables, whose: &str) {
    for variable in given {
        let Some(value) = resolved.get(&variable.name) else {
            panic!(
                "{whose}'s variable {:?} is not in the result",
                variable.name
            );
        };
        assert!(
            extends(&variable.value, value),
            "{whose}'s variable {:?} was changed, not only defaulted: {} became {value}",
            variable.name,
            variable.value,
        );
    }
}

/// Whether `after` is `before` with, at most, object properties added (at any depth).
pub fn extends(before: &Value, after: &Value) -> bool {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => b
            .iter()
            .all(|(key, value)| a.get(key).is_some_and(|new| extends(value, new))),
        (Value::Array(b), Value::Array(a)) => {
            b.len() == a.len() && b.iter().zip(a).all(|(old, new)| extends(old, new))
        }
        _ => before == after,
    }
}
