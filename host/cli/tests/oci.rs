//! `capw plugin push` and `capw plugin pull` against a real registry (Debian's
//! docker-registry on loopback): what was pushed comes back byte for byte with the provider's
//! annotations, a digest pin is enforced, and what is not a component is never pushed.

use std::path::Path;
use std::process::{Command, Output};

use capw_test_support::registry::TestRegistry;

fn capw(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capw"))
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .env_remove("CAPW_REGISTRY_USERNAME")
        .env_remove("CAPW_REGISTRY_PASSWORD")
        .env_remove("CAPW_REGISTRY_TOKEN")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The value after `label: ` on a line of `text`.
fn field<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{label}: ")))
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
}

#[test]
fn push_then_pull_round_trips_the_component_with_its_annotations() {
    let registry = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let component = capw_test_support::component_path("capw_example_provider");
    let reference = format!("{}/providers/example:0.1.0", registry.host());

    let pushed = ok(&capw(
        tmp.path(),
        &[
            "plugin",
            "push",
            component.to_str().unwrap(),
            &reference,
            "--insecure",
        ],
    ));
    let digest = field(&pushed, "digest").to_owned();
    assert!(digest.starts_with("sha256:"), "{pushed}");
    assert_eq!(
        field(&pushed, "pinned"),
        format!("{}/providers/example@{digest}", registry.host())
    );

    // By tag, then pinned to the digest push printed.
    let out = tmp.path().join("pulled.wasm");
    let pulled = ok(&capw(
        tmp.path(),
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            out.to_str().unwrap(),
            "--digest",
            &digest,
            "--insecure",
        ],
    ));
    assert_eq!(field(&pulled, "digest"), digest);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&component).unwrap()
    );
    // The annotations push wrote describe the provider.
    assert!(
        pulled.contains("org.opencontainers.image.title: example"),
        "{pulled}"
    );
    assert!(
        pulled.contains("dev.capw.provider.name: example"),
        "{pulled}"
    );
    assert!(
        pulled.contains("dev.capw.contract.version: 0.1.0"),
        "{pulled}"
    );
    assert!(
        pulled.contains(
            "dev.capw.provider.extension-points: infrastructure,bootstrap,control-plane,lifecycle-hooks"
        ),
        "{pulled}"
    );

    // Another digest is refused, and nothing is written.
    let other = tmp.path().join("other.wasm");
    let wrong = format!("sha256:{}", "0".repeat(64));
    let refused = capw(
        tmp.path(),
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            other.to_str().unwrap(),
            "--digest",
            &wrong,
            "--insecure",
        ],
    );
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&wrong) && stderr.contains(&digest),
        "{stderr}"
    );
    assert!(!other.exists());
}

#[test]
fn push_refuses_what_is_not_a_component() {
    let registry = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.wasm");
    std::fs::write(&file, b"not wasm at all").unwrap();
    let reference = format!("{}/providers/notes:1", registry.host());
    let out = capw(
        tmp.path(),
        &[
            "plugin",
            "push",
            file.to_str().unwrap(),
            &reference,
            "--insecure",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("notes.wasm"), "{stderr}");
    // Nothing reached the registry: pulling the tag fails.
    let pulled = capw(
        tmp.path(),
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            tmp.path().join("x.wasm").to_str().unwrap(),
            "--insecure",
        ],
    );
    assert!(!pulled.status.success());
}
