//! The generated bindings of each contract version stay inside `host/runtime/src/bindings/`:
//! everything else, in the runtime and in the rest of the host, uses the version-neutral model
//! (`capw_runtime::model`), so a new contract version touches the runtime only.
//!
//! Guest code (the SDK, the plugins and the test plugins) is left out: it is built from the
//! WIT with wit-bindgen, as every provider is.

use std::path::{Path, PathBuf};

/// What only generated host bindings contain. Built at run time so that this file does not
/// match itself.
fn markers() -> Vec<String> {
    vec![
        ["wasmtime::component::", "bindgen"].concat(),
        ["exports::", "capw"].concat(),
        ["generated", "::"].concat(),
    ]
}

/// Folders of host code, relative to the workspace root, and those left out inside them.
const SCANNED: &[&str] = &["host", "tests", "fuzz", "tools"];
const LEFT_OUT: &[&str] = &["host/runtime/src/bindings", "tests/plugins", "target"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let relative = path.strip_prefix(root).unwrap_or(&path);
        if LEFT_OUT.iter().any(|l| relative.starts_with(l))
            || relative.components().any(|c| c.as_os_str() == "target")
        {
            continue;
        }
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `file:line: text` of `text` that holds a marker.
fn offending_lines(file: &str, text: &str, markers: &[String]) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| markers.iter().any(|m| line.contains(m.as_str())))
        .map(|(i, line)| format!("{file}:{}: {}", i + 1, line.trim()))
        .collect()
}

#[test]
fn the_scan_finds_an_import_of_generated_bindings() {
    let text = [
        "use crate::bindings::v0_1::",
        "generated",
        "::capw::provider::types;",
    ]
    .concat();
    assert_eq!(offending_lines("x.rs", &text, &markers()).len(), 1);
    assert!(
        offending_lines("x.rs", "use capw_runtime::types::CallContext;", &markers()).is_empty()
    );
}

#[test]
fn no_host_code_outside_the_bindings_uses_generated_types() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in SCANNED {
        rust_files(&root, &root.join(dir), &mut files);
    }
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("host/runtime/src/provider.rs")),
        "the scan must cover the runtime itself; it found {} files",
        files.len()
    );
    let markers = markers();
    let offending: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            offending_lines(&name, &text, &markers)
        })
        .collect();
    assert!(
        offending.is_empty(),
        "generated contract bindings used outside host/runtime/src/bindings:\n{}",
        offending.join("\n")
    );
}
