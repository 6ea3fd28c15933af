//! `capw plugin inspect` on real components: what a user sees, and how a bad file is refused.

use std::path::PathBuf;
use std::process::{Command, Output};

fn plugin(name: &str) -> PathBuf {
    capw_test_support::component_path(name)
}

fn capw(cache: &std::path::Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capw"))
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn inspect_shows_contract_extension_points_and_schema() {
    let cache = tempfile::tempdir().unwrap();
    let file = plugin("capw_example_provider");
    let out = capw(
        cache.path(),
        &["plugin".as_ref(), "inspect".as_ref(), file.as_os_str()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("provider:          example 0.1.0"), "{text}");
    assert!(
        text.contains("contract:          capw:provider@0.3.0"),
        "{text}"
    );
    assert!(
        text.contains(
            "extension points:  infrastructure, bootstrap, control-plane, lifecycle-hooks"
        ),
        "{text}"
    );
    assert!(text.contains("\"region\""), "{text}");
    assert!(text.contains("Miss"), "the first inspect compiles: {text}");

    // The second run finds the compiled code in the cache.
    let out = capw(
        cache.path(),
        &["plugin".as_ref(), "inspect".as_ref(), file.as_os_str()],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Hit"));
}

#[test]
fn inspect_json_is_machine_readable() {
    let cache = tempfile::tempdir().unwrap();
    let file = plugin("capw_example_provider");
    let out = capw(
        cache.path(),
        &[
            "plugin".as_ref(),
            "inspect".as_ref(),
            file.as_os_str(),
            "-o".as_ref(),
            "json".as_ref(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["contract"], "0.3.0");
    assert_eq!(v["name"], "example");
    assert_eq!(
        v["extensionPoints"],
        serde_json::json!([
            "infrastructure",
            "bootstrap",
            "control-plane",
            "lifecycle-hooks"
        ])
    );
    assert_eq!(v["configSchema"]["type"], "object");
    assert_eq!(v["load"]["cache"]["outcome"], "miss");
}

#[test]
fn inspect_refuses_a_file_that_is_not_a_component() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    // The smallest core module: magic and version 1.
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let out = capw(
        cache.path(),
        &["plugin".as_ref(), "inspect".as_ref(), core.as_os_str()],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("core.wasm"), "{err}");
    assert!(err.contains("not a component"), "{err}");

    let missing = dir.path().join("missing.wasm");
    let out = capw(
        cache.path(),
        &["plugin".as_ref(), "inspect".as_ref(), missing.as_os_str()],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.wasm"));
}
