//! Applying a ClusterClass's patches to one provider config.
//!
//! Patches are applied in order (patch, then definition, then operation), each operation as
//! a JSON Patch (RFC 6902) on the selected config. An operation whose value is unset is
//! skipped (see [`crate::value_from`]); one that fails (`replace`/`remove` of a missing path,
//! `add` under a missing parent) is an error naming `spec.patches[i].definitions[j].jsonPatches[k]`.

use capw_api::{ClusterClassPatch, ClusterClassSpec, JsonObject, JsonPatch, PatchOp, PatchTarget};
use serde_json::{Value, json};

use crate::error::{Errors, TopologyErrorKind as Kind};
use crate::path::at;
use crate::value_from::patch_value;
use crate::variables::{VariableCatalog, Variables};

/// The config being patched: which target, and for worker targets which class.
#[derive(Clone, Copy)]
pub(crate) struct Selected<'s> {
    pub(crate) target: PatchTarget,
    pub(crate) worker_class: Option<&'s str>,
}

/// Every patch of a class, with what it needs to resolve values.
pub(crate) struct Patcher<'a> {
    pub(crate) patches: &'a [ClusterClassPatch],
    pub(crate) catalog: &'a VariableCatalog<'a>,
}

impl Patcher<'_> {
    /// `config` with every patch selecting `selected` applied, values from `variables`.
    pub(crate) fn apply(
        &self,
        selected: Selected<'_>,
        config: &JsonObject,
        variables: &Variables,
        errors: &mut Errors,
    ) -> JsonObject {
        let mut document = Value::Object(config.clone());
        for (i, patch) in self.patches.iter().enumerate() {
            for (j, definition) in patch.definitions.iter().enumerate() {
                let selector = &definition.selector;
                let classes = selector
                    .machine_deployment_classes
                    .as_deref()
                    .unwrap_or_default();
                let class_matches = classes.is_empty()
                    || selected
                        .worker_class
                        .is_some_and(|c| classes.iter().any(|n| n == c));
                if selector.target != selected.target || !class_matches {
                    continue;
                }
                for (k, operation) in definition.json_patches.iter().enumerate() {
                    let path = at(
                        &format!(
                            "{}.jsonPatches",
                            at(&format!("{}.definitions", at("spec.patches", i)), j)
                        ),
                        k,
                    );
                    self.apply_one(operation, &path, &mut document, variables, errors);
                }
            }
        }
        match document {
            Value::Object(patched) => patched,
            _ => {
                let why = format!(
                    "patches turned the {:?} config into a non-object",
                    selected.target
                );
                errors.class(Kind::PatchFailed, "spec.patches", why);
                config.clone()
            }
        }
    }

    fn apply_one(
        &self,
        operation: &JsonPatch,
        path: &str,
        document: &mut Value,
        variables: &Variables,
        errors: &mut Errors,
    ) {
        let (op, value) = match operation.op {
            PatchOp::Remove if operation.value.is_some() || operation.value_from.is_some() => {
                errors.class(Kind::InvalidPatch, path, "`remove` takes no value");
                return;
            }
            PatchOp::Remove => ("remove", None),
            PatchOp::Add | PatchOp::Replace => {
                match patch_value(operation, variables, self.catalog) {
                    Ok(Some(value)) => (
                        if operation.op == PatchOp::Add {
                            "add"
                        } else {
                            "replace"
                        },
                        Some(value),
                    ),
                    Ok(None) => return,
                    Err(why) => {
                        errors.class(Kind::InvalidPatch, path, why);
                        return;
                    }
                }
            }
        };
        let result = match parse_operation(op, &operation.path, value) {
            Ok(parsed) => json_patch::patch(document, &[parsed])
                .map_err(|e| (Kind::PatchFailed, e.to_string())),
            Err(why) => Err((Kind::InvalidPatch, why)),
        };
        if let Err((kind, why)) = result {
            errors.class(kind, path, format!("{op} {}: {why}", operation.path));
        }
    }
}

