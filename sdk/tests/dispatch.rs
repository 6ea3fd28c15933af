//! The SDK's side of every call: describe, validate-config, config parsing and the answers of
//! unsupported extension points. `describe` and `validate-config` are driven through the
//! generated contract traits as the host's calls would be; the extension-point calls through
//! the SDK's entry with a record standing in for the call context the host lends (a native
//! test has no host to lend one).

use std::time::Duration;

use std::cell::Cell;

use capw_sdk::__bindings::exports::capw::provider::metadata::Guest as MetadataGuest;
use capw_sdk::infrastructure::{ClusterInfrastructure, ClusterState};
use capw_sdk::metadata::{ExtensionPoint, FieldError, RequestedGrants};
use capw_sdk::types::{ClusterRef, Endpoint, ErrorCode, ProviderError};
use capw_sdk::{__enter, CallSource, Context, ControlPlane, Infrastructure, Provider, Validate};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Config {
    network: Network,
    #[serde(default)]
    zones: Vec<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Network {
    cidr: String,
}

struct Probe;

impl Provider for Probe {
    type Config = Config;
    const NAME: &'static str = "probe";
    const DESCRIPTION: &'static str = "Test provider.";

    fn requested_grants() -> RequestedGrants {
        RequestedGrants {
            http_hosts: vec!["api.cloud.test".into()],
            secrets: vec![],
        }
    }
}

impl Validate for Config {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let errors: Vec<FieldError> = self
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
            control_plane_endpoint: Some(Endpoint {
                host: format!(
                    "{}|{}|{}|{}",
                    &ctx.cluster().name,
                    ctx.config.network.cidr,
                    ctx.idempotency_key(),
                    ctx.remaining().as_millis()
                ),
                port: 1,
            }),
            failure_domains: vec![],
            conditions: vec![],
        }))
    }
}

capw_sdk::export_provider!(Probe, unsupported: [Bootstrap, ControlPlane, LifecycleHooks]);

/// A call context as the host lends it, counting how often each field is asked for.
struct Call {
    config: String,
    reads: Cell<[u32; 4]>,
}

impl Call {
    fn read(&self, field: usize) {
        let mut reads = self.reads.get();
        reads[field] += 1;
        self.reads.set(reads);
    }
}

impl CallSource for Call {
    fn cluster(&self) -> ClusterRef {
        self.read(0);
        ClusterRef {
            namespace: "default".into(),
            name: "c1".into(),
            uid: "u1".into(),
        }
    }

    fn config(&self) -> String {
        self.read(1);
        self.config.clone()
    }

    fn idempotency_key(&self) -> String {
        self.read(2);
        "k1".into()
    }

    fn remaining_ms(&self) -> u32 {
        self.read(3);
        2500
    }
}

fn call(config: &str) -> Call {
    Call {
        config: config.into(),
        reads: Cell::new([0; 4]),
    }
}

/// `infrastructure.reconcile-cluster` as the SDK's export runs it.
fn reconcile_cluster(call: &Call) -> Result<ClusterState, ProviderError> {
    let ctx = __enter(
        <Probe as Infrastructure>::SUPPORTED,
        "infrastructure.reconcile-cluster",
        call,
    )?;
    Probe::reconcile_cluster(&ctx)
}

#[test]
fn describe_reflects_the_traits() {
    let m = <Probe as MetadataGuest>::describe();
    assert_eq!(m.name, "probe");
    // The version export_provider! took from the Cargo.toml of the crate it was invoked in.
    assert_eq!(m.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(m.extension_points, vec![ExtensionPoint::Infrastructure]);
    // No control plane served, so no shape and no control-plane capabilities declared.
    assert_eq!(m.capabilities.control_plane_shape, None);
    assert!(!m.capabilities.control_plane_scalable && !m.capabilities.version_upgrades);
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
    let call = call(r#"{"network": {"cidr": "10.0.0.0/8"}}"#);
    let state = reconcile_cluster(&call);
    let Ok(ClusterState::Ready(infra)) = state else {
        panic!("{state:?}");
    };
    assert_eq!(
        infra.control_plane_endpoint.unwrap().host,
        "c1|10.0.0.0/8|k1|2500"
    );
    // Each field read once: the config on entry, the others when the provider asked.
    assert_eq!(call.reads.get(), [1, 1, 1, 1]);
}

#[test]
fn fields_not_read_are_not_asked_for_and_read_ones_only_once() {
    let call = call(r#"{"network": {"cidr": "x"}}"#);
    let ctx: Context<Config> = __enter(true, "infrastructure.reconcile-cluster", &call).unwrap();
    assert_eq!(call.reads.get(), [0, 1, 0, 0]);
    assert_eq!(ctx.cluster().name, "c1");
    assert_eq!(ctx.cluster().uid, "u1");
    assert_eq!(ctx.idempotency_key(), "k1");
    assert_eq!(ctx.idempotency_key(), "k1");
    assert_eq!(call.reads.get(), [1, 1, 1, 0]);
    // The time left is asked for each time: it changes.
    ctx.remaining();
    ctx.remaining();
    assert_eq!(call.reads.get(), [1, 1, 1, 2]);
    // Printing a context shows what was read and asks for nothing.
    let printed = format!("{ctx:?}");
    assert!(printed.contains("\"c1\""), "{printed}");
    assert_eq!(call.reads.get(), [1, 1, 1, 2]);
}

#[test]
fn a_config_that_does_not_parse_is_invalid_input() {
    let e = reconcile_cluster(&call(r#"{"network": {"cidr": 1}}"#)).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.retryable);
    assert!(e.message.contains("/network/cidr"), "{}", e.message);
}

#[test]
fn unimplemented_methods_and_points_answer_unsupported() {
    let listing = call(r#"{"network": {"cidr": "x"}}"#);
    let ctx = __enter(true, "infrastructure.list-machines", &listing).unwrap();
    let e = Probe::list_machines(&ctx).unwrap_err();
    assert_eq!((e.code, e.retryable), (ErrorCode::Unsupported, false));

    // An unsupported point answers before it looks at the config.
    let unparsed = call("not json");
    let Err(e) = __enter::<Config>(
        <Probe as ControlPlane>::SUPPORTED,
        "control-plane.plan",
        &unparsed,
    ) else {
        panic!("an unsupported point was entered");
    };
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.message.contains("control-plane.plan"), "{}", e.message);
    assert_eq!(unparsed.reads.get(), [0; 4]);
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
