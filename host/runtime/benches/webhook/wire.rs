//! The JSON the webhook speaks, shaped after Cluster API's Runtime SDK: a request names its
//! `apiVersion` and `kind` and carries the cluster and the extension's settings (here the
//! provider's config, a JSON string, as Runtime SDK settings are strings); an answer carries
//! `status`, `message` and `retryAfterSeconds`. The lifecycle hook is Runtime SDK's own shape;
//! the plan, which Runtime SDK has no hook for, follows the same pattern with the members in
//! the request and the plan in the answer.

use serde::{Deserialize, Serialize};

/// Runtime SDK's lifecycle hooks.
pub const HOOKS_API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";
/// The control-plane plan, in the same style.
pub const PLAN_API_VERSION: &str = "controlplane.runtime.capw.dev/v1alpha1";
pub const PLAN_REQUEST: &str = "PlanRequest";
pub const PLAN_RESPONSE: &str = "PlanResponse";

/// Where the webhook serves the plan.
pub const PLAN_PATH: &str = "/controlplane.runtime.capw.dev/v1alpha1/plan/example";

/// Where the webhook serves the hook named `name` (e.g. `BeforeClusterUpgrade`), as Runtime
/// SDK forms the path: the hook's name in lower case, then the handler's.
pub fn hook_path(name: &str) -> String {
    format!("/{HOOKS_API_VERSION}/{}/example", name.to_ascii_lowercase())
}

#[derive(Serialize, Deserialize)]
pub struct Cluster {
    pub metadata: ObjectMeta,
}

#[derive(Serialize, Deserialize)]
pub struct ObjectMeta {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

#[derive(Serialize, Deserialize)]
pub struct Settings {
    /// The provider's config, JSON.
    pub config: String,
}

/// A lifecycle hook's request, e.g. `BeforeClusterUpgradeRequest`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRequest {
    pub api_version: String,
    pub kind: String,
    pub cluster: Cluster,
    pub settings: Settings,
    /// `v1.34.0`; absent outside upgrades.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_kubernetes_version: Option<String>,
    pub to_kubernetes_version: String,
}

#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone, Copy)]
pub enum Status {
    Success,
    Failure,
}

/// A lifecycle hook's answer: `retryAfterSeconds` above zero holds the transition.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookResponse {
    pub api_version: String,
    pub kind: String,
    pub status: Status,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub retry_after_seconds: u32,
}

#[derive(Serialize, Deserialize)]
pub struct MachineRef {
    pub name: String,
    pub uid: String,
}

#[derive(Serialize, Deserialize)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub machine: MachineRef,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    pub ready: bool,
    /// Seconds since the epoch.
    pub created_at: u64,
    pub deleting: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanRequest {
    pub api_version: String,
    pub kind: String,
    pub cluster: Cluster,
    pub settings: Settings,
    pub version: String,
    pub replicas: u32,
    pub members: Vec<Member>,
    pub failure_domains: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// The plan's single next step.
#[derive(Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Step {
    None,
    CreateMachine {
        init: bool,
        version: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure_domain: Option<String>,
    },
    DeleteMachine {
        machine: MachineRef,
    },
    RemoveEtcdMember {
        machine: MachineRef,
    },
    ApplyManifests {
        manifests: Vec<String>,
    },
    Wait {
        reason: String,
        message: String,
        requeue_after_ms: u32,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub step: Step,
    pub initialized: bool,
    pub replicas: u32,
    pub ready_replicas: u32,
    pub up_to_date_replicas: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The plan's answer: the plan when `status` is `Success`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanResponse {
    pub api_version: String,
    pub kind: String,
    pub status: Status,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub retry_after_seconds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
}

/// `v1.35.0`.
pub fn version(major: u32, minor: u32, patch: u32) -> String {
    format!("v{major}.{minor}.{patch}")
}

/// `v1.35.0` as `(1, 35, 0)`.
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.strip_prefix('v')?.splitn(3, '.');
    let mut next = || parts.next()?.parse().ok();
    Some((next()?, next()?, next()?))
}
