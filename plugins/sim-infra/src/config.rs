//! The provider's config and the rules its schema cannot say.

use capw_sdk::config::json_pointer;
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

/// Where the cluster's control plane is reached, which decides whether the infrastructure
/// makes a load balancer for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ControlPlaneEndpoint {
    /// The control plane runs on the cluster's machines behind a load balancer this provider
    /// creates; its address is the cluster's endpoint. The default.
    #[default]
    LoadBalancer,
    /// The control plane is not on the cluster's machines (a service runs it, the `hosted`
    /// and `managed` shapes): only the network is made, never a load balancer, and the
    /// cluster is ready with no endpoint of this provider's (the control-plane provider
    /// reports the service's).
    None,
}

/// Config of the simcloud infrastructure provider, e.g.
/// `{"endpoint": "http://127.0.0.1:8080", "zones": ["zone-a", "zone-b"]}`.
///
/// Only `endpoint` is required. Besides this schema, `endpoint` must be an `http://` or
/// `https://` URL without user info, query or fragment, `tokenSecret` must not be empty, and
/// `zones` must hold distinct, non-empty names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimInfraConfig {
    /// Base URL of the simcloud API, e.g. `http://127.0.0.1:8080`. Its authority must be
    /// granted to the provider in its WasmProvider.
    #[schemars(extend("x-capw-shapes-machine" = false))]
    pub endpoint: String,
    /// Name of the secret grant holding simcloud's bearer token.
    #[serde(default = "default_token_secret")]
    #[schemars(extend("x-capw-shapes-machine" = false))]
    pub token_secret: String,
    /// Zones the cluster may use as failure domains, in simcloud's order; empty (the default)
    /// means every zone simcloud offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-capw-shapes-machine" = false))]
    pub zones: Vec<String>,
    /// Longest wait for one simcloud request, in milliseconds; never more than what is left of
    /// the call's deadline.
    #[serde(default = "default_request_timeout_ms")]
    #[schemars(range(min = 1, max = 600_000))]
    #[schemars(extend("x-capw-shapes-machine" = false))]
    pub request_timeout_ms: u32,
    /// The size of the machines, a simcloud instance type such as `small` (simcloud's
    /// default when absent). It shapes a machine: changing it in a worker class replaces that
    /// pool's machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-capw-shapes-machine" = true))]
    pub instance_type: Option<String>,
    /// `loadBalancer` (default): the control plane runs on the cluster's machines and this
    /// provider puts a load balancer in front of them as the cluster's endpoint. `none`: the
    /// control plane is not on machines (a hosted or managed control-plane provider runs it),
    /// so only the network is made and the cluster is ready without an endpoint from here.
    #[serde(default, skip_serializing_if = "is_load_balancer")]
    #[schemars(extend("x-capw-shapes-machine" = false))]
    pub control_plane_endpoint: ControlPlaneEndpoint,
}

fn is_load_balancer(endpoint: &ControlPlaneEndpoint) -> bool {
    *endpoint == ControlPlaneEndpoint::LoadBalancer
}

