//! The dependency walls between capw's crates, read from `cargo metadata`.
//!
//! - The pure core (capw-api, capw-topology, capw-reconcile) knows neither Kubernetes
//!   clients nor wasmtime: its decisions are plain functions of data.
//! - The plugin runtime knows nothing of Kubernetes or of the reconcile core.
//! - The engine is shared by both modes and knows neither: no redb, no local mode, no
//!   Kubernetes mode. The Kubernetes mode links no redb and no local mode.
//! - Guest components (everything under `plugins/` and `tests/plugins/`) build on the SDK and
//!   pure libraries only (of this workspace: capw-text, with no dependencies, and
//!   capw-sim-api, simcloud's wire types, on serde alone) and the guest libraries of
//!   `plugins/` (capw-sim-client, the simcloud providers' shared client: no component, on the
//!   SDK and those pure libraries only), and `plugins/` holds nothing else.
//!
//! A wall holds for a crate's normal dependencies, followed through every crate it builds
//! with, the workspace's and third-party ones alike: capw-topology may not reach wasmtime
//! through capw-api, nor capw-api through a crate of crates.io that depends on it. The trees
//! are cargo's own (`cargo tree -e normal`) for the crate built alone, so a dependency counts
//! with the features that crate's build turns on (capw-api's `kube`, types only, is not charged
//! with the client capw-kube turns on). Dev-dependencies are free (the Kubernetes mode's tests
//! run the local mode beside it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
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

/// Libraries under `plugins/` that guests link and that are no component themselves: code
/// several providers share, built on [`GUEST_LIBRARIES`] only and reaching no system crate.
const GUEST_SUPPORT: &[&str] = &["capw-sim-client"];

/// What a pure library shared with guests may depend on: data types, no I/O.
const PURE_DEPENDENCIES: &[&str] = &["serde"];

/// The platform guests are built for (`make plugins`): their trees are resolved for it, as a
/// crate's dependencies may differ from one platform to another. Host crates' trees are
/// resolved for the host.
const GUEST_TARGET: &str = "wasm32-wasip2";

/// The workspace's root directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The cargo that runs the tests, as it tells them.
fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

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
        let out = cargo()
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .current_dir(workspace_root())
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
}

/// A crate's normal dependencies, followed to the end through every crate, as cargo resolves
/// them when that crate alone is built (`cargo tree --package NAME --edges normal`).
struct Tree {
    /// Each crate of the tree as the path to it from the root crate. A crate's dependencies
    /// are listed at its first place only (as `cargo tree` prints them); its other places end
    /// their paths there, so that every edge of the graph is on one path.
    paths: Vec<Vec<String>>,
}

impl Tree {
    /// `name`'s tree for `target`, or for the host when `None`.
    fn of(name: &str, target: Option<&str>) -> Self {
        let mut args = vec![
            "tree",
            "--package",
            name,
            "--edges",
            "normal",
            "--prefix",
            "depth",
            "--format",
            "{p}",
            "--offline",
        ];
        if let Some(target) = target {
            args.extend(["--target", target]);
        }
        let out = cargo()
            .args(&args)
            .current_dir(workspace_root())
            .output()
            .expect("running cargo tree");
        assert!(
            out.status.success(),
            "cargo tree --package {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = Tree::parse(&String::from_utf8_lossy(&out.stdout));
        assert!(
            tree.paths.first().is_some_and(|root| *root == [name]),
            "{name}'s tree starts elsewhere: {:?}",
            tree.paths.first()
        );
        tree
    }

    /// Reads `cargo tree --prefix depth --format {p}`: one crate a line, after its depth
    /// (`0capw-api v0.1.0 (/…/host/api)`, `1kube v5.0.0`, `2kube-core v5.0.0`…).
    fn parse(text: &str) -> Self {
        let mut path: Vec<String> = Vec::new();
        let mut paths = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let digits = line
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(line.len());
            let depth: usize = (line[..digits].parse())
                .unwrap_or_else(|_| panic!("no depth before {line:?} in cargo tree's output"));
            let name = (line[digits..].split_whitespace().next())
                .unwrap_or_else(|| panic!("no crate in {line:?} of cargo tree's output"));
            assert!(
                depth <= path.len() && (depth == 0) == paths.is_empty(),
                "{line:?} at depth {depth} below {path:?} in cargo tree's output"
            );
            path.truncate(depth);
            path.push(name.to_owned());
            paths.push(path.clone());
        }
        Tree { paths }
    }

