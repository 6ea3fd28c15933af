//! Provider components in OCI registries.
//!
//! Start with [`Fetcher::fetch`]: it turns an OCI source (reference, optional pinned digest,
//! pull policy, credentials) into the component's bytes and manifest digest, from the on-disk
//! [`ContentCache`] when it can and from the registry when it must. [`push`] publishes a
//! component; [`pull`] downloads one without the cache.
//!
//! # Artifact layout
//!
//! Components are stored in the layout of the CNCF Wasm OCI artifact, so other tools of the
//! Wasm ecosystem push and pull the same artifacts: an OCI image manifest whose `artifactType`
//! and config media type are [`WASM_CONFIG_MEDIA_TYPE`], with one layer of
//! [`WASM_LAYER_MEDIA_TYPE`] holding the component, and a config that describes the
//! component's interfaces ([`ComponentDescription`]). See [`artifact`].
//!
//! # Guarantees
//!
//! - The manifest and the layer are checked against their digests; a pinned digest that does
//!   not match what the registry serves is refused ([`OciError::DigestMismatch`]).
//! - Plain HTTP is spoken only to registries listed as insecure.
//! - No manifest or component larger than the [`SizeLimits`] is read into memory.
//! - Transient failures (connection errors, 5xx, 429) are retried with exponential backoff;
//!   refusals (401, 404, digest mismatch) are not.
//! - Credentials never appear in errors or logs.

pub mod artifact;
mod cache;
mod client;
mod credentials;
mod error;
mod fetch;

pub use artifact::{
    ANNOTATION_CONTRACT_VERSION, ANNOTATION_EXTENSION_POINTS, ANNOTATION_PROVIDER_NAME,
    ANNOTATION_PROVIDER_VERSION, ANNOTATION_TITLE, ArtifactDescription, ComponentDescription,
    WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE, WasmConfig,
};
pub use cache::{ContentCache, check_digest};
pub use client::{
    ClientSettings, Progress, PullOutcome, PushOutcome, RetryPolicy, SizeLimits, pull, push,
    registry_of, resolve,
};
pub use credentials::{CREDENTIAL_KEYS, Credentials, CredentialsError};
pub use error::OciError;
pub use fetch::{FetchRequest, Fetched, Fetcher, Origin};
