//! Parsing multi-document YAML manifests into typed [`Object`]s, strictly.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;

use crate::names;
use crate::object::{API_VERSION, KINDS, Object};
use crate::{Cluster, ClusterClass, Machine, WasmProvider};

/// Fields of `metadata` that a manifest may carry (those of Kubernetes' `ObjectMeta`).
const METADATA_FIELDS: [&str; 15] = [
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// A manifest document that could not be turned into an object.
#[derive(Debug, thiserror::Error)]
pub struct ManifestError {
    /// 1-based position of the document in the file (empty documents count).
    pub document: usize,
    /// The document's `kind`, when it could be read.
    pub kind: Option<String>,
    /// The document's `metadata.name`, when it could be read.
    pub name: Option<String>,
    /// What is wrong. Part of the message, not its source: a chain of causes would say it
    /// twice.
    pub reason: ManifestErrorReason,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "document {}", self.document)?;
        match (&self.kind, &self.name) {
            (Some(kind), Some(name)) => write!(f, " ({kind} {name:?})")?,
            (Some(kind), None) => write!(f, " ({kind})")?,
            _ => {}
        }
        write!(f, ": {}", self.reason)
    }
}

/// Why a manifest document was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestErrorReason {
    /// The YAML itself is malformed.
    #[error("invalid YAML: {0}")]
    Syntax(#[source] serde_yaml_ng::Error),
    /// Flow collections (`[`, `{`) nested deeper than any manifest needs, refused before
    /// parsing: the YAML parser's time grows with the square of the depth.
    #[error(
        "invalid YAML: `[` and `{{` nested more than {MAX_FLOW_DEPTH} deep at line {line} column {column}"
    )]
    TooDeep {
        /// 1-based line of the opening bracket past the limit.
        line: usize,
        /// 1-based column (in characters) of that bracket.
        column: usize,
    },
    /// The document is not a mapping, or lacks `apiVersion` or `kind`.
    #[error("not an object: `apiVersion` and `kind` are required")]
    MissingTypeMeta,
    /// The `apiVersion` is not one this host serves.
    #[error("apiVersion: unsupported {0:?} (this host serves {API_VERSION})")]
    UnsupportedApiVersion(String),
    /// The `kind` is not one of capw's.
    #[error("kind: unknown {0:?} (expected one of {KINDS:?})")]
    UnknownKind(String),
    /// `metadata` has a field Kubernetes' ObjectMeta does not have (usually a typo).
    #[error("metadata.{0}: unknown field")]
    UnknownMetadataField(String),
    /// `metadata.name` is missing or null.
    #[error("metadata.name: required")]
    MissingName,
    /// `metadata.name` or `metadata.namespace` is not a name Kubernetes accepts
    /// ([`crate::names`]).
    #[error("{field}: {value:?} {problem}")]
    InvalidName {
        /// `metadata.name` or `metadata.namespace`.
        field: &'static str,
        /// The name as written.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A field has the wrong type or value, is unknown, or a required one is missing.
    #[error("{path}: {source}")]
    Field {
        /// Dotted path to the field, for example `spec.topology.workers.machineDeployments[0]`.
        path: String,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },
}

/// Parses every document of a (multi-document) YAML manifest into an [`Object`].
///
/// # Guarantees
///
/// - Only `apiVersion: capw.dev/v1alpha1` with a kind of [`KINDS`] is accepted.
/// - Unknown fields are refused at any depth, including in `metadata`; `metadata.name` is
///   required. `status` may be present (for round trips of exported state).
/// - Empty documents (`---` with nothing after it) are skipped; YAML merge keys (`<<`) work.
/// - Objects come back in file order.
///
/// # Errors
///
/// The first document that fails, with its position, kind and name when known, and the path
/// of the offending field.
pub fn parse_manifests(yaml: &str) -> Result<Vec<Object>, ManifestError> {
    if let Some((document, line, column)) = too_deep(yaml) {
        return Err(ManifestError {
            document,
            kind: None,
            name: None,
            reason: ManifestErrorReason::TooDeep { line, column },
        });
    }
    let mut objects = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(yaml).enumerate() {
        let fail = |kind: Option<String>, name: Option<String>, reason| ManifestError {
            document: index + 1,
            kind,
            name,
            reason,
        };
        let value = read_document(document)
            .map_err(|e| fail(None, None, ManifestErrorReason::Syntax(e)))?;
        if value.is_null() {
            continue;
        }
        let kind = value.get("kind").and_then(Value::as_str).map(str::to_owned);
        let name = value
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        parse_object(value)
            .map(|object| objects.push(object))
            .map_err(|reason| fail(kind, name, reason))?;
    }
    Ok(objects)
}

