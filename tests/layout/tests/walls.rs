//! The dependency walls between capw's crates, read from `cargo metadata`.
//!
//! - The pure core (capw-api, capw-topology, capw-reconcile) knows neither Kubernetes
//!   clients nor wasmtime: its decisions are plain functions of data.
//! - The plugin runtime knows nothing of Kubernetes or of the reconcile core.
//! - The engine is shared by both modes and knows neither: no redb, no local mode, no
//!   Kubernetes mode. The Kubernetes mode links no redb and no local mode.
//! - Guest components (everything under `plugins/` and `tests/plugins/`) build on the SDK and
//!   pure libraries only (of this workspace: capw-text, with no dependencies, and
//!   capw-sim-api, simcloud's wire types, on serde alone), and `plugins/` holds nothing else.
//!
//! A wall holds for a crate's normal dependencies, followed through the workspace's own
//! crates: capw-topology may not reach wasmtime through capw-api either. Dev-dependencies are
//! free (the Kubernetes mode's tests run the local mode beside it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Crates that hold a Kubernetes client, an HTTP stack or a runtime: never in a guest.
const SYSTEM_CRATES: &[&str] = &[
    "tokio",
    "wasmtime",
    "wasmtime-wasi",
    "wasmtime-wasi-http",
    "kube",
    "kube-client",
    "kube-runtime",
    "kube-core",
    "k8s-openapi",
    "axum",
    "hyper",
    "reqwest",
    "redb",
];

/// The workspace's crates a guest component may use: the SDK, and pure libraries whose only
/// dependencies are in [`PURE_DEPENDENCIES`].
const GUEST_LIBRARIES: &[&str] = &["capw-sdk", "capw-text", "capw-sim-api"];

/// What a pure library shared with guests may depend on: data types, no I/O.
const PURE_DEPENDENCIES: &[&str] = &["serde"];

/// A workspace crate's declared dependency.
#[derive(Debug)]
struct Dep {
    name: String,
    features: BTreeSet<String>,
    default_features: bool,
    /// Whether the dependency is a crate of this workspace.
    local: bool,
}

/// The workspace's crates: name → (manifest directory relative to the root, normal
/// dependencies, whether it builds a cdylib).
struct Workspace {
    crates: BTreeMap<String, (String, Vec<Dep>, bool)>,
}

impl Workspace {
    fn read() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .current_dir(&root)
            .output()
            .expect("running cargo metadata");
        assert!(
            out.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
        let root = Path::new(meta["workspace_root"].as_str().unwrap()).to_path_buf();
        let mut crates = BTreeMap::new();
        for package in meta["packages"].as_array().unwrap() {
            let manifest = Path::new(package["manifest_path"].as_str().unwrap());
            let dir = manifest
                .parent()
                .unwrap()
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let deps = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| Dep {
                    name: d["name"].as_str().unwrap().to_owned(),
                    features: (d["features"].as_array().unwrap().iter())
                        .map(|f| f.as_str().unwrap().to_owned())
                        .collect(),
                    default_features: d["uses_default_features"].as_bool().unwrap(),
                    local: d["path"].is_string(),
                })
                .collect();
            let cdylib = package["targets"].as_array().unwrap().iter().any(|t| {
                (t["crate_types"].as_array().unwrap().iter()).any(|k| k.as_str() == Some("cdylib"))
            });
            let name = package["name"].as_str().unwrap().to_owned();
            crates.insert(name, (dir, deps, cdylib));
        }
        Workspace { crates }
    }

    /// Every dependency `name` declares or reaches through the workspace's crates, with the
    /// workspace crate that declares it.
    fn reach<'a>(&'a self, name: &'a str) -> Vec<(&'a str, &'a Dep)> {
        let mut seen = BTreeSet::from([name]);
        let mut todo = vec![name];
        let mut out = Vec::new();
        while let Some(current) = todo.pop() {
            let (_, deps, _) = &self.crates[current];
            for dep in deps {
                out.push((current, dep));
                if dep.local && seen.insert(dep.name.as_str()) {
                    todo.push(dep.name.as_str());
                }
            }
        }
        out
    }

    /// What `name` reaches that `forbidden` names, as `via → dependency` lines.
    fn breaches(&self, name: &str, forbidden: &[&str]) -> Vec<String> {
        assert!(
            self.crates.contains_key(name),
            "no crate {name} in the workspace"
        );
        self.reach(name)
            .into_iter()
            .filter(|(_, dep)| forbidden.contains(&dep.name.as_str()))
            .map(|(via, dep)| format!("{name}: {via} → {}", dep.name))
            .collect()
    }
}

