//! The entry point: a Cluster and its ClusterClass in, the desired state (or every error) out.

use capw_api::{Cluster, ClusterClass};
use serde_json::json;

use crate::checks::{
    MAX_CONTROL_PLANE_REPLICAS, check_class_ref, check_failures_tolerated, check_replicas,
    check_version,
};
use crate::configs::{ProviderSchemas, check_configs};
use crate::desired::DesiredState;
use crate::error::{Errors, TopologyErrors};
use crate::patches::{Patcher, check_operations, check_selectors};
use crate::shape::machine_shape;
use crate::stamp::Stamper;
use crate::variables::VariableCatalog;

/// Computes what `cluster` should look like, given its `class` and the config schemas of the
/// providers that have published one.
///
/// # Guarantees
///
/// - Pure: no I/O, no clock; the inputs are only read. The same inputs give the same output.
/// - Variables: each value the Cluster sets must be declared by the class and match its
///   OpenAPI v3 schema after structural defaulting; required ones must be set; absent optional
///   ones take their schema's top-level `default`. Per-pool overrides are checked the same way
///   and take precedence for that pool's configs.
/// - Patches apply in order; values come from the resolved variables, plus `builtin`
///   (`builtin/cluster/{name,namespace}`, `builtin/cluster/topology/{version,class}`,
///   `builtin/controlPlane/{replicas,version}`, and for worker targets
///   `builtin/machineDeployment/{name,class,replicas}`). See [`crate::value_from`] for unset
///   variables.
/// - Replicas default to 1; control planes take 1..=[`MAX_CONTROL_PLANE_REPLICAS`], pools
///   0..=[`crate::MAX_POOL_REPLICAS`].
/// - Every resulting config whose provider is in `schemas` matches that schema.
///
/// # Errors
///
/// [`TopologyErrors`] with every problem found (not only the first), each naming the object
/// and the field path at fault. No partial state is returned.
pub fn compute_desired_state(
    cluster: &Cluster,
    class: &ClusterClass,
    schemas: &ProviderSchemas,
) -> Result<DesiredState, TopologyErrors> {
    let mut errors = Errors::default();
    check_class_ref(cluster, class, &mut errors);
    let topology = &cluster.spec.topology;
    let spec = &class.spec;
    let version =
        check_version(&topology.version, "spec.topology.version", &mut errors).unwrap_or_default();
    let replicas_path = "spec.topology.controlPlane.replicas";
    let failures_tolerated =
        check_failures_tolerated(&topology.control_plane, replicas_path, &mut errors);
    // A count the Cluster does not give is 1 on machines; a control plane a service runs (no
    // machine infrastructure in the class) or one asked by failuresTolerated leaves it to the
    // provider (0).
    let on_machines = spec.control_plane.machine_infrastructure.is_some();
    let cp_replicas = match topology.control_plane.replicas {
        None if failures_tolerated.is_some() || !on_machines => 0,
        given => check_replicas(
            given,
            1..=MAX_CONTROL_PLANE_REPLICAS,
            replicas_path,
            &mut errors,
        ),
    };
    let catalog = VariableCatalog::compile(&spec.variables, &mut errors);
    let variables = catalog.resolve_cluster(&topology.variables, &mut errors);
    check_selectors(spec, &mut errors);

    let builtin = json!({
        "cluster": {
            "name": cluster.metadata.name,
            "namespace": cluster.metadata.namespace,
            "topology": {"version": version, "class": topology.class_ref.name},
        },
        "controlPlane": {"replicas": cp_replicas, "version": version},
    });
    let patcher = Patcher {
        patches: &spec.patches,
        catalog: &catalog,
    };
    let mut stamper = Stamper {
        spec,
        patcher,
        builtin,
        version,
        errors,
    };
    let scope = stamper.scope(variables.clone(), None);
    let infrastructure = stamper.infrastructure(&scope);
    let mut control_plane = stamper.control_plane(cp_replicas, &topology.control_plane, &scope);
    control_plane.failures_tolerated = failures_tolerated;
    let mds = &topology.workers.machine_deployments;
    let pools = (mds.iter().enumerate())
        .filter_map(|(i, md)| stamper.pool(i, md, &mds[..i], &variables))
        .collect();
    let hooks = stamper.hooks();
    let mut errors = stamper.errors;
    let mut state = DesiredState {
        infrastructure,
        control_plane,
        pools,
        hooks,
        variables,
    };
    check_configs(state.provider_configs(), schemas, &mut errors);
    shape_machines(&mut state, schemas);
    errors.into_result(state)
}

/// Records what shapes the machines of each pool and of a machine-based control plane.
fn shape_machines(state: &mut DesiredState, schemas: &ProviderSchemas) {
    let cp = &mut state.control_plane;
    if let Some(infrastructure) = &cp.machine_infrastructure {
        cp.machine_shape = Some(machine_shape(
            infrastructure,
            cp.bootstrap.as_ref(),
            None,
            schemas,
        ));
    }
    for pool in &mut state.pools {
        pool.shape = machine_shape(
            &pool.infrastructure,
            Some(&pool.bootstrap),
            pool.failure_domain.as_deref(),
            schemas,
        );
    }
}

/// Checks what can be wrong with `class` before any Cluster uses it: its variable
/// declarations (names, OpenAPI schemas), its patches' selectors and operations (values,
/// variables they read, JSON pointers). A class that passes may still fail for a Cluster
/// (a patch whose parent path the config lacks, a config its provider refuses):
/// [`compute_desired_state`] finds those.
///
/// # Errors
///
/// [`TopologyErrors`] with every problem found, each with the path of its field.
pub fn check_class(class: &ClusterClass) -> Result<(), TopologyErrors> {
    let mut errors = Errors::default();
    let catalog = VariableCatalog::compile(&class.spec.variables, &mut errors);
    check_selectors(&class.spec, &mut errors);
    check_operations(&class.spec, &catalog, &mut errors);
    errors.into_result(())
}
