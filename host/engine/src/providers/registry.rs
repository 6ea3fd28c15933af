//! The provider registry: every `WasmProvider` in the store, loaded into the runtime, with
//! its status written back.
//!
//! # Sources
//!
//! A relative `file` `path` is read under [`EngineConfig::plugin_dir`] through a cap-std
//! directory, so it cannot reach outside it; an absolute path is read as is (the operator
//! wrote it). A `configMap` source is read from the store's `ConfigMap` objects
//! ([`super::sources`]). An `oci` source is fetched through the content cache under the cache
//! directory ([`super::oci`]); its status digest is the manifest digest.
//!
//! # Refresh
//!
//! [`ProviderRegistry::refresh`] asks the registry again about `oci` sources with
//! `pullPolicy: Always` once their refresh interval passed. A reference that moved to another
//! digest is loaded and swapped in: new calls get the new component, calls in flight keep the
//! `Arc<LoadedProvider>` they hold and finish on the old one.
//!
//! # Grants
//!
//! `http` entries are parsed into [`HttpGrant`]s, `secrets` are resolved by
//! [`FileSecrets`] or, with [`SecretSource::Store`], from `Secret` objects, `memoryLimitMiB` and `callTimeoutSeconds` become the call limits.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use capw_api::{
    CONDITION_LOADED, Condition, ConditionStatus, ProviderSource, PullPolicy, WasmProvider,
    WasmProviderStatus, set_condition,
};
use capw_oci::{ClientSettings, ContentCache, Fetcher};
use capw_runtime::metadata::FieldError;
use capw_runtime::{CallError, Grants, HttpGrant, Limits, Provider, Runtime, RuntimeConfig};
use capw_text::error_chain as chain;
use tokio::time::Instant;

use super::oci::fetch_oci;
use super::secrets::FileSecrets;
use super::sources::{SecretsIn, StoreSecrets, config_map_component};
use crate::config::{EngineConfig, SecretSource};
use crate::error::EngineError;
use crate::objects::now;
use crate::store::{ObjectStore, TypedObjects, cluster_key_of};

/// How often an `oci` source with `pullPolicy: Always` is asked about when its
/// `refreshIntervalSeconds` is absent.
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(300);

/// A provider's verdict on one config: fine, or its field errors.
pub type ConfigVerdict = Result<(), Vec<FieldError>>;

/// A provider that loaded, with what the host learnt about it.
#[derive(Debug)]
pub struct LoadedProvider {
    /// The `WasmProvider` name.
    pub name: String,
    /// The digest in its status: the manifest digest of an `oci` source, the component's
    /// sha256 otherwise.
    pub digest: String,
    /// The loaded component.
    pub provider: Provider,
    /// `validate-config` answers by config (JSON text). The contract makes validation a pure
    /// function of the config, and a loaded component never changes, so each config is asked
    /// about once instead of on every pass of every cluster.
    verdicts: Mutex<HashMap<String, ConfigVerdict>>,
}

impl LoadedProvider {
    fn new(name: String, loaded: Loaded) -> Self {
        LoadedProvider {
            name,
            digest: loaded.digest,
            provider: loaded.provider,
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
#[derive(Debug)]
pub struct ProviderRegistry {
    /// Swapped as a whole when a refresh loads a new digest.
    loaded: BTreeMap<String, ArcSwap<LoadedProvider>>,
    /// Providers that failed to load: name → the `Loaded` condition's message.
    failed: BTreeMap<String, String>,
    loader: Loader,
    /// When each refreshable provider was last asked about.
    checked: Mutex<HashMap<String, Instant>>,
}

/// Where a loader reads secrets: the opened secrets directory, or the namespace of `Secret`
/// references that name none.
#[derive(Debug)]
enum SecretsAt {
    Files(FileSecrets),
    Store(String),
}

/// What loading a provider needs: the runtime, the sources, the secrets.
struct Loader {
    runtime: Arc<Runtime>,
    fetcher: Fetcher,
    secrets: SecretsAt,
    plugin_dir: PathBuf,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("plugin_dir", &self.plugin_dir)
            .finish_non_exhaustive()
    }
}

/// A component loaded from its source.
struct Loaded {
    provider: Provider,
    digest: String,
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
    /// [`EngineError`] when the store fails or the runtime cannot start.
    pub async fn load_all(
        store: &dyn ObjectStore,
        config: &EngineConfig,
    ) -> Result<Self, EngineError> {
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: config.cache_dir.clone(),
            observer: config.call_observer.clone(),
            ..RuntimeConfig::default()
        })
        .map_err(EngineError::Runtime)?;
        let secrets = match &config.secrets {
            SecretSource::Files { dir } => {
                SecretsAt::Files(FileSecrets::open(dir).map_err(|source| {
                    EngineError::StateDir {
                        path: dir.display().to_string(),
                        source,
                    }
                })?)
            }
            SecretSource::Store { default_namespace } => {
                SecretsAt::Store(default_namespace.clone())
            }
        };
        let oci_cache = config.oci_cache_dir();
        let cache = ContentCache::open(&oci_cache).map_err(|e| EngineError::StateDir {
            path: oci_cache.display().to_string(),
            source: std::io::Error::other(chain(&e)),
        })?;
        let mut registry = ProviderRegistry {
            loaded: BTreeMap::new(),
            failed: BTreeMap::new(),
            loader: Loader {
                runtime,
                fetcher: Fetcher::new(ClientSettings::default(), cache),
                secrets,
                plugin_dir: config.plugin_dir.clone(),
            },
            checked: Mutex::default(),
        };
        for wp in store.list_as::<WasmProvider>(None).await? {
            let name = wp.metadata.name.clone().unwrap_or_default();
            let outcome = registry.loader.load(&wp, store).await;
            write_status(store, &wp, outcome.as_ref()).await?;
            registry.checked_now(&name);
            match outcome {
                Ok(loaded) => {
                    tracing::info!(provider = %name, digest = %loaded.digest, "provider loaded");
                    registry.loaded.insert(
                        name.clone(),
                        ArcSwap::from_pointee(LoadedProvider::new(name, loaded)),
                    );
                }
                Err(failure) => {
                    tracing::warn!(provider = %name, reason = failure.reason, "{}", failure.message);
                    registry.failed.insert(name, failure.message);
                }
            }
        }
        Ok(registry)
    }

