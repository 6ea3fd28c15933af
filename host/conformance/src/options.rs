//! What the suite is run with.

use std::time::Duration;

/// How the suite exercises a provider. The grants (HTTP authorities, secrets, call timeout)
/// are the loaded provider's own.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// A config the provider must accept; every extension-point call carries it.
    pub config: serde_json::Value,
    /// How long one in-progress piece of work (a cluster, a machine, a deletion) may take to
    /// settle before the rule fails.
    pub patience: Duration,
    /// The longest the suite waits between two calls, whatever the provider's hint: the
    /// contract lets the host call sooner.
    pub max_wait: Duration,
    /// The name of the clusters the suite makes up; a unique suffix is added per run so that
    /// runs against a backend that keeps state do not meet each other's resources.
    pub cluster_name: String,
}

impl SuiteOptions {
    /// Options for `config` with the defaults: 60 s of patience, at most 1 s between calls,
    /// clusters named `conformance-*`.
    pub fn new(config: serde_json::Value) -> Self {
        Self {
            config,
            patience: Duration::from_secs(60),
            max_wait: Duration::from_secs(1),
            cluster_name: "conformance".into(),
        }
    }
}
