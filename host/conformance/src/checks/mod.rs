//! The checks: each runs calls against the provider and records an outcome per rule id.

pub(crate) mod bootstrap;
pub(crate) mod config;
pub(crate) mod control_plane;
pub(crate) mod errors;
pub(crate) mod hooks;
pub(crate) mod hosted;
pub(crate) mod infrastructure;
pub(crate) mod metadata;

use std::collections::BTreeMap;

use capw_runtime::types::ClusterRef;

use crate::report::Outcome;

/// Outcomes found so far, by rule id; the first outcome of a rule stands.
#[derive(Debug, Default)]
pub(crate) struct Findings(pub BTreeMap<&'static str, Outcome>);

impl Findings {
    pub fn set(&mut self, id: &'static str, outcome: Outcome) {
        self.0.entry(id).or_insert(outcome);
    }

    /// Pass on `Ok`, fail with the message on `Err`.
    pub fn check(&mut self, id: &'static str, result: Result<(), String>) {
        self.set(id, result.map_or_else(Outcome::Fail, |()| Outcome::Pass));
    }

    /// Fail with every problem, one per line; pass when there are none.
    pub fn problems(&mut self, id: &'static str, problems: Vec<String>) {
        if problems.is_empty() {
            self.set(id, Outcome::Pass);
        } else {
            self.set(id, Outcome::Fail(problems.join("\n")));
        }
    }

    pub fn skip(&mut self, id: &'static str, why: impl Into<String>) {
        self.set(id, Outcome::Skip(why.into()));
    }
}

/// A made-up cluster for one run: `<name>-<suffix>-<role>`.
pub(crate) fn cluster(name: &str, suffix: &str, role: &str) -> ClusterRef {
    let name = format!("{name}-{suffix}-{role}");
    ClusterRef {
        namespace: "default".into(),
        uid: format!("uid-{name}"),
        name,
    }
}
