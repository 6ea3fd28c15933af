//! Where a patch value comes from: a literal, a variable (with a pointer into it), a template.
//!
//! # Rule for unset variables
//!
//! A reference to a variable the class declares but that has no value (optional, not set, no
//! default), or to a field inside a variable that is absent, makes the value *unset*: the
//! operation that needed it is skipped and the rest of the patch still applies. This is what
//! lets an optional variable leave a provider's own default alone. A reference to a variable
//! the class does not declare is an error.

use capw_api::JsonPatch;
use serde_json::Value;

use crate::variables::{BUILTIN, VariableCatalog, Variables};

/// The value an `add` or `replace` operation writes: `Ok(None)` when unset (skip the
/// operation), `Err` with a message when the patch is malformed.
pub(crate) fn patch_value(
    patch: &JsonPatch,
    variables: &Variables,
    catalog: &VariableCatalog<'_>,
) -> Result<Option<Value>, String> {
    let from = patch.value_from.as_ref();
    match (&patch.value, from.map(|f| (&f.variable, &f.template))) {
        (Some(value), None) => Ok(Some(value.clone())),
        (None, Some((Some(reference), None))) => lookup(reference, variables, catalog),
        (None, Some((None, Some(template)))) => render(template, variables, catalog),
        (None, Some(_)) => Err("valueFrom needs exactly one of `variable` and `template`".into()),
        _ => Err("needs exactly one of `value` and `valueFrom`".into()),
    }
}

/// The value of `name/json/pointer`.
fn lookup(
    reference: &str,
    variables: &Variables,
    catalog: &VariableCatalog<'_>,
) -> Result<Option<Value>, String> {
    let reference = reference.trim();
    let (name, pointer) = match reference.split_once('/') {
        Some((name, rest)) => (name, format!("/{rest}")),
        None => (reference, String::new()),
    };
    if name != BUILTIN && !catalog.is_declared(name) {
        return Err(format!(
            "variable {name:?} is not declared by the ClusterClass"
        ));
    }
    Ok(variables
        .get(name)
        .and_then(|v| v.pointer(&pointer))
        .cloned())
}

/// `template` with each `{{ reference }}` replaced by the referenced value (strings as they
/// are, anything else as JSON).
fn render(
    template: &str,
    variables: &Variables,
    catalog: &VariableCatalog<'_>,
) -> Result<Option<Value>, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("template {template:?}: `{{{{` without `}}}}`"))?;
        match lookup(&after[..end], variables, catalog)? {
            Some(Value::String(text)) => out.push_str(&text),
            Some(other) => out.push_str(&other.to_string()),
            None => return Ok(None),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(Some(Value::String(out)))
}
