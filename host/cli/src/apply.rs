//! `capw apply -f`: store the objects of manifest files.

use std::path::{Path, PathBuf};

use anyhow::Context;
use capw_api::{Object, parse_manifests};
use capw_store::Applied;

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

pub fn run(global: &GlobalArgs, args: ApplyArgs) -> anyhow::Result<()> {
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
    let store = crate::state::open_store(global)?;
    for object in objects {
        let kind = object.kind();
        let name = object.name().to_string();
        let mut json = object.to_json()?;
        if let Some(map) = json.as_object_mut() {
            map.remove("status");
            let namespaced = !matches!(object, Object::WasmProvider(_));
            if namespaced && object.namespace().is_none() {
                json["metadata"]["namespace"] = "default".into();
            }
        }
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
