//! From an OCI source to a component's bytes: the content cache first, the registry when the
//! pull policy or a miss asks for it.

use std::collections::BTreeMap;

use capw_api::PullPolicy;

use crate::cache::{ContentCache, digest_hex};
use crate::client::{
    CheckedManifest, ClientSettings, Progress, parse_reference, pull_component, pull_manifest,
    resolve,
};
use crate::credentials::Credentials;
use crate::error::OciError;

/// What to fetch.
#[derive(Debug, Clone)]
pub struct FetchRequest {
    /// The OCI reference (`registry/repo:tag`, or `registry/repo@sha256:…`).
    pub reference: String,
    /// The manifest digest pinned; nothing else is accepted.
    pub digest: Option<String>,
    /// When to ask the registry.
    pub pull_policy: PullPolicy,
    /// Speak plain HTTP to this reference's registry.
    pub insecure: bool,
    /// How to authenticate.
    pub credentials: Credentials,
}

/// Where fetched bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The content cache; the registry was not asked.
    Cache,
    /// The registry was asked for the digest; the content was cached already.
    Resolved,
    /// The component was downloaded.
    Pulled,
    /// The registry could not be reached; the last digest the reference resolved to was
    /// served from the cache.
    CacheFallback,
}

/// A fetched component.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The manifest digest (`sha256:…`).
    pub digest: String,
    /// The component layer's digest.
    pub component_digest: String,
    /// The component.
    pub component: bytes::Bytes,
    /// The manifest's annotations.
    pub annotations: BTreeMap<String, String>,
    /// Where it came from.
    pub origin: Origin,
}

/// Fetches components through the content cache.
#[derive(Debug)]
pub struct Fetcher {
    settings: ClientSettings,
    cache: ContentCache,
}

impl Fetcher {
    /// A fetcher with `settings`, caching in `cache`.
    pub fn new(settings: ClientSettings, cache: ContentCache) -> Self {
        Fetcher { settings, cache }
    }

    /// The content cache.
    pub fn cache(&self) -> &ContentCache {
        &self.cache
    }

    /// The component `request` names.
    ///
    /// # Guarantees
    ///
    /// - With `IfNotPresent`, a pinned digest (or a reference resolved before) that is cached
    ///   is served without asking the registry: a restart pulls and verifies from disk only.
    /// - With `Always`, the registry is asked what the reference resolves to (a `HEAD`); the
    ///   component is downloaded only when that digest is not cached. When the registry cannot
    ///   be reached, the last digest the reference resolved to is served from the cache
    ///   ([`Origin::CacheFallback`]), never another one than the pinned digest.
    /// - Whatever the origin, the manifest digest equals the pinned one, and the component's
    ///   bytes hash to the digest the manifest names.
    ///
    /// # Errors
    ///
    /// [`OciError`]; its [`OciError::reason`] is meant for a condition.
    pub async fn fetch(
        &self,
        request: &FetchRequest,
        progress: Option<Progress>,
    ) -> Result<Fetched, OciError> {
        let reference = request.reference.as_str();
        let image = parse_reference(reference)?;
        let pinned = match (&request.digest, image.digest()) {
            (Some(d), Some(r)) if d != r => {
                return Err(OciError::DigestMismatch {
                    reference: reference.to_owned(),
                    pinned: d.clone(),
                    actual: r.to_owned(),
                });
            }
            (Some(d), _) => Some(d.clone()),
            (None, r) => r.map(str::to_owned),
        };
        if let Some(p) = &pinned {
            digest_hex(p)?;
        }
        let mut settings = self.settings.clone();
        if request.insecure {
            settings
                .insecure_registries
                .push(image.resolve_registry().to_owned());
        }
        let known = match &pinned {
            Some(p) => Some(p.clone()),
            None => self.cache.resolved(reference)?,
        };
        if request.pull_policy == PullPolicy::IfNotPresent
            && let Some(digest) = &known
            && let Some(fetched) = self.cached(reference, digest, Origin::Cache)?
        {
            return Ok(fetched);
        }
        let current = match resolve(&settings, reference, &request.credentials).await {
            Ok(d) => d,
            Err(e @ OciError::Unavailable { .. }) => {
                let Some(digest) = &known else { return Err(e) };
                return match self.cached(reference, digest, Origin::CacheFallback)? {
                    Some(f) => {
                        tracing::warn!(%reference, %digest, error = %e, "registry unreachable; serving the cached component");
                        Ok(f)
                    }
                    None => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        if let Some(p) = &pinned
            && *p != current
        {
            return Err(OciError::DigestMismatch {
                reference: reference.to_owned(),
                pinned: p.clone(),
                actual: current,
            });
        }
        if let Some(fetched) = self.cached(reference, &current, Origin::Resolved)? {
            self.cache.record(reference, &current)?;
            return Ok(fetched);
        }
        let manifest =
            pull_manifest(&settings, reference, &request.credentials, Some(&current)).await?;
        let component = match self.cache.blob(manifest.component_digest())? {
            Some(bytes) => bytes::Bytes::from(bytes),
            None => {
                pull_component(
                    &settings,
                    reference,
                    &request.credentials,
                    &manifest,
                    progress,
                )
                .await?
            }
        };
        self.cache.put_blob(&component)?;
        self.cache.put_blob(&manifest.bytes)?;
        self.cache.record(reference, &manifest.digest)?;
        Ok(Fetched {
            component_digest: manifest.component_digest().to_owned(),
            annotations: manifest.annotations(),
            digest: manifest.digest,
            component,
            origin: Origin::Pulled,
        })
    }

    /// The cached component of manifest `digest`, if both the manifest and the component are
    /// cached and sound.
    fn cached(
        &self,
        reference: &str,
        digest: &str,
        origin: Origin,
    ) -> Result<Option<Fetched>, OciError> {
        let Some(bytes) = self.cache.blob(digest)? else {
            return Ok(None);
        };
        let manifest = CheckedManifest::parse(
            reference,
            digest.to_owned(),
            bytes::Bytes::from(bytes),
            &self.settings.limits,
        )?;
        let Some(component) = self.cache.blob(manifest.component_digest())? else {
            return Ok(None);
        };
        Ok(Some(Fetched {
            component_digest: manifest.component_digest().to_owned(),
            annotations: manifest.annotations(),
            digest: manifest.digest,
            component: bytes::Bytes::from(component),
            origin,
        }))
    }
}
