//! One pass over one cluster: read it, observe (plan, list machines), decide, act
//! concurrently, write the status. Level-triggered: a pass looks only at what is stored.
//!
//! The pass's base is [`env`] (what every action is given), [`note`] (what an action
//! answers), [`snapshot`] (what is known of the cluster) and [`convert`] (between the API,
//! the core and the contract). [`actions`] holds one file per family of actions, each of
//! which imports only the base. This file, [`validate`], [`workload`] (observations) and
//! [`status`] (the write at the end) sit on top and may use any of them.

use std::collections::BTreeMap;
use std::time::Duration;

use capw_api::{Cluster, ClusterInfrastructure, Machine};
use capw_reconcile::{Action, StatusView, decide};
use futures::future::join_all;
use tracing::Instrument as _;

pub(crate) mod actions;
pub(crate) mod convert;
pub(crate) mod env;
pub(crate) mod note;
pub(crate) mod snapshot;
pub(crate) mod status;
pub(crate) mod validate;
pub(crate) mod workload;

use self::actions::{
    control_plane, drain, etcd, finalizer, health, hooks, hosted, infrastructure, join_token,
    kubeconfig, machines, nodes, secrets, up_to_date,
};
use self::env::Env;
use self::note::ActionNote;
use self::snapshot::Snapshot;
use self::validate::desired_state;
use crate::error::EngineError;
use crate::objects::kubeconfig::{kubeconfig_secret_name, stored_kubeconfig};
use crate::objects::{
    CLUSTER_FINALIZER, CLUSTER_LABEL, InfrastructureRecord, SECRET_KIND, applied, applied_state,
    cluster_secret_name, secret_items,
};
use crate::store::{ObjectKey, StoreError, TypedObjects, decode};

/// How a pass ended.
#[derive(Clone, Debug)]
pub enum PassOutcome {
    /// The Cluster no longer exists.
    Gone,
    /// Nothing to do and everything as desired.
    Converged(StatusView),
    /// Only a person can move it on: invalid topology or config, or a permanent provider
    /// error. The message says what.
    Blocked(String),
    /// Work is under way; pass again after `requeue` (or at once when `None`).
    Progress {
        /// The status the pass wrote, when it got that far.
        status: Option<StatusView>,
        /// When to pass again; `None` for at once.
        requeue: Option<Duration>,
        /// Whether an action of the pass failed (the requeue backs off).
        failed: bool,
    },
}

/// Reads the cluster at `key` and everything of it; `None` when it is gone.
async fn snapshot(env: &Env, key: &ObjectKey) -> Result<Option<Snapshot>, EngineError> {
    let Some(value) = env.store.get(key).await? else {
        return Ok(None);
    };
    let cluster: Cluster = decode(value)?;
    let mut snapshot = observe(env, cluster).await?;
    snapshot.desired = desired_state(env, &snapshot.cluster).await;
    // A Cluster being deleted is taken down with what made it, when its topology no longer
    // resolves: deleting must not need a valid ClusterClass.
    if let Err(problems) = &snapshot.desired
        && snapshot.deleting()
        && let Some(applied) = (snapshot.infrastructure.as_ref()).and_then(applied_state)
    {
        tracing::info!(
            cluster = %snapshot.name,
            namespace = %snapshot.namespace,
            problems = %problems.join("; "),
            "deleting with the last valid topology",
        );
        snapshot.desired = Ok(applied);
    }
    Ok(Some(snapshot))
}

