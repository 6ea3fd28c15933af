//! A pool's `rollout` and `deletion`, the class's overridden field by field by the Cluster's,
//! resolved to counts for the pool's replicas.

use capw_api::{
    DeletionOrder, IntOrString, MachineDeletion, MachineRollout, RollingUpdate, RolloutStrategyType,
};

use crate::desired::PoolRollout;
use crate::error::{Errors, Subject, TopologyErrorKind as Kind};

/// Where a pool's settings come from: the worker class's, then the Cluster's for the pool.
pub(crate) struct Layers<'a, T> {
    pub class: Option<&'a T>,
    pub class_path: &'a str,
    pub cluster: Option<&'a T>,
    pub cluster_path: &'a str,
}

impl<'a, T> Layers<'a, T> {
    /// The Cluster's value of a field, else the class's, with the object and path it is at.
    pub(crate) fn pick<V: 'a>(
        &self,
        field: &str,
        get: impl Fn(&'a T) -> Option<V>,
    ) -> Option<(V, Subject, String)> {
        if let Some(v) = self.cluster.and_then(&get) {
            return Some((
                v,
                Subject::Cluster,
                format!("{}.{field}", self.cluster_path),
            ));
        }
        let v = self.class.and_then(get)?;
        Some((
            v,
            Subject::ClusterClass,
            format!("{}.{field}", self.class_path),
        ))
    }
}

/// The pool's rollout for `replicas` machines. `RollingUpdate` with `maxSurge` 1 and
/// `maxUnavailable` 0 (Cluster API's defaults) unless set; when both come to 0, one machine
/// may be unavailable (as for a Kubernetes Deployment), so a rollout can always proceed.
pub(crate) fn pool_rollout(
    layers: &Layers<'_, MachineRollout>,
    replicas: u32,
    errors: &mut Errors,
) -> PoolRollout {
    let strategy = |r: &'_ MachineRollout| r.strategy.clone();
    let rolling = |r: &MachineRollout| -> Option<RollingUpdate> { strategy(r)?.rolling_update };
    let on_delete = layers
        .pick("strategy.type", |r| strategy(r)?.type_)
        .is_some_and(|(t, _, _)| t == RolloutStrategyType::OnDelete);
    let mut bound =
        |field: &str, get: fn(RollingUpdate) -> Option<IntOrString>, up: bool, default| {
            let Some((value, subject, path)) = layers
                .pick(&format!("strategy.rollingUpdate.{field}"), |r| {
                    get(rolling(r)?)
                })
            else {
                return default;
            };
            match resolve(&value, replicas, up) {
                Ok(n) => n,
                Err(why) => {
                    errors.add(subject, Kind::InvalidRollout, path, why);
                    default
                }
            }
        };
    let max_surge = bound("maxSurge", |r| r.max_surge, true, 1);
    let mut max_unavailable = bound("maxUnavailable", |r| r.max_unavailable, false, 0);
    if max_surge == 0 && max_unavailable == 0 {
        max_unavailable = 1;
    }
    PoolRollout {
        on_delete,
        max_surge,
        max_unavailable,
    }
}

/// The pool's deletion order: the Cluster's, else the class's, else `Random`.
pub(crate) fn deletion_order(layers: &Layers<'_, MachineDeletion>) -> DeletionOrder {
    layers
        .pick("order", |d| d.order)
        .map(|(order, _, _)| order)
        .unwrap_or_default()
}

/// How long the pool's Nodes are drained before their machines go, in seconds (`0`: without
/// limit): the Cluster's, else the class's, else [`capw_api::DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS`].
pub(crate) fn node_drain_timeout(layers: &Layers<'_, MachineDeletion>) -> u32 {
    layers
        .pick("nodeDrainTimeoutSeconds", |d| d.node_drain_timeout_seconds)
        .map_or(capw_api::DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS, |(t, _, _)| t)
}

