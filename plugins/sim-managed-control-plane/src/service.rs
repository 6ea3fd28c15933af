//! `reconcile-control-plane` and `delete-control-plane`: simcloud's managed control plane for
//! the cluster.
//!
//! A cluster has at most one. It is looked up by cluster first and created only when absent,
//! with the call's idempotency key (which the host keeps for the cluster) as client token, so
//! a create whose answer was lost is answered, not repeated; a create that meets
//! `409 conflict` (the cluster got one meanwhile) adopts the one that exists. [`assess`] says
//! what the service's answer means; this module only talks to simcloud.

use capw_sdk::Context;
use capw_sdk::control_plane::{PlanInput, ReconcileOutput};
use capw_sdk::log;
use capw_sdk::types::{Deletion, ErrorCode, InProgress, ProviderError};
use capw_sim_client::{ClientError, naming, query};

use crate::access::{self, BadJoinToken};
use crate::api::{
    self, ControlPlaneState, CreateManagedControlPlane, ManagedControlPlane,
    ManagedControlPlaneCredentials, ManagedControlPlaneList, UpdateManagedControlPlane, codes,
};
use crate::assess::{self, AssessError};
use crate::config::ManagedControlPlaneConfig;
use crate::{Client, version};

/// Why the managed control plane could not be reconciled or deleted.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A simcloud request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The desired state cannot be reached, or simcloud's answer cannot be read.
    #[error(transparent)]
    Assess(#[from] AssessError),
    /// The service's credentials carry a token this provider cannot split.
    #[error(transparent)]
    JoinToken(#[from] BadJoinToken),
    /// A create said the cluster has a managed control plane, and the lookup then found none
    /// (it was deleted in between). Retryable: the next call creates it.
    #[error(
        "simcloud refused a second managed control plane for cluster `{cluster}` but lists none"
    )]
    Vanished {
        /// The simcloud cluster name.
        cluster: String,
        /// simcloud's refusal.
        #[source]
        source: Box<ClientError>,
    },
}

/// Refusals of the input are permanent `invalid-input`; unreadable service answers and a
/// vanished control plane retryable; client errors as [`ClientError`] says.
impl From<ServiceError> for ProviderError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Client(e) => e.into(),
            ServiceError::Assess(e @ AssessError::BadServiceVersion { .. }) => {
                ProviderError::retryable(ErrorCode::Internal, e.to_string())
            }
            ServiceError::Assess(e) => {
                ProviderError::permanent(ErrorCode::InvalidInput, e.to_string())
            }
            e @ ServiceError::JoinToken(_) => {
                ProviderError::retryable(ErrorCode::Internal, e.to_string())
            }
            e @ ServiceError::Vanished { .. } => {
                ProviderError::retryable(ErrorCode::Conflict, e.to_string())
            }
        }
    }
}

/// Creates the cluster's managed control plane at the input's version if it has none, starts
/// the next update when it is ready below the desired version, and answers where it stands,
/// with its credentials while it serves (`ready` or `updating`). A `failed` one is answered
/// as it is (step `none`, not ready, [`assess`] says why) and asked for nothing.
///
/// # Errors
///
/// [`ServiceError`]: a failed request, a refused desired state, an unreadable answer.
pub fn reconcile(
    client: &Client<'_>,
    ctx: &Context<ManagedControlPlaneConfig>,
    input: &PlanInput,
) -> Result<ReconcileOutput, ServiceError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    let mut cp = match find(client, &cluster)? {
        Some(cp) => cp,
        None => {
            // Refused before anything is created: the service's promise would be the config's.
            assess::check_failures_tolerated(
                input.failures_tolerated,
                ctx.config.failures_tolerated(),
                ctx.config.replicas,
            )?;
            create(client, ctx, &cluster, input)?
        }
    };
    let mut assessment = assess::assess(&cp, input)?;
    if let Some(next) = assessment.update {
        let body = UpdateManagedControlPlane {
            version: Some(version::spell(next)),
            replicas: None,
        };
        cp = client.patch(&api::managed_control_plane(&cp.id), &body)?;
        log::info(
            "managed control plane update requested",
            &[
                ("cluster", &cluster),
                ("id", &cp.id),
                ("version", &next.to_string()),
            ],
        );
        assessment = assess::assess(&cp, input)?;
    }
    let access = match cp.state {
        // A failed service serves nothing: the access the host holds from before (if it ever
        // served) is left as it is, and nothing new is handed out.
        ControlPlaneState::Creating | ControlPlaneState::Failed => None,
        ControlPlaneState::Ready | ControlPlaneState::Updating => credentials(client, &cp.id)?
            .map(access::access)
            .transpose()?,
    };
    Ok(ReconcileOutput {
        plan: assessment.plan,
        access,
    })
}

