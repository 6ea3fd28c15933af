//! The providers of the Kubernetes mode: loaded from the API server at start and again
//! whenever a WasmProvider's spec, or a ConfigMap in the provider namespace, changes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use capw_api::{ProviderSource, WasmProvider, get_condition};
use capw_engine::EngineConfig;
use capw_engine::store::{ObjectKey, ObjectStore, decode, meta_str};
use capw_engine::{Executor, ProviderRegistry};
use futures::{FutureExt as _, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use kube::runtime::watcher;
use kube::{Client, Resource as _};
use tokio::sync::mpsc;

use crate::controller::Context;
use crate::error::KubeModeError;
use crate::metrics::{Metrics, ProviderLabels};

/// Events closer together than this cause one reload.
const RELOAD_DEBOUNCE: Duration = Duration::from_millis(300);

/// Loads every WasmProvider (writing their status) into a fresh executor, which keeps the
/// workload cluster clients of `previous` (a reload drops no connection).
///
/// # Errors
///
/// [`KubeModeError::Providers`] when the API server or the runtime fails; a provider that
/// does not load is in its status.
pub(crate) async fn load(
    store: &Arc<dyn ObjectStore>,
    config: &EngineConfig,
    metrics: &Metrics,
    previous: Option<&Executor>,
) -> Result<Arc<Executor>, KubeModeError> {
    let registry = ProviderRegistry::load_all(store.as_ref(), config)
        .await
        .map_err(KubeModeError::Providers)?;
    for wp in store.list(&WasmProvider::kind(&()), None).await? {
        // One provider the API server holds in a shape of another version is counted, not a
        // reason to count none.
        let Ok(wp) = decode::<WasmProvider>(wp) else {
            continue;
        };
        let name = wp.metadata.name.as_deref().unwrap_or_default();
        let result = if registry.get(name).is_some() {
            "loaded".to_string()
        } else {
            loaded_reason(&wp).unwrap_or_else(|| "unknown".into())
        };
        metrics
            .provider_loads
            .get_or_create(&ProviderLabels {
                provider: name.into(),
                result,
            })
            .inc();
    }
    let executor = Executor::new(store.clone(), Arc::new(registry), config.clone());
    Ok(Arc::new(match previous {
        Some(previous) => executor.sharing_cluster_cache(previous),
        None => executor,
    }))
}

fn loaded_reason(wp: &WasmProvider) -> Option<String> {
    let loaded = get_condition(&wp.status.as_ref()?.conditions, "Loaded")?;
    Some(loaded.reason.clone())
}

/// What the loaded providers were built from: each WasmProvider's generation and the
/// resourceVersions of the ConfigMap and Secrets it reads. A different fingerprint means a
/// reload.
pub(crate) async fn fingerprint(
    store: &dyn ObjectStore,
    default_namespace: &str,
) -> Result<BTreeMap<String, Vec<String>>, KubeModeError> {
    let mut out = BTreeMap::new();
    for value in store.list(&WasmProvider::kind(&()), None).await? {
        let Ok(wp) = decode::<WasmProvider>(value) else {
            continue;
        };
        let name = wp.metadata.name.clone().unwrap_or_default();
        let mut parts = vec![wp.metadata.generation.unwrap_or_default().to_string()];
        let mut reads = Vec::new();
        match &wp.spec.source {
            ProviderSource::ConfigMap(cm) => {
                reads.push(ObjectKey::namespaced("ConfigMap", &cm.namespace, &cm.name));
            }
            ProviderSource::Oci(oci) => {
                if let Some(r) = &oci.credentials_secret_ref {
                    let namespace = r.namespace.as_deref().unwrap_or(default_namespace);
                    reads.push(ObjectKey::namespaced("Secret", namespace, &r.name));
                }
            }
            ProviderSource::File(_) => {}
        }
        for grant in &wp.spec.grants.secrets {
            let r = &grant.secret_ref;
            let namespace = r.namespace.as_deref().unwrap_or(default_namespace);
            reads.push(ObjectKey::namespaced("Secret", namespace, &r.name));
        }
        for key in reads {
            let version = match store.get(&key).await {
                Ok(Some(o)) => meta_str(&o, "resourceVersion")
                    .unwrap_or_default()
                    .to_owned(),
                _ => "absent".into(),
            };
            parts.push(format!("{key}@{version}"));
        }
        out.insert(name, parts);
    }
    Ok(out)
}

/// Watches WasmProviders and the ConfigMaps and Secrets of `namespace`; reloads the providers into
/// `ctx` when their fingerprint changed, then tells `reloaded`. Runs until the watch ends.
pub(crate) async fn watch(
    client: Client,
    namespace: String,
    config: EngineConfig,
    ctx: Arc<Context>,
    mut current: BTreeMap<String, Vec<String>>,
    reloaded: mpsc::Sender<()>,
) {
    let providers = watcher(
        Api::<WasmProvider>::all(client.clone()),
        watcher::Config::default(),
    )
    .map(|_| ());
    let config_maps = watcher(
        Api::<ConfigMap>::namespaced(client.clone(), &namespace),
        watcher::Config::default(),
    )
    .map(|_| ());
    // Granted Secrets and registry credentials are read in the provider namespace unless a
    // reference names another; a change of one there reloads at once.
    let secrets = watcher(
        Api::<Secret>::namespaced(client, &namespace),
        watcher::Config::default(),
    )
    .map(|_| ());
    let mut events = std::pin::pin!(futures::stream::select(
        futures::stream::select(providers, config_maps),
        secrets
    ));
    while events.next().await.is_some() {
        // Let a burst of changes (apply of several objects) settle into one reload.
        tokio::time::sleep(RELOAD_DEBOUNCE).await;
        while let Some(Some(())) = events.next().now_or_never() {}
        let next = match fingerprint(ctx.store.as_ref(), &namespace).await {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(error = %crate::error::chain(&e), "reading providers");
                continue;
            }
        };
        if next == current {
            continue;
        }
        let previous = ctx.executor();
        match load(&ctx.store, &config, &ctx.metrics, Some(&previous)).await {
            Ok(executor) => {
                tracing::info!("providers reloaded");
                ctx.set_executor(executor);
                current = next;
                let _ = reloaded.try_send(());
            }
            Err(e) => tracing::warn!(error = %crate::error::chain(&e), "reloading providers"),
        }
    }
}
