//! capw's conformance suite: does a provider component keep the rules of the
//! `capw:provider` contract?
//!
//! Start with [`run`]: it loads a component in the real sandbox with the grants an operator
//! would give it, calls it as the host would (metadata, validate-config, and every extension
//! point it declares, with the example config in [`SuiteOptions`]) and returns a [`Report`]
//! with one [`Outcome`] per [`Rule`] of [`RULES`]: pass, fail with a message naming what broke,
//! or skip with the reason. The report renders as text, JSON and JUnit XML; `capw plugin test`
//! is its command line. The rules are listed, with what each calls and expects, in
//! `docs/conformance.md`.

mod calls;
mod checks;
mod options;
mod report;
mod rules;
mod suite;

pub use options::SuiteOptions;
pub use report::{Outcome, Report, RuleResult, Summary};
pub use rules::{RULES, Rule, Scope, id, rule};
pub use suite::{run, run_loaded};
