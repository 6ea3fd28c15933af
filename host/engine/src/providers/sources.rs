//! Provider sources and secret grants that live in the object store: `configMap` sources and,
//! in Kubernetes mode, `Secret` objects behind secret grants.
//!
//! Kept apart from the registry so each source is one function: the registry asks
//! [`config_map_component`] for the bytes of a `configMap` source and
//! [`StoreSecrets::resolve`] for the values of secret grants.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_api::{ConfigMapSource, SecretGrant, SecretRef};
use capw_runtime::Secret;
use capw_text::error_chain as chain;
use serde_json::Value;

use super::secrets::FileSecrets;
use crate::store::{ObjectKey, ObjectStore, StoreError};

/// Largest value a `configMap` source may hold, as stored (compressed or not). The API server
/// refuses a ConfigMap whose data is over 1 MiB; this bound makes the limit explicit and keeps
/// a huge `data` string from being decoded at all.
pub const MAX_CONFIG_MAP_COMPONENT: usize = 3 << 19;

/// The first bytes of a gzip stream (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Why a `configMap` source gave no component.
#[derive(Debug, thiserror::Error)]
pub enum ConfigMapSourceError {
    /// The ConfigMap does not exist.
    #[error("ConfigMap {namespace}/{name} not found")]
    NotFound {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// The ConfigMap has no such key in `binaryData` (or `data`).
    #[error("ConfigMap {namespace}/{name} has no key {key:?} in binaryData")]
    NoKey {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The missing key.
        key: String,
    },
    /// The value is not valid base64.
    #[error("ConfigMap {namespace}/{name} key {key:?} is not base64")]
    NotBase64 {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The key.
        key: String,
    },
    /// The component is larger than [`MAX_CONFIG_MAP_COMPONENT`].
    #[error("ConfigMap {namespace}/{name} key {key:?} holds {size} bytes, more than {max}")]
    TooLarge {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The key.
        key: String,
        /// Size of the value as stored.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The value is gzip (by its first bytes) but does not decompress.
    #[error("ConfigMap {namespace}/{name} key {key:?} is gzip but does not decompress: {reason}")]
    NotGzip {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The key.
        key: String,
        /// The decoder's complaint.
        reason: String,
    },
    /// The value decompresses to more than a component may be
    /// ([`capw_runtime::MAX_COMPONENT_BYTES`]).
    #[error("ConfigMap {namespace}/{name} key {key:?} decompresses to more than {max} bytes")]
    TooLargeDecompressed {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The key.
        key: String,
        /// The limit.
        max: usize,
    },
    /// The store failed.
    #[error("reading ConfigMap")]
    Store(#[from] StoreError),
}

/// The component bytes of a `configMap` source: `binaryData[key]` (base64, as the API server
/// keeps it), else `data[key]` (text, for `.wat`-free tests and odd tooling). A value that
/// is gzip (it starts with gzip's magic bytes, as `gzip -9 provider.wasm` writes it) is
/// decompressed, so that components larger than a ConfigMap holds fit: the component, and
/// its digest, are the decompressed bytes.
///
/// # Errors
///
/// [`ConfigMapSourceError`] naming the ConfigMap and key when it is missing, not base64, too
/// large (stored or decompressed) or broken gzip.
pub async fn config_map_component(
    store: &dyn ObjectStore,
    source: &ConfigMapSource,
) -> Result<Vec<u8>, ConfigMapSourceError> {
    let stored = stored_value(store, source).await?;
    if !stored.starts_with(&GZIP_MAGIC) {
        return Ok(stored);
    }
    gunzip(&stored, capw_runtime::MAX_COMPONENT_BYTES).map_err(|e| match e {
        Gunzip::TooLarge => ConfigMapSourceError::TooLargeDecompressed {
            namespace: source.namespace.clone(),
            name: source.name.clone(),
            key: source.key.clone(),
            max: capw_runtime::MAX_COMPONENT_BYTES,
        },
        Gunzip::Broken(reason) => ConfigMapSourceError::NotGzip {
            namespace: source.namespace.clone(),
            name: source.name.clone(),
            key: source.key.clone(),
            reason,
        },
    })
}

/// Why a gzip value gave no component.
#[derive(Debug, PartialEq)]
enum Gunzip {
    /// It decompresses to more than the limit.
    TooLarge,
    /// It does not decompress.
    Broken(String),
}

/// The decompressed bytes of the gzip stream `compressed`, at most `max` of them: a small
/// value that decompresses to gigabytes is refused once past `max`, not inflated.
fn gunzip(compressed: &[u8], max: usize) -> Result<Vec<u8>, Gunzip> {
    use std::io::Read as _;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(compressed)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Gunzip::Broken(e.to_string()))?;
    if out.len() > max {
        return Err(Gunzip::TooLarge);
    }
    Ok(out)
}

/// The value of a `configMap` source's key, as stored.
async fn stored_value(
    store: &dyn ObjectStore,
    source: &ConfigMapSource,
) -> Result<Vec<u8>, ConfigMapSourceError> {
    let key = ObjectKey::namespaced("ConfigMap", &source.namespace, &source.name);
    let object = store
        .get(&key)
        .await?
        .ok_or_else(|| ConfigMapSourceError::NotFound {
            namespace: source.namespace.clone(),
            name: source.name.clone(),
        })?;
    let too_large = |size: usize| ConfigMapSourceError::TooLarge {
        namespace: source.namespace.clone(),
        name: source.name.clone(),
        key: source.key.clone(),
        size,
        max: MAX_CONFIG_MAP_COMPONENT,
    };
    if let Some(encoded) = object
        .get("binaryData")
        .and_then(|d| d.get(&source.key))
        .and_then(Value::as_str)
    {
        // base64 is 4 bytes per 3: refuse before decoding.
        if encoded.len() / 4 * 3 > MAX_CONFIG_MAP_COMPONENT {
            return Err(too_large(encoded.len() / 4 * 3));
        }
        return STANDARD
            .decode(encoded)
            .map_err(|_| ConfigMapSourceError::NotBase64 {
                namespace: source.namespace.clone(),
                name: source.name.clone(),
                key: source.key.clone(),
            });
    }
    match object
        .get("data")
        .and_then(|d| d.get(&source.key))
        .and_then(Value::as_str)
    {
        Some(text) if text.len() > MAX_CONFIG_MAP_COMPONENT => Err(too_large(text.len())),
        Some(text) => Ok(text.as_bytes().to_vec()),
        None => Err(ConfigMapSourceError::NoKey {
            namespace: source.namespace.clone(),
            name: source.name.clone(),
            key: source.key.clone(),
        }),
    }
}

#[cfg(test)]
mod gzip_tests {
    use std::io::Write as _;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn gzip_gives_back_the_component() {
        let component = b"\0asm\x0d\0\x01\0 and the rest of a component".repeat(1000);
        assert_eq!(gunzip(&gzip(&component), 1 << 20), Ok(component));
    }

    #[test]
    fn a_bomb_is_refused_once_past_the_limit() {
        let zeros = vec![0u8; 8 << 20];
        let bomb = gzip(&zeros);
        assert!(bomb.len() < 64 << 10, "{} bytes", bomb.len());
        assert_eq!(gunzip(&bomb, 1 << 20), Err(Gunzip::TooLarge));
        assert_eq!(gunzip(&bomb, 8 << 20).map(|b| b.len()), Ok(8 << 20));
    }

    #[test]
    fn broken_gzip_says_so() {
        let mut broken = gzip(b"a component");
        broken.truncate(broken.len() - 6);
        assert!(matches!(gunzip(&broken, 1 << 20), Err(Gunzip::Broken(_))));
    }
}

/// Secret grants resolved from `Secret` objects in the store (Kubernetes mode).
///
/// A grant `{secretRef: {namespace, name, key}}` reads `data[key]` of Secret
/// `namespace/name` (`default_namespace` when the reference names none); without `key`, the
/// Secret's only key. A missing Secret or key means "granted, but not found".
#[derive(Debug)]
pub struct StoreSecrets<'a> {
    store: &'a dyn ObjectStore,
    default_namespace: &'a str,
}

/// A secret grant that cannot be resolved for another reason than absence.
#[derive(Debug, thiserror::Error)]
pub enum StoreSecretError {
    /// The store failed.
    #[error("reading Secret {secret} (grant {grant:?})")]
    Store {
        /// The grant name.
        grant: String,
        /// `namespace/name`.
        secret: String,
        /// The store's failure.
        #[source]
        source: StoreError,
    },
    /// The Secret's value is not base64 (never the case for a Secret the API server stored).
    #[error("Secret {secret} (grant {grant:?}) holds a value that is not base64")]
    NotBase64 {
        /// The grant name.
        grant: String,
        /// `namespace/name`.
        secret: String,
    },
}

/// Where the secrets that objects name are read: the local mode's files
/// (`<state-dir>/secrets/<name>/<key>`), or `Secret` objects of the store (the Kubernetes
/// mode). The one place both modes resolve a reference to a secret: the grants of a
/// WasmProvider and the registry credentials of its `oci` source alike.
pub(crate) enum SecretsIn<'a> {
    /// The local mode's files.
    Files(&'a FileSecrets),
    /// `Secret` objects.
    Store(StoreSecrets<'a>),
}

impl SecretsIn<'_> {
    /// The value of each grant, `None` when its secret or key does not exist. The error
    /// names the grant and the secret, never a value.
    pub(crate) async fn grants(
        &self,
        grants: &[SecretGrant],
    ) -> Result<BTreeMap<String, Option<Secret>>, String> {
        match self {
            SecretsIn::Files(files) => files.resolve(grants).map_err(|e| chain(&e)),
            SecretsIn::Store(store) => store.resolve(grants).await.map_err(|e| chain(&e)),
        }
    }

    /// Those of `keys` the secret `secret` holds, by key (`what` names the reference in
    /// errors). A secret that does not exist holds none. The error names the secret, never
    /// a value.
    pub(crate) async fn keys(
        &self,
        what: &str,
        secret: &SecretRef,
        keys: &[&str],
    ) -> Result<BTreeMap<String, Vec<u8>>, String> {
        match self {
            SecretsIn::Files(files) => files
                .read_keys(&secret.name, keys)
                .map_err(|e| format!("reading secret {:?} ({what}): {e}", secret.name)),
            SecretsIn::Store(store) => store
                .read_keys(what, secret, keys)
                .await
                .map_err(|e| chain(&e)),
        }
    }
}

impl<'a> StoreSecrets<'a> {
    /// Those of `keys` Secret `secret` holds, by key, decoded; none when it does not exist.
    /// `what` names the reference in errors.
    ///
    /// # Errors
    ///
    /// [`StoreSecretError`] when the store fails or a value is not base64, naming the
    /// Secret, never a value.
    pub async fn read_keys(
        &self,
        what: &str,
        secret: &SecretRef,
        keys: &[&str],
    ) -> Result<BTreeMap<String, Vec<u8>>, StoreSecretError> {
        let (shown, data) = self.data(what, secret).await?;
        let mut out = BTreeMap::new();
        for key in keys {
            if let Some(encoded) = data
                .as_ref()
                .and_then(|d| d.get(*key))
                .and_then(Value::as_str)
            {
                let bytes = STANDARD
                    .decode(encoded)
                    .map_err(|_| StoreSecretError::NotBase64 {
                        grant: what.to_owned(),
                        secret: shown.clone(),
                    })?;
                out.insert((*key).to_owned(), bytes);
            }
        }
        Ok(out)
    }

