//! The controller: kube-runtime's [`Controller`] on Clusters, each reconcile one pass of the
//! shared executor.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use capw_api::{Cluster, Condition, ConditionStatus, is_condition_true};
use capw_engine::store::{ObjectKey, ObjectStore, TypedObjects as _, key_of};
use capw_engine::{Executor, PassOutcome, Requeue, RequeueBounds};
use futures::stream::BoxStream;
use futures::{FutureExt as _, StreamExt};
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, Resource as _, ResourceExt};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use crate::cache::SharedStreams;
use crate::error::KubeModeError;
use crate::metrics::Metrics;
use crate::store::object_reference;

/// Name of the controller in Events and field managers.
pub const CONTROLLER_NAME: &str = "capw-controller";

/// How a pass's outcome maps to when the Cluster is looked at again.
#[derive(Clone, Debug)]
pub struct RequeuePolicy {
    /// A converged or blocked Cluster is looked at again after this, even when nothing
    /// changed (a resync: the infrastructure may have drifted).
    pub resync: Duration,
    /// Wait after a pass that failed in the host (the API server).
    pub error_requeue: Duration,
}

impl Default for RequeuePolicy {
    fn default() -> Self {
        RequeuePolicy {
            resync: Duration::from_secs(300),
            error_requeue: Duration::from_secs(5),
        }
    }
}

impl RequeuePolicy {
    /// When to look at a Cluster again after `outcome`; `requeue` is the Cluster's state
    /// while its work is under way (within the engine's [`RequeueBounds`]), reset when it
    /// settles.
    pub fn action(
        &self,
        outcome: &PassOutcome,
        requeue: &mut Requeue,
        bounds: &RequeueBounds,
    ) -> Action {
        match outcome {
            PassOutcome::Gone => {
                *requeue = bounds.start();
                Action::await_change()
            }
            PassOutcome::Converged(_) | PassOutcome::Blocked(_) => {
                *requeue = bounds.start();
                Action::requeue(self.resync)
            }
            PassOutcome::Progress {
                status,
                requeue: hint,
                failed,
            } => Action::requeue(requeue.progress(status.as_ref(), *hint, *failed)),
        }
    }
}

/// The executor of the providers loaded now, shared by the controller and the admission
/// webhook; replaced when providers change.
#[derive(Clone)]
pub(crate) struct ExecutorSlot(Arc<RwLock<Arc<Executor>>>);

impl ExecutorSlot {
    pub(crate) fn new(executor: Arc<Executor>) -> Self {
        ExecutorSlot(Arc::new(RwLock::new(executor)))
    }

    /// The executor now; a call holds it to its end.
    pub(crate) fn current(&self) -> Arc<Executor> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc: the value is whole.
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Makes `executor` the one new calls get.
    pub(crate) fn replace(&self, executor: Arc<Executor>) {
        *self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = executor;
    }
}

/// What every reconcile shares.
pub(crate) struct Context {
    /// The executor of the providers loaded now; the admission webhook checks with it too.
    pub executor: ExecutorSlot,
    pub store: Arc<dyn ObjectStore>,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    pub policy: RequeuePolicy,
    /// The requeue state of each Cluster whose work is under way.
    pub requeues: Mutex<HashMap<ObjectKey, Requeue>>,
    /// The shards this replica acts on, when replicas split the Clusters.
    pub shards: Option<crate::Shards>,
}

impl Context {
    pub(crate) fn executor(&self) -> Arc<Executor> {
        self.executor.current()
    }

    pub(crate) fn set_executor(&self, executor: Arc<Executor>) {
        self.executor.replace(executor);
    }

    /// When to look at the Cluster at `key` again after `outcome`.
    fn next(&self, key: &ObjectKey, outcome: &PassOutcome) -> Action {
        // A poisoned lock only means a reconcile panicked mid-update: the map is whole.
        let mut requeues = self
            .requeues
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bounds = self.executor.current().config().requeue;
        if let PassOutcome::Progress { .. } = outcome {
            let requeue = requeues
                .entry(key.clone())
                .or_insert_with(|| bounds.start());
            self.policy.action(outcome, requeue, &bounds)
        } else {
            requeues.remove(key);
            self.policy.action(outcome, &mut bounds.start(), &bounds)
        }
    }

    async fn publish(&self, object: &Value, type_: EventType, reason: &str, note: String) {
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(truncate(note, 1000)),
            action: "Reconcile".into(),
            secondary: None,
        };
        if let Err(e) = self
            .recorder
            .publish(&event, &object_reference(object))
            .await
        {
            tracing::warn!(error = %e, reason, "publishing an event");
        }
    }
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

fn phase_of(cluster: &Cluster) -> Option<&'static str> {
    cluster.status.as_ref().map(|s| s.phase.as_str())
}

