//! Health checks of a class of worker machines and the remediation of unhealthy ones, with
//! Cluster API v1beta2's names. Set in a ClusterClass's worker class and overridable, field by
//! field, per pool in a Cluster.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::condition::ConditionStatus;

/// When a machine is unhealthy, and what is done about it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineHealthCheck {
    /// What makes a machine unhealthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<HealthChecks>,
    /// What is done with unhealthy machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<HealthRemediation>,
}

/// What makes a machine unhealthy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthChecks {
    /// How long a machine may exist without its Node registering, in seconds: 600 when
    /// absent (Cluster API's default), 0 for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout_seconds: Option<i32>,
    /// Node conditions that make a machine unhealthy once they held for `timeoutSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_node_conditions: Option<Vec<UnhealthyNodeCondition>>,
}

/// A Node condition that makes its machine unhealthy once it held long enough.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnhealthyNodeCondition {
    /// The Node condition's type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The status that is unhealthy.
    pub status: ConditionStatus,
    /// How long the condition must have held (since its last transition), in seconds.
    pub timeout_seconds: i32,
}

/// What is done with unhealthy machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthRemediation {
    /// When remediation may happen at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_if: Option<RemediationTrigger>,
    /// Control plane only: how many times in a row a member is replaced while each
    /// replacement turns unhealthy again within `minHealthyPeriodSeconds`; past it nothing is
    /// replaced and the Cluster says why. No limit when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry: Option<i32>,
    /// Control plane only: the least time between two replacements, in seconds (0 when
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_period_seconds: Option<i32>,
    /// Control plane only: a replacement that stays healthy this long, in seconds, ends the
    /// row of retries (3600 when absent, Cluster API's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_healthy_period_seconds: Option<i32>,
}

/// When remediation may happen.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemediationTrigger {
    /// Unhealthy machines of the pool are replaced only while there are at most this many: a
    /// count or a percentage of the pool's replicas (rounded down). Past it, something larger
    /// than a machine is wrong, and nothing is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_less_than_or_equal_to: Option<IntOrString>,
}