impl SimInfraConfig {
    /// A config for `endpoint` with every other field at its default.
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            token_secret: default_token_secret(),
            zones: Vec::new(),
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            instance_type: None,
            control_plane_endpoint: ControlPlaneEndpoint::LoadBalancer,
        }
    }

    /// Every rule violation, each at its field's JSON Pointer.
    ///
    /// # Guarantees
    ///
    /// `Ok` means `endpoint` is an absolute `http`/`https` URL with a host and no user info,
    /// query, fragment or whitespace; `tokenSecret` is not empty; every zone is non-empty and
    /// named once; `requestTimeoutMs` is between 1 and [`MAX_REQUEST_TIMEOUT_MS`].
    ///
    /// # Errors
    ///
    /// One [`FieldError`] per problem: `/endpoint`, `/tokenSecret`, `/zones/<i>`,
    /// `/requestTimeoutMs`.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        errors.extend(endpoint_error(&self.endpoint));
        errors.extend(token_secret_error(&self.token_secret));
        for (i, zone) in self.zones.iter().enumerate() {
            let path = json_pointer(["zones".to_owned(), i.to_string()]);
            if zone.trim().is_empty() {
                errors.push(FieldError::new(path, "must not be empty"));
            } else if self.zones[..i].contains(zone) {
                errors.push(FieldError::new(
                    path,
                    format!("zone `{zone}` is listed twice"),
                ));
            }
        }
        if let Some(instance_type) = &self.instance_type
            && (instance_type.is_empty()
                || !instance_type
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
        {
            errors.push(FieldError::new(
                "/instanceType",
                format!(
                    "must be a name of lower-case letters, digits and `-`, such as `small`; got `{instance_type}`"
                ),
            ));
        }
        errors.extend(request_timeout_error(self.request_timeout_ms));
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// What the shared simcloud client reads of the config.
impl SimcloudConfig for SimInfraConfig {
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
    use crate::SimInfra;

    #[test]
    fn only_the_endpoint_is_required() {
        let parsed: SimInfraConfig = config(r#"{"endpoint": "http://127.0.0.1:8080/"}"#);
        assert_eq!(parsed, SimInfraConfig::new("http://127.0.0.1:8080/"));
        assert_eq!(parsed.token_secret, "simcloud-token");
        assert_eq!(parsed.request_timeout(), Duration::from_secs(5));
        assert_eq!(parsed.base_url(), "http://127.0.0.1:8080");
        assert_refused_at::<SimInfra>("{}", &[""]);
    }

    #[test]
    fn accepts_good_endpoints() {
        for endpoint in [
            "http://127.0.0.1:8080",
            "https://sim.example.test",
            "HTTPS://sim.example.test:443/api/",
            "http://[::1]:8080",
            "http://[::1]",
        ] {
            assert_accepted::<SimInfra>(&format!(r#"{{"endpoint": "{endpoint}"}}"#));
        }
    }

    #[test]
    fn refuses_bad_endpoints_at_their_path() {
        for endpoint in [
            "127.0.0.1:8080",
            "ftp://sim",
            "http://",
            "http://:8080",
            "http://u:p@sim",
            "http://sim/?x=1",
            "http://sim#f",
            "http://sim:port",
            "http://si m",
        ] {
            let json = format!(r#"{{"endpoint": "{endpoint}"}}"#);
            assert_refused_at::<SimInfra>(&json, &["/endpoint"]);
        }
    }

    #[test]
    fn reports_every_problem() {
        let json = r#"{"endpoint": "sim", "tokenSecret": " ", "zones": ["a", "", "a"],
                       "requestTimeoutMs": 0}"#;
        assert_refused_at::<SimInfra>(
            json,
            &[
                "/endpoint",
                "/tokenSecret",
                "/zones/1",
                "/zones/2",
                "/requestTimeoutMs",
            ],
        );
    }

    #[test]
    fn the_instance_type_is_a_plain_name() {
        assert_accepted::<SimInfra>(r#"{"endpoint": "http://sim", "instanceType": "large-2"}"#);
        for bad in ["", "Large", "a b", "a/b"] {
            let json = format!(r#"{{"endpoint": "http://sim", "instanceType": "{bad}"}}"#);
            assert_refused_at::<SimInfra>(&json, &["/instanceType"]);
        }
    }

    /// The schema tells the host what replaces a machine: its size does, how it talks to
    /// simcloud does not.
    #[test]
    fn only_the_instance_type_shapes_a_machine() {
        let schema = serde_json::to_value(schemars::schema_for!(SimInfraConfig)).unwrap();
        let marked = |field: &str| schema["properties"][field]["x-capw-shapes-machine"].clone();
        assert_eq!(marked("instanceType"), true);
        for field in [
            "endpoint",
            "tokenSecret",
            "zones",
            "requestTimeoutMs",
            "controlPlaneEndpoint",
        ] {
            assert_eq!(marked(field), false, "{field}");
        }
    }

    #[test]
    fn the_control_plane_endpoint_is_a_load_balancer_unless_it_says_none() {
        let parsed: SimInfraConfig = config(r#"{"endpoint": "http://sim"}"#);
        assert_eq!(
            parsed.control_plane_endpoint,
            ControlPlaneEndpoint::LoadBalancer
        );
        let parsed: SimInfraConfig =
            config(r#"{"endpoint": "http://sim", "controlPlaneEndpoint": "none"}"#);
        assert_eq!(parsed.control_plane_endpoint, ControlPlaneEndpoint::None);
        assert_accepted::<SimInfra>(
            r#"{"endpoint": "http://sim", "controlPlaneEndpoint": "loadBalancer"}"#,
        );
        assert_refused_at::<SimInfra>(
            r#"{"endpoint": "http://sim", "controlPlaneEndpoint": "nodePort"}"#,
            &["/controlPlaneEndpoint"],
        );
    }

    #[test]
    fn type_errors_and_unknown_fields_are_refused() {
        assert_refused_at::<SimInfra>(
            r#"{"endpoint": "http://sim", "requestTimeoutMs": "5"}"#,
            &["/requestTimeoutMs"],
        );
        assert_refused_at::<SimInfra>(r#"{"endpoint": "http://sim", "zones": [1]}"#, &["/zones/0"]);
        assert_refused_at::<SimInfra>(r#"{"endpoint": "http://sim", "token": "x"}"#, &["/token"]);
    }
}