/// A count or a percentage of `replicas` (rounded up or down, as Cluster API scales each
/// field) as a count.
pub(crate) fn resolve(value: &IntOrString, replicas: u32, round_up: bool) -> Result<u32, String> {
    match value {
        IntOrString::Int(n) => {
            u32::try_from(*n).map_err(|_| format!("must not be negative; got {n}"))
        }
        IntOrString::String(text) => {
            let percent = text
                .strip_suffix('%')
                .and_then(|p| p.parse::<u32>().ok())
                .filter(|p| *p <= 100)
                .ok_or_else(|| {
                    format!("must be a count or a percentage from 0% to 100%, such as `25%`; got `{text}`")
                })?;
            let scaled = u64::from(replicas) * u64::from(percent);
            let n = if round_up {
                scaled.div_ceil(100)
            } else {
                scaled / 100
            };
            Ok(u32::try_from(n).unwrap_or(u32::MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use capw_api::RolloutStrategy;

    use super::*;

    fn rollout(surge: Option<IntOrString>, unavailable: Option<IntOrString>) -> MachineRollout {
        MachineRollout {
            strategy: Some(RolloutStrategy {
                type_: None,
                rolling_update: Some(RollingUpdate {
                    max_surge: surge,
                    max_unavailable: unavailable,
                }),
            }),
        }
    }

    fn layers<'a, T>(class: Option<&'a T>, cluster: Option<&'a T>) -> Layers<'a, T> {
        Layers {
            class,
            class_path: "spec.workers.machineDeployments[0].rollout",
            cluster,
            cluster_path: "spec.topology.workers.machineDeployments[1].rollout",
        }
    }

    #[test]
    fn defaults_are_cluster_apis() {
        let mut errors = Errors::default();
        let r = pool_rollout(&layers(None, None), 3, &mut errors);
        assert_eq!(r, PoolRollout::default());
        assert_eq!((r.on_delete, r.max_surge, r.max_unavailable), (false, 1, 0));
        assert_eq!(errors.len(), 0);
    }

    #[test]
    fn the_cluster_overrides_the_class_field_by_field_and_percentages_round() {
        let class = rollout(Some(IntOrString::Int(2)), Some(IntOrString::Int(1)));
        let cluster = rollout(None, Some(IntOrString::String("50%".into())));
        let mut errors = Errors::default();
        let r = pool_rollout(&layers(Some(&class), Some(&cluster)), 5, &mut errors);
        assert_eq!(
            (r.max_surge, r.max_unavailable),
            (2, 2),
            "50% of 5 rounds down"
        );
        let surge = rollout(Some(IntOrString::String("25%".into())), None);
        let r = pool_rollout(&layers(None, Some(&surge)), 5, &mut errors);
        assert_eq!(
            (r.max_surge, r.max_unavailable),
            (2, 0),
            "25% of 5 rounds up"
        );
        assert_eq!(errors.len(), 0);
    }

    #[test]
    fn both_zero_lets_one_machine_be_unavailable() {
        let zero = rollout(Some(IntOrString::Int(0)), Some(IntOrString::Int(0)));
        let r = pool_rollout(&layers(Some(&zero), None), 3, &mut Errors::default());
        assert_eq!((r.max_surge, r.max_unavailable), (0, 1));
    }

    #[test]
    fn bad_bounds_are_refused_at_their_path_in_their_object() {
        let bad = rollout(
            Some(IntOrString::Int(-1)),
            Some(IntOrString::String("lots".into())),
        );
        let class_bad = rollout(None, Some(IntOrString::String("150%".into())));
        let mut errors = Errors::default();
        pool_rollout(&layers(Some(&class_bad), Some(&bad)), 3, &mut errors);
        let found = errors.into_result(()).unwrap_err();
        let got: Vec<(Subject, &str)> = found
            .errors()
            .iter()
            .map(|e| (e.subject, e.path.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Subject::Cluster,
                    "spec.topology.workers.machineDeployments[1].rollout.strategy.rollingUpdate.maxSurge"
                ),
                (
                    Subject::Cluster,
                    "spec.topology.workers.machineDeployments[1].rollout.strategy.rollingUpdate.maxUnavailable"
                ),
            ]
        );
        let mut errors = Errors::default();
        pool_rollout(&layers(Some(&class_bad), None), 3, &mut errors);
        let found = errors.into_result(()).unwrap_err();
        assert_eq!(found.errors()[0].subject, Subject::ClusterClass);
        assert!(found.errors()[0].message.contains("`150%`"), "{found}");
    }

    #[test]
    fn on_delete_and_the_deletion_order_come_through() {
        let on_delete = MachineRollout {
            strategy: Some(RolloutStrategy {
                type_: Some(RolloutStrategyType::OnDelete),
                rolling_update: None,
            }),
        };
        let r = pool_rollout(&layers(Some(&on_delete), None), 3, &mut Errors::default());
        assert!(r.on_delete);
        let oldest = MachineDeletion {
            order: Some(DeletionOrder::Oldest),
            node_drain_timeout_seconds: Some(60),
        };
        let newest = MachineDeletion {
            order: Some(DeletionOrder::Newest),
            node_drain_timeout_seconds: None,
        };
        assert_eq!(
            deletion_order(&layers(Some(&oldest), None)),
            DeletionOrder::Oldest
        );
        assert_eq!(
            deletion_order(&layers(Some(&oldest), Some(&newest))),
            DeletionOrder::Newest
        );
        assert_eq!(deletion_order(&layers(None, None)), DeletionOrder::Random);
        // The drain timeout is overridden field by field: the Cluster's pool names only the
        // order, so the class's timeout holds.
        assert_eq!(
            node_drain_timeout(&layers(Some(&oldest), Some(&newest))),
            60
        );
        assert_eq!(
            node_drain_timeout(&layers(None, Some(&newest))),
            capw_api::DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS
        );
    }
}