    /// The `data` of Secret `secret` (none when it does not exist), and the Secret as
    /// `namespace/name` for messages; `what` names the reference in errors.
    async fn data(
        &self,
        what: &str,
        secret: &SecretRef,
    ) -> Result<(String, Option<serde_json::Map<String, Value>>), StoreSecretError> {
        let namespace = secret
            .namespace
            .as_deref()
            .unwrap_or(self.default_namespace);
        let shown = format!("{namespace}/{}", secret.name);
        let object = self
            .store
            .get(&ObjectKey::namespaced("Secret", namespace, &secret.name))
            .await
            .map_err(|source| StoreSecretError::Store {
                grant: what.to_owned(),
                secret: shown.clone(),
                source,
            })?;
        let data = object.and_then(|mut o| match o.get_mut("data").map(Value::take) {
            Some(Value::Object(data)) => Some(data),
            _ => None,
        });
        Ok((shown, data))
    }

    /// Secrets of `store`; references without a namespace look in `default_namespace`.
    pub fn new(store: &'a dyn ObjectStore, default_namespace: &'a str) -> Self {
        StoreSecrets {
            store,
            default_namespace,
        }
    }

    /// The value of each grant, `None` when its Secret or key does not exist.
    ///
    /// # Errors
    ///
    /// [`StoreSecretError`] when the store fails or a value is not base64. The error names
    /// the grant and the Secret, never a value.
    pub async fn resolve(
        &self,
        grants: &[SecretGrant],
    ) -> Result<BTreeMap<String, Option<Secret>>, StoreSecretError> {
        let mut out = BTreeMap::new();
        for grant in grants {
            let r = &grant.secret_ref;
            let (secret, data) = self.data(&grant.name, r).await?;
            let encoded = data.as_ref().and_then(|d| match &r.key {
                Some(k) => d.get(k).and_then(Value::as_str),
                None if d.len() == 1 => d.values().next().and_then(Value::as_str),
                None => None,
            });
            let value = match encoded {
                None => None,
                Some(e) => Some(Secret::new(STANDARD.decode(e).map_err(|_| {
                    StoreSecretError::NotBase64 {
                        grant: grant.name.clone(),
                        secret: secret.clone(),
                    }
                })?)),
            };
            out.insert(grant.name.clone(), value);
        }
        Ok(out)
    }
}
