//! Workload cluster access in a pass: what the [`ClusterCache`] sees of the cluster, as the
//! core's [`WorkloadView`] (the `nodes` action writes each Machine's node reference and
//! `NodeHealthy` from it).

use std::time::Duration;

use capw_reconcile::{NodeCondition, NodeConditionSince, NodeView, WorkloadView};
use capw_text::error_chain as chain;
use capw_workload::{ApiAvailability, ClusterCache, ReadyStatus, WorkloadObservation};

use super::note::ActionNote;
use super::snapshot::Snapshot;

/// Slack over the cache's own bounds before an observation is given up: the cache bounds
/// itself; this only guards against a bound it did not foresee.
const OBSERVE_SLACK: Duration = Duration::from_secs(2);

/// The workload cluster of `s` as the core sees it, and a note asking for a later pass when
/// it could not be reached. [`WorkloadView::Off`] without a cache; nothing is observed of a
/// cluster being deleted.
pub(crate) async fn observe(
    cache: Option<&ClusterCache>,
    s: &Snapshot,
) -> (WorkloadView, Option<ActionNote>) {
    let Some(cache) = cache else {
        return (WorkloadView::Off, None);
    };
    if s.deleting() {
        return (WorkloadView::Off, None);
    }
    let Some(kubeconfig) = &s.kubeconfig else {
        let message = "waiting for the kubeconfig Secret".to_string();
        return (WorkloadView::NotConnected { message }, None);
    };
    let config = cache.config();
    let bound = config.connect_timeout + config.probe_timeout + config.sync_timeout + OBSERVE_SLACK;
    let retry = Some(config.max_retry);
    let observed =
        tokio::time::timeout(bound, cache.observe(&s.cluster_id(), &kubeconfig.value)).await;
    match observed {
        Ok(Ok(observation)) => from_observation(observation),
        Ok(Err(e)) => {
            let message = format!("{}: {}", kubeconfig.endpoint, chain(&e));
            (
                WorkloadView::NotConnected { message },
                Some(ActionNote::retry_later(retry)),
            )
        }
        Err(_) => {
            let message = format!("{}: no answer within {bound:?}", kubeconfig.endpoint);
            (
                WorkloadView::Unreachable { message },
                Some(ActionNote::retry_later(retry)),
            )
        }
    }
}

/// A Node condition's status as the core spells it: `None` for `Unknown`.
fn status_of(status: ReadyStatus) -> Option<bool> {
    match status {
        ReadyStatus::True => Some(true),
        ReadyStatus::False => Some(false),
        ReadyStatus::Unknown => None,
    }
}

fn from_observation(o: WorkloadObservation) -> (WorkloadView, Option<ActionNote>) {
    match o.api {
        ApiAvailability::Unreachable { error } => (
            WorkloadView::Unreachable {
                message: format!("{}: {error}", o.server),
            },
            Some(ActionNote::retry_later(o.retry_after)),
        ),
        ApiAvailability::Available => {
            let nodes = o.nodes.map(|nodes| {
                nodes
                    .into_iter()
                    .map(|n| NodeView {
                        name: n.name,
                        provider_id: n.provider_id,
                        ready: n.ready.map(|r| NodeCondition {
                            status: status_of(r.status),
                            reason: r.reason,
                            message: r.message,
                        }),
                        conditions: (n.conditions.into_iter())
                            .map(|c| NodeConditionSince {
                                type_: c.type_,
                                status: status_of(c.status),
                                since: c.since.and_then(|s| u64::try_from(s).ok()),
                            })
                            .collect(),
                    })
                    .collect()
            });
            (WorkloadView::Available { nodes }, None)
        }
    }
}
