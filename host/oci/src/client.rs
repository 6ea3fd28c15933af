//! Talking to a registry: push, resolve and pull, with retries, size limits and digest checks.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use futures_util::StreamExt;
use http::HeaderValue;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::OciImageManifest;
use oci_client::{Client, Reference};
use sha2::{Digest, Sha256};

use crate::artifact::{Artifact, ArtifactDescription, MANIFEST_MEDIA_TYPE, component_layer};
use crate::cache::{digest_hex, sha256_digest};
use crate::credentials::Credentials;
use crate::error::OciError;

/// Bytes sent or received so far, and the total when known; called from the transfer task.
pub type Progress = Arc<dyn Fn(u64, Option<u64>) + Send + Sync>;

/// Size of one upload chunk (a `PATCH` request).
const UPLOAD_CHUNK: usize = 4 << 20;

/// How large a pulled manifest and component may be.
///
/// These bound the memory a hostile or mistaken registry can make the host spend.
#[derive(Debug, Clone, Copy)]
pub struct SizeLimits {
    /// Largest manifest accepted, in bytes.
    pub manifest: u64,
    /// Largest component accepted, in bytes.
    pub component: u64,
}

impl Default for SizeLimits {
    /// 1 MiB manifests, 256 MiB components (a Python provider is about 20 MB).
    fn default() -> Self {
        SizeLimits {
            manifest: 1 << 20,
            component: 256 << 20,
        }
    }
}

/// How transient failures are retried: exponential backoff with jitter.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts after the first one.
    pub retries: usize,
    /// Wait before the first retry; doubled each time.
    pub first_delay: Duration,
    /// Longest wait between two attempts.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Four retries from 200 ms, at most 5 s apart.
    fn default() -> Self {
        RetryPolicy {
            retries: 4,
            first_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
        }
    }
}

/// How to talk to registries.
#[derive(Debug, Clone, Default)]
pub struct ClientSettings {
    /// Registries (`host` or `host:port`) spoken to over plain HTTP; every other one over
    /// HTTPS.
    pub insecure_registries: Vec<String>,
    /// Size limits of pulled content.
    pub limits: SizeLimits,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
}

impl ClientSettings {
    fn client(&self) -> Client {
        // reqwest takes the process's rustls provider (capw-oci brings none of its own): ring,
        // as the rest of capw. Installed here too, so that a program whose first TLS client is
        // this one has it; one installed before stays.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Client::new(ClientConfig {
            protocol: ClientProtocol::HttpsExcept(self.insecure_registries.clone()),
            platform_resolver: None,
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(60)),
            ..ClientConfig::default()
        })
    }

    /// Runs `op` until it succeeds, fails for good, or the retries are spent.
    async fn retry<T, F, Fut>(&self, reference: &str, op: F) -> Result<T, OciError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, OciDistributionError>>,
    {
        let attempts = AtomicUsize::new(0);
        let mut op = op;
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.retry.first_delay)
            .with_max_delay(self.retry.max_delay)
            .with_max_times(self.retry.retries)
            .with_jitter();
        (|| {
            attempts.fetch_add(1, Ordering::Relaxed);
            op()
        })
        .retry(backoff)
        .when(is_transient)
        .notify(|e, after| tracing::debug!(%reference, error = %e, ?after, "registry call failed; retrying"))
        .await
        .map_err(|e| classify(e, reference, attempts.load(Ordering::Relaxed)))
    }
}

/// Parses an OCI reference.
pub(crate) fn parse_reference(reference: &str) -> Result<Reference, OciError> {
    reference
        .parse::<Reference>()
        .map_err(|source| OciError::InvalidReference {
            reference: reference.to_owned(),
            source,
        })
}

/// The registry part of `reference` (`host` or `host:port`), as credentials are keyed.
///
/// # Errors
///
/// [`OciError::InvalidReference`].
pub fn registry_of(reference: &str) -> Result<String, OciError> {
    Ok(parse_reference(reference)?.resolve_registry().to_owned())
}

/// Whether a failure may go away by itself.
fn is_transient(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::RequestError(e) => {
            !e.is_status() || e.status().is_some_and(|s| s.is_server_error())
        }
        OciDistributionError::IoError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code >= 500 || *code == 429,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| e.code == OciErrorCode::Toomanyrequests),
        _ => false,
    }
}

