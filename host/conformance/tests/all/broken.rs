//! Providers that break the contract fail the suite, and the failure names the broken rule.

use std::time::Duration;

use capw_conformance::{Outcome, Report, id, run_loaded};
use capw_runtime::{Grants, Provider};
use serde_json::json;

use crate::support::{assert_fails, assert_pass, assert_passes, load, quick, runtime};

async fn with_breaks(provider: &Provider, breaks: &[&str]) -> Report {
    let options = quick(json!({"label": "conformance", "breaks": breaks}));
    run_loaded(provider, "broken", &options).await
}

/// The broken provider with nothing broken keeps every rule: each failure below comes from
/// the break alone.
#[tokio::test(flavor = "multi_thread")]
async fn broken_provider_with_no_break_passes() {
    let runtime = runtime();
    let p = load(&runtime, "capw_broken_provider", Grants::default()).await;
    assert_passes(&with_breaks(&p, &[]).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_break_fails_the_rule_it_breaks() {
    let runtime = runtime();
    let p = load(&runtime, "capw_broken_provider", Grants::default()).await;
    let cases: &[(&str, &str, &str)] = &[
        (
            "reject-example",
            id::EXAMPLE_ACCEPTED,
            "validate-config refused the example config",
        ),
        (
            "no-field-paths",
            id::FIELD_PATHS,
            "no error points at `/label`",
        ),
        (
            "accept-garbage",
            id::FIELD_PATHS,
            "validate-config accepted",
        ),
        (
            "not-idempotent",
            id::MACHINE_IDEMPOTENT,
            "a second machine for one key",
        ),
        (
            "endpoint-changes",
            id::CLUSTER_IDEMPOTENT,
            "the endpoint changed",
        ),
        ("never-ready", id::CLUSTER_CONVERGES, "not settled after"),
        (
            "no-requeue-hint",
            id::MACHINE_IN_PROGRESS,
            "without a requeue hint",
        ),
        ("no-requeue-hint", id::HOOKS_ANSWER, "requeue-after-ms 0"),
        (
            "no-requeue-hint",
            id::PLAN_WELL_FORMED,
            "requeue-after-ms 0",
        ),
        (
            "delete-gone-fails",
            id::DELETE_MACHINE_GONE,
            "never created anything",
        ),
        (
            "delete-gone-fails",
            id::DELETE_CLUSTER_GONE,
            "no such cluster",
        ),
        (
            "list-duplicates",
            id::LIST_ONE_PER_KEY,
            "\"orphan-key\" is listed twice",
        ),
        (
            "inconsistent-retry-flag",
            id::RETRY_FLAG,
            "marked retryable",
        ),
        (
            "inconsistent-retry-flag",
            id::RETRY_FLAG,
            "carries retry-after-ms",
        ),
        ("nondeterministic", id::PLAN_DETERMINISTIC, "first"),
        (
            "nondeterministic",
            id::GENERATE_DETERMINISTIC,
            "the same request gave different data",
        ),
        (
            "bad-steps",
            id::PLAN_WELL_FORMED,
            "\"not-a-member\", which is not one of the members",
        ),
        (
            "bad-steps",
            id::PLAN_WELL_FORMED,
            "creates an init machine although",
        ),
        (
            "deletes-etcd-members",
            id::PLAN_ETCD_MEMBERS,
            "3 members in etcd, 1 wanted: the step deletes \"cp-0\", which etcd lists",
        ),
        (
            "broken-bootstrap",
            id::SECRETS_CONVERGE,
            "\"ca.key\" is named twice",
        ),
        ("broken-bootstrap", id::GENERATE_ROLES, "role worker"),
        ("broken-bootstrap", id::KUBECONFIG, "empty"),
        (
            "renews-same-id",
            id::JOIN_TOKEN_RENEWS,
            "renew-join-token answered the current token's id abcdef",
        ),
    ];
    for (brk, rule, needle) in cases {
        let report = with_breaks(&p, &[*brk]).await;
        assert_fails(&report, rule, needle);
        // A broken rule fails the run, and the failure names the rule.
        assert!(!report.passed());
        assert!(report.to_text().contains(&format!("FAIL  {rule}")));
        assert!(
            report
                .to_junit()
                .unwrap()
                .contains(&format!("message=\"{rule}: "))
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_past_its_deadline_fails_within_deadline() {
    let runtime = runtime();
    let mut grants = Grants::default();
    grants.limits.call_timeout = Duration::from_secs(1);
    let p = load(&runtime, "capw_broken_provider", grants).await;
    let report = with_breaks(&p, &["slow"]).await;
    assert_fails(
        &report,
        id::WITHIN_DEADLINE,
        "infrastructure.reconcile-cluster ran past its deadline of 1s",
    );
    assert_fails(&report, id::CLUSTER_CONVERGES, "deadline");
    assert_pass(&report, id::PLAN_DETERMINISTIC);
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_metadata_fails_the_metadata_and_error_rules() {
    let runtime = runtime();
    let p = load(&runtime, "capw_broken_metadata_provider", Grants::default()).await;
    let report = run_loaded(&p, "broken-metadata", &quick(json!({}))).await;
    for (rule, needle) in [
        (
            id::DESCRIBE_WELL_FORMED,
            "\"one point oh\" is not a semantic version",
        ),
        (id::DESCRIBE_WELL_FORMED, "must be one non-empty line"),
        (id::DESCRIBE_WELL_FORMED, "declared twice"),
        (id::DESCRIBE_WELL_FORMED, "control-plane-shape is none"),
        (id::DESCRIBE_DETERMINISTIC, "answered differently"),
        (id::SCHEMA_WELL_FORMED, "not a valid JSON Schema"),
        (id::REJECTS_MALFORMED, "validate-config accepted"),
        (
            id::UNDECLARED_UNSUPPORTED,
            "infrastructure is exported but not declared",
        ),
        (id::BAD_INPUT_PERMANENT, "must not be retryable"),
        (id::RETRY_FLAG, "InvalidInput"),
    ] {
        assert_fails(&report, rule, needle);
    }
    assert!(matches!(
        report.outcome(id::FIELD_PATHS),
        Some(Outcome::Skip(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_component_that_does_not_load_fails_loads() {
    let runtime = runtime();
    let report = capw_conformance::run(
        &runtime,
        "not-wasm",
        std::sync::Arc::from(&b"not wasm at all"[..]),
        Grants::default(),
        &quick(json!({})),
    )
    .await;
    assert_fails(&report, id::LOADS, "not WebAssembly");
    assert_eq!(report.summary().failed, 1);
}
