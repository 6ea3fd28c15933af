//! `WasmProvider`: one installed provider component, where it comes from and what it may do.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::Condition;

/// Condition type on a `WasmProvider`: the component was fetched, checked and compiled.
pub const CONDITION_LOADED: &str = "Loaded";

/// A provider component and the capabilities granted to it.
///
/// Cluster-scoped: ClusterClasses in every namespace refer to it by name.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "capw.dev",
    version = "v1alpha1",
    kind = "WasmProvider",
    status = "WasmProviderStatus",
    shortname = "wp",
    category = "capw",
    derive = "PartialEq",
    printcolumn = r#"{"name":"Provider","type":"string","jsonPath":".status.providerName"}"#,
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".status.providerVersion"}"#,
    printcolumn = r#"{"name":"Contract","type":"string","jsonPath":".status.contractVersion"}"#,
    printcolumn = r#"{"name":"Loaded","type":"string","jsonPath":".status.conditions[?(@.type==\"Loaded\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WasmProviderSpec {
    /// Where the component's bytes come from.
    pub source: ProviderSource,
    /// What the component may reach; nothing beyond this.
    #[serde(default)]
    pub grants: Grants,
}

/// Where a provider component comes from: exactly one of these.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum ProviderSource {
    /// A file, for the embedded local mode; relative to the host's plugin directory.
    File(FileSource),
    /// A key of a ConfigMap (binary data), for small components in Kubernetes mode.
    ConfigMap(ConfigMapSource),
    /// An OCI artifact in a registry.
    Oci(OciSource),
}

/// A component read from a file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileSource {
    /// Path under the host's plugin directory; it cannot reach outside it.
    pub path: String,
}

/// A component stored in a ConfigMap key.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigMapSource {
    /// Namespace of the ConfigMap.
    pub namespace: String,
    /// Name of the ConfigMap.
    pub name: String,
    /// Key under `binaryData` (or `data`) holding the component.
    pub key: String,
}

/// A component pulled from an OCI registry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OciSource {
    /// Image reference, for example `ghcr.io/capw-dev/sim-infra:0.1.0`.
    pub reference: String,
    /// Expected manifest digest (`sha256:…`); when set, any other content is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 71), extend("x-kubernetes-validations" = [
        {"rule": "self.matches('^sha256:[0-9a-f]{64}$')", "message": "expected sha256:<64 hex digits>"}
    ]))]
    pub digest: Option<String>,
    /// When to pull again.
    #[serde(default)]
    pub pull_policy: PullPolicy,
    /// Talk plain HTTP to the registry (for local test registries only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Secret with registry credentials: `.dockerconfigjson`, or `token` (bearer), or
    /// `username` and `password` (basic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,
    /// With `pullPolicy: Always`, how often to ask the registry whether the reference moved to
    /// another digest; a new digest is loaded and replaces the old one for new calls. The
    /// host's default (300 s) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self >= 1", "message": "must be at least 1"}
    ]))]
    pub refresh_interval_seconds: Option<u32>,
}

/// When an OCI component is pulled again.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum PullPolicy {
    /// Pull only when no component with the expected digest (or, without one, the digest
    /// the reference last resolved to) is cached.
    #[default]
    IfNotPresent,
    /// Resolve the reference on every load and every refresh interval.
    Always,
}

/// A reference to a Secret, or to one key of it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecretRef {
    /// Namespace; the referring object's namespace (or the host's) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name of the Secret.
    pub name: String,
    /// Key inside the Secret, where one value is meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Capabilities granted to a provider. Everything not listed is denied.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Grants {
    /// Origins the provider may call, as `scheme://host:port` (for example
    /// `https://api.simcloud.local:443`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http: Vec<String>,
    /// Secrets the provider may read, by the name it asks for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretGrant>,
    /// Linear-memory limit per call, in MiB; the host's default when absent.
    #[serde(
        rename = "memoryLimitMiB",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self >= 1", "message": "must be at least 1"}
    ]))]
    pub memory_limit_mib: Option<u32>,
    /// Deadline of one call, in seconds; the host's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-validations" = [
        {"rule": "self >= 1", "message": "must be at least 1"}
    ]))]
    pub call_timeout_seconds: Option<u32>,
}

/// One secret a provider may read.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecretGrant {
    /// The name the provider uses to ask for it.
    pub name: String,
    /// Where the value is stored.
    pub secret_ref: SecretRef,
}

/// What the host found out about a provider when it loaded it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WasmProviderStatus {
    /// Digest of the loaded component (`sha256:…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Contract (WIT package) version the component was built against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_version: Option<String>,
    /// Name the provider reports about itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// Version the provider reports about itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_version: Option<String>,
    /// Extension points the component implements (`infrastructure`, `bootstrap`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extension_points: Vec<String>,
    /// JSON Schema of the config the provider accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::json::any_value")]
    pub config_schema: Option<serde_json::Value>,
    /// `Loaded` and friends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