fn classify(e: OciDistributionError, reference: &str, attempts: usize) -> OciError {
    let reference = reference.to_owned();
    let codes = |e: &OciDistributionError, want: &[OciErrorCode]| match e {
        OciDistributionError::RegistryError { envelope, .. } => {
            envelope.errors.iter().any(|x| want.contains(&x.code))
        }
        _ => false,
    };
    let status = match &e {
        OciDistributionError::RequestError(r) => r.status().map(|s| s.as_u16()),
        OciDistributionError::ServerError { code, .. } => Some(*code),
        _ => None,
    };
    let unauthorized = matches!(status, Some(401 | 403))
        || matches!(
            e,
            OciDistributionError::UnauthorizedError { .. }
                | OciDistributionError::AuthenticationFailure(_)
        )
        || codes(&e, &[OciErrorCode::Unauthorized, OciErrorCode::Denied]);
    let not_found = status == Some(404)
        || matches!(e, OciDistributionError::ImageManifestNotFoundError(_))
        || codes(
            &e,
            &[
                OciErrorCode::ManifestUnknown,
                OciErrorCode::NameUnknown,
                OciErrorCode::NotFound,
                OciErrorCode::BlobUnknown,
            ],
        );
    if unauthorized {
        OciError::Unauthorized {
            reference,
            source: e,
        }
    } else if not_found {
        OciError::NotFound {
            reference,
            source: e,
        }
    } else if is_transient(&e) {
        OciError::Unavailable {
            reference,
            attempts,
            source: e,
        }
    } else {
        OciError::Registry {
            reference,
            source: e,
        }
    }
}

/// What a push published.
#[derive(Debug, Clone)]
pub struct PushOutcome {
    /// The reference with the manifest's digest, `registry/repo@sha256:…`.
    pub pinned_reference: String,
    /// The manifest digest: what a `WasmProvider` pins.
    pub digest: String,
    /// The component layer's digest.
    pub component_digest: String,
}

/// Publishes `component` at `reference` in the Wasm OCI artifact layout, with `description`'s
/// annotations on the manifest and its component object in the config (a map of annotations
/// alone does for a config without one). Blobs the registry already has are not sent again.
///
/// # Errors
///
/// [`OciError`]: an invalid reference, refused credentials, an unreachable registry.
pub async fn push(
    settings: &ClientSettings,
    reference: &str,
    component: bytes::Bytes,
    description: impl Into<ArtifactDescription>,
    credentials: &Credentials,
    progress: Option<Progress>,
) -> Result<PushOutcome, OciError> {
    let image = parse_reference(reference)?;
    let client = settings.client();
    let auth = credentials.to_registry_auth();
    let component_digest = sha256_digest(&component);
    let artifact = Artifact::new(component.len(), &component_digest, description.into()).map_err(
        |source| OciError::Json {
            reference: reference.to_owned(),
            what: "config",
            source,
        },
    )?;
    let total = component.len() as u64;
    settings
        .retry(reference, || {
            client.auth(&image, &auth, oci_client::RegistryOperation::Push)
        })
        .await?;
    let present = settings
        .retry(reference, || client.blob_exists(&image, &component_digest))
        .await?;
    if !present {
        settings
            .retry(reference, || {
                let chunks: Vec<bytes::Bytes> = (0..component.len())
                    .step_by(UPLOAD_CHUNK)
                    .map(|at| component.slice(at..(at + UPLOAD_CHUNK).min(component.len())))
                    .collect();
                let progress = progress.clone();
                let mut sent = 0u64;
                let stream = futures_util::stream::iter(chunks).map(move |chunk| {
                    sent += chunk.len() as u64;
                    if let Some(p) = &progress {
                        p(sent, Some(total));
                    }
                    Ok::<_, OciDistributionError>(chunk)
                });
                client.push_blob_stream(&image, stream, &component_digest, Some(total))
            })
            .await?;
    } else if let Some(p) = &progress {
        p(total, Some(total));
    }
    let config = bytes::Bytes::from(artifact.config);
    settings
        .retry(reference, || {
            client.push_blob(&image, config.clone(), &artifact.manifest.config.digest)
        })
        .await?;
    let manifest = manifest_bytes(&artifact.manifest, reference)?;
    let digest = sha256_digest(&manifest);
    settings
        .retry(reference, || {
            client.push_manifest_raw(
                &image,
                manifest.clone(),
                HeaderValue::from_static(MANIFEST_MEDIA_TYPE),
            )
        })
        .await?;
    Ok(PushOutcome {
        pinned_reference: format!("{}/{}@{digest}", image.registry(), image.repository()),
        digest,
        component_digest,
    })
}

