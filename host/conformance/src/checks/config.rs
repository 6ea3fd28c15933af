//! `metadata.validate-config`: the example is accepted, garbage is refused with field paths,
//! the same config gets the same answer.
//!
//! Garbage is made from the provider's own schema: for each top-level field (of the example
//! and of the schema's `properties`), the first of a few values of the wrong kind (a number
//! for a string, a string for a number or an enumeration, ...) that the schema refuses at that
//! field. A value of the wrong kind cannot even be read, so the provider must refuse it too,
//! and say where. Bounds (ranges, lengths, patterns) the provider may leave to the schema.

use capw_runtime::metadata::FieldError;
use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

use super::Findings;
use crate::calls::Subject;
use crate::rules::id;

/// Text that is not JSON.
pub(crate) const MALFORMED: &str = "{ this is not JSON";

/// At most this many fields get a garbage value: enough to see the rule kept, few calls.
const MAX_MUTANTS: usize = 8;

/// A config with one field broken.
pub(crate) struct Mutant {
    /// JSON Pointer of the broken field, e.g. `/region`.
    pub pointer: String,
    pub config: Value,
}

/// Compiles a config schema as the host does (draft 2020-12).
pub(crate) fn compile_schema(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(schema)
        .map_err(|e| format!("config-schema is not a valid JSON Schema: {e}"))
}

pub(crate) async fn run(s: &Subject<'_>, f: &mut Findings) {
    let schema = &s.provider.info().config_schema;
    let validator = compile_schema(schema).ok();

    // The example.
    let example = &s.options.config;
    let mut example_ok = true;
    if let Some(v) = &validator {
        let refused: Vec<String> = v
            .iter_errors(example)
            .map(|e| format!("`{}`: {e}", e.instance_path().as_str()))
            .collect();
        if !refused.is_empty() {
            example_ok = false;
            f.check(
                id::EXAMPLE_ACCEPTED,
                Err(format!(
                    "the example config does not pass the config schema:\n{}",
                    refused.join("\n")
                )),
            );
        }
    }
    match s.record(s.provider.validate_config(&s.config).await) {
        Ok(Ok(())) => f.check(id::EXAMPLE_ACCEPTED, Ok(())),
        Ok(Err(errors)) => {
            example_ok = false;
            f.check(
                id::EXAMPLE_ACCEPTED,
                Err(format!(
                    "validate-config refused the example config {}: {}",
                    s.config,
                    list(&errors)
                )),
            );
        }
        Err(e) => {
            example_ok = false;
            f.check(
                id::EXAMPLE_ACCEPTED,
                Err(format!("validate-config failed: {e}")),
            );
        }
    }

    // Text that is not JSON.
    let malformed = s.record(s.provider.validate_config(MALFORMED).await);
    f.check(
        id::REJECTS_MALFORMED,
        match &malformed {
            Ok(Ok(())) => Err(format!("validate-config accepted {MALFORMED:?}")),
            Ok(Err(errors)) if errors.is_empty() => {
                Err("validate-config refused text that is not JSON with no field error".into())
            }
            Ok(Err(errors)) => bad_pointers(errors),
            Err(e) => Err(format!(
                "validate-config of text that is not JSON failed: {e}"
            )),
        },
    );

    // Garbage in each field.
    let garbage = match &validator {
        Some(v) => mutants(v, schema, example),
        None => Vec::new(),
    };
    if validator.is_none() {
        f.skip(
            id::FIELD_PATHS,
            format!(
                "needs a config schema that compiles ({})",
                id::SCHEMA_WELL_FORMED
            ),
        );
    } else if !example_ok {
        f.skip(
            id::FIELD_PATHS,
            format!(
                "needs an accepted example config ({})",
                id::EXAMPLE_ACCEPTED
            ),
        );
    } else if garbage.is_empty() {
        f.skip(
            id::FIELD_PATHS,
            "the config schema refuses no wrong value of any top-level field, so there is no garbage to try",
        );
    } else {
        let mut problems = Vec::new();
        for m in &garbage {
            let text = m.config.to_string();
            match s.record(s.provider.validate_config(&text).await) {
                Ok(Ok(())) => problems.push(format!(
                    "validate-config accepted {text}, which the schema refuses at `{}`",
                    m.pointer
                )),
                Ok(Err(errors)) => {
                    if let Err(p) = bad_pointers(&errors) {
                        problems.push(format!("for {text}: {p}"));
                    } else if !errors.iter().any(|e| points_into(&e.path, &m.pointer)) {
                        problems.push(format!(
                            "validate-config refused {text} but no error points at `{}`: {}",
                            m.pointer,
                            list(&errors)
                        ));
                    }
                }
                Err(e) => problems.push(format!("validate-config of {text} failed: {e}")),
            }
        }
        f.problems(id::FIELD_PATHS, problems);
    }

    // The same answers again.
    let mut inputs = vec![s.config.clone(), MALFORMED.to_owned()];
    inputs.extend(garbage.iter().take(2).map(|m| m.config.to_string()));
    let mut problems = Vec::new();
    for text in inputs {
        let first = s.record(s.provider.validate_config(&text).await);
        let second = s.record(s.provider.validate_config(&text).await);
        match (first, second) {
            (Ok(a), Ok(b)) if a == b => {}
            (Ok(a), Ok(b)) => problems.push(format!(
                "for {text}: first {}, then {}",
                verdict(&a),
                verdict(&b)
            )),
            (Err(e), _) | (_, Err(e)) => problems.push(format!("for {text}: call failed: {e}")),
        }
    }
    f.problems(id::VALIDATE_DETERMINISTIC, problems);
}

