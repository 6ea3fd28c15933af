//! What can go wrong talking to a registry or the content cache.

/// A failed push, pull or cache access.
///
/// Messages name the reference or digest concerned and never carry credentials.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The reference is not a valid OCI reference.
    #[error("invalid OCI reference {reference:?}")]
    InvalidReference {
        reference: String,
        #[source]
        source: oci_client::ParseError,
    },
    /// A digest is not of the form `sha256:<64 hex digits>`.
    #[error("invalid digest {digest:?}: expected sha256:<64 hex digits>")]
    InvalidDigest { digest: String },
    /// The registry serves other content than the pinned digest.
    #[error("{reference} resolves to {actual}, but the digest pinned is {pinned}")]
    DigestMismatch {
        reference: String,
        pinned: String,
        actual: String,
    },
    /// Content whose bytes do not hash to the digest that names it.
    #[error("{what} of {reference}: content hashes to {actual}, expected {expected}")]
    ContentCorrupt {
        reference: String,
        what: &'static str,
        expected: String,
        actual: String,
    },
    /// The registry refused the credentials (or asked for some and got none).
    #[error("registry refused access to {reference}: check the credentials")]
    Unauthorized {
        reference: String,
        #[source]
        source: oci_client::errors::OciDistributionError,
    },
    /// The reference names nothing in the registry.
    #[error("{reference} not found in the registry")]
    NotFound {
        reference: String,
        #[source]
        source: oci_client::errors::OciDistributionError,
    },
    /// The registry could not be reached or failed, after every retry.
    #[error("registry of {reference} unreachable or failing after {attempts} attempt(s)")]
    Unavailable {
        reference: String,
        attempts: usize,
        #[source]
        source: oci_client::errors::OciDistributionError,
    },
    /// Another registry error (a protocol violation, a refused upload, ...).
    #[error("registry error for {reference}")]
    Registry {
        reference: String,
        #[source]
        source: oci_client::errors::OciDistributionError,
    },
    /// The artifact is not a Wasm component artifact as this crate understands it.
    #[error("{reference} is not a Wasm component artifact: {reason}")]
    NotAComponent { reference: String, reason: String },
    /// A manifest or component is larger than allowed.
    #[error("{what} of {reference} is {size} bytes, over the limit of {limit}")]
    TooLarge {
        reference: String,
        what: &'static str,
        size: u64,
        limit: u64,
    },
    /// The content cache could not be read or written.
    #[error("content cache {op} {name}")]
    Cache {
        op: &'static str,
        name: String,
        #[source]
        source: std::io::Error,
    },
    /// Nothing cached for the reference and the registry was not asked (offline).
    #[error("{reference}: not in the content cache")]
    NotCached { reference: String },
    /// A JSON document (manifest, config) could not be read or written.
    #[error("{what} of {reference}")]
    Json {
        reference: String,
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl OciError {
    /// A short, stable reason for conditions (`DigestMismatch`, `Unauthorized`, ...).
    pub fn reason(&self) -> &'static str {
        match self {
            OciError::InvalidReference { .. } | OciError::InvalidDigest { .. } => "InvalidSource",
            OciError::DigestMismatch { .. } => "DigestMismatch",
            OciError::ContentCorrupt { .. } => "ContentCorrupt",
            OciError::Unauthorized { .. } => "Unauthorized",
            OciError::NotFound { .. } => "NotFound",
            OciError::Unavailable { .. } => "RegistryUnavailable",
            OciError::Registry { .. } | OciError::Json { .. } => "RegistryError",
            OciError::NotAComponent { .. } => "NotAComponent",
            OciError::TooLarge { .. } => "TooLarge",
            OciError::Cache { .. } => "CacheError",
            OciError::NotCached { .. } => "NotCached",
        }
    }
}
