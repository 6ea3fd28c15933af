//! What a provider's native unit tests need: call contexts, the config schema as the host
//! compiles it, and assertions on the field errors of `validate-config`.
//!
//! The functions here fail the way `assert!` does, with a panic whose message says what was
//! expected and what came instead: they are meant for `#[test]` functions. The module exists
//! on native targets only; a component has no use for it.
//!
//! # Example
//!
//! ```
//! # use capw_sdk::infrastructure::ClusterState;
//! # use capw_sdk::metadata::FieldError;
//! # use capw_sdk::types::{Deletion, ProviderError};
//! # use capw_sdk::{Context, Infrastructure, Provider, Validate};
//! use capw_sdk::testing;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase", deny_unknown_fields)]
//! pub struct Config {
//!     /// Zones to spread machines over, each at most once.
//!     #[serde(default)]
//!     zones: Vec<String>,
//! }
//!
//! pub struct Demo;
//!
//! impl Validate for Config {
//!     fn validate(&self) -> Result<(), Vec<FieldError>> {
//!         match self.zones.iter().position(|z| z.is_empty()) {
//!             Some(i) => Err(vec![FieldError::new(format!("/zones/{i}"), "must not be empty")]),
//!             None => Ok(()),
//!         }
//!     }
//! }
//!
//! impl Provider for Demo {
//!     type Config = Config;
//!     const NAME: &'static str = "demo";
//!     const DESCRIPTION: &'static str = "Shows capw_sdk::testing.";
//! }
//! # impl Infrastructure for Demo {
//! #     fn reconcile_cluster(ctx: &Context<Config>) -> Result<ClusterState, ProviderError> {
//! #         Err(ProviderError::unsupported(&ctx.cluster().name))
//! #     }
//! #     fn delete_cluster(_: &Context<Config>) -> Result<Deletion, ProviderError> {
//! #         Ok(Deletion::Deleted)
//! #     }
//! # }
//! # capw_sdk::export_provider!(Demo, unsupported: [Bootstrap, ControlPlane, LifecycleHooks]);
//!
//! // The schema the host sees, checked to be a valid JSON Schema.
//! let schema = testing::config_schema::<Demo>();
//! assert_eq!(schema["additionalProperties"], false);
//!
//! // Accepted by the schema and by validate-config alike.
//! testing::assert_accepted::<Demo>(r#"{"zones": ["a", "b"]}"#);
//!
//! // Refused by validate-config at exactly these paths, in this order.
//! let errors = testing::assert_refused_at::<Demo>(r#"{"zones": ["a", ""]}"#, &["/zones/1"]);
//! testing::assert_field_error(&errors, "/zones/1", "must not be empty");
//!
//! // A call for cluster `default/c1` with this config.
//! let ctx = testing::context::<Config>(r#"{"zones": ["a"]}"#);
//! let Err(e) = Demo::reconcile_cluster(&ctx) else { panic!("answered") };
//! assert!(e.message.contains("c1"));
//! ```

#![cfg(not(target_arch = "wasm32"))]

use std::fmt::Write as _;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::metadata::{self, FieldError};
use crate::types::{ClusterRef, KubernetesVersion, MachineRef};
use crate::{Context, Provider, config};

/// Namespace of the cluster [`context`] and [`ContextBuilder::new`] call for.
pub const NAMESPACE: &str = "default";
/// Name of the cluster [`context`] and [`ContextBuilder::new`] call for.
pub const CLUSTER_NAME: &str = "c1";
/// The idempotency key of the contexts [`context`] and [`ContextBuilder::new`] build.
pub const IDEMPOTENCY_KEY: &str = "key-1";
/// The deadline of the contexts [`context`] and [`ContextBuilder::new`] build.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The cluster `namespace/name`, with uid `uid-NAME`.
pub fn cluster(namespace: &str, name: &str) -> ClusterRef {
    ClusterRef {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        uid: format!("uid-{name}"),
    }
}

/// The machine `name`, with uid `uid-NAME`.
pub fn machine(name: &str) -> MachineRef {
    MachineRef {
        name: name.to_owned(),
        uid: format!("uid-{name}"),
    }
}

/// Kubernetes `v1.MINOR.0`.
pub fn version(minor: u32) -> KubernetesVersion {
    KubernetesVersion {
        major: 1,
        minor,
        patch: 0,
    }
}

/// `json` parsed into the config type `C`, as every call parses its config.
///
/// # Panics
///
/// When `json` does not parse; the message names the field, as `invalid-input` would.
pub fn config<C: DeserializeOwned>(json: &str) -> C {
    match config::parse(json) {
        Ok(parsed) => parsed,
        Err(e) => panic!("test config {json}: {e}"),
    }
}

/// A call for cluster [`NAMESPACE`]/[`CLUSTER_NAME`] with the config `config_json`, key
/// [`IDEMPOTENCY_KEY`] and deadline [`DEADLINE`]. [`ContextBuilder`] changes any of them.
///
/// # Panics
///
/// When `config_json` does not parse into `C`.
pub fn context<C: DeserializeOwned>(config_json: &str) -> Context<'static, C> {
    ContextBuilder::new().config_json(config_json)
}