/// One reconcile: one executor pass, events for what changed, the next look.
async fn reconcile(cluster: Arc<Cluster>, ctx: Arc<Context>) -> Result<Action, KubeModeError> {
    let key = key_of::<Cluster>(
        &cluster.namespace().unwrap_or_default(),
        &cluster.name_any(),
    );
    let before = serde_json::to_value(cluster.as_ref()).unwrap_or_default();
    let started = Instant::now();
    let namespace = cluster.namespace().unwrap_or_default();
    let executor = ctx.executor();
    let pass = executor.reconcile(&key);
    let Some(pass) =
        crate::shards::while_held(ctx.shards.as_ref(), &namespace, &cluster.name_any(), pass).await
    else {
        // Not a shard this replica holds (now): its holder passes over the Cluster, and so
        // does this replica if it gains the shard.
        return Ok(Action::await_change());
    };
    let outcome = match pass {
        Ok(outcome) => outcome,
        Err(e) => {
            ctx.metrics.pass("error", started.elapsed());
            return Err(KubeModeError::Pass {
                cluster: key.to_string(),
                source: e,
            });
        }
    };
    let label = match &outcome {
        PassOutcome::Gone => "gone",
        PassOutcome::Converged(_) => "converged",
        PassOutcome::Blocked(_) => "blocked",
        PassOutcome::Progress { .. } => "progress",
    };
    ctx.metrics.pass(label, started.elapsed());
    let mut reference = before.clone();
    if let Some(meta) = reference.get_mut("metadata") {
        // The event is about the object, whatever version it is at now.
        meta.as_object_mut().map(|m| m.remove("resourceVersion"));
    }
    reference["apiVersion"] = Cluster::api_version(&()).into();
    reference["kind"] = Cluster::kind(&()).into();
    let after = match &outcome {
        PassOutcome::Converged(s) => Some(s.phase.as_str()),
        PassOutcome::Progress {
            status: Some(s), ..
        } => Some(s.phase.as_str()),
        _ => None,
    };
    if let Some(after) = after
        && phase_of(&cluster) != Some(after)
    {
        let from = phase_of(&cluster).unwrap_or("New");
        ctx.publish(
            &reference,
            EventType::Normal,
            after,
            format!("phase {from} -> {after}"),
        )
        .await;
    }
    let ready_before = is_ready(&cluster);
    if matches!(outcome, PassOutcome::Converged(_)) && !ready_before {
        ctx.publish(
            &reference,
            EventType::Normal,
            "Ready",
            "every machine as desired".into(),
        )
        .await;
    }
    match &outcome {
        PassOutcome::Blocked(why) => {
            ctx.publish(&reference, EventType::Warning, "Blocked", why.clone())
                .await;
        }
        PassOutcome::Progress { failed: true, .. } => {
            // The provider's error is on the Cluster's conditions; say it as an event too.
            let now = ctx
                .store
                .get_as::<Cluster>(&namespace, &cluster.name_any())
                .await
                .ok()
                .flatten();
            let failures = now
                .and_then(|c| c.status)
                .map_or_else(String::new, |s| failed_conditions(&s.conditions));
            if !failures.is_empty() {
                ctx.publish(&reference, EventType::Warning, "ProviderError", failures)
                    .await;
            }
        }
        _ => {}
    }
    Ok(ctx.next(&key, &outcome))
}

fn is_ready(cluster: &Cluster) -> bool {
    cluster
        .status
        .as_ref()
        .is_some_and(|s| is_condition_true(&s.conditions, "Ready"))
}

/// `Type: message` of each false condition that carries a message, joined.
fn failed_conditions(conditions: &[Condition]) -> String {
    conditions
        .iter()
        .filter(|c| c.status == ConditionStatus::False && !c.message.is_empty())
        .map(|c| format!("{}: {}", c.type_, c.message))
        .collect::<Vec<_>>()
        .join("; ")
}

fn error_policy(cluster: Arc<Cluster>, error: &KubeModeError, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_errors.inc();
    tracing::warn!(cluster = %cluster.name_any(), error = %crate::error::chain(error), "reconcile failed");
    Action::requeue(ctx.policy.error_requeue)
}

/// Builds the reporter of Events.
pub(crate) fn recorder(client: Client, identity: &str) -> Recorder {
    Recorder::new(
        client,
        Reporter {
            controller: CONTROLLER_NAME.into(),
            instance: Some(identity.into()),
        },
    )
}

