//! How a worker pool replaces its machines (`rollout`) and which go first when it shrinks
//! (`deletion`), with Cluster API v1beta2's names. Set in a ClusterClass's worker class and
//! overridable, field by field, per pool in a Cluster.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How out-of-date machines of a pool are replaced.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineRollout {
    /// The replacement strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RolloutStrategy>,
}

/// The replacement strategy of a pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutStrategy {
    /// `RollingUpdate` (the default): new machines replace old ones within `rollingUpdate`'s
    /// bounds. `OnDelete`: an out-of-date machine stays until someone deletes it; its
    /// replacement is up to date.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<RolloutStrategyType>,
    /// Bounds of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdate>,
}

/// `rollout.strategy.type`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum RolloutStrategyType {
    /// Replace out-of-date machines, new first as `maxSurge` allows.
    RollingUpdate,
    /// Replace a machine only once someone deleted it.
    OnDelete,
}

/// Bounds of a rolling update, each a count or a percentage of the pool's replicas.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollingUpdate {
    /// Machines beyond the pool's replicas while it rolls; a percentage rounds up. 1 when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Machines below the pool's replicas that may be unavailable while it rolls; a percentage
    /// rounds down. 0 when absent. When both bounds come to 0, one machine may be unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

/// How a pool's machines are deleted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeletion {
    /// Which machines go first when the pool shrinks or rolls, after those that are out of date
    /// or not running: `Random` (the default), `Newest` or `Oldest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<DeletionOrder>,
    /// How long the host drains a machine's Node before the machine is deleted: cordoned,
    /// every Pod asked to leave through the eviction API (PodDisruptionBudgets respected), and
    /// once this long passed, the deletion goes on with what is left. `0` waits for the drain
    /// without limit (Cluster API's default); capw's default is 600 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout_seconds: Option<u32>,
}

/// How the control plane's machines are deleted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneDeletion {
    /// As a worker class's `deletion.nodeDrainTimeoutSeconds`: how long a control-plane
    /// machine's Node is drained before the machine is deleted; `0` without limit; 600
    /// seconds when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout_seconds: Option<u32>,
}

/// How long a Node is drained when neither the class nor the Cluster says: long enough for a
/// Deployment's evicted Pod to be replaced and Ready elsewhere (usually well under a minute),
/// short enough that a budget nothing can satisfy holds a deletion for minutes, not for ever.
pub const DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS: u32 = 600;

/// `deletion.order`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DeletionOrder {
    /// In an order that depends only on the machines' names: stable from pass to pass.
    #[default]
    Random,
    /// The most recently created first.
    Newest,
    /// The first created first.
    Oldest,
}

/// What shaped a machine when it was made: a digest of each input that decides what the
/// machine is, and one of all of them. A machine whose inputs differ from its pool's current
/// ones is out of date, and the names of the inputs that differ say why.
///
/// The inputs are the providers' names, the config fields their schemas mark as shaping a
/// machine (after patches; an unmarked field shapes the machine), and the pool's failure
/// domain when the pool names one. The version is the Machine's own `spec.version`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineShape {
    /// A digest of every input together.
    pub hash: String,
    /// Each input by name (`infrastructure.provider`, `infrastructure.config/instanceType`,
    /// `bootstrap.config/files`, `failureDomain`) and a digest of its value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
}

impl MachineShape {
    /// The names of the inputs in which `self` differs from `current`, sorted: changed,
    /// added and removed alike.
    pub fn changed_inputs(&self, current: &MachineShape) -> Vec<String> {
        if self.hash == current.hash {
            return Vec::new();
        }
        let mut names: Vec<String> = (self.inputs.iter())
            .filter(|(name, digest)| current.inputs.get(*name) != Some(digest))
            .map(|(name, _)| name.clone())
            .collect();
        names.extend(
            (current.inputs.keys())
                .filter(|name| !self.inputs.contains_key(*name))
                .cloned(),
        );
        names.sort();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(inputs: &[(&str, &str)]) -> MachineShape {
        let inputs: BTreeMap<String, String> = inputs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        MachineShape {
            hash: format!("{inputs:?}"),
            inputs,
        }
    }

    #[test]
    fn changed_inputs_name_what_differs_was_added_or_removed() {
        let old = shape(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let new = shape(&[("a", "1"), ("b", "9"), ("d", "4")]);
        assert_eq!(old.changed_inputs(&new), ["b", "c", "d"]);
        assert!(old.changed_inputs(&old.clone()).is_empty());
    }
}
