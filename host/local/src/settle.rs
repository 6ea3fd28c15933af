//! Driving every Cluster of the state file until it settles: what `capw up` does.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use capw_api::Cluster;
use capw_engine::store::{ObjectKey, TypedObjects as _, key_of};
use capw_engine::{EngineError, Executor, PassOutcome, error_chain as chain};
use capw_reconcile::StatusView;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// How often the registry's refreshable providers are looked at while clusters reconcile;
/// each is asked about only once its own refresh interval passed.
const REFRESH_TICK: Duration = Duration::from_secs(1);

/// How one cluster settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterOutcome {
    /// Everything as desired, nothing to do.
    Converged,
    /// Deleted: nothing of it is left.
    Gone,
    /// Only a person can move it on; the message says why.
    Blocked(String),
    /// Still working when the time ran out.
    TimedOut,
    /// The host failed (the store), with the error.
    Failed(String),
}

/// A progress line about one cluster, emitted when its summary changes.
#[derive(Clone, Debug)]
pub struct Progress {
    /// `namespace/name`.
    pub cluster: String,
    /// What it is doing, for people.
    pub line: String,
}

/// How every cluster settled, by `namespace/name`.
#[derive(Clone, Debug, Default)]
pub struct SettleReport {
    pub outcomes: BTreeMap<String, ClusterOutcome>,
}

impl SettleReport {
    /// Every cluster converged or is gone.
    pub fn all_settled(&self) -> bool {
        self.outcomes
            .values()
            .all(|o| matches!(o, ClusterOutcome::Converged | ClusterOutcome::Gone))
    }
}

/// Reconciles every Cluster, each in its own task, until each one converged, is gone or
/// is blocked, or `timeout` passed. `progress` hears a line whenever a cluster's summary
/// changes.
///
/// # Guarantees
///
/// - A slow or hanging provider call for one cluster never delays another: clusters run
///   in separate tasks, and each call is bounded by its provider's deadline.
/// - A converged cluster's pass writes nothing (its status is already what it computes).
///
/// # Errors
///
/// [`EngineError`] when the Clusters cannot be listed.
pub async fn reconcile_until_settled(
    executor: &Executor,
    timeout: Duration,
    progress: Arc<dyn Fn(Progress) + Send + Sync>,
) -> Result<SettleReport, EngineError> {
    let deadline = Instant::now() + timeout;
    let refresher = executor
        .registry()
        .refreshable(executor.store().as_ref())
        .await?
        .then(|| tokio::spawn(refresh_providers(executor.clone())));
    let mut tasks = Vec::new();
    let turns = Arc::new(Semaphore::new(
        executor.config().max_concurrent_passes.max(1),
    ));
    for cluster in executor.store().list_as::<Cluster>(None).await? {
        let key = key_of::<Cluster>(
            cluster.metadata.namespace.as_deref().unwrap_or_default(),
            cluster.metadata.name.as_deref().unwrap_or_default(),
        );
        let executor = executor.clone();
        let progress = progress.clone();
        let label = format!("{}/{}", key.namespace, key.name);
        let task = tokio::spawn(drive(executor, key, deadline, turns.clone(), progress));
        tasks.push((label, task));
    }
    let mut report = SettleReport::default();
    for (label, task) in tasks {
        let outcome = task
            .await
            .unwrap_or_else(|e| ClusterOutcome::Failed(format!("task lost: {e}")));
        report.outcomes.insert(label, outcome);
    }
    if let Some(refresher) = refresher {
        refresher.abort();
    }
    Ok(report)
}

/// Swaps in providers whose OCI reference moved, until aborted; calls in flight finish on
/// the component they started with.
async fn refresh_providers(executor: Executor) {
    loop {
        tokio::time::sleep(REFRESH_TICK).await;
        if let Err(e) = executor.registry().refresh(executor.store().as_ref()).await {
            tracing::warn!(error = %chain(&e), "provider refresh failed");
        }
    }
}

/// Passes over one cluster until it settles or `deadline`, each pass on a turn of `turns`.
async fn drive(
    executor: Executor,
    key: ObjectKey,
    deadline: Instant,
    turns: Arc<Semaphore>,
    progress: Arc<dyn Fn(Progress) + Send + Sync>,
) -> ClusterOutcome {
    let cluster = format!("{}/{}", key.namespace, key.name);
    let mut last = String::new();
    let mut say = |line: String| {
        if line != last {
            progress(Progress {
                cluster: cluster.clone(),
                line: line.clone(),
            });
            last = line;
        }
    };
    let mut requeue = executor.config().requeue.start();
    loop {
        let turn = async {
            let _turn = turns.acquire().await.expect("the turns are never closed");
            executor.reconcile(&key).await
        };
        let outcome = match tokio::time::timeout_at(deadline, turn).await {
            Err(_) => return ClusterOutcome::TimedOut,
            Ok(Err(e)) => return ClusterOutcome::Failed(chain(&e)),
            Ok(Ok(outcome)) => outcome,
        };
        let wait = match outcome {
            PassOutcome::Gone => {
                say("deleted".into());
                return ClusterOutcome::Gone;
            }
            PassOutcome::Converged(status) => {
                say(summary(&status));
                return ClusterOutcome::Converged;
            }
            PassOutcome::Blocked(why) => {
                say(format!("blocked: {why}"));
                return ClusterOutcome::Blocked(why);
            }
            PassOutcome::Progress {
                status,
                requeue: hint,
                failed,
            } => {
                if let Some(status) = &status {
                    say(summary(status));
                }
                requeue.progress(status.as_ref(), hint, failed)
            }
        };
        if Instant::now() + wait >= deadline {
            return ClusterOutcome::TimedOut;
        }
        tokio::time::sleep(wait).await;
    }
}

/// One line about a cluster: phase, control plane and workers.
fn summary(s: &StatusView) -> String {
    let cp = &s.control_plane;
    let workers: Vec<String> = s
        .workers
        .iter()
        .map(|p| format!("{} {}/{}", p.name, p.ready, p.desired))
        .collect();
    let waiting: Vec<String> = s
        .conditions
        .iter()
        .filter(|c| !c.status && c.type_ != "Ready")
        .map(|c| c.type_.to_string())
        .collect();
    let mut line = format!(
        "{} control-plane {}/{}",
        s.phase.as_str(),
        cp.ready,
        cp.desired
    );
    if !workers.is_empty() {
        line.push_str(&format!(", workers {}", workers.join(", ")));
    }
    if !waiting.is_empty() {
        line.push_str(&format!(" (waiting: {})", waiting.join(", ")));
    }
    line
}
