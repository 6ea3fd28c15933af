//! Every state of the service through [`assess`].

use capw_sdk::testing::version;
use capw_sdk::types::ErrorCode;

use super::*;
use crate::api;

fn cp(state: ControlPlaneState, version: &str) -> ManagedControlPlane {
    ManagedControlPlane {
        id: "mcp-1".into(),
        client_token: Some("key-1".into()),
        cluster: "c1".into(),
        name: "c1".into(),
        version: version.into(),
        target_version: None,
        replicas: 3,
        failures_tolerated: 1,
        state,
        failure_reason: None,
        endpoint: (state != ControlPlaneState::Creating).then(|| api::Endpoint {
            host: "mcp-1.sim".into(),
            port: 443,
        }),
        created_at: 1,
        updated_at: 1,
    }
}

fn input(minor: u32) -> PlanInput {
    PlanInput {
        version: version(minor),
        replicas: 0,
        members: Vec::new(),
        failure_domains: Vec::new(),
        endpoint: None,
        failures_tolerated: None,
        objects: Vec::new(),
    }
}

fn ok(cp: &ManagedControlPlane, input: &PlanInput) -> Assessment {
    match assess(cp, input) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    }
}

fn wait_reason(step: &Step) -> &str {
    match step {
        Step::Wait(p) => &p.reason,
        other => panic!("expected wait, got {other:?}"),
    }
}

fn condition<'a>(plan: &'a Plan, type_: &str) -> Option<&'a Condition> {
    plan.status.conditions.iter().find(|c| c.type_ == type_)
}

#[test]
fn a_service_being_created_is_waited_for_and_not_yet_initialized() {
    let a = ok(&cp(ControlPlaneState::Creating, "1.35.0"), &input(35));
    assert_eq!(wait_reason(&a.plan.step), "ServiceCreating");
    assert_eq!(a.update, None);
    let s = &a.plan.status;
    assert!(!s.initialized && !s.ready);
    assert_eq!(
        (s.version, s.endpoint.clone(), s.failures_tolerated),
        (None, None, None)
    );
    assert_eq!(
        (
            a.plan.replicas,
            a.plan.ready_replicas,
            a.plan.up_to_date_replicas
        ),
        (3, 0, 0)
    );
    let ready = condition(&a.plan, SERVICE_READY).map(|c| (c.status, c.reason.as_str()));
    assert_eq!(ready, Some((ConditionStatus::False, "Creating")));
}

#[test]
fn a_ready_service_at_the_desired_version_is_done() {
    let a = ok(&cp(ControlPlaneState::Ready, "v1.35.0"), &input(35));
    assert_eq!(a.plan.step, Step::None);
    assert_eq!(a.update, None);
    let s = &a.plan.status;
    assert!(s.initialized && s.ready);
    assert_eq!(s.version, Some(version(35)));
    assert_eq!(
        s.endpoint,
        Some(Endpoint {
            host: "mcp-1.sim".into(),
            port: 443
        })
    );
    assert_eq!(s.failures_tolerated, Some(1));
    assert_eq!(
        (
            a.plan.replicas,
            a.plan.ready_replicas,
            a.plan.up_to_date_replicas
        ),
        (3, 3, 3)
    );
    let types: Vec<(&str, ConditionStatus)> = (s.conditions.iter())
        .map(|c| (c.type_.as_str(), c.status))
        .collect();
    assert_eq!(
        types,
        [
            (SERVICE_READY, ConditionStatus::True),
            (UP_TO_DATE, ConditionStatus::True)
        ]
    );
}

#[test]
fn two_minors_behind_asks_one_minor_first_and_waits() {
    let a = ok(&cp(ControlPlaneState::Ready, "1.33.2"), &input(35));
    assert_eq!(a.update, Some(version(34)));
    assert_eq!(wait_reason(&a.plan.step), "UpdateRequested");
    assert_eq!(
        a.plan.status.version,
        Some(KubernetesVersion {
            major: 1,
            minor: 33,
            patch: 2
        })
    );
    assert_eq!((a.plan.ready_replicas, a.plan.up_to_date_replicas), (3, 0));

    // While the service updates, nothing more is asked.
    let mut updating = cp(ControlPlaneState::Updating, "1.33.2");
    updating.target_version = Some("1.34.0".into());
    let a = ok(&updating, &input(35));
    assert_eq!(a.update, None);
    assert_eq!(wait_reason(&a.plan.step), "ServiceUpdating");
    assert!(a.plan.status.ready, "it serves while it updates");
    let Step::Wait(p) = &a.plan.step else {
        panic!("not a wait");
    };
    assert!(
        p.message.contains("from v1.33.2 to v1.34.0"),
        "{}",
        p.message
    );

    // Once the first update finished, the second one.
    let a = ok(&cp(ControlPlaneState::Ready, "1.34.0"), &input(35));
    assert_eq!(a.update, Some(version(35)));
}

