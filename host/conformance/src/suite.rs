//! Running the suite: load the component, run the checks of every extension point it
//! declares, judge the calls, and report one outcome per rule.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use capw_runtime::{ExtensionPoint, Grants, Provider, Runtime};

use crate::calls::Subject;
use crate::checks::{self, Findings};
use crate::options::SuiteOptions;
use crate::report::{Outcome, Report, ordered};
use crate::rules::{Rule, Scope, id};

/// Loads the component with `grants` and runs the suite on it.
///
/// A component that does not load fails [`id::LOADS`] with the load error; every other rule
/// is then skipped.
pub async fn run(
    runtime: &Arc<Runtime>,
    source: &str,
    bytes: Arc<[u8]>,
    grants: Grants,
    options: &SuiteOptions,
) -> Report {
    let started = Instant::now();
    match runtime.load(source, bytes, grants).await {
        Ok(provider) => run_loaded(&provider, source, options).await,
        Err(e) => {
            let mut f = Findings::default();
            f.set(id::LOADS, Outcome::Fail(error_chain(&e)));
            Report {
                source: source.to_owned(),
                provider: None,
                contract: None,
                results: ordered(&f.0, |_| {
                    format!("needs the component to load ({})", id::LOADS)
                }),
                calls: 0,
                duration: started.elapsed(),
            }
        }
    }
}

/// Runs the suite on a loaded provider.
pub async fn run_loaded(provider: &Provider, source: &str, options: &SuiteOptions) -> Report {
    let started = Instant::now();
    let subject = Subject::new(provider, options);
    let suffix = run_suffix();
    let mut f = Findings::default();
    f.set(id::LOADS, Outcome::Pass);
    let declared = provider.info().extension_points();
    // Each provider is held to the rules of its own contract version; the first outcome of a
    // rule stands, so the checks below cannot overturn these skips.
    let contract = provider.info().contract.version.clone();
    for rule in crate::rules::RULES {
        if !rule.applies_to(&contract) {
            f.skip(
                rule.id,
                format!(
                    "a rule of contract {}; the provider implements {contract}",
                    rule.since
                ),
            );
        }
    }

    checks::metadata::run(&subject, &mut f).await;
    checks::config::run(&subject, &mut f).await;
    let example_ok = !matches!(f.0.get(id::EXAMPLE_ACCEPTED), Some(Outcome::Fail(_)));
    if example_ok {
        let c = checks::cluster(&options.cluster_name, &suffix, "probe");
        checks::errors::run(&subject, &c, &mut f).await;
        for point in &declared {
            match point {
                ExtensionPoint::Infrastructure => {
                    checks::infrastructure::run(&subject, &suffix, &mut f).await
                }
                ExtensionPoint::Bootstrap => {
                    checks::bootstrap::run(&subject, &suffix, &mut f).await
                }
                ExtensionPoint::ControlPlane => {
                    checks::control_plane::run(&subject, &suffix, &mut f).await
                }
                ExtensionPoint::LifecycleHooks => {
                    checks::hooks::run(&subject, &suffix, &mut f).await
                }
            }
        }
    } else {
        // Those calls carry the example config; without one they would prove nothing.
        let needs_example = crate::rules::RULES.iter().filter(|r| {
            r.scope != Scope::Every
                || [id::UNDECLARED_UNSUPPORTED, id::BAD_INPUT_PERMANENT].contains(&r.id)
        });
        for rule in needs_example {
            f.skip(
                rule.id,
                format!(
                    "needs an example config the provider accepts ({}); give one with --config",
                    id::EXAMPLE_ACCEPTED
                ),
            );
        }
    }
    let log = subject.take_log();
    checks::errors::judge_log(&log, &mut f);

    let m = &provider.info().metadata;
    Report {
        source: source.to_owned(),
        provider: Some(format!("{} {}", m.name, m.version)),
        contract: Some(contract),
        results: ordered(&f.0, |rule| not_run(rule, &declared)),
        calls: log.count,
        duration: started.elapsed(),
    }
}

fn not_run(rule: &Rule, declared: &[ExtensionPoint]) -> String {
    let point = match rule.scope {
        Scope::Every => return "not run".into(),
        Scope::Infrastructure => ExtensionPoint::Infrastructure,
        Scope::Bootstrap => ExtensionPoint::Bootstrap,
        Scope::ControlPlane => ExtensionPoint::ControlPlane,
        Scope::LifecycleHooks => ExtensionPoint::LifecycleHooks,
    };
    if declared.contains(&point) {
        "not run".into()
    } else {
        format!("the provider does not declare {point}")
    }
}

/// A suffix for this run's made-up names, so that runs against a backend that keeps state
/// never meet each other's resources.
fn run_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}", nanos % 0xff_ffff_ffff)
}

use capw_text::error_chain;
