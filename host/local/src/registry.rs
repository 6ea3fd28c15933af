//! The provider registry: every `WasmProvider` in the store, loaded into the runtime, with
//! its status written back.
//!
//! # Sources
//!
//! A relative `file` `path` is read under [`LocalConfig::plugin_dir`] through a cap-std
//! directory, so it cannot reach outside it; an absolute path is read as is (the operator
//! wrote it). A `configMap` source is read from the store's `ConfigMap` objects
//! ([`crate::sources`]). `oci` sources get a `Loaded=False` condition with reason
//! `SourceUnsupported`.
//!
//! # Grants
//!
//! `http` entries are parsed into [`HttpGrant`]s, `secrets` are resolved by
//! [`LocalSecrets`] or, with [`SecretSource::Store`], from `Secret` objects, `memoryLimitMiB` and `callTimeoutSeconds` become the call limits.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use capw_api::{
    CONDITION_LOADED, Condition, ConditionStatus, ProviderSource, WasmProvider, WasmProviderStatus,
    set_condition,
};
use capw_runtime::metadata::FieldError;
use capw_runtime::{CallError, Grants, HttpGrant, Limits, Provider, Runtime, RuntimeConfig};
use capw_store::{ObjectKey, ObjectStore};

use crate::config::{LocalConfig, SecretSource};
use crate::error::LocalError;
use crate::objects::{decode, now};
use crate::secrets::LocalSecrets;
use crate::sources::{StoreSecrets, config_map_component};

/// A provider's verdict on one config: fine, or its field errors.
pub type ConfigVerdict = Result<(), Vec<FieldError>>;

/// A provider that loaded, with what the host learnt about it.
#[derive(Debug)]
pub struct LoadedProvider {
    /// The `WasmProvider` name.
    pub name: String,
    /// The loaded component.
    pub provider: Provider,
    /// `validate-config` answers by config (JSON text). The contract makes validation a pure
    /// function of the config, and a loaded component never changes, so each config is asked
    /// about once instead of on every pass of every cluster.
    verdicts: Mutex<HashMap<String, ConfigVerdict>>,
}

impl LoadedProvider {
    fn new(name: String, provider: Provider) -> Self {
        LoadedProvider {
            name,
            provider,
            verdicts: Mutex::default(),
        }
    }

    /// The provider's `validate-config` answer for `config`, remembered; a failed call is
    /// not remembered and is tried again next time.
    ///
    /// # Errors
    ///
    /// The call's [`CallError`].
    pub async fn validate_config(&self, config: &str) -> Result<ConfigVerdict, CallError> {
        let known = self.verdicts.lock().expect("verdicts").get(config).cloned();
        if let Some(verdict) = known {
            return Ok(verdict);
        }
        let verdict = self.provider.validate_config(config).await?;
        self.verdicts
            .lock()
            .expect("verdicts")
            .insert(config.to_owned(), verdict.clone());
        Ok(verdict)
    }
}

/// Every provider of the store, loaded or not.
#[derive(Debug, Default)]
pub struct ProviderRegistry {
    loaded: BTreeMap<String, Arc<LoadedProvider>>,
    /// Providers that failed to load: name → the `Loaded` condition's message.
    failed: BTreeMap<String, String>,
}

/// Why a provider did not load; becomes the `Loaded` condition's reason and message.
struct LoadFailure {
    reason: &'static str,
    message: String,
}

impl ProviderRegistry {
    /// Loads every `WasmProvider` in `store` and writes each one's status: digest, contract
    /// version, extension points, config schema and a `Loaded` condition (with the reason of a
    /// failure). A provider that fails to load is recorded, never an error.
    ///
    /// # Errors
    ///
    /// [`LocalError`] when the store fails or the runtime cannot start.
    pub async fn load_all(
        store: &dyn ObjectStore,
        config: &LocalConfig,
    ) -> Result<Self, LocalError> {
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: config.cache_dir.clone(),
            ..RuntimeConfig::default()
        })
        .map_err(LocalError::Runtime)?;
        let secrets =
            LocalSecrets::open(&config.secrets_dir()).map_err(|source| LocalError::StateDir {
                path: config.secrets_dir().display().to_string(),
                source,
            })?;
        let mut registry = ProviderRegistry::default();
        for value in store.list("WasmProvider", None).await? {
            let wp: WasmProvider = decode(value, "WasmProvider")?;
            let name = wp.metadata.name.clone().unwrap_or_default();
            let outcome = load_one(&runtime, &wp, store, &secrets, config).await;
            let status = provider_status(&wp, &outcome);
            let key = ObjectKey::cluster_scoped("WasmProvider", &name);
            let status = serde_json::to_value(status).map_err(|source| LocalError::Malformed {
                what: key.to_string(),
                source,
            })?;
            store.update_status(&key, status, None).await?;
            match outcome {
                Ok(provider) => {
                    tracing::info!(provider = %name, digest = %provider.info().digest, "provider loaded");
                    registry
                        .loaded
                        .insert(name.clone(), Arc::new(LoadedProvider::new(name, provider)));
                }
                Err(failure) => {
                    tracing::warn!(provider = %name, reason = failure.reason, "{}", failure.message);
                    registry.failed.insert(name, failure.message);
                }
            }
        }
        Ok(registry)
    }

    /// The loaded provider of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<LoadedProvider>> {
        self.loaded.get(name)
    }

    /// Why `name` is not usable: failed to load (with the message), or unknown.
    pub fn why_missing(&self, name: &str) -> String {
        match self.failed.get(name) {
            Some(message) => format!("provider {name:?} did not load: {message}"),
            None => format!("no WasmProvider named {name:?}"),
        }
    }

    /// The config schemas of the loaded providers, for topology checks.
    pub fn schemas(&self) -> capw_topology::ProviderSchemas {
        self.loaded
            .iter()
            .map(|(name, p)| (name.clone(), p.provider.info().config_schema.clone()))
            .collect()
    }
}

