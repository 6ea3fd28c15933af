//! Provider text is data, never terminal control: the hostile component answers a megabyte
//! of escape sequences, carriage returns and forged lines in every text field (and in its
//! log records), in every name of a machine's status, and as an error message. `capw up`,
//! `get` and `describe` never panic on it, print it escaped and bounded, and the store keeps
//! it capped and escaped, or not at all where it was a name.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use capw_store::Store;
use serde_json::Value;

/// The hostile component as the infrastructure of three classes, one per behaviour, each
/// with one cluster of one control-plane machine and one worker.
fn hostile_manifest() -> String {
    let mut text = String::from(
        "apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {name: hostile}
spec:
  source: {file: {path: capw_hostile_provider.wasm}}
  grants: {callTimeoutSeconds: 5}
---
apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {name: kubeadm-bootstrap}
spec:
  source: {file: {path: capw_kubeadm_bootstrap.wasm}}
---
apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {name: kubeadm-control-plane}
spec:
  source: {file: {path: capw_kubeadm_control_plane.wasm}}
",
    );
    for behaviour in ["garbage-text", "garbage-names", "garbage-error"] {
        text.push_str(&format!(
            "---
apiVersion: capw.dev/v1alpha1
kind: ClusterClass
metadata: {{name: {behaviour}, namespace: default}}
spec:
  infrastructure:
    provider: hostile
    config: {{behaviour: {behaviour}}}
  controlPlane:
    provider: kubeadm-control-plane
    config: {{}}
    machineInfrastructure:
      config: {{behaviour: {behaviour}}}
    bootstrap:
      provider: kubeadm-bootstrap
      config: {{}}
  workers:
    machineDeployments:
      - class: default-worker
        infrastructure:
          config: {{behaviour: {behaviour}}}
        bootstrap:
          provider: kubeadm-bootstrap
          config: {{}}
---
apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: {behaviour}, namespace: default}}
spec:
  topology:
    classRef: {{name: {behaviour}}}
    version: v1.34.4
    controlPlane: {{replicas: 1}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: 1}}
"
        ));
    }
    text
}

struct Setup {
    _tmp: tempfile::TempDir,
    state_dir: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let state_dir = tmp.path().join(".capw");
        std::fs::create_dir_all(&state_dir).unwrap();
        let manifest = tmp.path().join("hostile.yaml");
        std::fs::write(&manifest, hostile_manifest()).unwrap();
        let setup = Setup {
            _tmp: tmp,
            state_dir,
        };
        let out = setup.run(&["apply", "-f", manifest.to_str().unwrap()]);
        assert!(out.status.success(), "{}", lossy(&out.stderr));
        setup
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_capw"))
            .arg("--state-dir")
            .arg(&self.state_dir)
            .arg("--plugin-dir")
            .arg(capw_test_support::plugin_dir())
            .arg("--cache-dir")
            .arg(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"))
            .env_remove("CAPW_LOG")
            .args(args)
            .output()
            .unwrap()
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a command printed is safe for a terminal: it ran to an exit of its own (no panic,
/// exit 101), and it holds no control character but newlines, no line over `max_line`
/// characters and at most `max_total` bytes in all.
fn assert_printable(what: &str, out: &Output, max_line: usize, max_total: usize) {
    assert_ne!(
        out.status.code(),
        Some(101),
        "{what} panicked: {}",
        lossy(&out.stderr)
    );
    assert!(
        out.status.code().is_some(),
        "{what} was killed: {:?}",
        out.status
    );
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            bytes.len() <= max_total,
            "{what}: {} bytes on {stream}, at most {max_total}",
            bytes.len()
        );
        let text = lossy(bytes);
        if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\n') {
            let at = text.find(c).unwrap_or_default();
            panic!(
                "{what}: {stream} holds U+{:04X} near {:?}",
                u32::from(c),
                &text[at.saturating_sub(60)..(at + 20).min(text.len())]
            );
        }
        if let Some(line) = text.lines().find(|l| l.chars().count() > max_line) {
            panic!(
                "{what}: a line of {} characters on {stream}, at most {max_line}",
                line.chars().count()
            );
        }
    }
}

