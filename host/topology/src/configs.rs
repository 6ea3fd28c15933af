//! Checking every resulting provider config against its provider's JSON Schema.

use std::collections::BTreeMap;

use jsonschema::Validator;
use serde_json::Value;

use crate::desired::ProviderConfig;
use crate::error::{Errors, Subject, TopologyErrorKind as Kind};
use crate::schema::{compile_json_schema, violations};

/// Config JSON Schemas by `WasmProvider` name (from each provider's `status.configSchema`).
/// A provider missing here is not checked.
pub type ProviderSchemas = BTreeMap<String, Value>;

/// Checks each config whose provider has a schema; every schema is compiled once.
pub(crate) fn check_configs<'c>(
    configs: impl IntoIterator<Item = &'c ProviderConfig>,
    schemas: &ProviderSchemas,
    errors: &mut Errors,
) {
    let mut compiled: BTreeMap<&str, Option<Validator>> = BTreeMap::new();
    for config in configs {
        let provider = config.provider.as_str();
        let Some(schema) = schemas.get(provider) else {
            continue;
        };
        let validator = compiled.entry(provider).or_insert_with(|| {
            compile_json_schema(schema)
                .map_err(|why| {
                    let message =
                        format!("provider {provider:?} publishes an invalid config schema: {why}");
                    errors.add(
                        Subject::WasmProvider,
                        Kind::InvalidConfig,
                        "status.configSchema",
                        message,
                    );
                })
                .ok()
        });
        let Some(validator) = validator else { continue };
        let document = Value::Object(config.config.clone());
        for violation in violations(validator, &document, &config.origin.path) {
            let pool = config
                .origin
                .pool
                .as_ref()
                .map(|p| format!(" for pool {p:?}"))
                .unwrap_or_default();
            let message = format!(
                "config for provider {provider:?}{pool} (after patches): {}",
                violation.message
            );
            errors.class(Kind::InvalidConfig, violation.path, message);
        }
    }
}
