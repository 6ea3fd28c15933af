//! The loop that keeps a real-boot cloud's processes in line with its state, a few times a
//! second: launches `booting` instances, reports how their machines end up, keeps load
//! balancers running with the right backends, starts managed control planes' services and
//! reports whether they serve or failed; and the destroys the delete routes wait for.
//!
//! The state lock is never held across a process wait: each pass reads a plan from the
//! state, does the slow work in blocking tasks, and writes outcomes back.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::Machines;
use super::ServiceObservation;
use super::agent::Observation;
use crate::api::ApiError;
use crate::model::ControlPlaneState;
use crate::server::{Access, App, lock};
use crate::state::{Kind, MachineOutcome, MachinePlan};

/// Time between passes.
const TICK: Duration = Duration::from_millis(200);

/// Runs passes until `stopped` turns true, then waits for the launches under way.
pub(crate) async fn run(
    app: Arc<App>,
    machines: Arc<Machines>,
    mut stopped: watch::Receiver<bool>,
) {
    let in_flight: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let mut launches = JoinSet::new();
    let mut reported_lb_errors = BTreeSet::new();
    let mut reported_service_problems = BTreeSet::new();
    loop {
        tokio::select! {
            _ = stopped.wait_for(|stop| *stop) => break,
            () = tokio::time::sleep(TICK) => {}
        }
        while launches.try_join_next().is_some() {}
        let plans = app
            .run(Access::Read, |s, _, settings| {
                Ok((s.machine_plan(), s.service_plan(settings)))
            })
            .await;
        let Ok((plan, services)) = plans else {
            continue;
        };
        let busy = lock(&in_flight).clone();
        let m = machines.clone();
        let Ok(mut pass) = tokio::task::spawn_blocking(move || {
            let mut pass = observe(&m, &plan, &busy);
            observe_services(&m, &services, &busy, &mut pass);
            pass
        })
        .await
        else {
            continue;
        };
        for (id, served) in pass.serving {
            let _ = app
                .run(Access::Write, |s, now, _| {
                    Ok(s.settle_service(&id, &served, now))
                })
                .await;
        }
        for (id, reason) in pass.service_failures {
            // The state keeps the verdict: the control plane turns `failed` and leaves the
            // plan, so its agent is not started again and this is reported once.
            let failed = app
                .run(Access::Write, |s, now, _| {
                    Ok(s.fail_control_plane(&id, &reason, now))
                })
                .await;
            match failed {
                Ok(Ok(true)) => {
                    tracing::warn!(control_plane = %id, %reason, "managed control plane failed");
                }
                Ok(Ok(false)) | Err(_) => {}
                // It moved on since the plan was read (deleted, or ready): told once.
                Ok(Err(e)) => pass.service_problems.push((id, format!("{reason} ({e})"))),
            }
        }
        for (id, problem) in pass.service_problems {
            if reported_service_problems.insert((id.clone(), problem.clone())) {
                tracing::warn!(control_plane = %id, %problem, "managed control plane service");
            }
        }
        for id in pass.services_to_launch {
            lock(&in_flight).insert(id.clone());
            launches.spawn(launch_service(
                app.clone(),
                machines.clone(),
                id,
                in_flight.clone(),
            ));
        }
        for (id, outcome) in pass.outcomes {
            if let MachineOutcome::Failed(reason) = &outcome {
                tracing::warn!(instance = %id, %reason, "machine failed");
            }
            let _ = app
                .run(Access::Write, |s, _, _| Ok(s.settle_machine(&id, outcome)))
                .await;
        }
        for (id, error) in pass.lb_errors {
            if reported_lb_errors.insert(id.clone()) {
                tracing::warn!(load_balancer = %id, %error, "load balancer not running");
            }
        }
        for id in pass.to_launch {
            lock(&in_flight).insert(id.clone());
            launches.spawn(launch(app.clone(), machines.clone(), id, in_flight.clone()));
        }
    }
    while launches.join_next().await.is_some() {}
}

/// What one pass found.
#[derive(Default)]
struct Pass {
    outcomes: Vec<(String, MachineOutcome)>,
    to_launch: Vec<String>,
    lb_errors: Vec<(String, String)>,
    /// Managed control planes whose API server serves a version.
    serving: Vec<(String, String)>,
    /// Managed control planes whose agent is to start (again).
    services_to_launch: Vec<String>,
    /// Managed control planes whose agent says their service failed, and why.
    service_failures: Vec<(String, String)>,
    /// Managed control planes whose service cannot be kept in step, and why.
    service_problems: Vec<(String, String)>,
}

/// Compares the managed control planes' plans with their services' files: launches the
/// missing agents (a service is the cloud's to keep running: one whose agent is gone, as after
/// a host reboot, starts again on its data), reports the versions served and the failures.
fn observe_services(
    machines: &Machines,
    plans: &[crate::state::ServicePlan],
    busy: &BTreeSet<String>,
    pass: &mut Pass,
) {
    for plan in plans.iter().filter(|p| !busy.contains(&p.id)) {
        match machines.observe_service(plan) {
            Ok(ServiceObservation::NotRunning(exited)) => {
                if let Some(tail) = exited {
                    pass.service_problems
                        .push((plan.id.clone(), format!("its agent exited: {tail}")));
                }
                pass.services_to_launch.push(plan.id.clone());
            }
            Ok(ServiceObservation::Starting) => {}
            Ok(ServiceObservation::Serving(version)) => {
                pass.serving.push((plan.id.clone(), version));
            }
            // A service that failed while `ready` is not one the state marks failed (only a
            // start or an upgrade fails there): it stays a problem, told once.
            Ok(ServiceObservation::Failed(reason)) if plan.state == ControlPlaneState::Ready => {
                pass.service_problems.push((plan.id.clone(), reason));
            }
            Ok(ServiceObservation::Failed(reason)) => {
                let reason = if reason.trim().is_empty() {
                    "its agent failed without saying why".to_owned()
                } else {
                    reason
                };
                pass.service_failures.push((plan.id.clone(), reason));
            }
            Err(e) => {
                pass.service_problems
                    .push((plan.id.clone(), crate::error_chain(&e)));
            }
        }
    }
}