/// Every string of every object of `kind`, with where it is.
fn strings(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((at, s.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                strings(v, format!("{at}[{i}]"), out);
            }
        }
        Value::Object(fields) => {
            for (k, v) in fields {
                strings(v, format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

fn stored(state_dir: &Path, kind: &str) -> Vec<Value> {
    let store = Store::open(&state_dir.join("state.redb")).unwrap();
    store.list(kind, Some("default")).unwrap()
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

#[test]
fn hostile_text_is_stored_and_printed_escaped_and_bounded() {
    let setup = Setup::new();
    // Two of the three clusters can never settle: `up` gives up after its timeout.
    let up = setup.run(&[
        "up",
        "--no-simcloud",
        "--boot",
        "simulated",
        "--timeout",
        "20s",
    ]);
    // Each pass meets megabytes of hostile text: what is printed stays small all the same.
    // A log line carries a message of at most 4 KiB and its fields.
    assert_printable("capw up", &up, 16 << 10, 1 << 20);
    let printed = lossy(&up.stdout);
    assert!(
        printed.contains("garbage-text"),
        "up said nothing of the clusters: {printed}"
    );

    // What the store keeps: every string of every Cluster, Machine and infrastructure
    // record is at most a message long (with the few words naming the provider and the call
    // of an error), with no control character.
    let mut all = Vec::new();
    for kind in ["Cluster", "Machine", "ClusterInfrastructure"] {
        for object in stored(&setup.state_dir, kind) {
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_owned();
            strings(&object, format!("{kind}/{name}"), &mut all);
        }
    }
    assert!(all.len() > 50, "{} strings stored", all.len());
    for (at, s) in &all {
        assert!(
            s.len() <= capw_runtime::MAX_MESSAGE_BYTES + 256,
            "{at}: {} bytes stored",
            s.len()
        );
        assert!(
            !s.chars().any(char::is_control),
            "{at}: a control character stored: {:?}",
            &s[..s.len().min(80)]
        );
    }
    // The text was kept, escaped: the forged line is visible as what it is.
    assert!(
        all.iter()
            .any(|(_, s)| s.contains("\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\nReady=True")),
        "the hostile text is not stored escaped"
    );

    // The names were refused, naming the field, and none of them stored.
    let machines = stored(&setup.state_dir, "Machine");
    let named: Vec<&Value> = machines
        .iter()
        .filter(|m| m["spec"]["clusterName"] == "garbage-names")
        .collect();
    assert!(!named.is_empty());
    for m in &named {
        assert!(
            m.pointer("/status/providerId").is_none_or(Value::is_null),
            "{m}"
        );
        let infra = condition(m, "InfrastructureReady").expect("a condition");
        assert_eq!(infra["reason"], "InvalidAnswer", "{infra}");
        let message = infra["message"].as_str().unwrap();
        assert!(
            message.contains("answer field `machine-status.provider-id` is 1048"),
            "{message}"
        );
    }

    // get and describe, on every cluster.
    for args in [
        vec!["get", "clusters"],
        vec!["get", "machines"],
        vec!["describe", "cluster", "garbage-text"],
        vec!["describe", "cluster", "garbage-names"],
        vec!["describe", "cluster", "garbage-error"],
    ] {
        let out = setup.run(&args);
        let what = format!("capw {}", args.join(" "));
        assert!(out.status.success(), "{what}: {}", lossy(&out.stderr));
        assert_printable(&what, &out, 4096, 256 << 10);
    }
    let error = setup.run(&["describe", "cluster", "garbage-error"]);
    let text = lossy(&error.stdout);
    assert!(
        text.contains("\\r\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\nReady=True"),
        "{text}"
    );
    let names = lossy(&setup.run(&["describe", "cluster", "garbage-names"]).stdout);
    assert!(names.contains("InvalidAnswer"), "{names}");
}
