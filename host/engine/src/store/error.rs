//! What can go wrong in the store.

use super::key::ObjectKey;

/// A store operation that did not happen. Nothing was written when one of these is returned.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The object does not exist.
    #[error("{0} not found")]
    NotFound(ObjectKey),
    /// `create` of an object that exists.
    #[error("{0} already exists")]
    AlreadyExists(ObjectKey),
    /// The write named a `resourceVersion` the object no longer has.
    #[error("{key} was changed meanwhile: resourceVersion {expected} is stale, now {actual}")]
    Conflict {
        /// The object.
        key: ObjectKey,
        /// The version the writer read.
        expected: String,
        /// The version it has.
        actual: String,
    },
    /// The object is not a JSON object with `kind` and `metadata.name`.
    #[error("invalid object: {0}")]
    Invalid(String),
    /// A stored object does not have the shape of its kind.
    #[error("{what} is malformed")]
    Malformed {
        /// The object, `kind namespace/name` where known.
        what: String,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The state file is held by another process.
    #[error("state file {path} is in use by another capw process")]
    Locked {
        /// The file.
        path: String,
    },
    /// Another store behind [`super::ObjectStore`] (a Kubernetes API server) failed or
    /// refused the request.
    #[error("object store")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database failed.
    #[error("state database: {0}")]
    Database(#[source] Box<dyn std::error::Error + Send + Sync>),
}
