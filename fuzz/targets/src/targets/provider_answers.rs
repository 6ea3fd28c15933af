//! What the host makes of a provider's answers, without a component: the `metadata.describe`
//! answer checked against the component's exports (name rules, declared extension points,
//! the config schema's text parsed) and kept as `ProviderInfo`; the parsed schema used as the
//! provider's config schema for the quickstart's cluster; the requested HTTP hosts read as
//! grants and matched; a provider error's message scrubbed of the call's secrets and carried
//! in a `CallError`.
//!
//! The generated contract types have no `Arbitrary`, so the fuzzer fills mirror structs here
//! and each is turned into its contract type.
//!
//! # Checks
//!
//! No panic, and: accepted metadata has a name of 1-63 lowercase letters, digits and `-`,
//! declares only exported extension points, and its schema is the JSON object or boolean its
//! text says; a scrubbed message holds no secret value the host scrubs.

use std::collections::BTreeMap;
use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use capw_runtime::metadata::{self, Capabilities, ProviderMetadata, RequestedGrants};
use capw_runtime::types::{ErrorCode, ProviderError};
use capw_runtime::{
    CacheOutcome, CallError, CallFailure, Capability, ContractInfo, Denial, ExtensionPoint, Grants,
    HttpGrant, LoadReport, ProviderInfo, Secret, fuzzing,
};
use capw_topology::ProviderSchemas;

use super::{Replayed, decode};
use crate::json::{self, MAX_DEPTH};
use crate::quickstart::{self, PROVIDERS};
use crate::secrets;
use crate::topology::compute_and_check;

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum Point {
    Infrastructure,
    Bootstrap,
    ControlPlane,
    LifecycleHooks,
}

impl Point {
    fn wit(self) -> metadata::ExtensionPoint {
        match self {
            Point::Infrastructure => metadata::ExtensionPoint::Infrastructure,
            Point::Bootstrap => metadata::ExtensionPoint::Bootstrap,
            Point::ControlPlane => metadata::ExtensionPoint::ControlPlane,
            Point::LifecycleHooks => metadata::ExtensionPoint::LifecycleHooks,
        }
    }

    fn host(self) -> ExtensionPoint {
        match self {
            Point::Infrastructure => ExtensionPoint::Infrastructure,
            Point::Bootstrap => ExtensionPoint::Bootstrap,
            Point::ControlPlane => ExtensionPoint::ControlPlane,
            Point::LifecycleHooks => ExtensionPoint::LifecycleHooks,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Shape {
    Machines,
    Hosted,
    Managed,
}

/// A `metadata.describe` answer.
#[derive(Arbitrary, Debug)]
struct Describe {
    #[arbitrary(with = provider_name)]
    name: String,
    version: String,
    description: String,
    extension_points: Vec<Point>,
    #[arbitrary(with = schema_text)]
    config_schema: String,
    shape: Option<Shape>,
    scalable: bool,
    upgrades: bool,
    #[arbitrary(with = hosts)]
    http_hosts: Vec<String>,
    secrets: Vec<String>,
}

impl Describe {
    fn wit(&self) -> ProviderMetadata {
        ProviderMetadata {
            name: self.name.clone(),
            version: self.version.clone(),
            description: self.description.clone(),
            extension_points: self.extension_points.iter().map(|p| p.wit()).collect(),
            config_schema: self.config_schema.clone(),
            capabilities: Capabilities {
                control_plane_shape: self.shape.map(|s| match s {
                    Shape::Machines => metadata::ControlPlaneShape::Machines,
                    Shape::Hosted => metadata::ControlPlaneShape::Hosted,
                    Shape::Managed => metadata::ControlPlaneShape::Managed,
                }),
                control_plane_scalable: self.scalable,
                version_upgrades: self.upgrades,
                chains_upgrades: false,
            },
            requested_grants: RequestedGrants {
                http_hosts: self.http_hosts.clone(),
                secrets: self.secrets.clone(),
            },
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Code {
    InvalidInput,
    NotGranted,
    Unauthorized,
    QuotaExceeded,
    Unavailable,
    Conflict,
    Unsupported,
    Internal,
}

/// One piece of a provider's error message: text, or a granted secret's value (by index).
#[derive(Arbitrary, Debug)]
enum Piece {
    Text(String),
    Secret(u8),
}

/// A provider error, with the secrets the call was granted.
#[derive(Arbitrary, Debug)]
struct Failure {
    secrets: Vec<Option<Vec<u8>>>,
    message: Vec<Piece>,
    code: Code,
    retryable: bool,
    retry_after_ms: Option<u32>,
    /// The sandbox refused something first.
    denied: Option<String>,
}

/// The target's input: a provider's answers and what the host checks them against.
#[derive(Arbitrary, Debug)]
pub struct Answers {
    contract_version: String,
    exported: Vec<Point>,
    describe: Describe,
    failure: Failure,
    request_scheme: String,
    #[arbitrary(with = host)]
    request_host: String,
    request_port: Option<u16>,
}

fn provider_name(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(&[
            "sim-infra",
            "kubeadm-bootstrap",
            "a",
            "Sim",
            "",
            "sim_infra",
            "a-123456789-123456789-123456789-123456789-123456789-123456789-12",
            "a-123456789-123456789-123456789-123456789-123456789-123456789-123",
        ])?)
        .to_owned())
    } else {
        u.arbitrary()
    }
}

/// A config schema's text: mostly a generated schema, sometimes any JSON or any text.
fn schema_text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=7)? {
        0..=4 => serde_json::Value::Object(json::schema(u, MAX_DEPTH)?).to_string(),
        5 => json::value(u, 3)?.to_string(),
        _ => u.arbitrary()?,
    })
}

