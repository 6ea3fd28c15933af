//! `capw plugin new` for every language: the starter builds with its own instructions, loads
//! as the provider it says it is and passes the conformance suite; so do the examples it is
//! made from.
//!
//! The builds need the toolchains of `make toolchains`; `make test` passes their paths in the
//! environment (`WASM_TOOLS`, `WIT_BINDGEN`, `COMPONENTIZE_PY`, ...), which the starters'
//! Makefiles read.

use std::path::{Path, PathBuf};
use std::process::Command;

fn capw() -> Command {
    Command::new(env!("CARGO_BIN_EXE_capw"))
}

fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn sdk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk")
}

/// Scaffolds `name` in `lang`, builds it as its README says and returns the component.
fn scaffold(dir: &Path, name: &str, lang: &str) -> PathBuf {
    let project = dir.join(name);
    run(capw()
        .args(["plugin", "new", name, "--lang", lang, "--dir"])
        .arg(&project)
        .arg("--sdk")
        .arg(sdk()));
    assert!(project.join("wit/worlds.wit").exists());
    assert!(project.join("README.md").exists());
    let component = project.join("provider.wasm");
    if lang == "rust" {
        // One target directory for every run, so the SDK's dependencies build once.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.join("target"))
            .join("scaffold");
        run(Command::new(env!("CARGO"))
            .args(["build", "--profile", "plugin", "--target", "wasm32-wasip2"])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&project));
        let built = target
            .join("wasm32-wasip2/plugin")
            .join(format!("{}.wasm", name.replace('-', "_")));
        std::fs::copy(&built, &component).unwrap();
    } else {
        run(Command::new("make")
            .arg("OUT=provider.wasm")
            .current_dir(&project));
    }
    component
}

fn check(lang: &str) {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("acme-{lang}-boot");
    let component = scaffold(dir.path(), &name, lang);
    // One compile cache for both commands: the second load is a cache hit.
    let cache = dir.path().join("cache");
    let inspect = run(capw()
        .arg("--cache-dir")
        .arg(&cache)
        .args(["plugin", "inspect", "-o", "json"])
        .arg(&component));
    let info: serde_json::Value = serde_json::from_str(&inspect).unwrap();
    assert_eq!(info["name"], name.as_str(), "{inspect}");
    assert_eq!(
        info["extensionPoints"],
        serde_json::json!(["bootstrap"]),
        "{inspect}"
    );
    conforms(&component, &cache);
}

/// `capw plugin test` passes on `component` with its default config.
fn conforms(component: &Path, cache: &Path) {
    let report = run(capw()
        .arg("--cache-dir")
        .arg(cache)
        .args(["plugin", "test"])
        .arg(component));
    assert!(report.contains(" 0 failed"), "{report}");
}

/// The example providers of plugins/examples, as `make examples` built them, pass the
/// conformance suite.
#[test]
fn the_examples_conform() {
    let cache = tempfile::tempdir().unwrap();
    for lang in ["c", "python", "js", "go"] {
        conforms(
            &capw_test_support::component_path(&format!("capw_example_{lang}")),
            cache.path(),
        );
    }
}

#[test]
fn a_c_starter_builds_and_loads() {
    check("c");
}

#[test]
fn a_python_starter_builds_and_loads() {
    check("python");
}

#[test]
fn a_js_starter_builds_and_loads() {
    check("js");
}

#[test]
fn a_go_starter_builds_and_loads() {
    check("go");
}

#[test]
fn a_rust_starter_builds_and_loads() {
    check("rust");
}

#[test]
fn a_starter_is_never_written_over_a_project() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let output = capw()
        .args(["plugin", "new", "acme", "--lang", "c", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("exists and is not empty"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "mine"
    );
}