    /// The loaded provider of that name, as loaded now; a call holds it to its end.
    pub fn get(&self, name: &str) -> Option<Arc<LoadedProvider>> {
        self.loaded.get(name).map(ArcSwap::load_full)
    }

    /// Whether any loaded provider may change on [`ProviderRegistry::refresh`].
    ///
    /// # Errors
    ///
    /// [`EngineError`] when the store fails.
    pub async fn refreshable(&self, store: &dyn ObjectStore) -> Result<bool, EngineError> {
        Ok(self.oci_always(store).await?.iter().any(|(wp, _)| {
            self.loaded
                .contains_key(wp.metadata.name.as_deref().unwrap_or(""))
        }))
    }

    /// Asks the registry again about every loaded `oci` provider with `pullPolicy: Always`
    /// whose refresh interval passed; a reference that moved to another digest is loaded,
    /// swapped in for new calls and its status written. Returns the names swapped.
    ///
    /// A failed fetch or load keeps the provider that runs and is logged; the next interval
    /// tries again.
    ///
    /// # Errors
    ///
    /// [`EngineError`] when the store fails.
    pub async fn refresh(&self, store: &dyn ObjectStore) -> Result<Vec<String>, EngineError> {
        let mut swapped = Vec::new();
        for (wp, interval) in self.oci_always(store).await? {
            let name = wp.metadata.name.clone().unwrap_or_default();
            let Some(slot) = self.loaded.get(&name) else {
                continue;
            };
            let due = self
                .checked
                .lock()
                .expect("checked")
                .get(&name)
                .is_none_or(|at| at.elapsed() >= interval);
            if !due {
                continue;
            }
            self.checked_now(&name);
            let current = slot.load().digest.clone();
            match self.loader.load_if_moved(&wp, &current, store).await {
                Ok(None) => {}
                Ok(Some(loaded)) => {
                    write_status(store, &wp, Ok(&loaded)).await?;
                    tracing::info!(provider = %name, digest = %loaded.digest, "provider moved to a new digest; swapped in");
                    slot.store(Arc::new(LoadedProvider::new(name.clone(), loaded)));
                    swapped.push(name);
                }
                Err(f) => {
                    tracing::warn!(provider = %name, reason = f.reason, "refresh failed, keeping the loaded component: {}", f.message);
                }
            }
        }
        Ok(swapped)
    }

    /// The `oci` providers with `pullPolicy: Always`, with their refresh intervals.
    async fn oci_always(
        &self,
        store: &dyn ObjectStore,
    ) -> Result<Vec<(WasmProvider, Duration)>, EngineError> {
        let mut out = Vec::new();
        for wp in store.list_as::<WasmProvider>(None).await? {
            if let ProviderSource::Oci(oci) = &wp.spec.source
                && oci.pull_policy == PullPolicy::Always
            {
                let interval = oci
                    .refresh_interval_seconds
                    .map_or(DEFAULT_REFRESH_INTERVAL, |s| Duration::from_secs(s.into()));
                out.push((wp, interval));
            }
        }
        Ok(out)
    }

    fn checked_now(&self, name: &str) {
        self.checked
            .lock()
            .expect("checked")
            .insert(name.to_owned(), Instant::now());
    }

