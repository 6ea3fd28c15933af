//! Shared fixtures: a runtime, components, the providers' own conformance configs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use capw_conformance::{Outcome, Report, SuiteOptions};
use capw_runtime::{Grants, Provider, Runtime, RuntimeConfig};

pub fn runtime() -> Arc<Runtime> {
    capw_test_support::init_tracing();
    Runtime::new(RuntimeConfig::default()).unwrap()
}

pub fn component(name: &str) -> Arc<[u8]> {
    Arc::from(capw_test_support::component(name))
}

/// The conformance config a provider of the repository ships, e.g. `plugins/example`.
pub fn shipped_config(plugin_dir: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(plugin_dir)
        .join("conformance.json");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Options with short waits, for fixtures that answer at once or never.
pub fn quick(config: serde_json::Value) -> SuiteOptions {
    let mut options = SuiteOptions::new(config);
    options.patience = Duration::from_secs(3);
    options.max_wait = Duration::from_millis(200);
    options
}

pub async fn load(runtime: &Arc<Runtime>, name: &str, grants: Grants) -> Provider {
    runtime.load(name, component(name), grants).await.unwrap()
}

/// Asserts that every rule passed or was skipped for a reason other than a missing run.
#[track_caller]
pub fn assert_passes(report: &Report) {
    assert!(report.passed(), "{}", report.to_text());
    for r in &report.results {
        if let Outcome::Skip(why) = &r.outcome {
            assert_ne!(why, "not run", "{}: {}", r.rule.id, report.to_text());
        }
    }
}

/// Asserts that `rule` failed and its message contains `needle`.
#[track_caller]
pub fn assert_fails(report: &Report, rule: &str, needle: &str) {
    match report.outcome(rule) {
        Some(Outcome::Fail(message)) => assert!(
            message.contains(needle),
            "{rule} failed, but its message lacks {needle:?}:\n{}",
            report.to_text()
        ),
        other => panic!("{rule} did not fail ({other:?}):\n{}", report.to_text()),
    }
}

/// Asserts that `rule` passed.
#[track_caller]
pub fn assert_pass(report: &Report, rule: &str) {
    assert_eq!(
        report.outcome(rule),
        Some(&Outcome::Pass),
        "{}",
        report.to_text()
    );
}
