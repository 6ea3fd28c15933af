//! The suite's answer: one result per rule, rendered for people (text) and for CI (JSON,
//! JUnit XML).

use std::fmt::Write as _;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};
use serde::Serialize;

use crate::rules::{RULES, Rule};

/// How one rule went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "message", rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    /// The provider broke the rule; the message says how.
    Fail(String),
    /// The rule could not be checked (it does not apply, or what it needs failed first).
    Skip(String),
}

impl Outcome {
    pub fn is_fail(&self) -> bool {
        matches!(self, Outcome::Fail(_))
    }
}

/// One rule and its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    pub rule: &'static Rule,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What the suite found about one provider component.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Where the component came from (a path).
    pub source: String,
    /// The provider's name and version, once it loaded.
    pub provider: Option<String>,
    /// The contract version it implements (`0.2.0`), once it loaded: the rules it is held to.
    pub contract: Option<String>,
    pub results: Vec<RuleResult>,
    /// Calls the suite made.
    pub calls: u32,
    #[serde(serialize_with = "seconds")]
    pub duration: Duration,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Counts of a report's outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Report {
    /// Counts of passes, failures and skips.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.results {
            match r.outcome {
                Outcome::Pass => s.passed += 1,
                Outcome::Fail(_) => s.failed += 1,
                Outcome::Skip(_) => s.skipped += 1,
            }
        }
        s
    }

    /// Whether no rule failed: what the exit status of `capw plugin test` says.
    pub fn passed(&self) -> bool {
        self.summary().failed == 0
    }

    /// The outcome of the rule `id`.
    pub fn outcome(&self, id: &str) -> Option<&Outcome> {
        self.results
            .iter()
            .find(|r| r.rule.id == id)
            .map(|r| &r.outcome)
    }

    /// The ids of the rules that failed.
    pub fn failed_rules(&self) -> Vec<&'static str> {
        self.results
            .iter()
            .filter(|r| r.outcome.is_fail())
            .map(|r| r.rule.id)
            .collect()
    }

    /// The report for people: one line per rule, failure and skip reasons indented below it,
    /// and a summary line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let who = self.provider.as_deref().unwrap_or("(not loaded)");
        match &self.contract {
            Some(contract) => {
                let _ = writeln!(out, "{}: {who} (capw:provider@{contract})", self.source);
            }
            None => {
                let _ = writeln!(out, "{}: {who}", self.source);
            }
        }
        for r in &self.results {
            let (mark, detail) = match &r.outcome {
                Outcome::Pass => ("PASS", None),
                Outcome::Fail(m) => ("FAIL", Some(m)),
                Outcome::Skip(m) => ("SKIP", Some(m)),
            };
            let _ = writeln!(out, "  {mark}  {}", r.rule.id);
            if let Some(detail) = detail {
                for line in detail.lines() {
                    let _ = writeln!(out, "        {line}");
                }
            }
        }
        let s = self.summary();
        let _ = writeln!(
            out,
            "{} passed, {} failed, {} skipped ({} calls, {:.1}s)",
            s.passed,
            s.failed,
            s.skipped,
            self.calls,
            self.duration.as_secs_f64()
        );
        out
    }

    /// The report as JSON: the source, the provider, the summary and every rule with its
    /// scope, description, status and message.
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert(
                "summary".into(),
                serde_json::to_value(self.summary()).unwrap_or_default(),
            );
            map.insert("passed".into(), self.passed().into());
        }
        value
    }

    /// The report as JUnit XML: one test suite named after the provider, one test case per
    /// rule (class name: the rule's scope), failures and skips with their messages.
    ///
    /// # Errors
    /// When the XML cannot be written (it always can for text the suite produces).
    pub fn to_junit(&self) -> Result<String, quick_junit::SerializeError> {
        let name = self.provider.clone().unwrap_or_else(|| self.source.clone());
        let mut suite = TestSuite::new(format!("capw conformance: {name}"));
        suite.set_time(self.duration);
        for r in &self.results {
            let status = match &r.outcome {
                Outcome::Pass => TestCaseStatus::success(),
                Outcome::Fail(message) => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(format!("{}: {message}", r.rule.id))
                        .set_type("conformance")
                        .set_description(r.rule.description);
                    s
                }
                Outcome::Skip(message) => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(message.as_str());
                    s
                }
            };
            let mut case = TestCase::new(r.rule.id, status);
            case.set_classname(format!("capw.conformance.{}", scope_name(r.rule)));
            suite.add_test_case(case);
        }
        let mut report = JunitReport::new("capw plugin test");
        report.set_time(self.duration).add_test_suite(suite);
        report.to_string()
    }
}

fn scope_name(rule: &Rule) -> String {
    serde_json::to_value(rule.scope)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Results in the order of [`RULES`], from outcomes keyed by rule id; a rule no check spoke
/// about is skipped with `missing`.
pub(crate) fn ordered(
    outcomes: &std::collections::BTreeMap<&'static str, Outcome>,
    missing: impl Fn(&Rule) -> String,
) -> Vec<RuleResult> {
    RULES
        .iter()
        .map(|rule| RuleResult {
            rule,
            outcome: outcomes
                .get(rule.id)
                .cloned()
                .unwrap_or_else(|| Outcome::Skip(missing(rule))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::rules::id;

    fn report() -> Report {
        let mut outcomes = BTreeMap::new();
        outcomes.insert(id::LOADS, Outcome::Pass);
        outcomes.insert(
            id::FIELD_PATHS,
            Outcome::Fail("`/region`: no error points at it".into()),
        );
        Report {
            source: "x.wasm".into(),
            provider: Some("x 0.1.0".into()),
            contract: Some("0.2.0".into()),
            results: ordered(&outcomes, |_| "not run".into()),
            calls: 3,
            duration: Duration::from_millis(1500),
        }
    }

    #[test]
    fn text_names_each_rule_and_the_failure() {
        let r = report();
        let text = r.to_text();
        assert!(
            text.starts_with("x.wasm: x 0.1.0 (capw:provider@0.2.0)\n"),
            "{text}"
        );
        assert!(text.contains("PASS  provider.loads"), "{text}");
        assert!(
            text.contains("FAIL  metadata.validate-config.field-paths\n        `/region`"),
            "{text}"
        );
        assert!(!r.passed());
        assert_eq!(r.failed_rules(), [id::FIELD_PATHS]);
        let s = r.summary();
        assert_eq!((s.passed, s.failed, s.skipped), (1, 1, RULES.len() - 2));
    }

    #[test]
    fn junit_has_a_case_per_rule_and_the_failure_message() {
        let xml = report().to_junit().unwrap();
        assert_eq!(xml.matches("<testcase ").count(), RULES.len(), "{xml}");
        assert!(xml.contains("failures=\"1\""), "{xml}");
        assert!(
            xml.contains("message=\"metadata.validate-config.field-paths: `/region`"),
            "{xml}"
        );
    }

    #[test]
    fn json_carries_status_and_message() {
        let v = report().to_json();
        assert_eq!(v["passed"], false);
        assert_eq!(v["summary"]["failed"], 1);
        let failed: Vec<_> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"] == "fail")
            .collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0]["rule"]["id"], id::FIELD_PATHS);
        assert_eq!(failed[0]["message"], "`/region`: no error points at it");
    }
}
