//! Variables: declared by the class, set by the Cluster (and per pool), defaulted, validated.

use std::collections::BTreeMap;

use capw_api::{ClusterClassVariable, ClusterVariable};
use jsonschema::Validator;
use serde_json::Value;

use crate::error::{Errors, Subject, TopologyErrorKind as Kind};
use crate::path::at;
use crate::schema::{apply_defaults, compile_openapi, violations};

/// Name of the built-in variable holding cluster facts; classes may not declare it.
pub const BUILTIN: &str = "builtin";

/// Resolved variable values by name.
pub type Variables = BTreeMap<String, Value>;

struct Declared<'a> {
    index: usize,
    declaration: &'a ClusterClassVariable,
    schema: Value,
    /// `None` when the schema did not compile (already reported).
    validator: Option<Validator>,
}

/// The class's variable declarations, with their schemas compiled once.
pub(crate) struct VariableCatalog<'a> {
    declared: BTreeMap<&'a str, Declared<'a>>,
}

impl<'a> VariableCatalog<'a> {
    /// Compiles every declaration, reporting reserved or duplicate names and bad schemas.
    pub(crate) fn compile(declarations: &'a [ClusterClassVariable], errors: &mut Errors) -> Self {
        let mut declared = BTreeMap::new();
        for (index, declaration) in declarations.iter().enumerate() {
            let path = at("spec.variables", index);
            let name = declaration.name.as_str();
            if let Some(why) = name_problem(name, |n| declared.contains_key(n)) {
                errors.class(
                    Kind::InvalidVariableDeclaration,
                    format!("{path}.name"),
                    why,
                );
                continue;
            }
            let schema = Value::Object(declaration.schema.open_api_v3_schema.clone());
            let validator = compile_openapi(&schema)
                .map_err(|why| {
                    let at = format!("{path}.schema.openAPIV3Schema");
                    errors.class(
                        Kind::InvalidVariableDeclaration,
                        at,
                        format!("invalid schema: {why}"),
                    );
                })
                .ok();
            declared.insert(
                name,
                Declared {
                    index,
                    declaration,
                    schema,
                    validator,
                },
            );
        }
        Self { declared }
    }

    /// Whether the class declares `name`.
    pub(crate) fn is_declared(&self, name: &str) -> bool {
        self.declared.contains_key(name)
    }

    /// The Cluster's variables: given values defaulted and validated, required ones checked,
    /// absent ones taken from their schema's top-level `default` when it has one.
    pub(crate) fn resolve_cluster(
        &self,
        given: &[ClusterVariable],
        errors: &mut Errors,
    ) -> Variables {
        let base = "spec.topology.variables";
        let mut values = self.given_values(given, base, errors);
        for (name, declared) in &self.declared {
            if values.contains_key(*name) {
                continue;
            }
            if declared.declaration.required {
                errors.cluster(
                    Kind::MissingVariable,
                    base,
                    format!("required variable {name:?} is not set"),
                );
            } else if let Some(default) = declared.schema.get("default") {
                let path = format!(
                    "{}.schema.openAPIV3Schema.default",
                    at("spec.variables", declared.index)
                );
                let (subject, kind) = (Subject::ClusterClass, Kind::InvalidVariableDeclaration);
                if let Some(value) =
                    checked(declared, default.clone(), &path, errors, subject, kind)
                {
                    values.insert((*name).to_owned(), value);
                }
            }
        }
        values
    }

    /// A pool's variables: the Cluster's, with the pool's overrides (defaulted and validated
    /// the same way) taking precedence.
    pub(crate) fn resolve_pool(
        &self,
        cluster: &Variables,
        overrides: &[ClusterVariable],
        base: &str,
        errors: &mut Errors,
    ) -> Variables {
        let mut values = cluster.clone();
        values.extend(self.given_values(overrides, base, errors));
        values
    }

    fn given_values(
        &self,
        given: &[ClusterVariable],
        base: &str,
        errors: &mut Errors,
    ) -> Variables {
        let mut values = Variables::new();
        for (index, variable) in given.iter().enumerate() {
            let path = at(base, index);
            let name = &variable.name;
            let Some(declared) = self.declared.get(name.as_str()) else {
                let why = format!("variable {name:?} is not declared by the ClusterClass");
                errors.cluster(Kind::UnknownVariable, format!("{path}.name"), why);
                continue;
            };
            if values.contains_key(name) {
                errors.cluster(
                    Kind::UnknownVariable,
                    format!("{path}.name"),
                    format!("variable {name:?} is set twice"),
                );
                continue;
            }
            let value_path = format!("{path}.value");
            let (subject, kind) = (Subject::Cluster, Kind::InvalidVariableValue);
            let before = errors.len();
            let value = checked(
                declared,
                variable.value.clone(),
                &value_path,
                errors,
                subject,
                kind,
            );
            // Name the variable: the path only says where it is in the list.
            errors.prefix_since(before, &format!("variable {name:?}: "));
            if let Some(value) = value {
                values.insert(name.clone(), value);
            }
        }
        values
    }
}

/// Why `name` cannot be declared, if it cannot: reserved, malformed, or taken.
fn name_problem(name: &str, taken: impl Fn(&str) -> bool) -> Option<String> {
    if name == BUILTIN || name.is_empty() || name.contains('/') {
        Some(format!(
            "{name:?} is reserved or malformed (no `/`, not `{BUILTIN}`)"
        ))
    } else if taken(name) {
        Some(format!("variable {name:?} is declared twice"))
    } else {
        None
    }
}

/// `value` with structural defaults applied, or `None` (reported) if it breaks the schema.
fn checked(
    declared: &Declared<'_>,
    mut value: Value,
    path: &str,
    errors: &mut Errors,
    subject: Subject,
    kind: Kind,
) -> Option<Value> {
    apply_defaults(&mut value, &declared.schema);
    let validator = declared.validator.as_ref()?;
    let found = violations(validator, &value, path);
    let valid = found.is_empty();
    for violation in found {
        errors.add(subject, kind, violation.path, violation.message);
    }
    valid.then_some(value)
}