fn manifest_bytes(manifest: &OciImageManifest, reference: &str) -> Result<bytes::Bytes, OciError> {
    serde_json::to_vec(manifest)
        .map(bytes::Bytes::from)
        .map_err(|source| OciError::Json {
            reference: reference.to_owned(),
            what: "manifest",
            source,
        })
}

/// The manifest digest `reference` resolves to now (a `HEAD` request; nothing is
/// downloaded).
///
/// # Errors
///
/// [`OciError`], as for [`pull`].
pub async fn resolve(
    settings: &ClientSettings,
    reference: &str,
    credentials: &Credentials,
) -> Result<String, OciError> {
    let image = parse_reference(reference)?;
    let client = settings.client();
    let auth = credentials.to_registry_auth();
    settings
        .retry(reference, || client.fetch_manifest_digest(&image, &auth))
        .await
}

/// A pulled component.
#[derive(Debug, Clone)]
pub struct PullOutcome {
    /// The manifest digest.
    pub digest: String,
    /// The manifest, as served (its digest is `digest`).
    pub manifest: bytes::Bytes,
    /// The component layer's digest.
    pub component_digest: String,
    /// The component.
    pub component: bytes::Bytes,
    /// The manifest's annotations.
    pub annotations: BTreeMap<String, String>,
}

/// A manifest checked for size and layout.
pub(crate) struct CheckedManifest {
    pub digest: String,
    pub bytes: bytes::Bytes,
    pub manifest: OciImageManifest,
}

impl CheckedManifest {
    /// Parses `bytes` (whose digest is `digest`) as a Wasm component manifest.
    pub(crate) fn parse(
        reference: &str,
        digest: String,
        bytes: bytes::Bytes,
        limits: &SizeLimits,
    ) -> Result<Self, OciError> {
        if bytes.len() as u64 > limits.manifest {
            return Err(OciError::TooLarge {
                reference: reference.to_owned(),
                what: "manifest",
                size: bytes.len() as u64,
                limit: limits.manifest,
            });
        }
        let manifest: OciImageManifest =
            serde_json::from_slice(&bytes).map_err(|source| OciError::Json {
                reference: reference.to_owned(),
                what: "manifest",
                source,
            })?;
        let layer = component_layer(&manifest).map_err(|reason| OciError::NotAComponent {
            reference: reference.to_owned(),
            reason,
        })?;
        digest_hex(&layer.digest)?;
        if layer.size < 0 || layer.size as u64 > limits.component {
            return Err(OciError::TooLarge {
                reference: reference.to_owned(),
                what: "component",
                size: layer.size.max(0) as u64,
                limit: limits.component,
            });
        }
        Ok(CheckedManifest {
            digest,
            bytes,
            manifest,
        })
    }

    pub(crate) fn component_digest(&self) -> &str {
        // `parse` made sure there is exactly one.
        component_layer(&self.manifest)
            .map(|l| l.digest.as_str())
            .unwrap_or_default()
    }

    pub(crate) fn annotations(&self) -> BTreeMap<String, String> {
        self.manifest.annotations.clone().unwrap_or_default()
    }
}

/// The manifest `reference` names now, checked against `pinned` when given.
pub(crate) async fn pull_manifest(
    settings: &ClientSettings,
    reference: &str,
    credentials: &Credentials,
    pinned: Option<&str>,
) -> Result<CheckedManifest, OciError> {
    let image = parse_reference(reference)?;
    let client = settings.client();
    let auth = credentials.to_registry_auth();
    let (bytes, digest) = settings
        .retry(reference, || {
            client.pull_manifest_raw(&image, &auth, &[MANIFEST_MEDIA_TYPE])
        })
        .await?;
    let actual = sha256_digest(&bytes);
    if actual != digest {
        return Err(OciError::ContentCorrupt {
            reference: reference.to_owned(),
            what: "manifest",
            expected: digest,
            actual,
        });
    }
    if let Some(pinned) = pinned
        && pinned != digest
    {
        return Err(OciError::DigestMismatch {
            reference: reference.to_owned(),
            pinned: pinned.to_owned(),
            actual: digest,
        });
    }
    CheckedManifest::parse(reference, digest, bytes, &settings.limits)
}