/// Garbage configs: the example with one top-level field set to a value the schema refuses
/// at that field.
pub(crate) fn mutants(validator: &Validator, schema: &Value, example: &Value) -> Vec<Mutant> {
    let Some(object) = example.as_object() else {
        return Vec::new();
    };
    let mut fields: Vec<String> = object.keys().cloned().collect();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        fields.extend(
            properties
                .keys()
                .filter(|k| !object.contains_key(*k))
                .cloned(),
        );
    }
    let candidates = [
        json!(12345),
        json!("capw-conformance-garbage"),
        json!(true),
        json!({"capw-conformance": "garbage"}),
        json!([12345]),
    ];
    let mut found = Vec::new();
    for field in fields {
        let pointer = pointer(&field);
        let refused_here = |config: &Value| {
            validator
                .iter_errors(config)
                .any(|e| points_into(e.instance_path().as_str(), &pointer) && wrong_kind(e.kind()))
        };
        let mutant = candidates.iter().find_map(|value| {
            let mut config = example.clone();
            config.as_object_mut()?.insert(field.clone(), value.clone());
            refused_here(&config).then_some(config)
        });
        if let Some(config) = mutant {
            found.push(Mutant { pointer, config });
            if found.len() == MAX_MUTANTS {
                break;
            }
        }
    }
    found
}

/// Whether the schema refuses a value for its kind (type, enumeration, alternatives), not
/// for a bound (range, length, pattern): a provider may leave bounds to the schema, which the
/// host checks first, but a value of the wrong kind does not even parse.
fn wrong_kind(kind: &ValidationErrorKind) -> bool {
    matches!(
        kind,
        ValidationErrorKind::Type { .. }
            | ValidationErrorKind::Enum { .. }
            | ValidationErrorKind::Constant { .. }
            | ValidationErrorKind::AnyOf { .. }
            | ValidationErrorKind::OneOfNotValid { .. }
            | ValidationErrorKind::FalseSchema
    )
}

/// `/key` for a top-level key, escaped as RFC 6901 says.
fn pointer(key: &str) -> String {
    format!("/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// Whether `path` is `field` or inside it.
fn points_into(path: &str, field: &str) -> bool {
    path == field
        || path
            .strip_prefix(field)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `Err` naming every path that is not a JSON Pointer.
fn bad_pointers(errors: &[FieldError]) -> Result<(), String> {
    let bad: Vec<String> = errors
        .iter()
        .filter(|e| !is_json_pointer(&e.path))
        .map(|e| format!("{:?} ({})", e.path, e.message))
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "field error paths must be JSON Pointers (\"\" or \"/a/b\"): {}",
            bad.join(", ")
        ))
    }
}

/// RFC 6901: empty, or `/`-separated tokens where `~` is followed by `0` or `1`.
pub(crate) fn is_json_pointer(path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    path.starts_with('/')
        && path
            .split('~')
            .skip(1)
            .all(|rest| rest.starts_with('0') || rest.starts_with('1'))
}

fn list(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("`{}`: {}", e.path, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}

fn verdict(answer: &Result<(), Vec<FieldError>>) -> String {
    match answer {
        Ok(()) => "accepted".into(),
        Err(errors) => format!("refused ({})", list(errors)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers() {
        for ok in ["", "/a", "/a/0", "/a~1b/c~0d", "/"] {
            assert!(is_json_pointer(ok), "{ok}");
        }
        for bad in ["a", "region", "/a~2", "/a~"] {
            assert!(!is_json_pointer(bad), "{bad}");
        }
        assert!(points_into("/zones/1", "/zones"));
        assert!(points_into("/zones", "/zones"));
        assert!(!points_into("/zonesx", "/zones"));
        assert_eq!(pointer("a/b~c"), "/a~1b~0c");
    }

    #[test]
    fn mutants_break_each_typed_field_where_the_schema_refuses() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string"},
                "port": {"type": "integer", "minimum": 1, "maximum": 100},
                "anything": {},
            },
            "required": ["region"],
        });
        let v = compile_schema(&schema).unwrap();
        let found = mutants(&v, &schema, &json!({"region": "eu"}));
        let pointers: Vec<_> = found.iter().map(|m| m.pointer.as_str()).collect();
        assert_eq!(pointers, ["/region", "/port"]);
        assert_eq!(found[0].config, json!({"region": 12345}));
        assert_eq!(found[1].config["port"], "capw-conformance-garbage");
    }
}
