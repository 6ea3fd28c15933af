//! The provider's config and the rules its schema cannot say.

use capw_sdk::metadata::FieldError;
use capw_sim_client::SimcloudConfig;
use capw_sim_client::config::{
    default_request_timeout_ms, default_token_secret, endpoint_error, request_timeout_error,
    token_secret_error,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use capw_sim_client::config::{
    DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TOKEN_SECRET, MAX_REQUEST_TIMEOUT_MS,
};

/// `replicas` when left out: three API servers, which tolerate one failure.
pub const DEFAULT_REPLICAS: u32 = 3;

/// The most API server replicas simcloud runs for one managed control plane.
pub const MAX_REPLICAS: u32 = 5;

/// Config of the simcloud managed control-plane provider, e.g.
/// `{"endpoint": "http://127.0.0.1:8080", "replicas": 3}`.
///
/// Only `endpoint` is required. Besides this schema, `endpoint` must be an `http://` or
/// `https://` URL without user info, query or fragment, and `tokenSecret` must not be empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagedControlPlaneConfig {
    /// Base URL of the simcloud API, e.g. `http://127.0.0.1:8080`. Its authority must be
    /// granted to the provider in its WasmProvider.
    pub endpoint: String,
    /// Name of the secret grant holding simcloud's bearer token.
    #[serde(default = "default_token_secret")]
    pub token_secret: String,
    /// Longest wait for one simcloud request, in milliseconds; never more than what is left of
    /// the call's deadline.
    #[serde(default = "default_request_timeout_ms")]
    #[schemars(range(min = 1, max = 600_000))]
    pub request_timeout_ms: u32,
    /// API server replicas (and etcd members) the service runs, 1 to 5, fixed when the
    /// service creates the control plane: the service's own count, not the Cluster's (which
    /// asks for none). It promises to keep serving with `(replicas - 1) / 2` of them failed.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 1, max = 5))]
    pub replicas: u32,
}

fn default_replicas() -> u32 {
    DEFAULT_REPLICAS
}

impl ManagedControlPlaneConfig {
    /// A config for `endpoint` with every other field at its default.
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            token_secret: default_token_secret(),
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            replicas: DEFAULT_REPLICAS,
        }
    }

    /// How many replicas may fail with a control plane of `replicas` still serving: what the
    /// service promises, `(replicas - 1) / 2`.
    pub fn failures_tolerated(&self) -> u32 {
        self.replicas.saturating_sub(1) / 2
    }

    /// Every rule violation, each at its field's JSON Pointer.
    ///
    /// # Guarantees
    ///
    /// `Ok` means `endpoint` is an absolute `http`/`https` URL with a host and no user info,
    /// query, fragment or whitespace; `tokenSecret` is not empty; `requestTimeoutMs` is
    /// between 1 and [`MAX_REQUEST_TIMEOUT_MS`]; `replicas` between 1 and [`MAX_REPLICAS`].
    ///
    /// # Errors
    ///
    /// One [`FieldError`] per problem: `/endpoint`, `/tokenSecret`, `/requestTimeoutMs`,
    /// `/replicas`.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        errors.extend(endpoint_error(&self.endpoint));
        errors.extend(token_secret_error(&self.token_secret));
        errors.extend(request_timeout_error(self.request_timeout_ms));
        if !(1..=MAX_REPLICAS).contains(&self.replicas) {
            errors.push(FieldError::new(
                "/replicas",
                format!(
                    "must be between 1 and {MAX_REPLICAS}, what simcloud runs; got {}",
                    self.replicas
                ),
            ));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// What the shared simcloud client reads of the config.
impl SimcloudConfig for ManagedControlPlaneConfig {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn token_secret(&self) -> &str {
        &self.token_secret
    }

    fn request_timeout_ms(&self) -> u32 {
        self.request_timeout_ms
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use capw_sdk::testing::{assert_accepted, assert_refused_at, config};

    use super::*;
    use crate::SimManagedControlPlane;

    #[test]
    fn only_the_endpoint_is_required() {
        let parsed: ManagedControlPlaneConfig = config(r#"{"endpoint": "http://127.0.0.1:8080/"}"#);
        assert_eq!(
            parsed,
            ManagedControlPlaneConfig::new("http://127.0.0.1:8080/")
        );
        assert_eq!(parsed.token_secret, "simcloud-token");
        assert_eq!(parsed.request_timeout(), Duration::from_secs(5));
        assert_eq!(parsed.base_url(), "http://127.0.0.1:8080");
        assert_eq!((parsed.replicas, parsed.failures_tolerated()), (3, 1));
        assert_refused_at::<SimManagedControlPlane>("{}", &[""]);
    }

    #[test]
    fn the_promise_follows_the_replicas() {
        let promise = |replicas| {
            let mut c = ManagedControlPlaneConfig::new("http://sim");
            c.replicas = replicas;
            c.failures_tolerated()
        };
        assert_eq!([1, 2, 3, 4, 5].map(promise), [0, 0, 1, 1, 2]);
    }

    #[test]
    fn reports_every_problem() {
        assert_accepted::<SimManagedControlPlane>(r#"{"endpoint": "http://sim", "replicas": 5}"#);
        let json = r#"{"endpoint": "sim", "tokenSecret": " ", "requestTimeoutMs": 0,
                       "replicas": 0}"#;
        assert_refused_at::<SimManagedControlPlane>(
            json,
            &[
                "/endpoint",
                "/tokenSecret",
                "/requestTimeoutMs",
                "/replicas",
            ],
        );
        for bad in ["http://u:p@sim", "ftp://sim", "http://sim/?x=1"] {
            let json = format!(r#"{{"endpoint": "{bad}"}}"#);
            assert_refused_at::<SimManagedControlPlane>(&json, &["/endpoint"]);
        }
    }

    #[test]
    fn type_errors_and_unknown_fields_are_refused() {
        assert_refused_at::<SimManagedControlPlane>(
            r#"{"endpoint": "http://sim", "replicas": "3"}"#,
            &["/replicas"],
        );
        assert_refused_at::<SimManagedControlPlane>(
            r#"{"endpoint": "http://sim", "zones": []}"#,
            &["/zones"],
        );
    }
}
