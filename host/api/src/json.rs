//! Schemas for the free-form JSON fields (provider config, variable values, schemas).
//!
//! Kubernetes requires structural schemas; a free-form field must say
//! `x-kubernetes-preserve-unknown-fields` or the API server prunes it to nothing.

use schemars::{Schema, SchemaGenerator, json_schema};

/// A provider config or any other JSON object whose shape the API does not fix.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Schema of a free-form JSON object.
pub fn free_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// Schema of any JSON value (object, array, string, number, boolean).
pub fn any_value(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "x-kubernetes-preserve-unknown-fields": true,
    })
}