/// Everything stored of `cluster` (its Machines, infrastructure record, secrets, kubeconfig),
/// owned by its uid; the desired state is left for the caller to compute.
pub(crate) async fn observe(env: &Env, cluster: Cluster) -> Result<Snapshot, EngineError> {
    let namespace = cluster
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let uid = cluster.metadata.uid.clone().unwrap_or_default();
    let machines: Vec<Machine> = env
        .store
        .list_labelled_as::<Machine>(&namespace, CLUSTER_LABEL, &name)
        .await?
        .into_iter()
        .filter(|m| m.spec.cluster_name == name)
        .collect();
    let infrastructure = env
        .store
        .get_as::<ClusterInfrastructure>(&namespace, &name)
        .await?
        .and_then(|o| o.status)
        .filter(|r| r.cluster_uid == uid);
    let secrets = env
        .store
        .get(&ObjectKey::namespaced(
            SECRET_KIND,
            &namespace,
            &cluster_secret_name(&name),
        ))
        .await?
        .and_then(|o| secret_items(&o, &uid));
    // Read only when it is used: with access off a pass reads what it read before.
    let kubeconfig = match env.cluster_cache {
        None => None,
        Some(_) => env
            .store
            .get(&ObjectKey::namespaced(
                SECRET_KIND,
                &namespace,
                &kubeconfig_secret_name(&name),
            ))
            .await?
            .and_then(|o| stored_kubeconfig(&o, &uid)),
    };
    Ok(Snapshot {
        cluster,
        namespace,
        name,
        uid,
        desired: Err(Vec::new()),
        machines,
        infrastructure,
        secrets,
        kubeconfig,
    })
}

/// Adds the cluster finalizer before anything is created for the cluster.
async fn ensure_finalizer(env: &Env, key: &ObjectKey) -> Result<(), StoreError> {
    env.store
        .update(key, &mut |o| {
            let meta = o
                .get_mut("metadata")
                .and_then(|m| m.as_object_mut())
                .ok_or_else(|| StoreError::Invalid("no metadata".into()))?;
            let list = meta
                .entry("finalizers")
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let Some(list) = list.as_array_mut()
                && !list.iter().any(|f| f.as_str() == Some(CLUSTER_FINALIZER))
            {
                list.push(CLUSTER_FINALIZER.into());
            }
            Ok(())
        })
        .await?;
    Ok(())
}

/// Keeps the infrastructure record's last valid desired state up to date once there is a
/// record (nothing exists before it), so a deletion can go on after the topology broke.
async fn remember_applied(env: &Env, s: &Snapshot) -> Result<(), EngineError> {
    let (Ok(desired), Some(record)) = (&s.desired, &s.infrastructure) else {
        return Ok(());
    };
    let kept = applied(desired);
    if record.applied == kept {
        return Ok(());
    }
    let record = InfrastructureRecord {
        applied: kept,
        ..record.clone()
    };
    env.store_infrastructure_record(s, &record).await?;
    Ok(())
}

/// One pass over the cluster at `key`, in a span `pass{cluster, namespace}`: everything
/// logged meanwhile (provider calls, their logs, the host's own lines) is tied to its cluster,
/// in both modes.
///
/// # Errors
///
/// [`EngineError`] when the store fails; a provider's failure is a note in the status.
pub(crate) async fn pass(env: &Env, key: &ObjectKey) -> Result<PassOutcome, EngineError> {
    // At WARN, so that the default filter (`warn`) keeps it: a warning without its cluster
    // is the case this span is for.
    let span = tracing::warn_span!("pass", cluster = %key.name, namespace = %key.namespace);
    pass_in_span(env, key).instrument(span).await
}

