//! A provider's config JSON Schema and a config, both arbitrary JSON text, through the host's
//! schema handling: the schema compiled as a provider's `status.configSchema` (JSON Schema,
//! 2020-12 unless `$schema` says otherwise) and the quickstart's configs after patches
//! validated against it; the same schema declared as a ClusterClass variable's
//! `openAPIV3Schema` (draft 4), with the config as the Cluster's value (structural
//! defaulting, validation, field paths of violations) and without it (the schema's
//! top-level `default`).
//!
//! Input: the schema's text, a NUL byte, the config's text (`{}` when absent).
//!
//! # Checks
//!
//! No panic, and what `compute_desired_state` guarantees
//! (`capw_fuzz::topology::compute_and_check`), defaulting changing no given value included.

use capw_api::{ClusterClassVariable, ClusterVariable, VariableSchema};
use capw_topology::ProviderSchemas;
use serde_json::Value;

use super::Replayed;
use crate::quickstart::{self, PROVIDERS};
use crate::topology::compute_and_check;

/// The variable the schema is declared as.
const VARIABLE: &str = "fuzzed";

/// Runs [`run`] on `bytes`, which it reads as they come.
pub fn replay(bytes: &[u8]) -> Replayed {
    run(bytes);
    Replayed::Ran
}

/// The target: `data` split at its first NUL into a schema and a config, both used as the
/// module's documentation says.
///
/// # Panics
///
/// When a check of the module's documentation fails.
pub fn run(data: &[u8]) {
    let (schema_text, config_text) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(schema) = serde_json::from_slice::<Value>(schema_text) else {
        return;
    };
    let config = serde_json::from_slice::<Value>(config_text).unwrap_or(Value::Null);
    let base = &quickstart::clusters()[0];

    // As every provider's config schema, with the config as the cluster's infrastructure
    // config and the machines' (patched with the quickstart's endpoint).
    let mut class = quickstart::class();
    if let Value::Object(config) = &config {
        class.spec.infrastructure.config = config.clone();
        if let Some(machines) = &mut class.spec.control_plane.machine_infrastructure {
            machines.config = config.clone();
        }
    }
    let schemas: ProviderSchemas = PROVIDERS
        .iter()
        .map(|p| ((*p).to_owned(), schema.clone()))
        .collect();
    let _ = compute_and_check(base, &class, &schemas);

    // As a variable's OpenAPI v3 schema: the config set as its value, then left to the
    // schema's default.
    let Value::Object(open_api_v3_schema) = schema else {
        return;
    };
    let mut class = quickstart::class();
    class.spec.variables.push(ClusterClassVariable {
        name: VARIABLE.into(),
        required: false,
        schema: VariableSchema { open_api_v3_schema },
    });
    let mut cluster = base.clone();
    let _ = compute_and_check(&cluster, &class, &ProviderSchemas::new());
    cluster.spec.topology.variables.push(ClusterVariable {
        name: VARIABLE.into(),
        value: config,
    });
    let _ = compute_and_check(&cluster, &class, &ProviderSchemas::new());
}
