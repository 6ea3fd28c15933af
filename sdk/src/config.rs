//! Parsing a provider's config JSON, with errors that point at the field that caused them.
//!
//! Paths are JSON Pointers (RFC 6901): `""` is the whole document, `/network/cidr` a field,
//! `/zones/2` the third element of a list; `~` and `/` inside a key are written `~0` and `~1`.

use serde::de::DeserializeOwned;
use serde_path_to_error::{Path, Segment};

use crate::metadata::FieldError;
use crate::types::{ErrorCode, ProviderError};

/// A config that does not parse into the provider's `Config` type.
///
/// Serde stops at the first problem, so a parse reports one error; the rules of
/// [`Provider::validate`](crate::Provider::validate) run only on a config that parses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config{}: {message}", location(.pointer))]
pub struct ConfigError {
    /// JSON Pointer to the field where parsing failed; `""` for the document itself (e.g. a
    /// missing field is reported at the object that lacks it, with its name in the message).
    pub pointer: String,
    /// What serde found wrong, without the line and column (the pointer says where).
    pub message: String,
}

/// ` at `/a/b`` for a field, nothing for the whole document.
fn location(pointer: &str) -> String {
    if pointer.is_empty() {
        String::new()
    } else {
        format!(" at `{pointer}`")
    }
}

impl From<ConfigError> for FieldError {
    fn from(e: ConfigError) -> Self {
        FieldError::new(e.pointer, e.message)
    }
}

/// A config that does not parse is bad input: retrying the same call cannot help.
impl From<ConfigError> for ProviderError {
    fn from(e: ConfigError) -> Self {
        ProviderError::permanent(ErrorCode::InvalidInput, e.to_string())
    }
}

/// Parses `json` into `C`, reporting a failure at the JSON Pointer of the offending field.
///
/// # Errors
///
/// [`ConfigError`] when `json` is not JSON or does not match `C`.
pub fn parse<C: DeserializeOwned>(json: &str) -> Result<C, ConfigError> {
    // Every call parses its config, and nearly every config parses: take the plain parser
    // first, and track the path only to explain a failure (the same input fails the same
    // way, at the same place).
    if let Ok(parsed) = serde_json::from_str(json) {
        return Ok(parsed);
    }
    parse_with_path(json)
}

fn parse_with_path<C: DeserializeOwned>(json: &str) -> Result<C, ConfigError> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let parsed: C = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let pointer = pointer_of(e.path());
        let inner = e.into_inner();
        ConfigError {
            pointer,
            message: without_position(&inner),
        }
    })?;
    // Trailing garbage after a valid document is still an invalid config.
    deserializer.end().map_err(|e| ConfigError {
        pointer: String::new(),
        message: without_position(&e),
    })?;
    Ok(parsed)
}

/// Builds a JSON Pointer from unescaped segments, e.g. `["zones", "2"]` -> `/zones/2`.
pub fn json_pointer<I, S>(segments: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut pointer = String::new();
    for segment in segments {
        push_segment(&mut pointer, segment.as_ref());
    }
    pointer
}

/// The JSON Pointer of a serde path.
///
/// An externally tagged enum's variant is a key in the JSON, so it is a segment too. Serde
/// loses track of the position inside buffered content (internally tagged and untagged enums,
/// flattened fields), which the path marks as unknown: the pointer stops at the last position
/// known for certain rather than guess.
fn pointer_of(path: &Path) -> String {
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => push_segment(&mut pointer, &index.to_string()),
            Segment::Map { key } => push_segment(&mut pointer, key),
            Segment::Enum { variant } => push_segment(&mut pointer, variant),
            Segment::Unknown => break,
        }
    }
    pointer
}

fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// serde_json's message without its ` at line L column C` suffix, which means nothing to a
/// user who wrote YAML that the host turned into JSON.
fn without_position(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match full.strip_suffix(&suffix) {
        Some(message) => message.to_owned(),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Network {
        cidr: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Config {
        network: Network,
        #[serde(default)]
        zones: Vec<String>,
        #[serde(default)]
        labels: std::collections::BTreeMap<String, u8>,
    }

    #[test]
    fn pointer_escapes_tilde_and_slash() {
        assert_eq!(json_pointer(["a/b", "m~n", "0"]), "/a~1b/m~0n/0");
        assert_eq!(json_pointer(Vec::<&str>::new()), "");
    }

    #[test]
    fn type_error_points_at_the_field() {
        let e = parse::<Config>(r#"{"network": {"cidr": 5}}"#).unwrap_err();
        assert_eq!(e.pointer, "/network/cidr");
        assert!(e.message.contains("expected a string"), "{}", e.message);
        assert!(!e.message.contains("line"), "{}", e.message);
    }

    #[test]
    fn type_error_in_a_list_points_at_the_index() {
        let e =
            parse::<Config>(r#"{"network": {"cidr": "x"}, "zones": ["a", "b", 3]}"#).unwrap_err();
        assert_eq!(e.pointer, "/zones/2");
    }

    #[test]
    fn map_keys_are_escaped() {
        let e =
            parse::<Config>(r#"{"network": {"cidr": "x"}, "labels": {"a/b": 300}}"#).unwrap_err();
        assert_eq!(e.pointer, "/labels/a~1b");
    }

    #[test]
    fn missing_field_is_reported_at_its_parent() {
        let e = parse::<Config>(r#"{"network": {}}"#).unwrap_err();
        assert_eq!(e.pointer, "/network");
        assert!(e.message.contains("missing field `cidr`"), "{}", e.message);
    }

    #[test]
    fn unknown_field_is_reported() {
        let e = parse::<Config>(r#"{"network": {"cidr": "x"}, "extra": 1}"#).unwrap_err();
        assert!(e.message.contains("unknown field `extra`"), "{}", e.message);
    }

    #[test]
    fn syntax_error_and_trailing_garbage_fail() {
        assert!(parse::<Config>("{").is_err());
        let e = parse::<Config>(r#"{"network": {"cidr": "x"}} x"#).unwrap_err();
        assert_eq!(e.pointer, "");
    }

    #[test]
    fn config_error_becomes_invalid_input() {
        let e = parse::<Config>(r#"{"network": {"cidr": 5}}"#).unwrap_err();
        let p = ProviderError::from(e.clone());
        assert_eq!(p.code, ErrorCode::InvalidInput);
        assert!(!p.retryable);
        assert!(p.message.contains("/network/cidr"), "{}", p.message);
        let f = FieldError::from(e);
        assert_eq!(f.path, "/network/cidr");

        let e = parse::<Config>("{}").unwrap_err();
        assert_eq!(e.to_string(), "config: missing field `network`");
    }
}