fn host(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(&[
            "api.example.com",
            "*.example.com",
            "https://api.example.com:8443",
            "http://127.0.0.1:7480",
            "127.0.0.1",
            "[::1]:443",
            "example.com:0",
            "*",
            "https://",
            "",
        ])?)
        .to_owned())
    } else {
        u.arbitrary()
    }
}

fn hosts(u: &mut Unstructured<'_>) -> Result<Vec<String>> {
    (0..u.int_in_range(0..=3)?).map(|_| host(u)).collect()
}

fn valid_name(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Decodes `bytes` as libFuzzer's entry does and runs [`run`].
pub fn replay(bytes: &[u8]) -> Replayed {
    let Some(answers) = decode::<Answers>(bytes) else {
        return Replayed::Rejected;
    };
    run(answers);
    Replayed::Ran
}

/// The target: the answers through what the host does with them.
///
/// # Panics
///
/// When a check of the module's documentation fails.
pub fn run(answers: Answers) {
    describe(&answers);
    grants(&answers);
    failure(&answers.failure);
}

/// `metadata.describe` as `Runtime::load` takes it.
fn describe(answers: &Answers) {
    let contract = ContractInfo {
        version: answers.contract_version.clone(),
        exported: answers.exported.iter().map(|p| p.host()).collect(),
        export_names: Vec::new(),
        import_names: Vec::new(),
    };
    let described = answers.describe.wit();
    let Ok(schema) = fuzzing::check_metadata(&contract, &described) else {
        return;
    };
    assert!(
        valid_name(&described.name),
        "accepted name {:?}",
        described.name
    );
    for point in &answers.describe.extension_points {
        assert!(
            answers.exported.contains(point),
            "accepted a declared {point:?} that is not exported"
        );
    }
    assert!(
        schema.is_object() || schema.is_boolean(),
        "accepted schema {schema}"
    );
    let parsed: serde_json::Value =
        serde_json::from_str(&described.config_schema).expect("accepted schema text parses");
    assert_eq!(parsed, schema, "the schema kept is not the one sent");

    let info = ProviderInfo {
        digest: String::new(),
        size: 0,
        contract,
        metadata: described,
        config_schema: schema,
        load: LoadReport {
            cache: CacheOutcome::Disabled,
            compile: Duration::ZERO,
            total: Duration::ZERO,
        },
    };
    let _ = info.extension_points();
    let _ = serde_json::to_value(&info).expect("ProviderInfo encodes");

    // The schema as the topology takes it (the registry's `schemas()`), for each provider
    // of the quickstart in turn.
    let provider = PROVIDERS[answers.describe.version.len() % PROVIDERS.len()];
    let schemas = ProviderSchemas::from([(provider.to_owned(), info.config_schema)]);
    let _ = compute_and_check(&quickstart::clusters()[0], &quickstart::class(), &schemas);
}

/// The requested hosts read as HTTP grants, and a request matched against them.
fn grants(answers: &Answers) {
    let mut http = Vec::new();
    for host in &answers.describe.http_hosts {
        match host.parse::<HttpGrant>() {
            Ok(grant) => http.push(grant),
            Err(error) => {
                let _ = error.to_string();
            }
        }
    }
    let grants = Grants {
        http,
        secrets: BTreeMap::new(),
        limits: Default::default(),
    };
    let _ = grants.allows_http(
        &answers.request_scheme,
        &answers.request_host,
        answers.request_port,
    );
}

/// A provider error as a call ends with it.
fn failure(failure: &Failure) {
    let secrets: BTreeMap<String, Option<Secret>> = (failure.secrets.iter().enumerate())
        .map(|(i, value)| (format!("s{i}"), value.clone().map(Secret::new)))
        .collect();
    let values: Vec<Vec<u8>> = (secrets.values().flatten())
        .map(|s| s.expose().to_vec())
        .collect();
    let mut message = String::new();
    for piece in &failure.message {
        match piece {
            Piece::Text(text) => message.push_str(text),
            Piece::Secret(i) => {
                if let Some(value) = values.get(usize::from(*i) % values.len().max(1)) {
                    message.push_str(&String::from_utf8_lossy(value));
                }
            }
        }
    }
    let grants = Grants {
        http: Vec::new(),
        secrets,
        limits: Default::default(),
    };
    let scrubbed = fuzzing::scrub(&grants, &message);
    let needles = secrets::scrubbed(&values);
    if secrets::placeholder_free(&needles) {
        for needle in &needles {
            assert!(
                !scrubbed.contains(needle),
                "a secret survived scrubbing: {needle:?} in {scrubbed:?}"
            );
        }
    }
    if needles.iter().all(|n| !message.contains(n)) {
        assert_eq!(
            scrubbed, message,
            "scrubbing changed a message without secrets"
        );
    }

    let error = ProviderError {
        code: match failure.code {
            Code::InvalidInput => ErrorCode::InvalidInput,
            Code::NotGranted => ErrorCode::NotGranted,
            Code::Unauthorized => ErrorCode::Unauthorized,
            Code::QuotaExceeded => ErrorCode::QuotaExceeded,
            Code::Unavailable => ErrorCode::Unavailable,
            Code::Conflict => ErrorCode::Conflict,
            Code::Unsupported => ErrorCode::Unsupported,
            Code::Internal => ErrorCode::Internal,
        },
        message: scrubbed,
        retryable: failure.retryable,
        retry_after_ms: failure.retry_after_ms,
    };
    let mut call_failure = CallFailure::Provider(error.clone());
    if let Some(target) = &failure.denied {
        call_failure = CallFailure::Denied {
            denial: Denial {
                capability: Capability::Secret,
                target: target.clone(),
            },
            outcome: Box::new(call_failure),
        };
    }
    let call = CallError {
        provider: "sim-infra".into(),
        operation: "infrastructure.reconcile-machine",
        failure: call_failure,
    };
    assert_eq!(call.provider_error(), Some(&error));
    let _ = call.failure().reason();
    let mut chain = call.to_string();
    let mut source = std::error::Error::source(&call);
    while let Some(s) = source {
        chain.push_str(&s.to_string());
        source = s.source();
    }
}