/// Downloads the component layer of `manifest`, checking size and digest.
pub(crate) async fn pull_component(
    settings: &ClientSettings,
    reference: &str,
    credentials: &Credentials,
    manifest: &CheckedManifest,
    progress: Option<Progress>,
) -> Result<bytes::Bytes, OciError> {
    let image = parse_reference(reference)?;
    let client = settings.client();
    // The client authenticates per registry; the blob request reuses it.
    let auth = credentials.to_registry_auth();
    settings
        .retry(reference, || {
            client.auth(&image, &auth, oci_client::RegistryOperation::Pull)
        })
        .await?;
    let expected = manifest.component_digest().to_owned();
    let limit = settings.limits.component;
    let too_large = |size| OciError::TooLarge {
        reference: reference.to_owned(),
        what: "component",
        size,
        limit,
    };
    let stream = settings
        .retry(reference, || {
            client.pull_blob_stream(&image, expected.as_str())
        })
        .await?;
    if let Some(len) = stream.content_length
        && len > limit
    {
        return Err(too_large(len));
    }
    let total = stream.content_length;
    let mut body = Vec::with_capacity(total.unwrap_or(0).min(limit) as usize);
    let mut hasher = Sha256::new();
    let mut chunks = stream.stream;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| OciError::Unavailable {
            reference: reference.to_owned(),
            attempts: 1,
            source: OciDistributionError::IoError(e),
        })?;
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(too_large((body.len() + chunk.len()) as u64));
        }
        hasher.update(&chunk);
        body.extend_from_slice(&chunk);
        if let Some(p) = &progress {
            p(body.len() as u64, total);
        }
    }
    let actual = format!("sha256:{}", hex::encode(hasher.finalize()));
    if actual != expected {
        return Err(OciError::ContentCorrupt {
            reference: reference.to_owned(),
            what: "component",
            expected,
            actual,
        });
    }
    Ok(bytes::Bytes::from(body))
}

/// Downloads the component at `reference` (no cache), refusing any other manifest digest
/// than `pinned` when given.
///
/// # Errors
///
/// [`OciError`]: [`OciError::DigestMismatch`], [`OciError::Unauthorized`],
/// [`OciError::NotFound`], [`OciError::TooLarge`], [`OciError::Unavailable`], ...
pub async fn pull(
    settings: &ClientSettings,
    reference: &str,
    credentials: &Credentials,
    pinned: Option<&str>,
    progress: Option<Progress>,
) -> Result<PullOutcome, OciError> {
    let manifest = pull_manifest(settings, reference, credentials, pinned).await?;
    let component = pull_component(settings, reference, credentials, &manifest, progress).await?;
    Ok(PullOutcome {
        component_digest: manifest.component_digest().to_owned(),
        annotations: manifest.annotations(),
        digest: manifest.digest,
        manifest: manifest.bytes,
        component,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reqwest brings no TLS provider of its own here: a program that installed none (nothing
    /// in this test binary does) gets ring from the first client, not reqwest's panic.
    #[test]
    fn a_client_is_made_where_no_tls_provider_was_installed() {
        let _client = ClientSettings::default().client();
        let provider = rustls::crypto::CryptoProvider::get_default().expect("a provider");
        let ring = rustls::crypto::ring::default_provider();
        assert_eq!(
            provider.cipher_suites.len(),
            ring.cipher_suites.len(),
            "the process's provider is ring's"
        );
    }

    #[test]
    fn only_transient_failures_are_retried() {
        let server = |code| OciDistributionError::ServerError {
            code,
            url: "u".into(),
            message: String::new(),
        };
        assert!(is_transient(&server(503)));
        assert!(is_transient(&server(429)));
        assert!(!is_transient(&server(404)));
        assert!(!is_transient(&OciDistributionError::UnauthorizedError {
            url: "u".into()
        }));
        assert!(matches!(
            classify(server(401), "r", 1),
            OciError::Unauthorized { .. }
        ));
        assert!(matches!(
            classify(server(404), "r", 1),
            OciError::NotFound { .. }
        ));
        assert!(matches!(
            classify(server(502), "r", 5),
            OciError::Unavailable { attempts: 5, .. }
        ));
    }

    #[test]
    fn oversized_manifests_and_components_are_refused() {
        let limits = SizeLimits {
            manifest: 100_000,
            component: 10,
        };
        let artifact = Artifact::new(11, &sha256_digest(b"x"), BTreeMap::new().into()).unwrap();
        let bytes = manifest_bytes(&artifact.manifest, "r").unwrap();
        let err = CheckedManifest::parse("r", sha256_digest(&bytes), bytes.clone(), &limits)
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "component of r is 11 bytes, over the limit of 10"
        );
        let tiny = SizeLimits {
            manifest: 10,
            component: 100,
        };
        let err = CheckedManifest::parse("r", sha256_digest(&bytes), bytes, &tiny)
            .err()
            .unwrap();
        assert!(matches!(
            err,
            OciError::TooLarge {
                what: "manifest",
                ..
            }
        ));
    }
}