async fn load_one(
    runtime: &Arc<Runtime>,
    wp: &WasmProvider,
    store: &dyn ObjectStore,
    secrets: &LocalSecrets,
    config: &LocalConfig,
) -> Result<Provider, LoadFailure> {
    let name = wp.metadata.name.clone().unwrap_or_default();
    let bytes =
        match &wp.spec.source {
            ProviderSource::File(file) => {
                read_source(&config.plugin_dir, &file.path).map_err(|e| LoadFailure {
                    reason: "SourceNotFound",
                    message: format!(
                        "reading {:?} (relative to {}): {e}",
                        file.path,
                        config.plugin_dir.display()
                    ),
                })?
            }
            ProviderSource::ConfigMap(source) => config_map_component(store, source)
                .await
                .map_err(|e| LoadFailure {
                    reason: "SourceNotFound",
                    message: crate::calls::chain(&e),
                })?,
            ProviderSource::Oci(_) => {
                return Err(LoadFailure {
                    reason: "SourceUnsupported",
                    message: "`oci` sources are not served by this host".into(),
                });
            }
        };
    let secret_values = match &config.secrets {
        SecretSource::Files => secrets
            .resolve(&wp.spec.grants.secrets)
            .map_err(|e| crate::calls::chain(&e)),
        SecretSource::Store { default_namespace } => StoreSecrets::new(store, default_namespace)
            .resolve(&wp.spec.grants.secrets)
            .await
            .map_err(|e| crate::calls::chain(&e)),
    };
    let secret_values = secret_values.map_err(|message| LoadFailure {
        reason: "InvalidGrant",
        message,
    })?;
    let grants = grants(wp, secret_values)?;
    runtime
        .load(&name, Arc::from(bytes), grants)
        .await
        .map_err(|e| LoadFailure {
            reason: "LoadFailed",
            message: crate::calls::chain(&e),
        })
}

/// The bytes of a `file` source: relative paths under `plugin_dir` only.
fn read_source(plugin_dir: &Path, path: &str) -> std::io::Result<Vec<u8>> {
    let path = Path::new(path);
    if path.is_absolute() {
        return std::fs::read(path);
    }
    let dir = Dir::open_ambient_dir(plugin_dir, ambient_authority())?;
    dir.read(path)
}

fn grants(
    wp: &WasmProvider,
    secrets: BTreeMap<String, Option<capw_runtime::Secret>>,
) -> Result<Grants, LoadFailure> {
    let spec = &wp.spec.grants;
    let invalid = |message: String| LoadFailure {
        reason: "InvalidGrant",
        message,
    };
    let http = spec
        .http
        .iter()
        .map(|h| h.parse::<HttpGrant>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(e.to_string()))?;
    let mut limits = Limits::default();
    if let Some(mib) = spec.memory_limit_mib {
        limits.memory = (mib as usize) << 20;
    }
    if let Some(secs) = spec.call_timeout_seconds {
        limits.call_timeout = Duration::from_secs(secs.into());
    }
    Ok(Grants {
        http,
        secrets,
        limits,
    })
}

fn provider_status(
    wp: &WasmProvider,
    outcome: &Result<Provider, LoadFailure>,
) -> WasmProviderStatus {
    let mut status = wp.status.clone().unwrap_or_default();
    let generation = wp.metadata.generation;
    status.observed_generation = generation;
    let condition = match outcome {
        Ok(p) => {
            let info = p.info();
            status.digest = Some(format!("sha256:{}", info.digest));
            status.contract_version = Some(info.contract.version.clone());
            status.provider_name = Some(info.metadata.name.clone());
            status.provider_version = Some(info.metadata.version.clone());
            status.extension_points = info
                .extension_points()
                .iter()
                .map(ToString::to_string)
                .collect();
            status.config_schema = Some(info.config_schema.clone());
            Condition::new(CONDITION_LOADED, ConditionStatus::True, "Loaded", "", now())
        }
        Err(f) => Condition::new(
            CONDITION_LOADED,
            ConditionStatus::False,
            f.reason,
            f.message.clone(),
            now(),
        ),
    };
    set_condition(&mut status.conditions, condition.observed(generation));
    status
}