/// Runs the controller until `shutdown` resolves, then lets running passes finish.
///
/// `reload` carries a message whenever providers were reloaded: every Cluster is reconciled
/// again then.
///
/// A shutdown before the first list of Clusters is in ends the controller at once. kube-runtime
/// holds every reconcile until its store is ready and stops watching when a shutdown starts,
/// so it would wait for a list that never comes; and nothing runs yet that could be cut short.
pub(crate) async fn run(
    streams: SharedStreams,
    workloads: Vec<(
        kube::Api<kube::api::DynamicObject>,
        kube::core::ApiResource,
        kube::runtime::watcher::Config,
    )>,
    concurrency: u16,
    ctx: Arc<Context>,
    mut reload: mpsc::Receiver<()>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let shutdown = shutdown.shared();
    // The caches' watches, shared: one watch per kind feeds both the passes' reads and the
    // triggers, and a trigger comes after the store shows its change.
    let controller = Controller::for_shared_stream(streams.clusters, streams.cluster_store)
        .with_config(Config::default().concurrency(concurrency));
    let reader = controller.store();
    let listed = controller.store();
    let (all_tx, all_rx) = futures::channel::mpsc::channel::<()>(1);
    tokio::spawn(async move {
        let mut all_tx = all_tx;
        while reload.recv().await.is_some() {
            let _ = all_tx.try_send(());
        }
    });
    let node_changes = node_changes(&ctx.executor());
    let gained = crate::shards::gained_clusters(ctx.shards.as_ref(), controller.store());
    // The hosted control planes' workloads the host applied: a rollout's progress passes over
    // their Cluster (its owner) at once.
    let controller = workloads
        .into_iter()
        .fold(controller, |c, (api, resource, config)| {
            c.owns_with(api, resource, config)
        });
    let passes = controller
        .owns_shared_stream(streams.machines)
        .watches_shared_stream(streams.classes, move |class| {
            let name = class.name_any();
            let namespace = class.namespace();
            reader
                .state()
                .into_iter()
                .filter(|c| {
                    let r = &c.spec.topology.class_ref;
                    r.name == name && r.namespace.clone().or_else(|| c.namespace()) == namespace
                })
                .map(|c| ObjectRef::from_obj(c.as_ref()))
                .collect::<Vec<_>>()
        })
        .reconcile_all_on(all_rx)
        .reconcile_on(node_changes)
        .reconcile_on(gained)
        .graceful_shutdown_on(shutdown.clone())
        .run(reconcile, error_policy, ctx);
    let before_first_list = async move {
        shutdown.await;
        if let Some(Ok(())) = listed.wait_until_ready().now_or_never() {
            // Passes may be running: let the graceful shutdown finish them.
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = passes.for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "controller");
            }
        }) => {}
        () = before_first_list => tracing::debug!("stopped before the first list of Clusters"),
    }
}

/// The Clusters whose workload cluster's Nodes changed, from the executor's cluster cache
/// (shared by every executor a reload makes); nothing with workload access off. A change
/// missed by a lagging receiver is left to the Cluster's requeue.
fn node_changes(executor: &Executor) -> BoxStream<'static, ObjectRef<Cluster>> {
    let Some(cache) = executor.cluster_cache() else {
        return futures::stream::empty().boxed();
    };
    futures::stream::unfold(cache.node_changes(), |mut changes| async move {
        loop {
            match changes.recv().await {
                Ok(id) => {
                    let cluster = ObjectRef::new(&id.name).within(&id.namespace);
                    return Some((cluster, changes));
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "workload Node changes missed");
                }
                Err(RecvError::Closed) => return None,
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requeue_follows_the_provider_within_bounds_and_backs_off() {
        let policy = RequeuePolicy::default();
        let bounds = RequeueBounds::CONTROLLER;
        let mut requeue = bounds.start();
        let progress = |requeue: Option<Duration>, failed: bool| PassOutcome::Progress {
            status: None,
            requeue,
            failed,
        };
        let mut action = |outcome: PassOutcome| policy.action(&outcome, &mut requeue, &bounds);
        assert_eq!(
            action(progress(Some(Duration::from_secs(2)), false)),
            Action::requeue(Duration::from_secs(2))
        );
        assert_eq!(
            action(progress(Some(Duration::from_secs(3600)), false)),
            Action::requeue(bounds.max)
        );
        assert_eq!(action(progress(None, false)), Action::requeue(bounds.min));
        // Failures without a hint wait longer each time.
        assert_eq!(
            action(progress(None, true)),
            Action::requeue(bounds.base_backoff)
        );
        assert_eq!(
            action(progress(None, true)),
            Action::requeue(bounds.base_backoff * 2)
        );
        assert_eq!(action(PassOutcome::Gone), Action::await_change());
        assert_eq!(
            action(PassOutcome::Blocked("x".into())),
            Action::requeue(policy.resync)
        );
        // Settling started the backoff over.
        assert_eq!(
            action(progress(None, true)),
            Action::requeue(bounds.base_backoff)
        );
    }

    #[test]
    fn failed_conditions_name_type_and_message() {
        let condition = |type_: &str, status, message: &str| {
            Condition::new(
                type_,
                status,
                "Reason",
                message,
                capw_api::Time(Default::default()),
            )
        };
        let mut cluster: Cluster = serde_json::from_value(json!({
            "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "alpha", "namespace": "default"},
            "spec": {"topology": {"classRef": {"name": "none"}, "version": "v1.34.4"}},
        }))
        .unwrap();
        cluster.status = Some(capw_api::ClusterStatus {
            conditions: vec![
                condition("Ready", ConditionStatus::False, ""),
                condition(
                    "InfrastructureReady",
                    ConditionStatus::False,
                    "simcloud: 503",
                ),
                condition("TopologyReconciled", ConditionStatus::True, "ok"),
            ],
            ..Default::default()
        });
        let conditions = &cluster.status.as_ref().unwrap().conditions;
        assert_eq!(
            failed_conditions(conditions),
            "InfrastructureReady: simcloud: 503"
        );
        assert!(!is_ready(&cluster));
    }
}
