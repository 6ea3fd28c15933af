//! Provider text is data, never terminal control: the hostile component answers a megabyte
//! of escape sequences, carriage returns and forged lines in every text field (and in its
//! log records), in every name, and as an error message, as the infrastructure, the
//! bootstrap, the control plane and a lifecycle hook of a class each. `capw up`, `get` and
//! `describe` never panic on it, print it escaped and bounded, and the store keeps it capped
//! and escaped, or not at all where it was a name.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use capw_store::Store;
use capw_test_support::hostile::{GARBAGE as BEHAVIOURS, POINTS as ROLES};
use capw_test_support::strings_in;
use serde_json::Value;

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
        std::fs::write(
            &manifest,
            capw_test_support::hostile::manifest("default", "", &BEHAVIOURS),
        )
        .unwrap();
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

fn stored(state_dir: &Path, kind: &str) -> Vec<Value> {
    let store = Store::open(&state_dir.join("state.redb")).unwrap();
    store.list(kind, Some("default")).unwrap()
}

/// Each string a cluster's objects hold (its Cluster's and its Machines'), with where it is.
fn strings_of_cluster(state_dir: &Path, cluster: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kind in ["Cluster", "Machine"] {
        for object in stored(state_dir, kind) {
            let name = object["metadata"]["name"].as_str().unwrap_or("?");
            let owner = object["spec"]["clusterName"].as_str().unwrap_or(name);
            if owner == cluster {
                out.extend(strings_in(&object, &format!("{kind}/{name}")));
            }
        }
    }
    out
}

fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// `capw up` over the hostile clusters, most of which can never settle: it gives up after its
/// timeout.
const UP: [&str; 6] = [
    "up",
    "--no-simcloud",
    "--boot",
    "simulated",
    "--timeout",
    "20s",
];

#[test]
fn hostile_text_is_stored_and_printed_escaped_and_bounded() {
    let setup = Setup::new();
    let up = setup.run(&UP);
    // Each pass meets megabytes of hostile text: what is printed stays small all the same.
    // A log line carries a message of at most 4 KiB and its fields.
    assert_printable("capw up", &up, 16 << 10, 1 << 20);
    let printed = lossy(&up.stdout);
    assert!(
        printed.contains("garbage-text"),
        "up said nothing of the clusters: {printed}"
    );
    // Each pass logs in a span naming its cluster: the provider's own warning, escaped, is
    // tied to the cluster whose call made it.
    let logs = lossy(&up.stderr);
    let tied = logs.lines().find(|l| {
        l.contains("pass{cluster=infra-garbage-text namespace=default}") && l.contains("pwned")
    });
    assert!(
        tied.is_some(),
        "no warning of the provider names its cluster: {}",
        &logs[..logs.len().min(2000)]
    );

    // One run may end before a slow machine reached every cluster's hostile answer: `up` again
    // (it resumes from the state) until each cluster whose provider writes garbage text has an
    // answer stored, at most five more times; what the runs stored is checked below.
    for _ in 0..5 {
        let answered = ROLES.iter().all(|role| {
            ["garbage-text", "garbage-error"].iter().all(|behaviour| {
                let cluster = format!("{role}-{behaviour}");
                cluster == "cp-garbage-text"
                    || strings_of_cluster(&setup.state_dir, &cluster)
                        .iter()
                        .any(|(_, s)| s.contains("pwned"))
            })
        });
        if answered {
            break;
        }
        let again = setup.run(&UP);
        assert_printable("capw up, again", &again, 16 << 10, 1 << 20);
    }

    // What the store keeps: every string of every Cluster, Machine and infrastructure
    // record is at most a message and a reason long (a hook's hold joins both), with the few
    // words naming the provider and the call, and no control character.
    let mut all = Vec::new();
    for kind in ["Cluster", "Machine", "ClusterInfrastructure"] {
        for object in stored(&setup.state_dir, kind) {
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_owned();
            all.extend(strings_in(&object, &format!("{kind}/{name}")));
        }
    }
    assert!(all.len() > 50, "{} strings stored", all.len());
    for (at, s) in &all {
        assert!(
            s.len() <= capw_runtime::MAX_MESSAGE_BYTES + capw_runtime::MAX_REASON_BYTES + 256,
            "{at}: {} bytes stored",
            s.len()
        );
        assert!(
            !s.chars().any(char::is_control),
            "{at}: a control character stored: {:?}",
            &s[..s.len().min(80)]
        );
    }
    let of_cluster = |cluster: &str| strings_of_cluster(&setup.state_dir, cluster);
    // The text was kept, escaped, wherever the host shows it: the forged line is visible as
    // what it is. (A control plane's `wait` text is not shown anywhere, so cp-garbage-text
    // has nothing to find.)
    let forged = "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\nReady=True";
    for role in ROLES {
        for behaviour in ["garbage-text", "garbage-error"] {
            let cluster = format!("{role}-{behaviour}");
            if cluster == "cp-garbage-text" {
                continue;
            }
            let strings = of_cluster(&cluster);
            assert!(
                strings.iter().any(|(_, s)| s.contains(forged)),
                "{cluster}: the hostile text is not stored escaped; its strings: {strings:?}"
            );
        }
    }

    // The names were refused, naming the field, and none of them stored: no string of a
    // garbage-names cluster holds any of the garbage.
    for role in ROLES {
        let cluster = format!("{role}-garbage-names");
        let strings = of_cluster(&cluster);
        if let Some((at, _)) = strings.iter().find(|(_, s)| s.contains("pwned")) {
            panic!("{cluster}: {at} holds part of a refused name");
        }
        let refused: Vec<&String> = strings
            .iter()
            .filter(|(_, s)| s.contains("answer field `") && s.contains("bytes long"))
            .map(|(_, s)| s)
            .collect();
        assert!(!refused.is_empty(), "{cluster}: no refusal stored");
    }
    let machines = stored(&setup.state_dir, "Machine");
    let named: Vec<&Value> = machines
        .iter()
        .filter(|m| m["spec"]["clusterName"] == "infra-garbage-names")
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
    for args in [vec!["get", "clusters"], vec!["get", "machines"]] {
        let out = setup.run(&args);
        let what = format!("capw {}", args.join(" "));
        assert!(out.status.success(), "{what}: {}", lossy(&out.stderr));
        assert_printable(&what, &out, 4096, 256 << 10);
    }
    for role in ROLES {
        for behaviour in BEHAVIOURS {
            let cluster = format!("{role}-{behaviour}");
            let out = setup.run(&["describe", "cluster", &cluster]);
            let what = format!("capw describe cluster {cluster}");
            assert!(out.status.success(), "{what}: {}", lossy(&out.stderr));
            assert_printable(&what, &out, 4096, 256 << 10);
            let text = lossy(&out.stdout);
            match behaviour {
                "garbage-error" => assert!(
                    text.contains("\\r\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\nReady=True"),
                    "{what}: {text}"
                ),
                "garbage-names" => assert!(text.contains("InvalidAnswer"), "{what}: {text}"),
                _ => {}
            }
        }
    }
}
