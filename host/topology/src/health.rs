//! A pool's `healthCheck`, the class's overridden field by field by the Cluster's, resolved
//! for the pool's replicas.

use capw_api::MachineHealthCheck;

use crate::desired::{PoolHealthCheck, UnhealthyCondition};
use crate::error::{Errors, Subject, TopologyErrorKind as Kind};
use crate::rollout::{Layers, resolve};

/// `checks.nodeStartupTimeoutSeconds` when absent: Cluster API's default, ten minutes.
pub const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS: u32 = 600;

/// `remediation.minHealthyPeriodSeconds` when absent: Cluster API's default, an hour.
pub const DEFAULT_MIN_HEALTHY_PERIOD_SECONDS: u32 = 3600;

/// The pool's (or with `control_plane`, the control plane's) health check; `None` when
/// neither the class nor the Cluster sets one. The retry fields are the control plane's
/// only: a pool's are refused.
pub(crate) fn pool_health_check(
    layers: &Layers<'_, MachineHealthCheck>,
    replicas: u32,
    control_plane: bool,
    errors: &mut Errors,
) -> Option<PoolHealthCheck> {
    if layers.class.is_none() && layers.cluster.is_none() {
        return None;
    }
    let node_startup_timeout_seconds = match layers.pick("checks.nodeStartupTimeoutSeconds", |h| {
        h.checks.as_ref()?.node_startup_timeout_seconds
    }) {
        Some((value, subject, path)) => seconds(value, subject, path, errors),
        None => DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS,
    };
    let mut unhealthy_node_conditions = Vec::new();
    if let Some((list, subject, path)) = layers.pick("checks.unhealthyNodeConditions", |h| {
        h.checks.as_ref()?.unhealthy_node_conditions.clone()
    }) {
        for (i, c) in list.iter().enumerate() {
            if c.type_.trim().is_empty() {
                errors.add(
                    subject,
                    Kind::InvalidHealthCheck,
                    format!("{path}[{i}].type"),
                    "must name a Node condition, e.g. `Ready`",
                );
            }
            let timeout_seconds = seconds(
                c.timeout_seconds,
                subject,
                format!("{path}[{i}].timeoutSeconds"),
                errors,
            );
            unhealthy_node_conditions.push(UnhealthyCondition {
                type_: c.type_.clone(),
                status: c.status,
                timeout_seconds,
            });
        }
    }
    let max_unhealthy = layers
        .pick("remediation.triggerIf.unhealthyLessThanOrEqualTo", |h| {
            h.remediation
                .as_ref()?
                .trigger_if
                .as_ref()?
                .unhealthy_less_than_or_equal_to
                .clone()
        })
        .and_then(
            |(value, subject, path)| match resolve(&value, replicas, false) {
                Ok(n) => Some(n),
                Err(why) => {
                    errors.add(subject, Kind::InvalidHealthCheck, path, why);
                    None
                }
            },
        );
    let mut retry = |field: &'static str, pick: fn(&capw_api::HealthRemediation) -> Option<i32>| {
        let (value, subject, path) =
            layers.pick(field, |h| h.remediation.as_ref().and_then(pick))?;
        if !control_plane {
            let why = "is the control plane's only (a pool replaces its machines itself)";
            errors.add(subject, Kind::InvalidHealthCheck, path, why);
            return None;
        }
        Some(seconds(value, subject, path, errors))
    };
    let max_retry = retry("remediation.maxRetry", |r| r.max_retry);
    let retry_period_seconds =
        retry("remediation.retryPeriodSeconds", |r| r.retry_period_seconds).unwrap_or(0);
    let min_healthy_period_seconds = retry("remediation.minHealthyPeriodSeconds", |r| {
        r.min_healthy_period_seconds
    })
    .unwrap_or(DEFAULT_MIN_HEALTHY_PERIOD_SECONDS);
    Some(PoolHealthCheck {
        node_startup_timeout_seconds,
        unhealthy_node_conditions,
        max_unhealthy,
        max_retry,
        retry_period_seconds,
        min_healthy_period_seconds,
    })
}

/// A number of seconds, refused (as 0) when negative.
fn seconds(value: i32, subject: Subject, path: String, errors: &mut Errors) -> u32 {
    u32::try_from(value).unwrap_or_else(|_| {
        let why = format!("must not be negative; got {value}");
        errors.add(subject, Kind::InvalidHealthCheck, path, why);
        0
    })
}

