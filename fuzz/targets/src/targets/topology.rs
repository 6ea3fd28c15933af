//! A Cluster's desired state from the quickstart's ClusterClass and Cluster, with fuzzed
//! variable declarations (OpenAPI v3 schemas with defaults), variable values for the
//! Cluster and its pools, patches (ops, JSON pointers, values, `valueFrom` variables and
//! templates), replicas, versions and provider config schemas.
//!
//! # Checks
//!
//! What `compute_desired_state` guarantees (`capw_fuzz::topology::compute_and_check`): no
//! panic, the same output for the same input, no empty error list, given variable values only
//! defaulted, pools in order with their overrides, replicas in bounds.

use arbitrary::{Result, Unstructured};
use capw_api::{
    Cluster, ClusterClass, ClusterClassPatch, ClusterClassVariable, ClusterVariable, JsonPatch,
    MachineDeploymentClass, MachineDeploymentTopology, PatchDefinition, PatchOp, PatchSelector,
    PatchTarget, PoolVariables, ProviderConfigRef, ValueFrom, VariableSchema,
};
use capw_topology::ProviderSchemas;
use serde_json::Value;

use super::Replayed;
use crate::json::{self, MAX_DEPTH};
use crate::quickstart::{self, PROVIDERS};
use crate::topology::compute_and_check;

/// Runs [`run`] on `bytes`, which it reads as they come.
pub fn replay(bytes: &[u8]) -> Replayed {
    run(bytes);
    Replayed::Ran
}

/// The target: the quickstart's class and a Cluster varied by `data`, their desired state
/// computed and checked.
///
/// # Panics
///
/// When a check of the module's documentation fails.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mut class = quickstart::class();
    let clusters = quickstart::clusters();
    let mut cluster = clusters[u.choose_index(clusters.len()).unwrap_or(0)].clone();
    let mut schemas = ProviderSchemas::new();
    // When the bytes run out mid-way, the input is what was built so far.
    let _ = vary(&mut u, &mut class, &mut cluster, &mut schemas);
    let _ = compute_and_check(&cluster, &class, &schemas);
}

fn vary(
    u: &mut Unstructured<'_>,
    class: &mut ClusterClass,
    cluster: &mut Cluster,
    schemas: &mut ProviderSchemas,
) -> Result<()> {
    vary_declarations(u, class)?;
    vary_values(u, class, cluster)?;
    vary_patches(u, class)?;
    vary_shape(u, class, cluster)?;
    for _ in 0..u.int_in_range(0..=2)? {
        let provider = (*u.choose(&PROVIDERS)?).to_owned();
        let schema = if u.ratio(7, 8)? {
            Value::Object(json::schema(u, MAX_DEPTH)?)
        } else {
            json::value(u, 2)?
        };
        schemas.insert(provider, schema);
    }
    Ok(())
}

/// A variable name: mostly one the class declares, sometimes a word or any text.
fn variable_name(u: &mut Unstructured<'_>, class: &ClusterClass) -> Result<String> {
    let declared = &class.spec.variables;
    if !declared.is_empty() && u.ratio(3, 4)? {
        return Ok(u.choose(declared)?.name.clone());
    }
    json::text(u)
}

fn vary_declarations(u: &mut Unstructured<'_>, class: &mut ClusterClass) -> Result<()> {
    let variables = &mut class.spec.variables;
    if u.ratio(1, 4)? {
        variables.clear();
    }
    for _ in 0..u.int_in_range(0..=3)? {
        let name = if u.ratio(3, 4)? {
            (*u.choose(&["a", "b", "net", "labels"])?).to_owned()
        } else {
            json::text(u)?
        };
        variables.push(ClusterClassVariable {
            name,
            required: u.ratio(1, 4)?,
            schema: VariableSchema {
                open_api_v3_schema: json::schema(u, MAX_DEPTH)?,
            },
        });
    }
    Ok(())
}

fn given(u: &mut Unstructured<'_>, class: &ClusterClass) -> Result<Vec<ClusterVariable>> {
    (0..u.int_in_range(0..=3)?)
        .map(|_| {
            Ok(ClusterVariable {
                name: variable_name(u, class)?,
                value: json::value(u, MAX_DEPTH)?,
            })
        })
        .collect()
}

fn vary_values(
    u: &mut Unstructured<'_>,
    class: &ClusterClass,
    cluster: &mut Cluster,
) -> Result<()> {
    let topology = &mut cluster.spec.topology;
    if u.ratio(1, 2)? {
        topology.variables.clear();
    }
    topology.variables.extend(given(u, class)?);
    for md in &mut topology.workers.machine_deployments {
        if u.ratio(1, 3)? {
            md.variables = Some(PoolVariables {
                overrides: given(u, class)?,
            });
        }
    }
    Ok(())
}

fn vary_patches(u: &mut Unstructured<'_>, class: &mut ClusterClass) -> Result<()> {
    if u.ratio(1, 4)? {
        class.spec.patches.clear();
    }
    for _ in 0..u.int_in_range(0..=3)? {
        let mut definitions = Vec::new();
        for _ in 0..u.int_in_range(1..=2)? {
            let target = *u.choose(&[
                PatchTarget::Infrastructure,
                PatchTarget::ControlPlane,
                PatchTarget::ControlPlaneMachineInfrastructure,
                PatchTarget::ControlPlaneBootstrap,
                PatchTarget::WorkerInfrastructure,
                PatchTarget::WorkerBootstrap,
            ])?;
            let machine_deployment_classes = if u.ratio(1, 4)? {
                Some(vec![json::text(u)?, "default-worker".to_owned()])
            } else {
                None
            };
            let mut json_patches = Vec::new();
            for _ in 0..u.int_in_range(1..=3)? {
                json_patches.push(json_patch(u, class)?);
            }
            definitions.push(PatchDefinition {
                selector: PatchSelector {
                    target,
                    machine_deployment_classes,
                },
                json_patches,
            });
        }
        class.spec.patches.push(ClusterClassPatch {
            name: json::text(u)?,
            description: None,
            definitions,
        });
    }
    Ok(())
}