#[test]
fn a_service_ahead_of_the_desired_version_is_never_asked_down() {
    let a = ok(&cp(ControlPlaneState::Ready, "1.36.1"), &input(35));
    assert_eq!(a.plan.step, Step::None);
    assert_eq!(a.update, None);
    assert_eq!(
        a.plan.status.version,
        Some(KubernetesVersion {
            major: 1,
            minor: 36,
            patch: 1
        })
    );
    // Not behind the spec: counted up to date, so the cluster stays ready.
    assert_eq!(a.plan.up_to_date_replicas, a.plan.replicas);
    let ahead = condition(&a.plan, VERSION_AHEAD);
    assert_eq!(ahead.map(|c| c.status), Some(ConditionStatus::True));
    let message = ahead.map(|c| c.message.as_str()).unwrap_or_default();
    assert!(
        message.contains("v1.36.1") && message.contains("v1.35.0"),
        "{message}"
    );
}

#[test]
fn failures_tolerated_beyond_the_promise_is_refused_naming_the_field() {
    let mut asked = input(35);
    asked.failures_tolerated = Some(1);
    assert!(assess(&cp(ControlPlaneState::Ready, "1.35.0"), &asked).is_ok());
    asked.failures_tolerated = Some(2);
    let Err(e) = assess(&cp(ControlPlaneState::Ready, "1.35.0"), &asked) else {
        panic!("an ask beyond the promise accepted");
    };
    assert!(
        e.to_string()
            .starts_with("spec.topology.controlPlane.failuresTolerated 2: "),
        "{e}"
    );
    let e = capw_sdk::types::ProviderError::from(crate::ServiceError::from(e));
    assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
}

#[test]
fn major_changes_and_unreadable_versions_are_refused() {
    let mut desired = input(0);
    desired.version.major = 2;
    assert!(matches!(
        assess(&cp(ControlPlaneState::Ready, "1.35.0"), &desired),
        Err(AssessError::MajorChange { .. })
    ));
    assert!(matches!(
        assess(&cp(ControlPlaneState::Ready, "latest"), &input(35)),
        Err(AssessError::BadServiceVersion { .. })
    ));
}

/// A control plane whose service failed with `reason`: while creating (no endpoint, it never
/// served) or while updating to `target`.
fn failed(version: &str, target: Option<&str>, reason: &str) -> ManagedControlPlane {
    let mut cp = cp(ControlPlaneState::Failed, version);
    cp.failure_reason = Some(reason.into());
    cp.target_version = target.map(str::to_owned);
    if target.is_none() {
        cp.endpoint = None;
    }
    cp
}

#[test]
fn a_failed_service_is_not_ready_names_its_reason_and_claims_no_progress() {
    let reason = "etcd did not become healthy within 2m0s";
    for cp in [
        failed("1.35.0", None, reason),
        failed("1.34.2", Some("1.35.0"), reason),
    ] {
        let a = ok(&cp, &input(35));
        assert_eq!(
            a.plan.step,
            Step::None,
            "{:?}: no wait, no error",
            cp.target_version
        );
        assert_eq!(a.update, None, "nothing asked of a failed service");
        let s = &a.plan.status;
        assert!(!s.initialized && !s.ready);
        assert_eq!((s.version, s.failures_tolerated), (None, None));
        assert_eq!(
            (
                a.plan.replicas,
                a.plan.ready_replicas,
                a.plan.up_to_date_replicas
            ),
            (3, 0, 0)
        );
        let Some(ready) = condition(&a.plan, SERVICE_READY) else {
            panic!("no {SERVICE_READY}");
        };
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            (ConditionStatus::False, SERVICE_FAILED)
        );
        assert!(
            ready.message.contains("mcp-1") && ready.message.contains(reason),
            "{}",
            ready.message
        );
        let up_to_date = condition(&a.plan, UP_TO_DATE).map(|c| (c.status, c.reason.as_str()));
        assert_eq!(up_to_date, Some((ConditionStatus::False, SERVICE_FAILED)));
    }
}

#[test]
fn a_service_that_failed_updating_says_which_update_and_is_never_asked_again() {
    // Two minors behind: a ready service would be asked for the next one.
    let a = ok(&failed("1.33.2", Some("1.34.0"), "boom"), &input(35));
    assert_eq!(a.plan.step, Step::None);
    assert_eq!(a.update, None);
    let message = condition(&a.plan, UP_TO_DATE)
        .map(|c| c.message.as_str())
        .unwrap_or_default();
    assert!(
        message.contains("from v1.33.2 to v1.34.0") && message.contains("v1.35.0"),
        "{message}"
    );
    // The endpoint it had stays the status's: the host keeps showing where it was.
    assert!(a.plan.status.endpoint.is_some());
}

#[test]
fn a_failure_reason_stays_one_line_and_a_missing_one_is_said() {
    let a = ok(&failed("1.35.0", None, "line one\nline two\t"), &input(35));
    let message = condition(&a.plan, SERVICE_READY)
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(message.contains("line one line two;"), "{message}");
    let mut silent = failed("1.35.0", None, "");
    silent.failure_reason = None;
    let a = ok(&silent, &input(35));
    let message = condition(&a.plan, SERVICE_READY)
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(message.contains("simcloud gave no reason"), "{message}");
}

#[test]
fn refusals_of_the_input_still_come_first_for_a_failed_service() {
    let mut asked = input(35);
    asked.failures_tolerated = Some(2);
    assert!(matches!(
        assess(&failed("1.35.0", None, "boom"), &asked),
        Err(AssessError::FailuresTolerated { .. })
    ));
}