/// Launches managed control plane `id`'s service under its lock.
async fn launch_service(
    app: Arc<App>,
    machines: Arc<Machines>,
    id: String,
    in_flight: Arc<Mutex<BTreeSet<String>>>,
) {
    struct Done(Arc<Mutex<BTreeSet<String>>>, String);
    impl Drop for Done {
        fn drop(&mut self) {
            lock(&self.0).remove(&self.1);
        }
    }
    let _done = Done(in_flight, id.clone());
    let _guard = machines.lock_of(&id).lock_owned().await;
    // Read again under the lock: a delete may have come first.
    let order = app
        .run(Access::Read, |s, _, settings| {
            Ok(s.service_launch_order(&id, settings))
        })
        .await;
    let Ok(Some(order)) = order else {
        return;
    };
    let m = machines.clone();
    let Ok(result) = tokio::task::spawn_blocking(move || m.launch_service(&order)).await else {
        return;
    };
    if let Err(e) = result {
        tracing::warn!(control_plane = %id, error = %crate::error_chain(&e), "managed control plane service did not start");
    }
}

/// Compares the plan with the machines' files and processes; starts missing balancers.
fn observe(machines: &Machines, plan: &MachinePlan, busy: &BTreeSet<String>) -> Pass {
    let mut pass = Pass::default();
    for id in plan.booting.iter().filter(|id| !busy.contains(*id)) {
        match machines.observe(id) {
            Observation::NotStarted => pass.to_launch.push(id.clone()),
            Observation::Booting => {}
            Observation::Ready => pass.outcomes.push((id.clone(), MachineOutcome::Ready)),
            Observation::Failed(reason) | Observation::Exited(reason) => {
                pass.outcomes
                    .push((id.clone(), MachineOutcome::Failed(reason)));
            }
        }
    }
    for id in &plan.running {
        let failed = match machines.observe(id) {
            Observation::Ready | Observation::Booting => continue,
            Observation::NotStarted => {
                "the machine's agent is gone (its pid file is missing)".into()
            }
            Observation::Failed(reason) | Observation::Exited(reason) => reason,
        };
        pass.outcomes
            .push((id.clone(), MachineOutcome::Failed(failed)));
    }
    for lb in &plan.load_balancers {
        if let Err(e) = machines.ensure_load_balancer(lb) {
            pass.lb_errors.push((lb.id.clone(), crate::error_chain(&e)));
        }
    }
    pass
}

/// Launches instance `id`'s machine under its lock and records the outcome.
async fn launch(
    app: Arc<App>,
    machines: Arc<Machines>,
    id: String,
    in_flight: Arc<Mutex<BTreeSet<String>>>,
) {
    struct Done(Arc<Mutex<BTreeSet<String>>>, String);
    impl Drop for Done {
        fn drop(&mut self) {
            lock(&self.0).remove(&self.1);
        }
    }
    let _done = Done(in_flight, id.clone());
    let _guard = machines.lock_of(&id).lock_owned().await;
    // Read again under the lock: a delete may have come first.
    let order = app
        .run(Access::Read, |s, _, settings| {
            Ok(s.launch_order(&id, settings))
        })
        .await;
    let Ok(Some(order)) = order else {
        return;
    };
    let m = machines.clone();
    let faults = app.clone();
    let Ok((order, result)) = tokio::task::spawn_blocking(move || {
        let result = m.launch(&order, || lock(&faults.faults).take_unregistered_node());
        (order, result)
    })
    .await
    else {
        return;
    };
    let _ = match result {
        Ok(()) => {
            let registers = order.verdict.ok().and_then(|(_, registers)| registers);
            app.run(Access::Write, |s, _, _| Ok(s.record_launch(&id, registers)))
                .await
        }
        Err(e) => {
            let reason = crate::error_chain(&e);
            tracing::warn!(instance = %id, %reason, "machine did not boot");
            app.run(Access::Write, |s, _, _| {
                Ok(s.settle_machine(&id, MachineOutcome::Failed(reason)))
            })
            .await
        }
    };
}

/// Destroys the machine of `id` (an instance or load balancer id) once it is no longer
/// launched (an instance marked deleting, a load balancer out of the state), and waits for
/// it. The destroy goes on if the caller stops waiting.
///
/// # Errors
///
/// [`ApiError`] `internal` when the machine's directory cannot be removed.
pub(crate) async fn destroy(
    machines: &Arc<Machines>,
    kind: Kind,
    id: &str,
) -> Result<(), ApiError> {
    // Only ids of the kind: nothing else may name a path.
    let Some(id) = kind.parse(id).map(|n| kind.id(n)) else {
        return Ok(());
    };
    let m = machines.clone();
    let task = tokio::spawn(async move {
        let _guard = m.lock_of(&id).lock_owned().await;
        let m2 = m.clone();
        let id2 = id.clone();
        let result = tokio::task::spawn_blocking(move || match kind {
            Kind::LoadBalancer => m2.destroy_load_balancer(&id2),
            Kind::ControlPlane => m2.destroy_service(&id2),
            _ => m2.destroy_instance(&id2),
        })
        .await;
        m.forget(&id);
        result
    });
    match task.await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(ApiError::internal(crate::error_chain(&e))),
        Ok(Err(e)) | Err(e) => Err(ApiError::internal(format!("destroy machine: {e}"))),
    }
}