/// Builds a [`Context`] for a test: starts from cluster [`NAMESPACE`]/[`CLUSTER_NAME`], key
/// [`IDEMPOTENCY_KEY`] and deadline [`DEADLINE`]; the config comes last.
///
/// ```
/// use std::time::Duration;
/// use capw_sdk::testing::{self, ContextBuilder};
///
/// let ctx = ContextBuilder::new()
///     .cluster(testing::cluster("team-a", "c2"))
///     .idempotency_key("key-2")
///     .deadline(Duration::ZERO)
///     .config(5_u16);
/// assert_eq!(ctx.cluster().uid, "uid-c2");
/// assert_eq!(ctx.remaining(), Duration::ZERO);
/// ```
#[derive(Debug, Clone)]
pub struct ContextBuilder {
    cluster: ClusterRef,
    idempotency_key: String,
    deadline: Duration,
}

impl Default for ContextBuilder {
    fn default() -> Self {
        Self {
            cluster: cluster(NAMESPACE, CLUSTER_NAME),
            idempotency_key: IDEMPOTENCY_KEY.to_owned(),
            deadline: DEADLINE,
        }
    }
}

impl ContextBuilder {
    /// The defaults: cluster [`NAMESPACE`]/[`CLUSTER_NAME`], [`IDEMPOTENCY_KEY`], [`DEADLINE`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The cluster the call concerns.
    pub fn cluster(mut self, cluster: ClusterRef) -> Self {
        self.cluster = cluster;
        self
    }

    /// The call's idempotency key.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = key.into();
        self
    }

    /// The time the call is allowed, counted from [`ContextBuilder::config`].
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The context, with a config already built.
    pub fn config<C>(self, config: C) -> Context<'static, C> {
        Context::new(self.cluster, config, self.idempotency_key, self.deadline)
    }

    /// The context, with the config `json` parsed into `C`.
    ///
    /// # Panics
    ///
    /// When `json` does not parse into `C`.
    pub fn config_json<C: DeserializeOwned>(self, json: &str) -> Context<'static, C> {
        self.config(config(json))
    }
}

/// The config schema `P` publishes in `describe`, as JSON.
///
/// # Panics
///
/// When the schema is not a valid JSON Schema (draft 2020-12) as the host compiles it: the
/// host would refuse to load the provider.
pub fn config_schema<P: Provider>() -> Value {
    let text = metadata::config_schema::<P::Config>();
    let schema: Value = match serde_json::from_str(&text) {
        Ok(schema) => schema,
        Err(e) => panic!("the config schema of {} is not JSON: {e}\n{text}", P::NAME),
    };
    compile(P::NAME, &schema);
    schema
}

/// The schema compiled as the host compiles a provider's config schema.
fn compile(provider: &str, schema: &Value) -> jsonschema::Validator {
    match jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
    {
        Ok(validator) => validator,
        Err(e) => {
            panic!("the config schema of {provider} is not a valid JSON Schema: {e}\n{schema}")
        }
    }
}

/// Where and why the schema of `P` refuses `config`, one `` `pointer`: reason `` per problem.
fn schema_refusals<P: Provider>(config: &Value) -> Vec<String> {
    compile(P::NAME, &config_schema::<P>())
        .iter_errors(config)
        .map(|e| format!("`{}`: {e}", e.instance_path().as_str()))
        .collect()
}

/// What `validate-config` answers for `config_json`: no errors when it accepts.
fn field_errors<P: Provider>(config_json: &str) -> Vec<FieldError> {
    metadata::validate_config::<P>(config_json)
        .err()
        .unwrap_or_default()
}

/// Checks that the host would take `config_json`: `P`'s config schema and its
/// `validate-config` both accept it.
///
/// # Panics
///
/// When either refuses it, listing every problem each found.
pub fn assert_accepted<P: Provider>(config_json: &str) {
    let errors = field_errors::<P>(config_json);
    assert!(
        errors.is_empty(),
        "validate-config of {} refused {config_json}:\n{}",
        P::NAME,
        list(&errors)
    );
    let refusals = match serde_json::from_str(config_json) {
        Ok(config) => schema_refusals::<P>(&config),
        Err(e) => vec![format!("not JSON: {e}")],
    };
    assert!(
        refusals.is_empty(),
        "validate-config of {} accepts {config_json} but its config schema refuses it:\n{}",
        P::NAME,
        refusals.join("\n")
    );
}

