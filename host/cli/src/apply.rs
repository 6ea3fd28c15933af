//! `capw apply -f`: store the objects of manifest files.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use anyhow::Context;
use capw_api::{Object, parse_manifests};
use capw_engine::store::{Applied, ObjectKey, ObjectStore, Overlay, meta_str};
use capw_engine::{Executor, ProviderRegistry, WorkloadClusterAccess};
use capw_store::Store;
use serde_json::Value;

use crate::cli::{ApplyArgs, GlobalArgs};

/// The manifest files `path` names: itself, or the `.yaml`/`.yml` files of a directory in
/// name order.
fn manifest_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("reading {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    Ok(files)
}

pub async fn run(global: &GlobalArgs, args: ApplyArgs) -> anyhow::Result<()> {
    // Parse everything first: a bad document stores nothing.
    let mut objects = Vec::new();
    for path in &args.files {
        for file in manifest_files(path)? {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let parsed = parse_manifests(&text).with_context(|| format!("{}", file.display()))?;
            objects.extend(parsed);
        }
    }
    let mut values = Vec::new();
    for object in objects {
        let mut json = object.to_json()?;
        if let Some(map) = json.as_object_mut() {
            map.remove("status");
            let namespaced = !matches!(object, Object::WasmProvider(_));
            if namespaced && object.namespace().is_none() {
                json["metadata"]["namespace"] = "default".into();
            }
        }
        values.push((object.kind(), object.name().to_string(), json));
    }
    let store = crate::state::open_store(global)?;
    admit(global, &store, &values).await?;
    for (kind, name, json) in values {
        let (_, outcome) = store
            .apply(json)
            .with_context(|| format!("{kind} {name}"))?;
        let word = match outcome {
            Applied::Created => "created",
            Applied::Configured => "configured",
            Applied::Unchanged => "unchanged",
        };
        println!("{}/{name} {word}", kind.to_lowercase());
    }
    Ok(())
}

/// Checks every object as the Kubernetes mode's admission webhook does, as if the whole
/// manifest were stored (a Cluster may use the class and providers beside it), before any of
/// it is: one refusal stores nothing.
async fn admit(
    global: &GlobalArgs,
    store: &Store,
    objects: &[(&'static str, String, Value)],
) -> anyhow::Result<()> {
    let overlay = Arc::new(Overlay::new(Arc::new(store.clone())));
    let mut olds = Vec::new();
    for (kind, name, json) in objects {
        let key = ObjectKey::of(json).with_context(|| format!("{kind} {name}"))?;
        olds.push(store.get(&key)?);
        overlay
            .apply(json.clone())
            .await
            .with_context(|| format!("{kind} {name}"))?;
    }
    let mut config = crate::state::config(global).engine;
    config.workload_clusters = WorkloadClusterAccess::Off;
    // Loading writes each provider's status: into the overlay, which is thrown away.
    let registry = ProviderRegistry::load_all(overlay.as_ref(), &config).await?;
    let checks = Executor::new(overlay, Arc::new(registry), config);
    let mut refused = 0;
    for ((kind, name, json), old) in objects.iter().zip(&olds) {
        if let Err(refusal) = checks.admit(json, old.as_ref()).await {
            refused += 1;
            let at = meta_str(json, "namespace")
                .map(|ns| format!("{ns}/{name}"))
                .unwrap_or_else(|| name.clone());
            eprintln!("{kind} {at} refused: {refusal}");
        }
    }
    if refused > 0 {
        anyhow::bail!("{refused} object(s) refused; nothing was stored");
    }
    Ok(())
}
