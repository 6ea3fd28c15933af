//! The cluster's infrastructure: `ReconcileInfrastructure` records the provider's answer
//! (endpoint, failure domains) in the `ClusterInfrastructure` object, `DeleteInfrastructure`
//! calls `delete-cluster` until it is gone.

use std::sync::Arc;

use capw_runtime::infrastructure::ClusterState;
use capw_runtime::types::{CallContext, Deletion};

use crate::objects::{InfrastructureRecord, applied};
use crate::pass::env::{Env, context};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::providers::LoadedProvider;

const INFRA: &str = "InfrastructureReady";

/// The infrastructure provider and the context of a cluster-wide call to it; a note (done when
/// the cluster has no valid desired state, so nothing to call) otherwise.
fn infra_call(env: &Env, s: &Snapshot) -> Result<(Arc<LoadedProvider>, CallContext), ActionNote> {
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let provider = env.provider(&desired.infrastructure, INFRA)?;
    let ctx = context(s, &provider, &desired.infrastructure.config, &infra_key(s));
    Ok((provider, ctx))
}

fn infra_key(s: &Snapshot) -> String {
    format!("{}-infra", s.uid)
}

async fn write_record(
    env: &Env,
    s: &Snapshot,
    record: &InfrastructureRecord,
) -> Result<(), ActionNote> {
    env.store_infrastructure_record(s, record)
        .await
        .map_err(|e| Env::store_failed(INFRA, &e))
}

/// `ReconcileInfrastructure`: record the provider's answer.
pub(crate) async fn reconcile_infrastructure(env: &Env, s: &Snapshot) -> ActionNote {
    let (provider, ctx) = match infra_call(env, s) {
        Ok(call) => call,
        Err(note) => return note,
    };
    let mut record = InfrastructureRecord {
        cluster_uid: s.uid.clone(),
        applied: s.desired.as_ref().ok().and_then(applied),
        // What a service's control plane said is its own record's, kept across.
        control_plane: s
            .infrastructure
            .as_ref()
            .and_then(|r| r.control_plane.clone()),
        ..InfrastructureRecord::default()
    };
    let note = match provider.provider.reconcile_cluster(&ctx).await {
        Ok(ClusterState::Ready(infra)) => {
            record.state = "Ready".into();
            // None: the infrastructure makes no endpoint (a service runs the control plane and
            // reports its own).
            record.endpoint = (infra.control_plane_endpoint).map(|e| (e.host, e.port));
            record.failure_domains = infra
                .failure_domains
                .iter()
                .map(|d| d.name.clone())
                .collect();
            record.control_plane_domains = (infra.failure_domains.iter())
                .filter(|d| d.control_plane)
                .map(|d| d.name.clone())
                .collect();
            if record.endpoint.is_none() && !s.service_control_plane() {
                // Not ready for this cluster: its control plane's machines need an endpoint.
                record.state = "NoEndpoint".into();
                ActionNote::host_failed(
                    INFRA,
                    "NoEndpoint",
                    format!(
                        "the infrastructure provider {} made no control-plane endpoint, which a \
                         control plane on machines needs (its config may say the control plane \
                         is a service's)",
                        provider.name
                    ),
                )
            } else {
                ActionNote::done()
            }
        }
        Ok(ClusterState::InProgress(p)) => {
            record.state = "InProgress".into();
            ActionNote::in_progress(INFRA, &p)
        }
        Err(e) => return ActionNote::failed(INFRA, &e),
    };
    match write_record(env, s, &record).await {
        Ok(()) => note,
        Err(failed) => failed,
    }
}

/// `DeleteInfrastructure`: call `delete-cluster` and record `Deleted` once it is gone.
pub(crate) async fn delete_infrastructure(env: &Env, s: &Snapshot) -> ActionNote {
    let (provider, ctx) = match infra_call(env, s) {
        Ok(call) => call,
        Err(note) => return note,
    };
    match provider.provider.delete_cluster(&ctx).await {
        Ok(Deletion::Deleted) => {
            // The applied state stays: the passes that finish the deletion may still need it.
            let record = InfrastructureRecord {
                state: "Deleted".into(),
                cluster_uid: s.uid.clone(),
                applied: s.desired.as_ref().ok().and_then(applied),
                control_plane: s
                    .infrastructure
                    .as_ref()
                    .and_then(|r| r.control_plane.clone()),
                ..InfrastructureRecord::default()
            };
            write_record(env, s, &record)
                .await
                .err()
                .unwrap_or_else(ActionNote::done)
        }
        Ok(Deletion::InProgress(p)) => ActionNote::in_progress(INFRA, &p),
        Err(e) => ActionNote::failed(INFRA, &e),
    }
}