    /// Each place where the tree reaches a crate `forbidden` names, not below another one, as
    /// the path to it: `capw-api → some-crate → wasmtime`.
    fn breaches(&self, forbidden: &[&str]) -> Vec<String> {
        let is_forbidden = |name: &String| forbidden.contains(&name.as_str());
        (self.paths.iter())
            .filter(|path| {
                (path.split_last()).is_some_and(|(reached, via)| {
                    is_forbidden(reached) && !via.iter().any(is_forbidden)
                })
            })
            .map(|path| path.join(" → "))
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
            assert!(
                ws.crates.contains_key(*name),
                "no crate {name} in the workspace"
            );
            breaches.extend(Tree::of(name, None).breaches(forbidden));
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
        let support = GUEST_SUPPORT.contains(&name.as_str());
        guests += usize::from(!support);
        if !cdylib && !support {
            breaches.push(format!(
                "{name} ({dir}) is not a component (no cdylib target)"
            ));
        }
        for dep in deps {
            let allowed = GUEST_LIBRARIES.contains(&dep.name.as_str())
                || (!support && GUEST_SUPPORT.contains(&dep.name.as_str()));
            if dep.local && !allowed {
                breaches.push(format!("{name} ({dir}) → {}", dep.name));
            }
        }
        let system = Tree::of(name, Some(GUEST_TARGET)).breaches(SYSTEM_CRATES);
        breaches.extend(system.into_iter().map(|path| format!("{path} ({dir})")));
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
    // The SDK builds on no crate of the workspace, and reaches no system crate.
    let sdk_forbidden: Vec<&str> = (ws.crates.keys().map(String::as_str))
        .filter(|name| *name != "capw-sdk")
        .chain(SYSTEM_CRATES.iter().copied())
        .collect();
    breaches.extend(Tree::of("capw-sdk", Some(GUEST_TARGET)).breaches(&sdk_forbidden));
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn a_wall_breached_through_a_third_party_crate_is_named_with_its_path() {
    // capw-api gaining `some-crate`, which depends on wasmtime: the breach is at depth 2, under
    // a crate of no wall, and reached again (`(*)`) through `other-crate`.
    let tree = Tree::parse(
        "0capw-api v0.1.0 (/work/capw/host/api)\n\
         1serde v1.0.229\n\
         1some-crate v1.2.3\n\
         2wasmtime v48.0.8\n\
         3wasmtime-environ v48.0.8\n\
         1other-crate v0.4.0\n\
         2some-crate v1.2.3 (*)\n\
         2wasmtime v48.0.8 (*)\n",
    );
    assert_eq!(
        tree.breaches(&["wasmtime", "wasmtime-environ"]),
        [
            "capw-api → some-crate → wasmtime",
            "capw-api → other-crate → wasmtime",
        ]
    );
    assert!(tree.breaches(&["redb"]).is_empty());
}

#[test]
fn the_trees_go_on_through_third_party_crates() {
    // capw-runtime declares wasmtime, which brings Cranelift: a tree that stopped at the
    // crates capw-runtime declares would hold no Cranelift at all.
    let tree = Tree::of("capw-runtime", None);
    let cranelift = (tree.paths.iter())
        .find(|path| path.last().is_some_and(|c| c == "cranelift-codegen"))
        .expect("capw-runtime's tree holds no cranelift-codegen");
    assert!(
        cranelift.len() > 2 && cranelift.iter().any(|c| c == "wasmtime"),
        "capw-runtime reaches cranelift-codegen by {cranelift:?}"
    );
}
