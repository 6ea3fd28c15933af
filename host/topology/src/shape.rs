//! What shapes a machine: the inputs whose change replaces it, each with a digest.
//!
//! A provider marks in its config schema which fields shape a machine with the keyword
//! [`SHAPES_MACHINE`] on a property: `false` for a field that does not (a request timeout, the
//! name of a credential), `true` (or nothing) for one that does. An unmarked field shapes the
//! machine: a change nobody classified replaces machines, as any change of a machine template
//! does in Cluster API. A provider whose schema is not known has every field taken as shaping.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use capw_api::MachineShape;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::configs::ProviderSchemas;
use crate::desired::ProviderConfig;

/// The schema keyword that marks whether a config field shapes a machine.
pub const SHAPES_MACHINE: &str = "x-capw-shapes-machine";

/// How deep `$ref`s are followed before a schema is taken as saying nothing.
const MAX_REF_DEPTH: usize = 32;

/// The shape of a machine made from `infrastructure` and `bootstrap` configs, placed in the
/// pool's `failure_domain` when the pool names one.
pub(crate) fn machine_shape(
    infrastructure: &ProviderConfig,
    bootstrap: Option<&ProviderConfig>,
    failure_domain: Option<&str>,
    schemas: &ProviderSchemas,
) -> MachineShape {
    let mut inputs = BTreeMap::new();
    for (name, config) in [
        ("infrastructure", Some(infrastructure)),
        ("bootstrap", bootstrap),
    ] {
        let Some(config) = config else { continue };
        inputs.insert(
            format!("{name}.provider"),
            digest(&Value::String(config.provider.clone())),
        );
        let schema = schemas.get(&config.provider);
        for (key, value) in &config.config {
            leaves(
                value,
                property(schema, schema, key),
                schema,
                &format!("{name}.config/{}", escape(key)),
                &mut inputs,
            );
        }
    }
    if let Some(domain) = failure_domain {
        inputs.insert(
            "failureDomain".to_owned(),
            digest(&Value::String(domain.to_owned())),
        );
    }
    let mut all = String::new();
    for (name, value) in &inputs {
        let _ = writeln!(all, "{name}={value}");
    }
    MachineShape {
        hash: hex(&Sha256::digest(all.as_bytes())),
        inputs,
    }
}

/// Records the shaping leaves of `value` (at `path`, described by `schema`) in `out`: an
/// object is walked into field by field, skipping fields marked as not shaping; anything else
/// is one input.
fn leaves(
    value: &Value,
    schema: Option<&Value>,
    root: Option<&Value>,
    path: &str,
    out: &mut BTreeMap<String, String>,
) {
    if schema.and_then(|s| s.get(SHAPES_MACHINE)) == Some(&Value::Bool(false)) {
        return;
    }
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            for (key, field) in fields {
                let sub = property(schema, root, key);
                leaves(field, sub, root, &format!("{path}/{}", escape(key)), out);
            }
        }
        _ => {
            out.insert(path.to_owned(), digest(value));
        }
    }
}

/// The schema of property `key` of an object described by `schema`, following local `$ref`s.
fn property<'s>(
    schema: Option<&'s Value>,
    root: Option<&'s Value>,
    key: &str,
) -> Option<&'s Value> {
    let object = resolve(schema?, root)?;
    resolve(object.get("properties")?.get(key)?, root)
}

/// `schema` with its local `$ref` (`#/$defs/...`, `#/definitions/...`) followed.
fn resolve<'s>(mut schema: &'s Value, root: Option<&'s Value>) -> Option<&'s Value> {
    for _ in 0..MAX_REF_DEPTH {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return Some(schema);
        };
        // A `$ref` beside the marker keeps the marker: the property's own keywords count.
        if schema.get(SHAPES_MACHINE).is_some() {
            return Some(schema);
        }
        schema = root?.pointer(reference.strip_prefix('#')?)?;
    }
    None
}

/// A JSON Pointer token for `key`.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A short digest of a JSON value, independent of the order of object keys.
fn digest(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    hex(&Sha256::digest(text.as_bytes()))
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&fields[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The first 8 bytes of a digest, in hex: enough to tell inputs apart, short enough to read.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().take(8).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::desired::ConfigOrigin;

    fn config(provider: &str, value: Value) -> ProviderConfig {
        ProviderConfig {
            provider: provider.into(),
            config: serde_json::from_value(value).unwrap(),
            origin: ConfigOrigin {
                path: "spec".into(),
                pool: None,
            },
        }
    }

    fn schemas() -> ProviderSchemas {
        let infra = json!({
            "type": "object",
            "properties": {
                "instanceType": {"type": "string", SHAPES_MACHINE: true},
                "requestTimeoutMs": {"type": "integer", SHAPES_MACHINE: false},
                "disk": {"$ref": "#/$defs/Disk"},
            },
            "$defs": {"Disk": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "label": {"type": "string", SHAPES_MACHINE: false},
            }}},
        });
        [("sim".to_owned(), infra)].into()
    }

    fn shape(value: Value) -> MachineShape {
        machine_shape(&config("sim", value), None, None, &schemas())
    }

    #[test]
    fn only_the_fields_that_shape_a_machine_change_the_shape() {
        let base = shape(json!({"instanceType": "small", "requestTimeoutMs": 5000,
                                "disk": {"size": 10, "label": "a"}}));
        let timeout = shape(json!({"instanceType": "small", "requestTimeoutMs": 9000,
                                   "disk": {"size": 10, "label": "b"}}));
        assert_eq!(
            base, timeout,
            "unmarked-false fields, also behind a $ref, do not count"
        );
        let bigger = shape(json!({"instanceType": "large", "requestTimeoutMs": 5000,
                                  "disk": {"size": 20, "label": "a"}}));
        assert_ne!(base.hash, bigger.hash);
        assert_eq!(
            base.changed_inputs(&bigger),
            [
                "infrastructure.config/disk/size",
                "infrastructure.config/instanceType"
            ]
        );
    }

    #[test]
    fn unmarked_fields_and_unknown_schemas_shape_the_machine() {
        let a = machine_shape(
            &config("other", json!({"requestTimeoutMs": 1})),
            None,
            None,
            &schemas(),
        );
        let b = machine_shape(
            &config("other", json!({"requestTimeoutMs": 2})),
            None,
            None,
            &schemas(),
        );
        assert_eq!(
            a.changed_inputs(&b),
            ["infrastructure.config/requestTimeoutMs"]
        );
    }

    #[test]
    fn providers_bootstrap_and_the_pools_failure_domain_are_inputs() {
        let infra = config("sim", json!({"instanceType": "small"}));
        let boot = config("kubeadm", json!({"files": [{"path": "/a"}]}));
        let boot2 = config("kubeadm", json!({"files": [{"path": "/b"}]}));
        let s = schemas();
        let a = machine_shape(&infra, Some(&boot), Some("zone-a"), &s);
        let b = machine_shape(&infra, Some(&boot2), Some("zone-b"), &s);
        assert_eq!(
            a.changed_inputs(&b),
            ["bootstrap.config/files", "failureDomain"]
        );
        assert!(a.inputs.contains_key("bootstrap.provider"));
        assert!(a.inputs.contains_key("infrastructure.provider"));
    }

    #[test]
    fn key_order_does_not_matter() {
        let a = shape(json!({"x": {"b": 1, "a": [{"q": 1, "p": 2}]}}));
        let b = shape(json!({"x": {"a": [{"p": 2, "q": 1}], "b": 1}}));
        assert_eq!(a, b);
    }
}