fn json_patch(u: &mut Unstructured<'_>, class: &ClusterClass) -> Result<JsonPatch> {
    let op = *u.choose(&[PatchOp::Add, PatchOp::Replace, PatchOp::Remove])?;
    let path = json::pointer(u)?;
    let reference = |u: &mut Unstructured<'_>| -> Result<String> {
        let name = if u.ratio(1, 4)? {
            (*u.choose(&[
                "builtin/cluster/name",
                "builtin/controlPlane/replicas",
                "builtin/machineDeployment/name",
                "builtin/cluster/topology",
                "builtin",
            ])?)
            .to_owned()
        } else {
            variable_name(u, class)?
        };
        let pointer = if u.ratio(1, 4)? {
            json::pointer(u)?
        } else {
            String::new()
        };
        Ok(format!("{name}{pointer}"))
    };
    let (value, value_from) = match u.int_in_range(0..=4)? {
        0 => (Some(json::value(u, 3)?), None),
        1 | 2 => (
            None,
            Some(ValueFrom {
                variable: Some(reference(u)?),
                template: None,
            }),
        ),
        3 => {
            let template = format!(
                "{}{{{{{}}}}}{}",
                json::text(u)?,
                reference(u)?,
                if u.ratio(1, 4)? { "{{" } else { "" }
            );
            (
                None,
                Some(ValueFrom {
                    variable: None,
                    template: Some(template),
                }),
            )
        }
        // Both, neither or half a `valueFrom`: refused, never a panic.
        _ => (
            u.arbitrary::<bool>()?.then_some(Value::Null),
            u.arbitrary::<bool>()?.then_some(ValueFrom {
                variable: None,
                template: None,
            }),
        ),
    };
    Ok(JsonPatch {
        op,
        path,
        value,
        value_from,
    })
}

/// Replicas, version, pools and provider configs of the base, varied.
fn vary_shape(
    u: &mut Unstructured<'_>,
    class: &mut ClusterClass,
    cluster: &mut Cluster,
) -> Result<()> {
    let topology = &mut cluster.spec.topology;
    if u.ratio(1, 4)? {
        topology.control_plane.replicas = Some(u.int_in_range(-1..=12)?);
    }
    if u.ratio(1, 8)? {
        topology.version = (*u.choose(&["v1.34", "1.34.4", "v1.35.0-rc.1", "", "v01.2.3"])?).into();
    }
    if u.ratio(1, 4)? {
        topology
            .workers
            .machine_deployments
            .push(MachineDeploymentTopology {
                class: (*u.choose(&["default-worker", "gpu"])?).into(),
                name: (*u.choose(&["md-0", "md-1", "Md_2"])?).into(),
                replicas: Some(u.int_in_range(-1..=3)?),
                failure_domain: u.ratio(1, 2)?.then(|| "fd-1".to_owned()),
                variables: None,
                rollout: rollout(u)?,
                deletion: None,
                health_check: None,
            });
    }
    if u.ratio(1, 8)? {
        let template = class.spec.workers.machine_deployments.first().cloned();
        if let Some(MachineDeploymentClass {
            infrastructure,
            bootstrap,
            ..
        }) = template
        {
            class
                .spec
                .workers
                .machine_deployments
                .push(MachineDeploymentClass {
                    class: "gpu".into(),
                    infrastructure,
                    bootstrap,
                    rollout: rollout(u)?,
                    deletion: None,
                    health_check: None,
                });
        }
    }
    if u.ratio(1, 4)? {
        class.spec.infrastructure.config = json::object(u, 3)?;
    }
    if u.ratio(1, 8)? {
        class.spec.lifecycle_hooks.push(ProviderConfigRef {
            provider: (*u.choose(&PROVIDERS)?).into(),
            config: json::object(u, 2)?,
        });
    }
    Ok(())
}

/// A pool's rollout bounds, now and then: counts, percentages and nonsense alike.
fn rollout(u: &mut Unstructured<'_>) -> Result<Option<capw_api::MachineRollout>> {
    if !u.ratio(1, 4)? {
        return Ok(None);
    }
    let bound = |u: &mut Unstructured<'_>| -> Result<Option<capw_api::IntOrString>> {
        Ok(match u.int_in_range(0..=3)? {
            0 => None,
            1 => Some(capw_api::IntOrString::Int(u.int_in_range(-1..=4)?)),
            2 => Some(capw_api::IntOrString::String(
                (*u.choose(&["25%", "100%", "150%", "x%", ""])?).into(),
            )),
            _ => Some(capw_api::IntOrString::Int(0)),
        })
    };
    Ok(Some(capw_api::MachineRollout {
        strategy: Some(capw_api::RolloutStrategy {
            type_: None,
            rolling_update: Some(capw_api::RollingUpdate {
                max_surge: bound(u)?,
                max_unavailable: bound(u)?,
            }),
        }),
    }))
}