/// Checks that `validate-config` of `P` refuses `config_json` with errors at exactly `paths`
/// (JSON Pointers, in the order reported), and returns the errors for checks of their
/// messages ([`assert_field_error`]).
///
/// A config that does not even parse into `P::Config` (a value of the wrong type, an unknown
/// or missing field) must be refused by the config schema too: both are made from the same
/// type, and the host checks the schema first. A config that parses and breaks a rule of
/// [`Provider::validate`] may pass the schema, which cannot say such rules.
///
/// # Panics
///
/// When `validate-config` accepts the config or reports other paths, or when the schema
/// accepts a config that does not parse.
pub fn assert_refused_at<P: Provider>(config_json: &str, paths: &[&str]) -> Vec<FieldError> {
    let errors = field_errors::<P>(config_json);
    let found: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert!(
        found == paths,
        "validate-config of {} on {config_json}: expected errors at {paths:?}, got:\n{}",
        P::NAME,
        if errors.is_empty() {
            "none (accepted)".to_owned()
        } else {
            list(&errors)
        }
    );
    let unreadable = config::parse::<P::Config>(config_json).is_err();
    if let (true, Ok(config)) = (unreadable, serde_json::from_str::<Value>(config_json)) {
        assert!(
            !schema_refusals::<P>(&config).is_empty(),
            "the config schema of {} accepts {config_json}, which does not parse ({})",
            P::NAME,
            list(&errors)
        );
    }
    errors
}

/// Checks that `errors` has an error at `path` whose message contains `message_contains`.
///
/// # Panics
///
/// When none does, listing the errors there are.
pub fn assert_field_error(errors: &[FieldError], path: &str, message_contains: &str) {
    assert!(
        errors
            .iter()
            .any(|e| e.path == path && e.message.contains(message_contains)),
        "expected an error at `{path}` containing {message_contains:?}, got:\n{}",
        list(errors)
    );
}

/// One `` `path`: message `` line per error.
fn list(errors: &[FieldError]) -> String {
    let mut out = String::new();
    for e in errors {
        let _ = writeln!(out, "`{}`: {}", e.path, e.message);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Validate;

    /// Two fields: a port and a list of distinct names.
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Config {
        port: u16,
        #[serde(default)]
        names: Vec<String>,
    }

    struct Probe;

    impl Provider for Probe {
        type Config = Config;
        const NAME: &'static str = "probe";
        const DESCRIPTION: &'static str = "";
    }

    impl Validate for Config {
        fn validate(&self) -> Result<(), Vec<FieldError>> {
            let errors: Vec<FieldError> = (0..self.names.len())
                .filter(|&i| self.names[..i].contains(&self.names[i]))
                .map(|i| FieldError::new(format!("/names/{i}"), "listed twice"))
                .collect();
            if errors.is_empty() {
                Ok(())
            } else {
                Err(errors)
            }
        }
    }

    #[test]
    fn contexts_default_to_cluster_c1_and_take_their_config() {
        let ctx = context::<Config>(r#"{"port": 1}"#);
        assert_eq!(ctx.cluster(), &cluster("default", "c1"));
        assert_eq!(ctx.cluster().uid, "uid-c1");
        assert_eq!(ctx.idempotency_key(), "key-1");
        assert!(ctx.remaining() <= DEADLINE);
        assert!(ctx.remaining() > DEADLINE / 2);
        assert_eq!(ctx.config.port, 1);
    }

    #[test]
    #[should_panic(expected = "test config {\"port\": \"x\"}: config at `/port`")]
    fn a_config_that_does_not_parse_names_its_field() {
        let _: Config = config(r#"{"port": "x"}"#);
    }

    #[test]
    fn the_schema_is_the_described_one() {
        let schema = config_schema::<Probe>();
        assert_eq!(schema["additionalProperties"], false, "{schema}");
        assert_eq!(schema["required"], serde_json::json!(["port"]), "{schema}");
    }

    #[test]
    fn accepted_and_refused_configs() {
        assert_accepted::<Probe>(r#"{"port": 6443, "names": ["a", "b"]}"#);
        let errors = assert_refused_at::<Probe>(
            r#"{"port": 1, "names": ["a", "b", "a", "b"]}"#,
            &["/names/2", "/names/3"],
        );
        assert_field_error(&errors, "/names/3", "twice");
        // Refused by serde and by the schema alike.
        assert_refused_at::<Probe>(r#"{"port": "x"}"#, &["/port"]);
        assert_refused_at::<Probe>(r#"{"port": 1, "other": 1}"#, &["/other"]);
        assert_refused_at::<Probe>(r#"{}"#, &[""]);
        assert_refused_at::<Probe>("not json", &[""]);
    }

    #[test]
    #[should_panic(expected = "validate-config of probe refused {}:\n`")]
    fn a_refusal_where_acceptance_was_expected_is_listed() {
        assert_accepted::<Probe>("{}");
    }

    #[test]
    #[should_panic(expected = "expected errors at [\"/port\"], got:\nnone (accepted)")]
    fn an_acceptance_where_a_refusal_was_expected_fails() {
        assert_refused_at::<Probe>(r#"{"port": 1}"#, &["/port"]);
    }

    #[test]
    #[should_panic(
        expected = "expected an error at `/names/1` containing \"empty\", got:\n`/names/1`: listed twice"
    )]
    fn a_message_without_the_words_fails() {
        let errors =
            assert_refused_at::<Probe>(r#"{"port": 1, "names": ["a", "a"]}"#, &["/names/1"]);
        assert_field_error(&errors, "/names/1", "empty");
    }
}
