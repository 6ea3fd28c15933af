//! Writing objects back as a YAML manifest that [`crate::parse_manifests`] reads.

use crate::object::Object;

/// An object could not be written as YAML.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The object could not be turned into JSON (not expected for capw's types).
    #[error("cannot encode {kind} {name:?} as JSON")]
    Json {
        /// The object's kind.
        kind: &'static str,
        /// The object's name.
        name: String,
        /// The encoder's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// The JSON could not be written as YAML.
    #[error("cannot write {kind} {name:?} as YAML")]
    Yaml {
        /// The object's kind.
        kind: &'static str,
        /// The object's name.
        name: String,
        /// The encoder's complaint.
        #[source]
        source: serde_yaml_ng::Error,
    },
}

/// Writes `objects` as one multi-document YAML manifest, in order.
///
/// Goes through JSON on purpose: serializing the types straight to YAML would write enums
/// (such as `spec.source`) as YAML tags (`!file`), which Kubernetes tools do not read.
///
/// # Guarantees
///
/// `parse_manifests(&write_manifests(objects)?)` gives back `objects`.
///
/// # Errors
///
/// [`WriteError`] naming the object that could not be encoded.
pub fn write_manifests(objects: &[Object]) -> Result<String, WriteError> {
    let mut out = String::new();
    for object in objects {
        let (kind, name) = (object.kind(), object.name().to_owned());
        let json = object.to_json().map_err(|source| WriteError::Json {
            kind,
            name: name.clone(),
            source,
        })?;
        let yaml = serde_yaml_ng::to_string(&json).map_err(|source| WriteError::Yaml {
            kind,
            name,
            source,
        })?;
        out.push_str("---\n");
        out.push_str(&yaml);
    }
    Ok(out)
}