async fn pass_in_span(env: &Env, key: &ObjectKey) -> Result<PassOutcome, EngineError> {
    let Some(s) = snapshot(env, key).await? else {
        if let Some(cache) = &env.cluster_cache {
            cache.evict_named(&key.namespace, &key.name);
        }
        return Ok(PassOutcome::Gone);
    };
    if let Err(problems) = &s.desired {
        status::write(env, &s, None, &[], None).await?;
        return Ok(PassOutcome::Blocked(problems.join("; ")));
    }
    if !s.deleting() {
        ensure_finalizer(env, key).await?;
    }
    remember_applied(env, &s).await?;

    // The workload cluster first: it is observed whatever the core asks.
    let (workload, workload_note) = workload::observe(env.cluster_cache.as_deref(), &s).await;
    let mut notes: Vec<ActionNote> = workload_note.into_iter().collect();
    notes.extend(nodes::record_nodes(env, &s, &workload).await);
    let rolls_inputs = control_plane::rolls_inputs(env, &s);
    notes.extend(up_to_date::record_up_to_date(env, &s, rolls_inputs).await);

    let etcd = etcd::observe(&s, &workload).await;
    notes.extend(etcd::record_members(env, &s, &etcd).await);

    // Observe what the core asks to observe, then decide again.
    let mut view = s.view(&workload);
    view.etcd = etcd.view.clone();
    view.control_plane_told_members = rolls_inputs;
    notes.extend(health::record_health(env, &s, &workload, view.now).await);
    let remediate = capw_reconcile::control_plane_to_remediate(&view);
    let mut orphan_names = BTreeMap::new();
    let mut provider_status = None;
    // What the core asks to observe, each at most once; a second round for what the first
    // answers led to (a join the plan asked for wants the join token looked at).
    let mut observed: Vec<Action> = Vec::new();
    for _ in 0..2 {
        let asked: Vec<Action> = decide(&view)
            .actions
            .into_iter()
            .filter(|a| {
                matches!(
                    a,
                    Action::PlanControlPlane
                        | Action::ReconcileControlPlane
                        | Action::ListMachines
                        | Action::ObserveJoinToken
                ) && !observed.contains(a)
            })
            .collect();
        if asked.is_empty() {
            break;
        }
        observed.extend(asked.iter().cloned());
        for action in asked {
            match action {
                Action::ObserveJoinToken => {
                    view.join_token = join_token::observe(env, &s, view.now).await;
                }
                Action::PlanControlPlane => {
                    match control_plane::plan(env, &s, &workload, &etcd.view, &remediate).await {
                        Ok((plan, mut status)) => {
                            status.remediated = remediated(&view, &plan, &remediate);
                            view.plan = Some(plan);
                            provider_status = Some(status);
                        }
                        Err(note) => notes.push(note),
                    }
                }
                Action::ReconcileControlPlane => {
                    let reconciled = if env.hosted(&s) {
                        hosted::reconcile(env, &s).await
                    } else {
                        control_plane::reconcile_service(env, &s).await
                    };
                    match reconciled {
                        Ok((service, status, note)) => {
                            view.service = Some(service);
                            provider_status = Some(status);
                            // A service at work says so; one as desired adds nothing.
                            if note.condition.is_some() {
                                notes.push(note);
                            }
                        }
                        Err(note) => notes.push(note),
                    }
                }
                Action::ListMachines => match machines::unnamed(env, &s).await {
                    Ok(found) => {
                        view.orphans = Some(found.orphans.keys().cloned().collect());
                        orphan_names = found.orphans;
                        notes.extend(found.foreign);
                    }
                    Err(note) => notes.push(note),
                },
                _ => {}
            }
        }
    }
    let decision = decide(&view);
    let todo: Vec<&Action> = decision
        .actions
        .iter()
        .filter(|a| {
            !matches!(
                a,
                Action::PlanControlPlane
                    | Action::ReconcileControlPlane
                    | Action::ListMachines
                    | Action::ObserveJoinToken
            )
        })
        .collect();
    if todo.is_empty() && notes.is_empty() && decision.converged() {
        status::write(
            env,
            &s,
            Some(&decision.status),
            &[],
            provider_status.as_ref(),
        )
        .await?;
        return Ok(PassOutcome::Converged(decision.status));
    }
    if !todo.is_empty() {
        tracing::debug!(cluster = %s.name, actions = ?todo, "acting");
    }
    // Nothing to act on but not converged: something is under way elsewhere (a plan that
    // waits); look again later rather than at once.
    let idle = todo.is_empty().then_some(env.config.requeue.max);
    let results = join_all(
        todo.into_iter()
            .map(|a| run(env, &s, a, &orphan_names, &etcd)),
    )
    .await;
    notes.extend(results);

    // The status after the actions.
    let Some(after) = snapshot(env, key).await? else {
        return Ok(PassOutcome::Gone);
    };
    let mut after_view = after.view(&workload);
    after_view.etcd = etcd.view;
    after_view.control_plane_told_members = rolls_inputs;
    after_view.join_token = view.join_token.clone();
    after_view.service = view.service.clone();
    let status = decide(&after_view).status;
    status::write(env, &after, Some(&status), &notes, provider_status.as_ref()).await?;
    if let Some(p) = notes.iter().find(|n| n.permanent) {
        let (_, reason, message) = p.condition.clone().unwrap_or_default();
        return Ok(PassOutcome::Blocked(format!("{reason}: {message}")));
    }
    Ok(PassOutcome::Progress {
        status: Some(status),
        requeue: notes.iter().filter_map(|n| n.requeue).min().or(idle),
        failed: notes.iter().any(|n| n.failed),
    })
}

