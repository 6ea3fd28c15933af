//! The engine's floor plan (written at the top of `src/lib.rs`), checked on the source: every
//! path in every file of `src/` (`use` lines, inline `crate::`, `super::` and `self::` paths,
//! and bare paths through a child module) is resolved to the file it names, and an import
//! that runs up a layer, or from one action to another, fails the test with the file, the
//! line and the path. The import graph between files must also have no circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path inside the engine: `[]` is the crate root, `["pass", "env"]` is
/// `crate::pass::env`.
type ModPath = Vec<String>;

/// The layers of the floor plan, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Base,
    Providers,
    PassBase,
    Action,
    Pass,
    Top,
}

fn layer(module: &[String]) -> Layer {
    let parts: Vec<&str> = module.iter().map(String::as_str).collect();
    match parts.as_slice() {
        [] | ["executor" | "admission" | "requeue", ..] => Layer::Top,
        ["store" | "objects" | "config" | "error", ..] => Layer::Base,
        ["providers", ..] => Layer::Providers,
        ["pass", "env" | "note" | "snapshot" | "convert", ..] => Layer::PassBase,
        ["pass", "actions", ..] => Layer::Action,
        ["pass", ..] => Layer::Pass,
        other => panic!(
            "src/{} is in no layer of the floor plan: add it to lib.rs's table and to this test",
            other.join("/")
        ),
    }
}

/// Whether a file in `from` may name something in `to`; `None` when it may, else why not.
fn rule(from: &[String], to: &[String]) -> Option<String> {
    if from == to {
        return None;
    }
    let (a, b) = (layer(from), layer(to));
    if a == Layer::Action && b == Layer::Action {
        // `pass::actions` itself only declares the families.
        return (to.len() > 2).then(|| "an action imports another action".to_string());
    }
    if b > a {
        return Some(format!("{a:?} imports from the {b:?} layer above it"));
    }
    None
}

/// One path a file names, resolved.
#[derive(Debug)]
struct Import {
    line: usize,
    text: String,
    target: ModPath,
}

/// Reads every path of one file.
struct Paths<'a> {
    /// The file's module, then any inline modules (`mod tests`) the visitor is in.
    scope: ModPath,
    modules: &'a BTreeSet<ModPath>,
    found: Vec<Import>,
}

impl Paths<'_> {
    /// The file module `segments` (as written, in `scope`) names, if it names one of the
    /// engine's.
    fn resolve(&self, segments: &[String]) -> Option<ModPath> {
        let mut at: ModPath;
        let mut rest = segments;
        match segments.first().map(String::as_str) {
            Some("crate") => {
                at = Vec::new();
                rest = &segments[1..];
            }
            Some("self") => {
                at = self.scope.clone();
                rest = &segments[1..];
            }
            Some("super") => {
                at = self.scope.clone();
                while rest.first().map(String::as_str) == Some("super") {
                    at.pop()?;
                    rest = &rest[1..];
                }
            }
            // A bare path through a child module (`status::write`); one segment alone is a
            // local name, not a module.
            Some(first) if segments.len() > 1 => {
                let mut child = self.scope.clone();
                child.push(first.to_string());
                if !self.modules.contains(&child) {
                    return None;
                }
                at = self.scope.clone();
            }
            Some(_) => return None,
            None => return None,
        }
        for segment in rest {
            let mut next = at.clone();
            next.push(segment.clone());
            if self.modules.contains(&next) {
                at = next;
            } else {
                break;
            }
        }
        Some(self.file_of(&at))
    }

    /// The longest prefix of `module` that is a file of the engine.
    fn file_of(&self, module: &[String]) -> ModPath {
        let mut m = module.to_vec();
        while !m.is_empty() && !self.modules.contains(&m) {
            m.pop();
        }
        m
    }

    fn record(&mut self, segments: Vec<String>, line: usize) {
        if let Some(target) = self.resolve(&segments) {
            self.found.push(Import {
                line,
                text: segments.join("::"),
                target,
            });
        }
    }
}

/// Every full path a `use` tree names.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            if n.ident != "self" {
                path.push(n.ident.to_string());
            }
            out.push(path);
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push(path);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                flatten(item, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let line = syn::spanned::Spanned::span(item).start().line;
        let mut paths = Vec::new();
        flatten(&item.tree, &mut Vec::new(), &mut paths);
        for path in paths {
            self.record(path, line);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let line = syn::spanned::Spanned::span(path).start().line;
        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.record(segments, line);
        syn::visit::visit_path(self, path);
    }

    // `pub(crate)`, `pub(super)`: a visibility names no dependency.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // An inline module (`mod tests { use super::*; }`) is part of its file.
        if item.content.is_some() {
            self.scope.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.scope.pop();
        }
    }
}