/// The walls as (crates, what none of them may reach).
const WALLS: &[(&[&str], &[&str])] = &[
    (
        &["capw-api", "capw-topology", "capw-reconcile"],
        &[
            "wasmtime",
            "kube-client",
            "kube-runtime",
            "redb",
            "capw-runtime",
            "capw-engine",
            "capw-store",
            "capw-local",
            "capw-kube",
            "capw-workload",
            "capw-oci",
        ],
    ),
    (
        &["capw-runtime"],
        &[
            "kube",
            "kube-client",
            "kube-runtime",
            "kube-core",
            "k8s-openapi",
            "capw-api",
            "capw-topology",
            "capw-reconcile",
            "capw-engine",
            "capw-store",
            "capw-local",
            "capw-kube",
        ],
    ),
    (
        &["capw-engine"],
        &["redb", "capw-store", "capw-local", "capw-kube", "capw"],
    ),
    (
        &["capw-kube"],
        &["redb", "capw-store", "capw-local", "capw"],
    ),
    (&["capw-store"], &["capw-local", "capw-kube", "capw"]),
];

#[test]
fn no_crate_reaches_past_its_wall() {
    let ws = Workspace::read();
    let mut breaches = Vec::new();
    for (crates, forbidden) in WALLS {
        for name in *crates {
            breaches.extend(ws.breaches(name, forbidden));
        }
    }
    assert!(
        breaches.is_empty(),
        "dependencies past a wall:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn the_pure_core_uses_kube_for_its_types_only() {
    let ws = Workspace::read();
    let mut breaches = Vec::new();
    for name in ["capw-api", "capw-topology", "capw-reconcile"] {
        for (via, dep) in ws.reach(name) {
            if dep.name != "kube" {
                continue;
            }
            let extra: Vec<&String> = dep.features.iter().filter(|f| *f != "derive").collect();
            if dep.default_features || !extra.is_empty() {
                breaches.push(format!(
                    "{name}: {via} → kube with default features {} and {extra:?}",
                    dep.default_features
                ));
            }
        }
    }
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn guests_build_on_the_sdk_and_pure_libraries_and_plugins_holds_only_guests() {
    let ws = Workspace::read();
    let mut breaches = Vec::new();
    let mut guests = 0;
    for (name, (dir, deps, cdylib)) in &ws.crates {
        let guest = dir.starts_with("plugins/") || dir.starts_with("tests/plugins/");
        if !guest {
            continue;
        }
        guests += 1;
        if !cdylib {
            breaches.push(format!(
                "{name} ({dir}) is not a component (no cdylib target)"
            ));
        }
        for dep in deps {
            if (dep.local && !GUEST_LIBRARIES.contains(&dep.name.as_str()))
                || SYSTEM_CRATES.contains(&dep.name.as_str())
            {
                breaches.push(format!("{name} ({dir}) → {}", dep.name));
            }
        }
    }
    assert!(guests >= 5, "only {guests} guest crates found");
    for library in GUEST_LIBRARIES.iter().filter(|l| **l != "capw-sdk") {
        let (_, deps, _) = &ws.crates[*library];
        for dep in deps {
            if !PURE_DEPENDENCIES.contains(&dep.name.as_str()) {
                breaches.push(format!(
                    "{library} depends on {}, so guests may not use it",
                    dep.name
                ));
            }
        }
    }
    let sdk = ws.breaches(
        "capw-sdk",
        &ws.crates.keys().map(String::as_str).collect::<Vec<_>>(),
    );
    breaches.extend(sdk);
    for (via, dep) in ws.reach("capw-sdk") {
        if SYSTEM_CRATES.contains(&dep.name.as_str()) {
            breaches.push(format!("capw-sdk: {via} → {}", dep.name));
        }
    }
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}