    /// The names of the providers that loaded.
    pub fn loaded_names(&self) -> impl Iterator<Item = &str> {
        self.loaded.keys().map(String::as_str)
    }

    /// The providers that failed to load, each with why.
    pub fn failed(&self) -> &BTreeMap<String, String> {
        &self.failed
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
            .map(|(name, p)| (name.clone(), p.load().provider.info().config_schema.clone()))
            .collect()
    }
}

impl Loader {
    /// Fetches `wp`'s component and loads it.
    async fn load(
        &self,
        wp: &WasmProvider,
        store: &dyn ObjectStore,
    ) -> Result<Loaded, LoadFailure> {
        let (bytes, digest) = self.fetch(wp, store).await?;
        self.compile(wp, bytes, digest, store).await
    }

    /// Fetches `wp`'s component and loads it only when its digest is not `current`.
    async fn load_if_moved(
        &self,
        wp: &WasmProvider,
        current: &str,
        store: &dyn ObjectStore,
    ) -> Result<Option<Loaded>, LoadFailure> {
        let (bytes, digest) = self.fetch(wp, store).await?;
        if digest.as_deref() == Some(current) {
            return Ok(None);
        }
        self.compile(wp, bytes, digest, store).await.map(Some)
    }

    /// The component's bytes, and the manifest digest of an `oci` source.
    async fn fetch(
        &self,
        wp: &WasmProvider,
        store: &dyn ObjectStore,
    ) -> Result<(Arc<[u8]>, Option<String>), LoadFailure> {
        match &wp.spec.source {
            ProviderSource::File(file) => {
                let bytes = read_source(&self.plugin_dir, &file.path).map_err(|e| LoadFailure {
                    reason: "SourceNotFound",
                    message: format!(
                        "reading {:?} (relative to {}): {e}",
                        file.path,
                        self.plugin_dir.display()
                    ),
                })?;
                Ok((Arc::from(bytes), None))
            }
            ProviderSource::Oci(oci) => {
                let fetched = fetch_oci(&self.fetcher, oci, &self.secrets_in(store))
                    .await
                    .map_err(|f| LoadFailure {
                        reason: f.reason,
                        message: f.message,
                    })?;
                Ok((Arc::from(&fetched.component[..]), Some(fetched.digest)))
            }
            ProviderSource::ConfigMap(source) => {
                let bytes = config_map_component(store, source)
                    .await
                    .map_err(|e| LoadFailure {
                        reason: "SourceNotFound",
                        message: chain(&e),
                    })?;
                Ok((Arc::from(bytes), None))
            }
        }
    }

    /// Where this host reads the secrets objects name: its files, or `Secret` objects of
    /// `store`.
    fn secrets_in<'a>(&'a self, store: &'a dyn ObjectStore) -> SecretsIn<'a> {
        match &self.secrets {
            SecretsAt::Files(files) => SecretsIn::Files(files),
            SecretsAt::Store(default_namespace) => {
                SecretsIn::Store(StoreSecrets::new(store, default_namespace))
            }
        }
    }

    async fn compile(
        &self,
        wp: &WasmProvider,
        bytes: Arc<[u8]>,
        digest: Option<String>,
        store: &dyn ObjectStore,
    ) -> Result<Loaded, LoadFailure> {
        let name = wp.metadata.name.clone().unwrap_or_default();
        let secrets = self
            .secrets_in(store)
            .grants(&wp.spec.grants.secrets)
            .await
            .map_err(|message| LoadFailure {
                reason: "InvalidGrant",
                message,
            })?;
        let grants = grants(wp, secrets)?;
        let provider = self
            .runtime
            .load(&name, bytes, grants)
            .await
            .map_err(|e| LoadFailure {
                reason: "LoadFailed",
                message: chain(&e),
            })?;
        let digest = digest.unwrap_or_else(|| format!("sha256:{}", provider.info().digest));
        Ok(Loaded { provider, digest })
    }
}

/// Writes `wp`'s status for `outcome`.
async fn write_status(
    store: &dyn ObjectStore,
    wp: &WasmProvider,
    outcome: Result<&Loaded, &LoadFailure>,
) -> Result<(), EngineError> {
    let name = wp.metadata.name.clone().unwrap_or_default();
    let status = provider_status(wp, outcome);
    let key = cluster_key_of::<WasmProvider>(&name);
    let status = serde_json::to_value(status).map_err(|source| EngineError::Malformed {
        what: key.to_string(),
        source,
    })?;
    store.update_status(&key, status, None).await?;
    Ok(())
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
    outcome: Result<&Loaded, &LoadFailure>,
) -> WasmProviderStatus {
    let mut status = wp.status.clone().unwrap_or_default();
    let generation = wp.metadata.generation;
    status.observed_generation = generation;
    let condition = match outcome {
        Ok(loaded) => {
            let info = loaded.provider.info();
            status.digest = Some(loaded.digest.clone());
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
