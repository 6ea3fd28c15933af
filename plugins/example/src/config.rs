//! The example provider's config and the rules its schema cannot say.

use std::collections::BTreeSet;

use capw_sdk::config::json_pointer;
use capw_sdk::metadata::FieldError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The example provider's config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExampleConfig {
    /// Region name: lowercase ASCII letters, digits and `-`. Part of the endpoint's host name.
    pub region: String,
    /// Failure domains, in order; each at most once.
    #[serde(default = "default_zones")]
    pub zones: Vec<String>,
    /// Port of the control-plane endpoint; not 0.
    #[serde(default = "default_port")]
    pub port: u16,
    /// Run the control plane hosted in the management cluster instead of on machines.
    #[serde(default)]
    pub hosted: bool,
    /// Names of machines `list-machines` pretends exist, to exercise orphan handling: each
    /// keyed as the host keys the machines of this cluster (`{cluster uid}-{name}`), as an
    /// instance whose Machine was lost would be.
    #[serde(default)]
    pub existing_machines: Vec<String>,
    /// Idempotency keys `list-machines` also answers, as they are: machines that are not this
    /// cluster's (another cluster's keys, or none the host issued), as a provider that lists
    /// more than it should would answer them.
    #[serde(default)]
    pub foreign_machines: Vec<String>,
    /// Make every call (but `describe` and `validate-config`) answer in-progress or fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulate: Option<Simulate>,
}

/// How the `simulate` knob bends every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Simulate {
    /// Answer each call's in-progress form, where it has one.
    InProgress,
    /// Fail with a retryable `unavailable` error.
    RetryableError,
    /// Fail with a permanent `invalid-input` error.
    PermanentError,
}

fn default_zones() -> Vec<String> {
    ["a", "b", "c"].map(String::from).to_vec()
}

fn default_port() -> u16 {
    6443
}

impl ExampleConfig {
    /// Every rule violation, each at its field's JSON Pointer.
    ///
    /// # Errors
    ///
    /// `/region` when it is empty or not lowercase ASCII letters, digits and `-`;
    /// `/zones/{i}` for each zone that repeats an earlier one; `/port` when it is 0.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let region_ok = !self.region.is_empty()
            && self
                .region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !region_ok {
            errors.push(FieldError::new(
                "/region",
                "must be non-empty and only lowercase ASCII letters, digits and '-'",
            ));
        }
        let mut seen = BTreeSet::new();
        for (index, zone) in self.zones.iter().enumerate() {
            if !seen.insert(zone.as_str()) {
                errors.push(FieldError::new(
                    json_pointer(["zones", &index.to_string()]),
                    format!("duplicate zone `{zone}`"),
                ));
            }
        }
        if self.port == 0 {
            errors.push(FieldError::new("/port", "must be between 1 and 65535"));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{assert_accepted, assert_refused_at, config};

    use super::*;
    use crate::ExampleProvider;

    #[test]
    fn defaults_apply() {
        let c: ExampleConfig = config(r#"{"region": "eu-1"}"#);
        assert_eq!(c.zones, ["a", "b", "c"]);
        assert_eq!(c.port, 6443);
        assert!(!c.hosted);
        assert!(c.existing_machines.is_empty());
        assert_eq!(c.simulate, None);
        assert_accepted::<ExampleProvider>(r#"{"region": "eu-1"}"#);
    }

    #[test]
    fn reports_every_problem() {
        assert_refused_at::<ExampleProvider>(
            r#"{"region": "EU", "zones": ["a", "b", "a", "b"], "port": 0}"#,
            &["/region", "/zones/2", "/zones/3", "/port"],
        );
        assert_refused_at::<ExampleProvider>(r#"{"region": ""}"#, &["/region"]);
    }

    #[test]
    fn type_errors_point_at_the_field() {
        assert_refused_at::<ExampleProvider>(
            r#"{"region": "eu", "zones": ["a", 2]}"#,
            &["/zones/1"],
        );
        assert_refused_at::<ExampleProvider>(r#"{"region": "eu", "port": 70000}"#, &["/port"]);
        assert_refused_at::<ExampleProvider>(
            r#"{"region": "eu", "simulate": "sometimes"}"#,
            &["/simulate"],
        );
    }

    #[test]
    fn unknown_and_missing_fields_are_refused() {
        assert_refused_at::<ExampleProvider>(r#"{"region": "eu", "colour": "red"}"#, &["/colour"]);
        assert_refused_at::<ExampleProvider>(r#"{}"#, &[""]);
    }

    #[test]
    fn simulate_is_kebab_case() {
        let c: ExampleConfig = config(r#"{"region": "eu", "simulate": "retryable-error"}"#);
        assert_eq!(c.simulate, Some(Simulate::RetryableError));
    }
}