/// Runs one action.
async fn run(
    env: &Env,
    s: &Snapshot,
    action: &Action,
    orphans: &BTreeMap<String, String>,
    etcd: &etcd::EtcdObservation,
) -> ActionNote {
    match action {
        Action::ReconcileInfrastructure => infrastructure::reconcile_infrastructure(env, s).await,
        Action::EnsureSecrets => secrets::ensure_secrets(env, s).await,
        Action::EnsureKubeconfig => kubeconfig::ensure_kubeconfig(env, s).await,
        Action::CreateMachine(intent) => machines::create(env, s, intent).await,
        Action::ReconcileMachine { machine } => match s.machine(machine) {
            Some(m) => machines::reconcile(env, s, m).await,
            None => ActionNote::done(),
        },
        Action::DeleteMachine { machine } => match s.machine(machine) {
            Some(m) => machines::delete(env, s, m).await,
            None => ActionNote::done(),
        },
        Action::DrainNode { machine, step } => match s.machine(machine) {
            Some(m) => drain::drain(env, s, m, step).await,
            None => ActionNote::done(),
        },
        Action::RemoveEtcdMember { machine } => match s.machine(machine) {
            Some(m) => etcd::remove_member(env, s, m, etcd).await,
            None => ActionNote::done(),
        },
        Action::RemoveEtcdOrphan { member, name } => {
            etcd::remove_orphan(s, *member, name, etcd).await
        }
        Action::DeleteOrphan { key } => {
            let name = orphans.get(key).cloned().unwrap_or_default();
            machines::delete_orphan(env, s, key, &name).await
        }
        Action::DeleteInfrastructure => infrastructure::delete_infrastructure(env, s).await,
        Action::DeleteControlPlane if env.hosted(s) => hosted::delete(env, s).await,
        Action::DeleteControlPlane => control_plane::delete_service(env, s).await,
        Action::RemoveFinalizer => finalizer::remove_finalizer(env, s).await,
        Action::CallHook { hook, from, to } => hooks::call_hook(env, s, *hook, *from, *to).await,
        Action::RenewJoinToken => join_token::renew(env, s, snapshot::now_seconds()).await,
        Action::PlanControlPlane
        | Action::ReconcileControlPlane
        | Action::ListMachines
        | Action::ObserveJoinToken => ActionNote::done(),
    }
}

/// The remediation to record when `plan` takes out a member the pass told it to replace
/// (`remediate`), unless it is the one already recorded (a removal that waits is answered
/// again on the next pass and counts once).
fn remediated(
    view: &capw_reconcile::ClusterView,
    plan: &capw_reconcile::PlanView,
    remediate: &[(String, String)],
) -> Option<capw_reconcile::LastRemediation> {
    let capw_reconcile::PlanStep::Delete { machine } = &plan.step else {
        return None;
    };
    let check = view.control_plane_health.as_ref()?;
    let last = view.last_remediation.as_ref();
    let told = remediate.iter().any(|(name, _)| name == machine);
    (told && last.is_none_or(|l| l.machine != *machine))
        .then(|| capw_reconcile::LastRemediation::next(last, machine, view.now, check))
}
