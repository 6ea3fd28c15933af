//! Schemas: compiling them, structural defaulting, and validation with field paths.
//!
//! Validation is delegated to the `jsonschema` crate; this module only adapts its errors to
//! dotted paths and adds Kubernetes' structural defaulting, which JSON Schema does not do.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

use crate::path::join_pointer;

/// A schema that could not be compiled, with the validator's complaint.
pub(crate) type SchemaError = String;

/// Compiles a variable's `openAPIV3Schema`.
///
/// Kubernetes' OpenAPI v3 dialect is JSON Schema draft 4 plus extension keywords
/// (`x-kubernetes-*`, `nullable`), which the validator ignores.
pub(crate) fn compile_openapi(schema: &Value) -> Result<Validator, SchemaError> {
    jsonschema::options()
        .with_draft(Draft::Draft4)
        .build(schema)
        .map_err(|e| compile_error(schema, &e))
}

/// Compiles a provider's config schema (JSON Schema; draft taken from `$schema`, 2020-12 when
/// absent, as schemars writes).
pub(crate) fn compile_json_schema(schema: &Value) -> Result<Validator, SchemaError> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(schema)
        .map_err(|e| compile_error(schema, &e))
}

/// Why `schema` did not compile, the same each time for the same schema.
///
/// The validator resolves references through hash maps with a random seed: of several
/// references it cannot resolve, it names any one. The message ends up in a condition, which
/// would then change from one pass to the next with nothing changed; so every reference
/// outside the schema is named instead, in document order.
fn compile_error(schema: &Value, error: &ValidationError<'_>) -> SchemaError {
    let ValidationErrorKind::Referencing(_) = error.kind() else {
        return error.to_string();
    };
    let mut outside = Vec::new();
    outside_references(schema, &mut outside);
    if outside.is_empty() {
        return error.to_string();
    }
    format!(
        "unresolvable reference among {}: schemas outside this one are not fetched",
        outside.join(", ")
    )
}

/// The `$ref`s of `schema` (and `$dynamicRef`s, `$recursiveRef`s) that are not a fragment of
/// it, as `"<reference>" at <pointer>`, in document order.
fn outside_references(schema: &Value, found: &mut Vec<String>) {
    fn walk(value: &Value, pointer: &mut String, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    match (key.as_str(), child) {
                        ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r))
                            if !r.starts_with('#') =>
                        {
                            found.push(format!("{r:?} at {pointer}"));
                        }
                        _ => walk(child, pointer, found),
                    }
                    pointer.truncate(len);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    let len = pointer.len();
                    pointer.push_str(&format!("/{index}"));
                    walk(child, pointer, found);
                    pointer.truncate(len);
                }
            }
            _ => {}
        }
    }
    walk(schema, &mut String::new(), found);
}

/// One place where a value breaks its schema.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// `base` plus the dotted path inside the value.
    pub(crate) path: String,
    /// The validator's message.
    pub(crate) message: String,
}

/// Every violation of `validator` by `value`, with paths below `base`.
pub(crate) fn violations(validator: &Validator, value: &Value, base: &str) -> Vec<Violation> {
    validator
        .iter_errors(value)
        .map(|error| Violation {
            path: join_pointer(base, value, error.instance_path().as_str()),
            message: error.to_string(),
        })
        .collect()
}

/// Fills in the `default` of every missing object property, recursively, as the Kubernetes API
/// server does for structural schemas (properties, `additionalProperties`, array `items`).
///
/// # Guarantees
///
/// Present values are never changed; only missing properties are added. A default that is
/// itself an object is defaulted in turn.
pub(crate) fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for (key, property) in properties.into_iter().flatten() {
                if let Some(default) = property.get("default") {
                    map.entry(key.clone()).or_insert_with(|| default.clone());
                }
                if let Some(child) = map.get_mut(key) {
                    apply_defaults(child, property);
                }
            }
            if let Some(additional) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                for (key, child) in map.iter_mut() {
                    if properties.is_none_or(|p| !p.contains_key(key)) {
                        apply_defaults(child, additional);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fills_missing_properties_recursively() {
        let schema = json!({
            "type": "object",
            "properties": {
                "net": {"type": "object", "default": {}, "properties": {
                    "mtu": {"type": "integer", "default": 1500},
                    "cidr": {"type": "string"}
                }},
                "pools": {"type": "array", "items": {"type": "object", "properties": {
                    "size": {"type": "integer", "default": 3}
                }}},
                "labels": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"v": {"default": "x"}}
                }}
            }
        });
        let mut value = json!({"pools": [{}, {"size": 5}], "labels": {"a": {}}});
        apply_defaults(&mut value, &schema);
        assert_eq!(
            value,
            json!({
                "net": {"mtu": 1500},
                "pools": [{"size": 3}, {"size": 5}],
                "labels": {"a": {"v": "x"}}
            })
        );
    }

    #[test]
    fn never_overrides_present_values() {
        let schema = json!({"properties": {"a": {"default": 1}}});
        let mut value = json!({"a": null});
        apply_defaults(&mut value, &schema);
        assert_eq!(value, json!({"a": null}));
    }

    #[test]
    fn reports_violations_with_paths() {
        let validator = compile_openapi(&json!({
            "type": "object",
            "properties": {"cidr": {"type": "string", "pattern": "^[0-9./]+$"}}
        }))
        .expect("compiles");
        let found = violations(&validator, &json!({"cidr": "x"}), "value");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "value.cidr");
        assert!(
            found[0].message.contains("does not match"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn names_every_unresolvable_reference_the_same_way_each_time() {
        let schema = json!({
            "properties": {
                "a": {"$ref": "http://capw.invalid/schema.json"},
                "b": {"items": {"$ref": "other.json#/a"}},
                "c": {"$ref": "#/properties/a"}
            }
        });
        let expected = "unresolvable reference among \"http://capw.invalid/schema.json\" at \
             /properties/a/$ref, \"other.json#/a\" at /properties/b/items/$ref: schemas \
             outside this one are not fetched";
        // The validator's own message names either reference, by the seed of its hash maps.
        for _ in 0..16 {
            let openapi = compile_openapi(&schema).err();
            let json_schema = compile_json_schema(&schema).err();
            assert_eq!(openapi.as_deref(), Some(expected));
            assert_eq!(json_schema.as_deref(), Some(expected));
        }
    }

    #[test]
    fn refuses_malformed_schema() {
        assert!(compile_openapi(&json!({"type": "strung"})).is_err());
    }
}
