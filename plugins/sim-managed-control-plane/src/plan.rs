//! `plan`: what `reconcile-control-plane` would do, from the input alone.
//!
//! The host calls `plan` at admission and may call it as often as it likes, so it never calls
//! simcloud; and from the input alone nothing of the service can be known (whether the
//! control plane exists, what it runs, whether it is ready). What `plan` can do is refuse what
//! no reconcile would reach: a `failures-tolerated` beyond what the configured replicas
//! promise. Otherwise it answers `wait` (`ServiceAskedInPasses`), with a status that claims
//! nothing (not initialized, not ready, no version, no endpoint, counts 0) and a
//! `ServiceReady` condition of status `Unknown` saying why. `wait`, not `none`: a reconcile
//! may well have work to do, and a host that read `none` would take the control plane as
//! done.
//!
//! A downgrade is not refused here: the service may be ahead of the Cluster's version already
//! (it upgrades itself), which only a reconcile can see; it then answers `none` with
//! `VersionAhead` and never asks the service down.

use std::time::Duration;

use capw_sdk::control_plane::{ControlPlaneStatus, Plan, PlanInput, Step};
use capw_sdk::types::{Condition, ConditionStatus, InProgress};

use crate::assess::{self, AssessError, SERVICE_READY};
use crate::config::ManagedControlPlaneConfig;

/// The requeue hint of `plan`'s `wait`.
pub const PLAN_POLL: Duration = Duration::from_secs(10);

/// The answer of `plan` for `input`.
///
/// # Guarantees
///
/// Pure and deterministic: the same config and input give the same answer; members, failure
/// domains and the infrastructure's endpoint are not read (a managed control plane has no
/// machines).
///
/// # Errors
///
/// [`AssessError::FailuresTolerated`] for an ask beyond `(replicas - 1) / 2` of the config's
/// `replicas`.
pub fn plan(config: &ManagedControlPlaneConfig, input: &PlanInput) -> Result<Plan, AssessError> {
    assess::check_failures_tolerated(
        input.failures_tolerated,
        config.failures_tolerated(),
        config.replicas,
    )?;
    let why = "plan does not call simcloud; reconcile-control-plane, in the host's passes, \
               creates or updates the managed control plane and says where it stands";
    Ok(Plan {
        step: Step::Wait(InProgress::new("ServiceAskedInPasses", why).requeue_after(PLAN_POLL)),
        status: ControlPlaneStatus {
            initialized: false,
            ready: false,
            version: None,
            endpoint: None,
            conditions: vec![Condition::new(
                SERVICE_READY,
                ConditionStatus::Unknown,
                "NotAskedByPlan",
                why,
            )],
            failures_tolerated: None,
        },
        replicas: 0,
        ready_replicas: 0,
        up_to_date_replicas: 0,
        certificates: Vec::new(),
        shared_datastore: None,
    })
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::version;

    use super::*;

    fn input(failures_tolerated: Option<u32>) -> PlanInput {
        PlanInput {
            version: version(35),
            replicas: 0,
            members: Vec::new(),
            failure_domains: Vec::new(),
            endpoint: None,
            failures_tolerated,
            objects: Vec::new(),
        }
    }

    #[test]
    fn plan_waits_and_claims_nothing() {
        let config = ManagedControlPlaneConfig::new("http://sim");
        let p = match plan(&config, &input(None)) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let Step::Wait(progress) = &p.step else {
            panic!("expected wait, got {:?}", p.step);
        };
        assert_eq!(progress.reason, "ServiceAskedInPasses");
        assert_eq!(progress.requeue_after_ms, 10_000);
        assert!(!p.status.initialized && !p.status.ready);
        assert_eq!(p.status.version, None);
        assert_eq!(p.status.conditions[0].status, ConditionStatus::Unknown);
        assert_eq!(plan(&config, &input(None)), Ok(p), "deterministic");
    }

    #[test]
    fn plan_refuses_more_than_the_configured_replicas_promise() {
        let mut config = ManagedControlPlaneConfig::new("http://sim");
        assert!(plan(&config, &input(Some(1))).is_ok());
        let Err(e) = plan(&config, &input(Some(2))) else {
            panic!("2 tolerated of 3 replicas accepted");
        };
        assert_eq!(
            e,
            AssessError::FailuresTolerated {
                asked: 2,
                promised: 1,
                replicas: 3
            }
        );
        assert!(
            e.to_string()
                .contains("spec.topology.controlPlane.failuresTolerated"),
            "{e}"
        );
        config.replicas = 5;
        assert!(plan(&config, &input(Some(2))).is_ok());
    }
}
