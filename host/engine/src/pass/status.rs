//! The Cluster's status: the core's [`StatusView`], with what the providers said on the way
//! (in-progress reasons, errors) on the conditions they concern.

use capw_api::{
    ApiEndpoint, Cluster, ClusterPhase, ClusterStatus, Condition, ConditionStatus,
    ControlPlaneStatus, LastRemediation, PoolStatus, ReplicaCounters, set_condition,
};
use capw_reconcile::{ClusterPhase as CorePhase, StatusView};

use super::actions::machines::{MACHINES_LISTED_OWN, ORPHANS_DELETED};
use super::convert::api_condition_status;
use super::env::Env;
use super::env::ProviderStatus;
use super::note::ActionNote;
use super::snapshot::Snapshot;
use crate::objects::{CONTROL_PLANE_PROVIDER_PREFIX as PROVIDER_CONDITION_PREFIX, now};
use crate::store::{StoreError, key_of};

/// Condition type saying whether the topology and every provider config are valid.
pub const TOPOLOGY_RECONCILED: &str = "TopologyReconciled";

fn counters(p: &capw_reconcile::PoolStatus) -> ReplicaCounters {
    let i = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    ReplicaCounters {
        desired_replicas: i(p.desired),
        replicas: i(p.replicas),
        ready_replicas: i(p.ready),
        up_to_date_replicas: i(p.up_to_date),
    }
}

/// `seconds` since the Unix epoch as an API time; now when out of range.
fn seconds_time(seconds: u64) -> capw_api::Time {
    let t = i64::try_from(seconds)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok());
    t.map_or_else(now, capw_api::Time)
}

/// Conditions the host sets from its actions' notes, not from the core's status.
const HOST_CONDITIONS: &[&str] = &[ORPHANS_DELETED, MACHINES_LISTED_OWN];

/// Writes the status of `s`'s Cluster: the core's `status` (absent when the cluster is
/// blocked on invalid topology) with `notes` overlaid on the conditions the core reports as
/// false, and what the control-plane provider said in this pass's plan (`provider`; the last
/// answer's stays when the plan was not asked). A write that changes nothing is skipped by the
/// store.
pub(crate) async fn write(
    env: &Env,
    s: &Snapshot,
    status: Option<&StatusView>,
    notes: &[ActionNote],
    provider: Option<&ProviderStatus>,
) -> Result<(), StoreError> {
    let generation = s.cluster.metadata.generation;
    let mut out: ClusterStatus = s.cluster.status.clone().unwrap_or_default();
    let mut set = |c: Condition| {
        set_condition(&mut out.conditions, c.observed(generation));
    };
    match &s.desired {
        Ok(_) => set(Condition::new(
            TOPOLOGY_RECONCILED,
            ConditionStatus::True,
            "Reconciled",
            "",
            now(),
        )),
        Err(problems) => set(Condition::new(
            TOPOLOGY_RECONCILED,
            ConditionStatus::False,
            "InvalidTopology",
            problems.join("; "),
            now(),
        )),
    }
    if let Some(view) = status {
        for c in &view.conditions {
            let mut reason = c.reason.to_string();
            let mut message = c.message.clone();
            if !c.status
                && let Some((_, r, m)) = notes
                    .iter()
                    .filter_map(|n| n.condition.as_ref())
                    .find(|(t, _, _)| *t == c.type_)
            {
                reason = r.clone();
                message = m.clone();
            }
            let st = if c.status {
                ConditionStatus::True
            } else {
                ConditionStatus::False
            };
            set(Condition::new(c.type_, st, reason, message, now()));
        }
        out.phase = match view.phase {
            CorePhase::Pending => ClusterPhase::Pending,
            CorePhase::Provisioning => ClusterPhase::Provisioning,
            CorePhase::Provisioned => ClusterPhase::Provisioned,
            CorePhase::Deleting => ClusterPhase::Deleting,
        };
        out.initialized = view
            .conditions
            .iter()
            .any(|c| c.type_ == "ControlPlaneInitialized" && c.status);
        let kept_version = (out.control_plane.as_ref()).and_then(|cp| cp.version.clone());
        // The version the control plane runs: the provider's word when it gives one (the
        // oldest during an upgrade), else the desired version once a member runs it.
        let version = match provider {
            Some(p) => p
                .version
                .as_ref()
                .map(|v| format!("v{}.{}.{}", v.major, v.minor, v.patch)),
            None => kept_version,
        }
        .or_else(|| {
            Some(s.cluster.spec.topology.version.clone())
                .filter(|_| view.control_plane.up_to_date > 0)
        });
        let kept_remediation =
            (out.control_plane.as_ref()).and_then(|cp| cp.last_remediation.clone());
        let last_remediation = match provider.and_then(|p| p.remediated.as_ref()) {
            Some(r) => Some(LastRemediation {
                machine: r.machine.clone(),
                time: seconds_time(r.at),
                retry_count: i32::try_from(r.retries).unwrap_or(i32::MAX),
            }),
            None => kept_remediation,
        };
        let kept_tolerated = (out.control_plane.as_ref()).and_then(|cp| cp.failures_tolerated);
        let failures_tolerated = match provider {
            Some(p) => p
                .failures_tolerated
                .map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
            None => kept_tolerated,
        };
        out.control_plane = Some(ControlPlaneStatus {
            counters: counters(&view.control_plane),
            version,
            failures_tolerated,
            last_remediation,
        });
        out.set_workers(
            view.workers
                .iter()
                .map(|p| PoolStatus {
                    name: p.name.clone(),
                    counters: counters(p),
                })
                .collect(),
        );
        out.observed_generation = generation;
        // Conditions of the host's own, beside the core's: false with the note that says
        // so, and gone on a pass without one.
        for &type_ in HOST_CONDITIONS {
            let note = notes
                .iter()
                .filter_map(|n| n.condition.as_ref())
                .find(|(t, _, _)| *t == type_);
            match note {
                Some((_, reason, message)) => {
                    let c = Condition::new(
                        type_,
                        ConditionStatus::False,
                        reason.clone(),
                        message.clone(),
                        now(),
                    );
                    set_condition(&mut out.conditions, c.observed(generation));
                }
                None => out.conditions.retain(|c| c.type_ != type_),
            }
        }
    }
    if let Some(p) = provider {
        // The provider's conditions replace its previous ones as a set: one it no longer
        // reports goes; one whose status stays keeps its transition time.
        out.conditions.retain(|c| {
            c.type_
                .strip_prefix(PROVIDER_CONDITION_PREFIX)
                .is_none_or(|type_| p.conditions.iter().any(|r| r.type_ == type_))
        });
        for c in &p.conditions {
            let condition = Condition::new(
                format!("{PROVIDER_CONDITION_PREFIX}{}", c.type_),
                api_condition_status(c.status),
                c.reason.clone(),
                c.message.clone(),
                now(),
            );
            set_condition(&mut out.conditions, condition.observed(generation));
        }
    }
    out.control_plane_endpoint = s.endpoint_text().map(|_| {
        let e = s.endpoint();
        ApiEndpoint {
            host: e.host,
            port: e.port,
        }
    });
    let key = key_of::<Cluster>(&s.namespace, &s.name);
    let value = serde_json::to_value(&out).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let write = env
        .store
        .update(&key, &mut |o| {
            o["status"] = value.clone();
            Ok(())
        })
        .await;
    match write {
        Ok(_) | Err(StoreError::NotFound(_)) => Ok(()),
        Err(e) => Err(e),
    }
}
