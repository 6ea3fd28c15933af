//! `capw plugin test` on real components: the repository's providers pass with the configs
//! they ship, a broken one fails with the rule named, the reports are readable by CI.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shipped_config(plugin: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugins")
        .join(plugin)
        .join("conformance.json")
}

fn capw_test(cache: &Path, component: &str, args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capw"))
        .arg("--cache-dir")
        .arg(cache)
        .args(["plugin", "test"])
        .arg(capw_test_support::component_path(component))
        .args(args)
        .output()
        .unwrap()
}

#[track_caller]
fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn example_passes_and_writes_junit() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let config = shipped_config("example");
    let out = capw_test(
        dir.path(),
        "capw_example_provider",
        &[
            "--config".as_ref(),
            config.as_os_str(),
            "--junit".as_ref(),
            junit.as_os_str(),
        ],
    );
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    // Judged at the contract version it implements: the SDK's, 0.3.
    assert!(
        text.contains("example 0.1.0 (capw:provider@0.3.0)"),
        "{text}"
    );
    assert!(
        text.contains("PASS  infrastructure.reconcile-machine.idempotent"),
        "{text}"
    );
    // Every rule of 0.3, `control-plane.plan.status` and `control-plane.plan.etcd-members`
    // among them, but the one about undeclared points (the example declares all four).
    assert!(text.contains("PASS  control-plane.plan.status"), "{text}");
    assert!(
        text.contains("PASS  control-plane.plan.etcd-members"),
        "{text}"
    );
    // The example's joins carry no token to keep: `current-join-token` answers none.
    assert!(text.contains("PASS  bootstrap.join-token.renews"), "{text}");
    // A provider on machines answers the calls of a service's control plane `unsupported`.
    assert!(
        text.contains("PASS  control-plane.reconcile-control-plane.converges")
            && text.contains("PASS  control-plane.delete-control-plane.gone-is-deleted"),
        "{text}"
    );
    assert!(text.contains("30 passed, 0 failed, 1 skipped"), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("name=\"capw conformance: example 0.1.0\""),
        "{xml}"
    );
    assert!(xml.contains("failures=\"0\""), "{xml}");
    assert_eq!(
        xml.matches("<testcase ").count(),
        capw_conformance::RULES.len(),
        "{xml}"
    );
}

/// `capw plugin test --simcloud -o json` of `component` with the config at `config`: the
/// report, once the run passed.
fn json_report_against_simcloud(component: &str, config: &Path) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = capw_test(
        dir.path(),
        component,
        &[
            "--simcloud".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            "-o".as_ref(),
            "json".as_ref(),
        ],
    );
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn sim_infra_passes_against_the_in_process_simcloud() {
    let v = json_report_against_simcloud("capw_sim_infra", &shipped_config("sim-infra"));
    assert_eq!(v["passed"], true, "{v:#}");
    assert_eq!(v["provider"], "sim-infra 0.1.0");
    let status = |id: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"]["id"] == id)
            .map(|r| r["status"].clone())
    };
    assert_eq!(
        status("infrastructure.delete-cluster.gone-is-deleted"),
        Some("pass".into())
    );
    assert_eq!(status("bootstrap.generate.roles"), Some("skip".into()));
}

/// go-sim-infra, sim-infra's twin written with the Go SDK (`make go-sim-infra`), passes the
/// same infrastructure rules as sim-infra against simcloud: idempotent machines by key,
/// `list-machines` for the orphan sweep, deletion of what is gone. (Creates under the
/// lost-response fault are capw-local's `go_sim_infra` tests, through the engine.)
#[test]
fn go_sim_infra_passes_the_infrastructure_rules_sim_infra_passes() {
    let statuses = |v: &serde_json::Value| -> Vec<(String, serde_json::Value)> {
        (v["results"].as_array().unwrap().iter())
            .filter(|r| {
                r["rule"]["id"]
                    .as_str()
                    .unwrap()
                    .starts_with("infrastructure.")
            })
            .map(|r| {
                (
                    r["rule"]["id"].as_str().unwrap().to_owned(),
                    r["status"].clone(),
                )
            })
            .collect()
    };
    let rust = json_report_against_simcloud("capw_sim_infra", &shipped_config("sim-infra"));
    let go = json_report_against_simcloud(
        "capw_go_sim_infra",
        &shipped_config("other-languages/go-sim-infra"),
    );
    assert_eq!(go["passed"], true, "{go:#}");
    assert_eq!(statuses(&go), statuses(&rust), "{go:#}");
    let passed = statuses(&go)
        .into_iter()
        .filter(|(_, status)| status == "pass")
        .map(|(id, _)| id)
        .collect::<Vec<_>>();
    for rule in [
        "infrastructure.reconcile-machine.idempotent",
        "infrastructure.list-machines.one-per-key",
        "infrastructure.delete-cluster.gone-is-deleted",
    ] {
        assert!(passed.iter().any(|id| id == rule), "{rule}: {passed:?}");
    }
}

/// sim-infra and its Go twin, for a control plane a service runs, make no endpoint (`none`,
/// contract 0.3): the infrastructure rules pass both.
#[test]
fn sim_infra_and_its_go_twin_without_an_endpoint_pass_the_infrastructure_rules() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none.json");
    std::fs::write(
        &config,
        r#"{"endpoint": "${SIMCLOUD_URL}", "controlPlaneEndpoint": "none"}"#,
    )
    .unwrap();
    for component in ["capw_sim_infra", "capw_go_sim_infra"] {
        let v = json_report_against_simcloud(component, &config);
        assert_eq!(v["passed"], true, "{component}: {v:#}");
        for rule in [
            "infrastructure.reconcile-cluster.in-progress",
            "infrastructure.reconcile-cluster.idempotent",
            "infrastructure.delete-cluster.gone-is-deleted",
        ] {
            let result = (v["results"].as_array().unwrap().iter())
                .find(|r| r["rule"]["id"] == rule)
                .unwrap();
            assert_eq!(result["status"], "pass", "{component}: {result:#}");
        }
    }
}

