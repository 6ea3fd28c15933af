//! The output of topology computation: what the cluster should look like.

use std::fmt;

use capw_api::{ConditionStatus, DeletionOrder, JsonObject, MachineShape};
use serde::{Deserialize, Serialize};

use crate::variables::Variables;

/// Where a provider config comes from, for error messages and for the caller's own
/// `validate-config` calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOrigin {
    /// The ClusterClass field the config was taken from (before patches), for example
    /// `spec.workers.machineDeployments[0].infrastructure.config`.
    pub path: String,
    /// The worker pool it was computed for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

impl fmt::Display for ConfigOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        match &self.pool {
            Some(pool) => write!(f, " (pool {pool:?})"),
            None => Ok(()),
        }
    }
}

/// A provider and the final config to pass it: patched, and valid against its schema when
/// that schema was known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    /// `WasmProvider` name.
    pub provider: String,
    /// The config.
    pub config: JsonObject,
    /// Where it comes from.
    pub origin: ConfigOrigin,
}

/// The desired control plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesiredControlPlane {
    /// The control-plane provider and its config.
    pub config: ProviderConfig,
    /// Replicas: what the Cluster says; 1 on machines when it does not say, 0 (the
    /// provider's to decide) for a control plane a service runs or one asked by
    /// `failures_tolerated`.
    pub replicas: u32,
    /// The Cluster asks the control plane to keep serving with this many members failed,
    /// instead of a count (`spec.topology.controlPlane.failuresTolerated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures_tolerated: Option<u32>,
    /// Kubernetes version, `vMAJOR.MINOR.PATCH`.
    pub version: String,
    /// Infrastructure provider and config for control-plane machines (machine-based control
    /// planes only).
    pub machine_infrastructure: Option<ProviderConfig>,
    /// Bootstrap provider and config for control-plane machines (machine-based only).
    pub bootstrap: Option<ProviderConfig>,
    /// What shapes a control-plane machine (machine-based only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_shape: Option<MachineShape>,
    /// How the host reaches the control plane's etcd, when the class says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd: Option<capw_api::EtcdAccess>,
    /// When a control-plane machine is unhealthy and whether it may be replaced now; `None`:
    /// no health check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<PoolHealthCheck>,
    /// How long a control-plane machine's Node is drained before the machine goes, in
    /// seconds; `0`: without limit.
    #[serde(default = "default_drain_timeout")]
    pub node_drain_timeout_seconds: u32,
}

fn default_drain_timeout() -> u32 {
    capw_api::DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS
}

/// One desired worker pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesiredPool {
    /// Pool name (unique, a DNS label).
    pub name: String,
    /// The worker class it was built from.
    pub class: String,
    /// Replicas (1 when the Cluster does not say).
    pub replicas: u32,
    /// Kubernetes version, `vMAJOR.MINOR.PATCH`.
    pub version: String,
    /// Failure domain, if the Cluster placed the pool.
    pub failure_domain: Option<String>,
    /// Infrastructure provider and config for its machines.
    pub infrastructure: ProviderConfig,
    /// Bootstrap provider and config for its machines.
    pub bootstrap: ProviderConfig,
    /// The variables its configs were patched with (the Cluster's, with its overrides).
    pub variables: Variables,
    /// How out-of-date machines are replaced.
    #[serde(default)]
    pub rollout: PoolRollout,
    /// Which machines go first when the pool shrinks or rolls.
    #[serde(default)]
    pub deletion_order: DeletionOrder,
    /// How long a machine's Node is drained before the machine goes, in seconds; `0`:
    /// without limit.
    #[serde(default = "default_drain_timeout")]
    pub node_drain_timeout_seconds: u32,
    /// What shapes a machine of the pool now; a machine made with another is out of date.
    #[serde(default)]
    pub shape: MachineShape,
    /// When a machine of the pool is unhealthy and whether it may be replaced; `None`: no
    /// health check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<PoolHealthCheck>,
}

/// A pool's health check, resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolHealthCheck {
    /// How long a machine may exist without its Node, in seconds; 0 for no limit.
    pub node_startup_timeout_seconds: u32,
    /// Node conditions that make a machine unhealthy once they held long enough.
    pub unhealthy_node_conditions: Vec<UnhealthyCondition>,
    /// Unhealthy machines are replaced only while there are at most this many.
    pub max_unhealthy: Option<u32>,
    /// Control plane only: replacements in a row while each turns unhealthy again within
    /// `min_healthy_period_seconds`; `None`: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry: Option<u32>,
    /// Control plane only: the least time between two replacements, in seconds.
    #[serde(default)]
    pub retry_period_seconds: u32,
    /// Control plane only: how long a replacement stays healthy to end a row of retries.
    #[serde(default = "default_min_healthy_period")]
    pub min_healthy_period_seconds: u32,
}

fn default_min_healthy_period() -> u32 {
    crate::health::DEFAULT_MIN_HEALTHY_PERIOD_SECONDS
}

/// A Node condition that makes its machine unhealthy once it held for `timeout_seconds`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyCondition {
    /// The Node condition's type.
    #[serde(rename = "type")]
    pub type_: String,
    /// The unhealthy status.
    pub status: ConditionStatus,
    /// How long it must have held, in seconds.
    pub timeout_seconds: u32,
}

/// How a pool replaces out-of-date machines, resolved to counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolRollout {
    /// `OnDelete`: an out-of-date machine is replaced only once someone deleted it.
    pub on_delete: bool,
    /// Machines beyond the replicas while the pool rolls.
    pub max_surge: u32,
    /// Machines below the replicas that may be unavailable while the pool rolls.
    pub max_unavailable: u32,
}

impl Default for PoolRollout {
    /// `RollingUpdate`, `maxSurge` 1, `maxUnavailable` 0: Cluster API's defaults.
    fn default() -> Self {
        Self {
            on_delete: false,
            max_surge: 1,
            max_unavailable: 0,
        }
    }
}

/// What a Cluster should look like, computed from it and its ClusterClass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesiredState {
    /// The cluster's infrastructure provider and config.
    pub infrastructure: ProviderConfig,
    /// The control plane.
    pub control_plane: DesiredControlPlane,
    /// Worker pools, in the Cluster's order.
    pub pools: Vec<DesiredPool>,
    /// Lifecycle-hook providers, in the class's order.
    pub hooks: Vec<ProviderConfig>,
    /// The Cluster's variables, defaults applied (without `builtin`).
    pub variables: Variables,
}

impl DesiredState {
    /// Every provider config in the state, for the caller's `validate-config` calls: cluster
    /// infrastructure, control plane (and its machine configs), each pool's, then hooks.
    pub fn provider_configs(&self) -> Vec<&ProviderConfig> {
        let cp = &self.control_plane;
        let mut all = vec![&self.infrastructure, &cp.config];
        all.extend(cp.machine_infrastructure.iter().chain(cp.bootstrap.iter()));
        for pool in &self.pools {
            all.extend([&pool.infrastructure, &pool.bootstrap]);
        }
        all.extend(self.hooks.iter());
        all
    }
}