/// Every `.rs` file under `src`, with its module path.
fn files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<ModPath, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).unwrap().with_extension("");
                let mut module: ModPath = relative
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// Each file's imports of the engine's other files.
fn imports(sources: &BTreeMap<ModPath, String>) -> BTreeMap<ModPath, Vec<Import>> {
    let modules: BTreeSet<ModPath> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(module, text)| {
            let file =
                syn::parse_file(text).unwrap_or_else(|e| panic!("src/{}: {e}", module.join("/")));
            let mut paths = Paths {
                scope: module.clone(),
                modules: &modules,
                found: Vec::new(),
            };
            paths.visit_file(&file);
            (module.clone(), paths.found)
        })
        .collect()
}

/// Every import that breaks the floor plan, one line each; `files` names each module's file
/// (`src/<module>.rs` when it has none there).
fn violations(
    all: &BTreeMap<ModPath, Vec<Import>>,
    files: &BTreeMap<ModPath, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (from, found) in all {
        for import in found {
            if let Some(why) = rule(from, &import.target) {
                let file = (files.get(from).cloned())
                    .unwrap_or_else(|| format!("src/{}.rs", display(from)));
                out.push(format!(
                    "{file}:{}: `{}` names {}: {why}",
                    import.line,
                    import.text,
                    display(&import.target),
                ));
            }
        }
    }
    out
}

fn display(module: &[String]) -> String {
    if module.is_empty() {
        "lib".into()
    } else {
        module.join("/")
    }
}

/// A circle in the graph of files, if there is one.
fn circle(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    fn visit(
        at: &ModPath,
        edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        done: &mut BTreeSet<ModPath>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        if let Some(i) = stack.iter().position(|m| m == at) {
            return Some(stack[i..].to_vec());
        }
        if !done.insert(at.clone()) {
            return None;
        }
        stack.push(at.clone());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, edges, done, stack) {
                return Some(found);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|start| visit(start, edges, &mut done, &mut Vec::new()))
}

/// The engine's files: each module's source, and its path as `src/...`.
fn engine_sources() -> (BTreeMap<ModPath, String>, BTreeMap<ModPath, String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = BTreeMap::new();
    let mut names = BTreeMap::new();
    for (module, path) in files(&root.join("src")) {
        sources.insert(module.clone(), std::fs::read_to_string(&path).unwrap());
        names.insert(
            module,
            path.strip_prefix(root).unwrap().display().to_string(),
        );
    }
    (sources, names)
}

#[test]
fn imports_run_down_the_floor_plan_and_never_between_actions() {
    let (sources, names) = engine_sources();
    let all = imports(&sources);
    let broken = violations(&all, &names);
    assert!(
        broken.is_empty(),
        "imports against the floor plan in src/lib.rs:\n{}",
        broken.join("\n")
    );
    // What a restructuring reports: paths between files, and file-to-file edges.
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    let mut paths = 0;
    for (from, found) in &all {
        // A parent naming its own children (`mod.rs` re-exporting them) is containment, not
        // a dependency: only edges to files outside one's own subtree count.
        for import in found.iter().filter(|i| !i.target.starts_with(from)) {
            paths += 1;
            edges
                .entry(from.clone())
                .or_default()
                .insert(import.target.clone());
        }
    }
    let edge_count: usize = edges.values().map(BTreeSet::len).sum();
    println!(
        "{} files, {paths} paths between files, {edge_count} file-to-file imports",
        all.len()
    );
    if let Some(found) = circle(&edges) {
        let names: Vec<String> = found.iter().map(|m| display(m)).collect();
        panic!("the engine's imports go round: {}", names.join(" -> "));
    }
}

/// The checker itself catches both forms: a `use` line and an inline path from one action to
/// another, and a providers file reaching into the pass.
#[test]
fn the_checker_catches_a_use_line_an_inline_path_and_a_wing_reaching_across() {
    let module = |path: &str| -> ModPath { path.split('/').map(String::from).collect() };
    let mut sources: BTreeMap<ModPath, String> = BTreeMap::new();
    sources.insert(Vec::new(), "mod pass; mod providers; mod store;".into());
    sources.insert(module("store"), String::new());
    sources.insert(module("pass"), "mod actions; mod env;".into());
    sources.insert(module("pass/env"), "use crate::store::Key;".into());
    sources.insert(module("pass/actions"), "mod a; mod b;".into());
    sources.insert(
        module("pass/actions/a"),
        "use crate::pass::env::Env;\nuse super::b::helper;\nfn f() { crate::store::get(); }".into(),
    );
    sources.insert(
        module("pass/actions/b"),
        "fn g() {\n    crate::pass::actions::a::f();\n}\n#[cfg(test)]\nmod tests { use super::*; }"
            .into(),
    );
    sources.insert(
        module("providers"),
        "fn h() { let _ = crate::pass::env::Env::new(); }".into(),
    );
    let found = violations(&imports(&sources), &BTreeMap::new());
    assert_eq!(
        found,
        [
            "src/pass/actions/a.rs:2: `super::b::helper` names pass/actions/b: an action \
             imports another action",
            "src/pass/actions/b.rs:2: `crate::pass::actions::a::f` names pass/actions/a: an \
             action imports another action",
            "src/providers.rs:1: `crate::pass::env::Env::new` names pass/env: Providers \
             imports from the PassBase layer above it",
        ],
        "{found:#?}"
    );
}