/// Reads one YAML document that is not one of capw's objects (a hosted control plane's
/// Deployment, say) as JSON, with the same guard against deep nesting and merge keys applied;
/// what it holds is left to the caller and the API server to judge.
///
/// # Errors
///
/// [`ManifestErrorReason::TooDeep`] or [`ManifestErrorReason::Syntax`]; a text of more than
/// one document is a syntax error.
pub fn parse_document(yaml: &str) -> Result<Value, ManifestErrorReason> {
    if let Some((_, line, column)) = too_deep(yaml) {
        return Err(ManifestErrorReason::TooDeep { line, column });
    }
    let document = serde_yaml_ng::Deserializer::from_str(yaml);
    read_document(document).map_err(ManifestErrorReason::Syntax)
}

/// The images of a workload object's Pod template (a Deployment's, a StatefulSet's), init
/// containers first, as written; none for an object without a Pod template. What the host
/// tells a hosted plan of each object it applied (`hosted-object.images`).
pub fn pod_template_images(object: &Value) -> Vec<String> {
    let spec = object.pointer("/spec/template/spec");
    ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec?.get(*list)?.as_array())
        .flatten()
        .filter_map(|c| Some(c.get("image")?.as_str()?.to_owned()))
        .collect()
}

/// Deepest nesting of flow collections a manifest may have. The parser refuses nesting past
/// 128 anyway, but only after time that grows with the square of the depth (about 20 s for
/// 100,000 `[`); this limit is far above any real manifest's and cheap to check.
pub const MAX_FLOW_DEPTH: usize = 1024;

/// Where flow collections first nest deeper than [`MAX_FLOW_DEPTH`], as (document, line,
/// column), 1-based; `None` when they never do. A lexical scan in one pass: brackets in
/// quoted scalars and comments are not counted; one in a plain scalar is, which can only
/// make the count higher than the parser's for text no real manifest has.
fn too_deep(yaml: &str) -> Option<(usize, usize, usize)> {
    #[derive(PartialEq)]
    enum In {
        Plain,
        Single,
        Double,
        Comment,
    }
    let mut state = In::Plain;
    let mut depth = 0usize;
    let mut document = 1;
    let mut seen_content = false;
    for (index, line) in yaml.split('\n').enumerate() {
        if state == In::Comment {
            state = In::Plain;
        }
        if state == In::Plain && (line == "---" || line.starts_with("--- ")) {
            if seen_content {
                document += 1;
            }
            seen_content = true;
            depth = 0;
            continue;
        }
        let mut escaped = false;
        let mut previous = ' ';
        for (column, c) in line.chars().enumerate() {
            if !c.is_whitespace() && state == In::Plain && c != '#' {
                seen_content = true;
            }
            match state {
                In::Comment => break,
                In::Single => {
                    if c == '\'' {
                        state = In::Plain;
                    }
                }
                In::Double => {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        state = In::Plain;
                    }
                }
                In::Plain => match c {
                    '#' if previous.is_whitespace() => state = In::Comment,
                    '\'' => state = In::Single,
                    '"' => state = In::Double,
                    '[' | '{' => {
                        depth += 1;
                        if depth > MAX_FLOW_DEPTH {
                            return Some((document, index + 1, column + 1));
                        }
                    }
                    ']' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                },
            }
            previous = c;
        }
    }
    None
}

