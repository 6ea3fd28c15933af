//! The SDK's side of every call: describe, validate-config, config parsing and the answers of
//! unsupported extension points, driven through the generated contract traits as the host's
//! calls would be.

use std::time::Duration;

use capw_sdk::__bindings::exports::capw::provider::{
    control_plane::Guest as ControlPlaneGuest, infrastructure::Guest as InfrastructureGuest,
    metadata::Guest as MetadataGuest,
};
use capw_sdk::control_plane::PlanInput;
use capw_sdk::infrastructure::{ClusterInfrastructure, ClusterState};
use capw_sdk::metadata::{Capabilities, ExtensionPoint, FieldError, RequestedGrants};
use capw_sdk::types::{CallContext, ClusterRef, Endpoint, ErrorCode, KubernetesVersion};
use capw_sdk::{Context, Infrastructure, Provider};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Config {
    network: Network,
    #[serde(default)]
    zones: Vec<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Network {
    cidr: String,
}

struct Probe;

impl Provider for Probe {
    type Config = Config;
    const NAME: &'static str = "probe";
    const VERSION: &'static str = "1.2.3";
    const DESCRIPTION: &'static str = "Test provider.";

    fn capabilities() -> Capabilities {
        Capabilities {
            control_plane_shape: None,
            control_plane_scalable: false,
            version_upgrades: false,
        }
    }

    fn requested_grants() -> RequestedGrants {
        RequestedGrants {
            http_hosts: vec!["api.cloud.test".into()],
            secrets: vec![],
        }
    }

    fn validate(config: &Config) -> Result<(), Vec<FieldError>> {
        let errors: Vec<FieldError> = config
            .zones
            .iter()
            .enumerate()
            .filter(|(_, z)| z.is_empty())
            .map(|(i, _)| FieldError::new(format!("/zones/{i}"), "empty zone"))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

impl Infrastructure for Probe {
    /// Echoes what the context carried, so the test sees the SDK's parsing.
    fn reconcile_cluster(
        ctx: &Context<Config>,
    ) -> Result<ClusterState, capw_sdk::types::ProviderError> {
        Ok(ClusterState::Ready(ClusterInfrastructure {
            control_plane_endpoint: Endpoint {
                host: format!(
                    "{}|{}|{}|{}",
                    ctx.cluster.name,
                    ctx.config.network.cidr,
                    ctx.idempotency_key,
                    ctx.deadline.as_millis()
                ),
                port: 1,
            },
            failure_domains: vec![],
            conditions: vec![],
        }))
    }
}

capw_sdk::export_provider!(Probe, unsupported: [Bootstrap, ControlPlane, LifecycleHooks]);

fn call(config: &str) -> CallContext {
    CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: "c1".into(),
            uid: "u1".into(),
        },
        config: config.into(),
        idempotency_key: "k1".into(),
        deadline_ms: 2500,
    }
}

#[test]
fn describe_reflects_the_traits() {
    let m = <Probe as MetadataGuest>::describe();
    assert_eq!(m.name, "probe");
    assert_eq!(m.version, "1.2.3");
    assert_eq!(m.extension_points, vec![ExtensionPoint::Infrastructure]);
    assert_eq!(m.requested_grants.http_hosts, ["api.cloud.test"]);
    let schema: serde_json::Value = match serde_json::from_str(&m.config_schema) {
        Ok(v) => v,
        Err(e) => panic!("schema is not JSON: {e}"),
    };
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["properties"]["network"].is_object(), "{schema}");
}

#[test]
fn validate_config_reports_parse_errors_at_their_pointer() {
    let errors = <Probe as MetadataGuest>::validate_config(
        r#"{"network": {"cidr": "10.0.0.0/8"}, "zones": ["a", 7]}"#.into(),
    );
    let paths: Vec<String> = errors.unwrap_err().into_iter().map(|e| e.path).collect();
    assert_eq!(paths, ["/zones/1"]);
}

#[test]
fn validate_config_reports_every_rule_violation() {
    let errors = <Probe as MetadataGuest>::validate_config(
        r#"{"network": {"cidr": "x"}, "zones": ["", "a", ""]}"#.into(),
    );
    let paths: Vec<String> = errors.unwrap_err().into_iter().map(|e| e.path).collect();
    assert_eq!(paths, ["/zones/0", "/zones/2"]);
    assert_eq!(
        <Probe as MetadataGuest>::validate_config(r#"{"network": {"cidr": "x"}}"#.into()),
        Ok(())
    );
}

#[test]
fn calls_get_a_parsed_context() {
    let state = <Probe as InfrastructureGuest>::reconcile_cluster(call(
        r#"{"network": {"cidr": "10.0.0.0/8"}}"#,
    ));
    let Ok(ClusterState::Ready(infra)) = state else {
        panic!("{state:?}");
    };
    assert_eq!(infra.control_plane_endpoint.host, "c1|10.0.0.0/8|k1|2500");
}

#[test]
fn a_config_that_does_not_parse_is_invalid_input() {
    let e = <Probe as InfrastructureGuest>::reconcile_cluster(call(r#"{"network": {"cidr": 1}}"#))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.retryable);
    assert!(e.message.contains("/network/cidr"), "{}", e.message);
}

#[test]
fn unimplemented_methods_and_points_answer_unsupported() {
    let e = <Probe as InfrastructureGuest>::list_machines(call(r#"{"network": {"cidr": "x"}}"#))
        .unwrap_err();
    assert_eq!((e.code, e.retryable), (ErrorCode::Unsupported, false));

    // An unsupported point answers before it looks at the config.
    let input = PlanInput {
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 0,
        },
        replicas: 1,
        members: vec![],
        failure_domains: vec![],
        endpoint: None,
    };
    let e = <Probe as ControlPlaneGuest>::plan(call("not json"), input).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.message.contains("control-plane.plan"), "{}", e.message);
}

#[test]
fn context_remaining_counts_down_from_the_deadline() {
    let ctx = Context::new(
        ClusterRef {
            namespace: "n".into(),
            name: "c".into(),
            uid: "u".into(),
        },
        (),
        "k",
        Duration::from_secs(60),
    );
    let first = ctx.remaining();
    assert!(first <= Duration::from_secs(60));
    assert!(first > Duration::from_secs(50));
    std::thread::sleep(Duration::from_millis(30));
    let later = ctx.remaining();
    assert!(
        first - later >= Duration::from_millis(30),
        "{first:?} then {later:?}: not counting down"
    );
}