/// `op` at `path` (a JSON pointer) with `value` as a JSON Patch operation, or why the pointer
/// is malformed.
fn parse_operation(
    op: &str,
    path: &str,
    value: Option<Value>,
) -> Result<json_patch::PatchOperation, String> {
    let mut raw = json!({"op": op, "path": path});
    if let Some(value) = value {
        raw["value"] = value;
    }
    serde_json::from_value(raw).map_err(|e| format!("path {path:?}: {e}"))
}

/// Checks every operation of every patch without a config to apply it to: a value where
/// none is taken or none where one is needed, a variable the class does not declare, a
/// malformed pointer. What only applying can tell (a missing parent) is left to
/// [`Patcher::apply`].
pub(crate) fn check_operations(
    class: &ClusterClassSpec,
    catalog: &VariableCatalog<'_>,
    errors: &mut Errors,
) {
    let unset = Variables::new();
    for (i, patch) in class.patches.iter().enumerate() {
        for (j, definition) in patch.definitions.iter().enumerate() {
            for (k, operation) in definition.json_patches.iter().enumerate() {
                let path = at(
                    &format!(
                        "{}.jsonPatches",
                        at(&format!("{}.definitions", at("spec.patches", i)), j)
                    ),
                    k,
                );
                let op = match operation.op {
                    PatchOp::Remove => {
                        if operation.value.is_some() || operation.value_from.is_some() {
                            errors.class(Kind::InvalidPatch, &path, "`remove` takes no value");
                        }
                        "remove"
                    }
                    PatchOp::Add | PatchOp::Replace => {
                        if let Err(why) = patch_value(operation, &unset, catalog) {
                            errors.class(Kind::InvalidPatch, &path, why);
                        }
                        if operation.op == PatchOp::Add {
                            "add"
                        } else {
                            "replace"
                        }
                    }
                };
                let value = (op != "remove").then_some(Value::Null);
                if let Err(why) = parse_operation(op, &operation.path, value) {
                    errors.class(
                        Kind::InvalidPatch,
                        &path,
                        format!("{op} {}: {why}", operation.path),
                    );
                }
            }
        }
    }
}

/// Checks selectors once per class: worker classes they name exist, and the control-plane
/// machine configs they target are there.
pub(crate) fn check_selectors(class: &ClusterClassSpec, errors: &mut Errors) {
    let cp = &class.control_plane;
    for (i, patch) in class.patches.iter().enumerate() {
        for (j, definition) in patch.definitions.iter().enumerate() {
            let path = format!(
                "{}.selector",
                at(&format!("{}.definitions", at("spec.patches", i)), j)
            );
            let selector = &definition.selector;
            let missing = match selector.target {
                PatchTarget::ControlPlaneMachineInfrastructure
                    if cp.machine_infrastructure.is_none() =>
                {
                    Some("spec.controlPlane.machineInfrastructure")
                }
                PatchTarget::ControlPlaneBootstrap if cp.bootstrap.is_none() => {
                    Some("spec.controlPlane.bootstrap")
                }
                _ => None,
            };
            if let Some(field) = missing {
                errors.class(
                    Kind::InvalidPatch,
                    format!("{path}.target"),
                    format!("targets {field}, which is not set"),
                );
            }
            let classes = selector
                .machine_deployment_classes
                .as_deref()
                .unwrap_or_default();
            if !classes.is_empty() && !selector.target.is_worker() {
                errors.class(
                    Kind::InvalidPatch,
                    format!("{path}.machineDeploymentClasses"),
                    "only worker targets select classes",
                );
            }
            for (n, name) in classes.iter().enumerate() {
                if !class
                    .workers
                    .machine_deployments
                    .iter()
                    .any(|md| &md.class == name)
                {
                    let why =
                        format!("no worker class {name:?} in spec.workers.machineDeployments");
                    errors.class(
                        Kind::InvalidPatch,
                        at(&format!("{path}.machineDeploymentClasses"), n),
                        why,
                    );
                }
            }
        }
    }
}