/// Reads one YAML document as JSON (the data model Kubernetes uses), merge keys applied.
fn read_document(document: serde_yaml_ng::Deserializer<'_>) -> Result<Value, serde_yaml_ng::Error> {
    let mut yaml = serde_yaml_ng::Value::deserialize(document)?;
    yaml.apply_merge()?;
    serde_yaml_ng::from_value(yaml)
}

/// Parses one document already read as JSON (or YAML converted to JSON).
///
/// # Errors
///
/// As [`parse_manifests`], without the document position.
pub fn parse_object(value: Value) -> Result<Object, ManifestErrorReason> {
    let (Some(api_version), Some(kind)) = (
        value.get("apiVersion").and_then(Value::as_str),
        value.get("kind").and_then(Value::as_str),
    ) else {
        return Err(ManifestErrorReason::MissingTypeMeta);
    };
    if api_version != API_VERSION {
        return Err(ManifestErrorReason::UnsupportedApiVersion(
            api_version.into(),
        ));
    }
    check_metadata(&value, kind)?;
    match kind {
        "WasmProvider" => strict(value, |m, spec, status| {
            Object::WasmProvider(WasmProvider {
                metadata: m,
                spec,
                status,
            })
        }),
        "ClusterClass" => strict(value, |m, spec, status| {
            Object::ClusterClass(ClusterClass {
                metadata: m,
                spec,
                status,
            })
        }),
        "Cluster" => strict(value, |m, spec, status| {
            Object::Cluster(Cluster {
                metadata: m,
                spec,
                status,
            })
        }),
        "Machine" => strict(value, |m, spec, status| {
            Object::Machine(Machine {
                metadata: m,
                spec,
                status,
            })
        }),
        other => Err(ManifestErrorReason::UnknownKind(other.into())),
    }
}

fn check_metadata(value: &Value, kind: &str) -> Result<(), ManifestErrorReason> {
    let metadata = value.get("metadata").and_then(Value::as_object);
    for key in metadata.into_iter().flat_map(|m| m.keys()) {
        if !METADATA_FIELDS.contains(&key.as_str()) {
            return Err(ManifestErrorReason::UnknownMetadataField(key.clone()));
        }
    }
    // `name: null` (or `name:` with nothing after it) decodes to no name at all.
    let name = match metadata.and_then(|m| m.get("name")) {
        Some(Value::Null) | None => return Err(ManifestErrorReason::MissingName),
        Some(name) => name,
    };
    // Names as the API server checks them (a name of another type fails to decode later).
    let invalid = |field, value: &str, problem| ManifestErrorReason::InvalidName {
        field,
        value: value.to_owned(),
        problem,
    };
    if let Value::String(name) = name {
        let max = if kind == "Cluster" {
            names::MAX_LABEL
        } else {
            names::MAX_NAME
        };
        if let Some(problem) = names::subdomain_problem(name, max) {
            return Err(invalid("metadata.name", name, problem));
        }
    }
    if let Some(Value::String(namespace)) = metadata.and_then(|m| m.get("namespace"))
        && let Some(problem) = names::label_problem(namespace)
    {
        return Err(invalid("metadata.namespace", namespace, problem));
    }
    Ok(())
}

/// The shape of every capw object, refusing unknown top-level fields (kube's derived types
/// accept them, so documents are decoded through this first).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<S, T> {
    #[serde(rename = "apiVersion")]
    _api_version: IgnoredAny,
    #[serde(rename = "kind")]
    _kind: IgnoredAny,
    metadata: ObjectMeta,
    spec: S,
    #[serde(default = "Option::default")]
    status: Option<T>,
}

fn strict<S, T>(
    value: Value,
    build: impl FnOnce(ObjectMeta, S, Option<T>) -> Object,
) -> Result<Object, ManifestErrorReason>
where
    S: DeserializeOwned,
    T: DeserializeOwned,
{
    let envelope: Envelope<S, T> =
        serde_path_to_error::deserialize(value).map_err(|e| ManifestErrorReason::Field {
            path: e.path().to_string(),
            source: e.into_inner(),
        })?;
    Ok(build(envelope.metadata, envelope.spec, envelope.status))
}
