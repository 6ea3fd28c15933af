//! Provider sources and secret grants that live in the object store: `configMap` sources and,
//! in Kubernetes mode, `Secret` objects behind secret grants.
//!
//! Kept apart from the registry so each source is one function: the registry asks
//! [`config_map_component`] for the bytes of a `configMap` source and
//! [`StoreSecrets::resolve`] for the values of secret grants.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_api::{ConfigMapSource, SecretGrant};
use capw_runtime::Secret;
use capw_store::{ObjectKey, ObjectStore, StoreError};
use serde_json::Value;

/// Largest component a `configMap` source may hold. The API server refuses objects over about
/// 1.5 MiB anyway; this bound makes the limit explicit and keeps a huge `data` string from
/// being decoded at all.
pub const MAX_CONFIG_MAP_COMPONENT: usize = 3 << 19;

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
    /// The store failed.
    #[error("reading ConfigMap")]
    Store(#[from] StoreError),
}

/// The component bytes of a `configMap` source: `binaryData[key]` (base64, as the API server
/// keeps it), else `data[key]` (text, for `.wat`-free tests and odd tooling).
///
/// # Errors
///
/// [`ConfigMapSourceError`] naming the ConfigMap and key when it is missing, not base64 or
/// too large.
pub async fn config_map_component(
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

impl<'a> StoreSecrets<'a> {
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
            let namespace = r.namespace.as_deref().unwrap_or(self.default_namespace);
            let secret = format!("{namespace}/{}", r.name);
            let key = ObjectKey::namespaced("Secret", namespace, &r.name);
            let object = self
                .store
                .get(&key)
                .await
                .map_err(|source| StoreSecretError::Store {
                    grant: grant.name.clone(),
                    secret: secret.clone(),
                    source,
                })?;
            let data = object
                .as_ref()
                .and_then(|o| o.get("data"))
                .and_then(Value::as_object);
            let encoded = data.and_then(|d| match &r.key {
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
