//! `capw plugin push` and `capw plugin pull` against a real registry (Debian's
//! docker-registry on loopback): what was pushed comes back byte for byte with the provider's
//! annotations, a digest pin is enforced, and what is not a component is never pushed. The
//! same artifacts go both ways between capw and oras, a client of the layout capw did not
//! write (`CAPW_ORAS`, built by `make toolchains`).

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

/// `capw plugin push <file> <reference> --insecure`.
fn push(cache: &Path, file: &Path, reference: &str) -> Output {
    let file = file.to_str().unwrap();
    capw(cache, &["plugin", "push", file, reference, "--insecure"])
}

/// `capw plugin pull <reference> -o <out> --insecure`, then `extra`.
fn pull(cache: &Path, reference: &str, out: &Path, extra: &[&str]) -> Output {
    let out = out.to_str().unwrap();
    let args = ["plugin", "pull", reference, "-o", out, "--insecure"];
    capw(cache, &[&args[..], extra].concat())
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

    let pushed = ok(&push(tmp.path(), &component, &reference));
    let digest = field(&pushed, "digest").to_owned();
    assert!(digest.starts_with("sha256:"), "{pushed}");
    assert_eq!(
        field(&pushed, "pinned"),
        format!("{}/providers/example@{digest}", registry.host())
    );

    // By tag, then pinned to the digest push printed.
    let out = tmp.path().join("pulled.wasm");
    let pulled = ok(&pull(tmp.path(), &reference, &out, &["--digest", &digest]));
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
        pulled.contains("dev.capw.contract.version: 0.3.0"),
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
    let refused = pull(tmp.path(), &reference, &other, &["--digest", &wrong]);
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
    let out = push(tmp.path(), &file, &reference);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("notes.wasm"), "{stderr}");
    // Nothing reached the registry: pulling the tag fails.
    let pulled = pull(tmp.path(), &reference, &tmp.path().join("x.wasm"), &[]);
    assert!(!pulled.status.success());
}

/// The oras CLI `make toolchains` built; the interop tests fail without it rather than pass
/// having tested nothing.
fn oras(args: &[&str], dir: &Path) -> Output {
    let oras = std::env::var_os("CAPW_ORAS")
        .expect("CAPW_ORAS is not set: run `make toolchains` (it builds oras and names it there)");
    Command::new(&oras)
        .args(args)
        .current_dir(dir)
        // Nothing of the machine's registry logins.
        .env("DOCKER_CONFIG", dir)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", Path::new(&oras).display()))
}

/// The sha256 of a file, hex, as coreutils' sha256sum prints it.
fn sha256_hex(file: &Path) -> String {
    let out = ok(&Command::new("sha256sum").arg(file).output().unwrap());
    out.split_whitespace().next().unwrap().to_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).unwrap()
}

#[test]
fn oras_pulls_what_capw_pushed_and_reads_its_component_description() {
    let registry = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let component = capw_test_support::component_path("capw_sim_infra");
    let reference = format!("{}/providers/sim-infra:0.1.0", registry.host());
    ok(&push(tmp.path(), &component, &reference));

    let manifest = json(&oras(
        &["manifest", "fetch", "--plain-http", &reference],
        tmp.path(),
    ));
    assert_eq!(
        manifest["artifactType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let title = manifest["layers"][0]["annotations"]["org.opencontainers.image.title"]
        .as_str()
        .unwrap_or_else(|| panic!("no title on the component layer: {manifest}"));
    assert_eq!(title, "sim-infra.wasm");

    // oras writes each titled layer to a file of that name.
    let out = tmp.path().join("pulled");
    ok(&oras(
        &[
            "pull",
            "--plain-http",
            &reference,
            "-o",
            out.to_str().unwrap(),
        ],
        tmp.path(),
    ));
    assert_eq!(
        std::fs::read(out.join(title)).unwrap(),
        std::fs::read(&component).unwrap()
    );

    let config = json(&oras(
        &["manifest", "fetch-config", "--plain-http", &reference],
        tmp.path(),
    ));
    assert_eq!(config["os"], "wasip2", "{config}");
    assert_eq!(config["layerDigests"][0], manifest["layers"][0]["digest"]);
    let described = &config["component"];
    let names = |key: &str| -> Vec<String> {
        serde_json::from_value(described[key].clone())
            .unwrap_or_else(|e| panic!("component.{key} of {config}: {e}"))
    };
    assert!(
        names("exports").contains(&"capw:provider/infrastructure@0.3.0".to_owned()),
        "{config}"
    );
    assert!(
        names("imports")
            .iter()
            .any(|i| i.starts_with("wasi:io/streams@0.2.")),
        "{config}"
    );
    assert_eq!(described["target"], "capw:provider/provider@0.3.0");
}

#[test]
fn capw_pulls_what_oras_pushed_in_the_wasm_layout() {
    let registry = TestRegistry::start();
    let tmp = tempfile::tempdir().unwrap();
    let bytes = capw_test_support::component("capw_example_provider");
    // oras names a layer after its file's path, relative to where it runs.
    std::fs::write(tmp.path().join("example.wasm"), &bytes).unwrap();
    // The config as another tool may write it: no component description.
    let digest = format!("sha256:{}", sha256_hex(&tmp.path().join("example.wasm")));
    std::fs::write(
        tmp.path().join("config.json"),
        serde_json::json!({"architecture": "wasm", "os": "wasip2", "layerDigests": [digest]})
            .to_string(),
    )
    .unwrap();
    let reference = format!("{}/providers/by-oras:1", registry.host());
    ok(&oras(
        &[
            "push",
            "--plain-http",
            &reference,
            "--artifact-type",
            "application/vnd.wasm.config.v0+json",
            "--config",
            "config.json:application/vnd.wasm.config.v0+json",
            "example.wasm:application/wasm",
        ],
        tmp.path(),
    ));

    let out = tmp.path().join("pulled.wasm");
    let pulled = ok(&pull(tmp.path(), &reference, &out, &[]));
    assert_eq!(std::fs::read(&out).unwrap(), bytes, "{pulled}");
    // What capw reports as the digest is the manifest oras pushed.
    let manifest = oras(
        &[
            "manifest",
            "fetch",
            "--plain-http",
            "--descriptor",
            &reference,
        ],
        tmp.path(),
    );
    assert_eq!(field(&pulled, "digest"), json(&manifest)["digest"]);
}
