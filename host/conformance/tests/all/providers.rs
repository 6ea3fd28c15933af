//! The repository's own providers pass the suite with the configs they ship.

use std::time::Duration;

use capw_conformance::{Outcome, Scope, id};
use capw_runtime::{Grants, HttpGrant, Secret};
use capw_simcloud::{SimCloud, SimCloudConfig, Timings};

use crate::support::{assert_passes, component, runtime, shipped_config};

fn config(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn example_passes_every_rule_of_every_point() {
    let runtime = runtime();
    let options = capw_conformance::SuiteOptions::new(config(&shipped_config("plugins/example")));
    let report = capw_conformance::run(
        &runtime,
        "example",
        component("capw_example_provider"),
        Grants::default(),
        &options,
    )
    .await;
    assert_passes(&report);
    // It declares all four points: no rule is skipped for want of one.
    for r in &report.results {
        if r.rule.scope != Scope::Every {
            assert_eq!(r.outcome, Outcome::Pass, "{}", r.rule.id);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kubeadm_control_plane_passes() {
    let runtime = runtime();
    let options = capw_conformance::SuiteOptions::new(config(&shipped_config(
        "plugins/kubeadm-control-plane",
    )));
    let report = capw_conformance::run(
        &runtime,
        "kubeadm-control-plane",
        component("capw_kubeadm_control_plane"),
        Grants::default(),
        &options,
    )
    .await;
    assert_passes(&report);
    assert_eq!(report.outcome(id::PLAN_DETERMINISTIC), Some(&Outcome::Pass));
    // Exported by the SDK but not declared: checked to answer unsupported.
    assert_eq!(
        report.outcome(id::UNDECLARED_UNSUPPORTED),
        Some(&Outcome::Pass)
    );
    assert!(matches!(
        report.outcome(id::CLUSTER_CONVERGES),
        Some(Outcome::Skip(why)) if why.contains("does not declare infrastructure")
    ));
}

/// A hosted control plane is judged by its shape: manifests the host would apply, a plan that
/// settles once every object it answered is applied and ready, no question about members or
/// calls the host does not make of it.
#[tokio::test(flavor = "multi_thread")]
async fn hosted_control_plane_passes_the_rules_of_its_shape() {
    let runtime = runtime();
    let options = capw_conformance::SuiteOptions::new(config(&shipped_config(
        "plugins/hosted-control-plane",
    )));
    let report = capw_conformance::run(
        &runtime,
        "hosted-control-plane",
        component("capw_hosted_control_plane"),
        Grants::default(),
        &options,
    )
    .await;
    assert_passes(&report);
    for rule in [
        id::PLAN_DETERMINISTIC,
        id::PLAN_WELL_FORMED,
        id::PLAN_STATUS,
        id::SERVICE_CONVERGES,
    ] {
        assert_eq!(report.outcome(rule), Some(&Outcome::Pass), "{rule}");
    }
    for (rule, why) in [
        (
            id::PLAN_ETCD_MEMBERS,
            "shape is hosted: it has no members in etcd",
        ),
        (id::SERVICE_DELETE, "calls no delete-control-plane"),
    ] {
        assert!(
            matches!(report.outcome(rule), Some(Outcome::Skip(w)) if w.contains(why)),
            "{rule}: {}",
            report.to_text()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kubeadm_bootstrap_passes() {
    let runtime = runtime();
    let options =
        capw_conformance::SuiteOptions::new(config(&shipped_config("plugins/kubeadm-bootstrap")));
    let report = capw_conformance::run(
        &runtime,
        "kubeadm-bootstrap",
        component("capw_kubeadm_bootstrap"),
        Grants::default(),
        &options,
    )
    .await;
    assert_passes(&report);
    assert_eq!(
        report.outcome(id::GENERATE_DETERMINISTIC),
        Some(&Outcome::Pass)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sim_infra_passes_against_simcloud() {
    const TOKEN: &str = "conformance-test-token";
    let sim = SimCloud::start(
        SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(Duration::from_millis(50))),
    )
    .await
    .unwrap();
    let mut grants = Grants::default();
    grants
        .http
        .push(sim.addr().to_string().parse::<HttpGrant>().unwrap());
    grants
        .secrets
        .insert("simcloud-token".into(), Some(Secret::new(TOKEN)));
    let text = shipped_config("plugins/sim-infra").replace("${SIMCLOUD_URL}", &sim.base_url());
    let options = capw_conformance::SuiteOptions::new(config(&text));
    let runtime = runtime();
    let report = capw_conformance::run(
        &runtime,
        "sim-infra",
        component("capw_sim_infra"),
        grants,
        &options,
    )
    .await;
    assert_passes(&report);
    assert_eq!(report.outcome(id::MACHINE_IDEMPOTENT), Some(&Outcome::Pass));
    assert_eq!(
        report.outcome(id::DELETE_CLUSTER_GONE),
        Some(&Outcome::Pass)
    );
    sim.shutdown().await.unwrap();
}