/// A managed control plane is judged by what its shape asks: the service's two calls against
/// the in-process simcloud, and none of the rules about members on machines.
#[test]
fn sim_managed_control_plane_passes_the_rules_of_its_shape() {
    let v = json_report_against_simcloud(
        "capw_sim_managed_control_plane",
        &shipped_config("sim-managed-control-plane"),
    );
    assert_eq!(v["passed"], true, "{v:#}");
    assert_eq!(v["provider"], "sim-managed-control-plane 0.1.0");
    let results = v["results"].as_array().unwrap();
    let status = |id: &str| {
        (results.iter())
            .find(|r| r["rule"]["id"] == id)
            .map(|r| r["status"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no rule {id}: {v:#}"))
    };
    for rule in [
        "control-plane.reconcile-control-plane.converges",
        "control-plane.delete-control-plane.gone-is-deleted",
        "metadata.describe.well-formed",
    ] {
        assert_eq!(status(rule), "pass", "{rule}: {v:#}");
    }
    // Questions about members on machines are not asked of a service.
    let etcd = (results.iter())
        .find(|r| r["rule"]["id"] == "control-plane.plan.etcd-members")
        .unwrap();
    assert_eq!(etcd["status"], "skip", "{etcd:#}");
    assert!(
        etcd["message"]
            .as_str()
            .unwrap()
            .contains("shape is managed: it has no members in etcd"),
        "{etcd:#}"
    );
    // A point it does not declare is skipped, not failed; every rule is judged.
    assert_eq!(
        status("infrastructure.reconcile-cluster.idempotent"),
        "skip"
    );
    assert_eq!(results.len(), capw_conformance::RULES.len(), "{v:#}");
}

/// A hosted control plane is judged by what its shape asks: manifests the host would apply,
/// a plan that settles once every object it answered is applied and ready, and none of the
/// rules about members on machines.
#[test]
fn hosted_control_plane_passes_the_rules_of_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    let config = shipped_config("hosted-control-plane");
    let out = capw_test(
        dir.path(),
        "capw_hosted_control_plane",
        &[
            "--config".as_ref(),
            config.as_os_str(),
            "-o".as_ref(),
            "json".as_ref(),
        ],
    );
    assert_success(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["passed"], true, "{v:#}");
    assert_eq!(v["provider"], "hosted-control-plane 0.1.0");
    let results = v["results"].as_array().unwrap();
    let result = |id: &str| {
        (results.iter())
            .find(|r| r["rule"]["id"] == id)
            .unwrap_or_else(|| panic!("no rule {id}: {v:#}"))
    };
    for rule in [
        "control-plane.plan.deterministic",
        "control-plane.plan.well-formed",
        "control-plane.plan.status",
        "control-plane.reconcile-control-plane.converges",
        "metadata.validate-config.accepts-example",
    ] {
        assert_eq!(result(rule)["status"], "pass", "{rule}: {v:#}");
    }
    // No members in etcd, and no deletion to ask of it: the host deletes what it applied.
    for (rule, why) in [
        (
            "control-plane.plan.etcd-members",
            "shape is hosted: it has no members in etcd",
        ),
        (
            "control-plane.delete-control-plane.gone-is-deleted",
            "shape is hosted: the host deletes the objects it applied",
        ),
    ] {
        let r = result(rule);
        assert_eq!(r["status"], "skip", "{r:#}");
        assert!(r["message"].as_str().unwrap().contains(why), "{r:#}");
    }
    assert_eq!(results.len(), capw_conformance::RULES.len(), "{v:#}");
}

#[test]
fn sim_infra_config_without_simcloud_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let config = shipped_config("sim-infra");
    let out = capw_test(
        dir.path(),
        "capw_sim_infra",
        &["--config".as_ref(), config.as_os_str()],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("uses ${SIMCLOUD_URL}; add --simcloud"),
        "{err}"
    );
}

#[test]
fn the_control_plane_and_bootstrap_providers_pass() {
    let dir = tempfile::tempdir().unwrap();
    for (component, plugin) in [
        ("capw_kubeadm_control_plane", "kubeadm-control-plane"),
        ("capw_kubeadm_bootstrap", "kubeadm-bootstrap"),
    ] {
        let config = shipped_config(plugin);
        let out = capw_test(
            dir.path(),
            component,
            &["--config".as_ref(), config.as_os_str()],
        );
        assert_success(&out);
    }
}

#[test]
fn a_broken_provider_fails_with_the_rule_named_and_exit_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("broken.yaml");
    std::fs::write(&config, "label: x\nbreaks: [not-idempotent]\n").unwrap();
    let junit = dir.path().join("report.xml");
    let out = capw_test(
        dir.path(),
        "capw_broken_provider",
        &[
            "--config".as_ref(),
            config.as_os_str(),
            "--junit".as_ref(),
            junit.as_os_str(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("FAIL  infrastructure.reconcile-machine.idempotent"),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rules failed: infrastructure.reconcile-machine.idempotent"),
        "{err}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("message=\"infrastructure.reconcile-machine.idempotent: "),
        "{xml}"
    );
}