/// Deletes the cluster's managed control plane, whatever its state (`failed` included):
/// `deleted` once simcloud lists none for the cluster (also when there was none).
///
/// # Errors
///
/// [`ServiceError::Client`] when a request fails.
pub fn delete(
    client: &Client<'_>,
    ctx: &Context<ManagedControlPlaneConfig>,
) -> Result<Deletion, ServiceError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    let listed = list(client, &cluster)?;
    if listed.is_empty() {
        return Ok(Deletion::Deleted);
    }
    for cp in &listed {
        client.delete(&api::managed_control_plane(&cp.id))?;
        log::info(
            "managed control plane deleted",
            &[("cluster", &cluster), ("id", &cp.id)],
        );
    }
    let left = list(client, &cluster)?;
    Ok(match left.first() {
        None => Deletion::Deleted,
        Some(cp) => Deletion::InProgress(
            InProgress::new(
                "DeletingService",
                format!("simcloud still lists managed control plane {}", cp.id),
            )
            .requeue_after(assess::UPDATING_POLL),
        ),
    })
}

fn list(client: &Client<'_>, cluster: &str) -> Result<Vec<ManagedControlPlane>, ClientError> {
    let path = format!(
        "{}{}",
        api::MANAGED_CONTROL_PLANES,
        query(&[("cluster", cluster)])
    );
    let list: ManagedControlPlaneList = client.get(&path)?;
    Ok(list.managed_control_planes)
}

fn find(client: &Client<'_>, cluster: &str) -> Result<Option<ManagedControlPlane>, ClientError> {
    Ok(list(client, cluster)?.into_iter().next())
}

/// Creates it with the call's idempotency key as client token, or adopts the one a `409
/// conflict` says the cluster has.
fn create(
    client: &Client<'_>,
    ctx: &Context<ManagedControlPlaneConfig>,
    cluster: &str,
    input: &PlanInput,
) -> Result<ManagedControlPlane, ServiceError> {
    let body = CreateManagedControlPlane {
        client_token: Some(ctx.idempotency_key().to_owned()),
        cluster: cluster.to_owned(),
        name: cluster.to_owned(),
        version: version::spell(input.version),
        replicas: ctx.config.replicas,
    };
    match client.post(api::MANAGED_CONTROL_PLANES, &body) {
        Ok(created) => {
            log::info(
                "managed control plane created",
                &[
                    ("cluster", cluster),
                    ("version", &input.version.to_string()),
                ],
            );
            Ok(created)
        }
        Err(e) if e.is_api(409, codes::CONFLICT) => {
            find(client, cluster)?.ok_or_else(|| ServiceError::Vanished {
                cluster: cluster.to_owned(),
                source: Box::new(e),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Its credentials; `None` when simcloud says it is not ready for them yet (`409
/// failed_precondition`: it went back to creating, or a race with its state).
fn credentials(
    client: &Client<'_>,
    id: &str,
) -> Result<Option<ManagedControlPlaneCredentials>, ClientError> {
    match client.get(&api::credentials(id)) {
        Ok(credentials) => Ok(Some(credentials)),
        Err(e) if e.is_api(409, codes::FAILED_PRECONDITION) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_permanent_and_unreadable_answers_retryable() {
        let refused = ProviderError::from(ServiceError::from(AssessError::FailuresTolerated {
            asked: 2,
            promised: 1,
            replicas: 3,
        }));
        assert_eq!(
            (refused.code, refused.retryable),
            (ErrorCode::InvalidInput, false)
        );
        let unreadable = ProviderError::from(ServiceError::from(AssessError::BadServiceVersion {
            id: "mcp-1".into(),
            version: "latest".into(),
        }));
        assert_eq!(
            (unreadable.code, unreadable.retryable),
            (ErrorCode::Internal, true)
        );
        let token = ProviderError::from(ServiceError::from(BadJoinToken));
        assert!(token.retryable);
        let vanished = ProviderError::from(ServiceError::Vanished {
            cluster: "c1".into(),
            source: Box::new(ClientError::NoTimeLeft {
                request: "POST /v1/managed-control-planes".into(),
            }),
        });
        assert_eq!(
            (vanished.code, vanished.retryable),
            (ErrorCode::Conflict, true)
        );
    }
}