#[cfg(test)]
mod tests {
    use capw_api::{
        ConditionStatus, HealthChecks, HealthRemediation, IntOrString, RemediationTrigger,
        UnhealthyNodeCondition,
    };

    use super::*;

    fn layers<'a>(
        class: Option<&'a MachineHealthCheck>,
        cluster: Option<&'a MachineHealthCheck>,
    ) -> Layers<'a, MachineHealthCheck> {
        Layers {
            class,
            class_path: "spec.workers.machineDeployments[0].healthCheck",
            cluster,
            cluster_path: "spec.topology.workers.machineDeployments[0].healthCheck",
        }
    }

    fn check(timeout: i32, trigger: Option<IntOrString>) -> MachineHealthCheck {
        MachineHealthCheck {
            checks: Some(HealthChecks {
                node_startup_timeout_seconds: None,
                unhealthy_node_conditions: Some(vec![UnhealthyNodeCondition {
                    type_: "Ready".into(),
                    status: ConditionStatus::Unknown,
                    timeout_seconds: timeout,
                }]),
            }),
            remediation: trigger.map(|t| HealthRemediation {
                trigger_if: Some(RemediationTrigger {
                    unhealthy_less_than_or_equal_to: Some(t),
                }),
                ..HealthRemediation::default()
            }),
        }
    }

    #[test]
    fn none_without_a_health_check_and_defaults_within_one() {
        assert_eq!(
            pool_health_check(&layers(None, None), 3, false, &mut Errors::default()),
            None
        );
        let empty = MachineHealthCheck::default();
        let h = pool_health_check(
            &layers(Some(&empty), None),
            3,
            false,
            &mut Errors::default(),
        )
        .unwrap();
        assert_eq!(
            h.node_startup_timeout_seconds,
            DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS
        );
        assert!(h.unhealthy_node_conditions.is_empty());
        assert_eq!(h.max_unhealthy, None);
    }

    #[test]
    fn the_cluster_overrides_the_class_and_percentages_round_down() {
        let class = check(300, Some(IntOrString::Int(1)));
        let cluster = MachineHealthCheck {
            checks: None,
            remediation: check(0, Some(IntOrString::String("40%".into()))).remediation,
        };
        let mut errors = Errors::default();
        let h = pool_health_check(&layers(Some(&class), Some(&cluster)), 5, false, &mut errors)
            .unwrap();
        assert_eq!(h.max_unhealthy, Some(2), "40% of 5");
        assert_eq!(
            h.unhealthy_node_conditions[0].timeout_seconds, 300,
            "the class's checks"
        );
        assert_eq!(
            h.unhealthy_node_conditions[0].status,
            ConditionStatus::Unknown
        );
        assert_eq!(errors.len(), 0);
    }

    #[test]
    fn bad_values_are_refused_at_their_path() {
        let bad = check(-5, Some(IntOrString::String("many".into())));
        let mut errors = Errors::default();
        pool_health_check(&layers(None, Some(&bad)), 3, false, &mut errors);
        let errors = errors.into_result(()).unwrap_err();
        let paths: Vec<&str> = errors.errors().iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.topology.workers.machineDeployments[0].healthCheck.checks.unhealthyNodeConditions[0].timeoutSeconds",
                "spec.topology.workers.machineDeployments[0].healthCheck.remediation.triggerIf.unhealthyLessThanOrEqualTo",
            ]
        );
    }

    #[test]
    fn retries_are_the_control_planes_only_with_cluster_apis_defaults() {
        let mut with_retries = check(300, None);
        with_retries.remediation = Some(HealthRemediation {
            max_retry: Some(2),
            retry_period_seconds: Some(60),
            ..HealthRemediation::default()
        });
        let mut errors = Errors::default();
        let h =
            pool_health_check(&layers(Some(&with_retries), None), 3, true, &mut errors).unwrap();
        assert_eq!(errors.len(), 0);
        assert_eq!(
            (
                h.max_retry,
                h.retry_period_seconds,
                h.min_healthy_period_seconds
            ),
            (Some(2), 60, DEFAULT_MIN_HEALTHY_PERIOD_SECONDS)
        );
        // A pool refuses them, each at its path.
        pool_health_check(&layers(Some(&with_retries), None), 3, false, &mut errors);
        let errors = errors.into_result(()).unwrap_err();
        let paths: Vec<&str> = errors.errors().iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.workers.machineDeployments[0].healthCheck.remediation.maxRetry",
                "spec.workers.machineDeployments[0].healthCheck.remediation.retryPeriodSeconds",
            ]
        );
    }
}
