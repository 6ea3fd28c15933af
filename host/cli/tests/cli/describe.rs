//! `capw describe cluster` of the quickstart's machine-based cluster after `capw up` brought it
//! up: the control-plane provider's own conditions (prefixed `controlplane.capw.dev/`) are rows
//! under the control plane, each with the status the Cluster holds, and the ask and result of
//! the control plane's size are shown.

use std::path::Path;
use std::time::Duration;

use capw_engine::store::ObjectKey;
use capw_simcloud::{SimCloud, SimCloudConfig, Timings};
use capw_store::Store;

const TOKEN: &str = "describe-test-token";
const PREFIX: &str = "controlplane.capw.dev/";

fn run_ok(state_dir: &Path, args: &[&str]) -> String {
    let out = super::capw_with_state(state_dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "capw {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_shows_the_control_plane_providers_conditions_of_a_running_cluster() {
    let sim = SimCloud::start(
        SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(Duration::from_millis(5))),
    )
    .await
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let state_dir = tmp.path().join(".capw");
    std::fs::create_dir_all(state_dir.join("secrets/simcloud")).unwrap();
    std::fs::write(state_dir.join("secrets/simcloud/token"), TOKEN).unwrap();
    // alpha of the quickstart, asking one failure tolerated instead of a count.
    let text = capw_test_support::quickstart()
        .replace("http://127.0.0.1:7480", &sim.base_url())
        .replacen(
            "controlPlane: {replicas: 1}",
            "controlPlane: {failuresTolerated: 1}",
            1,
        );
    let manifest = tmp.path().join("quickstart.yaml");
    std::fs::write(&manifest, text).unwrap();
    run_ok(&state_dir, &["apply", "-f", manifest.to_str().unwrap()]);
    // simcloud keeps serving on this test's runtime while `capw up` runs to convergence.
    let up = tokio::task::spawn_blocking({
        let state_dir = state_dir.clone();
        move || run_ok(&state_dir, &["up", "--no-simcloud", "--timeout", "5m"])
    });
    up.await.unwrap();

    let out = run_ok(&state_dir, &["describe", "cluster", "alpha"]);
    let store = Store::open(&state_dir.join("state.redb")).unwrap();
    let alpha = store
        .get(&ObjectKey::namespaced("Cluster", "default", "alpha"))
        .unwrap()
        .unwrap();
    drop(store);
    let provider: Vec<(String, String)> = (alpha["status"]["conditions"].as_array().unwrap())
        .iter()
        .filter_map(|c| {
            let t = c["type"].as_str()?.strip_prefix(PREFIX)?;
            Some((t.to_owned(), c["status"].as_str()?.to_owned()))
        })
        .collect();
    assert!(
        provider
            .iter()
            .any(|(t, s)| t == "Available" && s == "True"),
        "{:#}",
        alpha["status"]
    );
    let lines: Vec<&str> = out.lines().collect();
    let cp = (lines.iter().position(|l| l.contains("├─ControlPlane (")))
        .unwrap_or_else(|| panic!("no control-plane row: {out}"));
    for (type_, status) in &provider {
        let row = (lines.iter().skip(cp + 1))
            .find(|l| l.contains(&format!("Provider {type_} ")))
            .unwrap_or_else(|| panic!("no row for the provider's {type_}: {out}"));
        assert!(
            row.contains(status.as_str()),
            "{type_} is {status}: {row}\n{out}"
        );
    }
    // The ask and what the provider made of it.
    assert!(out.contains("tolerates 1 failed (1 asked)"), "{out}");
    assert!(
        !out.contains(PREFIX),
        "the prefix is shown as `Provider`: {out}"
    );
}
