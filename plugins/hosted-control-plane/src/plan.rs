//! `plan`: every object of the control plane, every time, and where it stands from what the
//! host tells of the objects it applied.
//!
//! The answer is always `apply-manifests` with the full set: the host applies what the answer
//! holds and prunes what it no longer holds, and `none` or `wait` would leave drift (an object
//! deleted by hand, say) as it is. The status is read from `plan-input.objects`:
//!
//! - `ready` when every object of the answer (the manifests and the certificate Secrets) is
//!   there, ready, and applied with the images it answers, at the desired version; then the
//!   up-to-date replicas are the API servers' count, and `failures-tolerated` is 0: the
//!   single etcd member tolerates no failure;
//! - `version` is the oldest version the Deployments run, read from their images
//!   ([`version::running`]): during an upgrade the old one, `none` while no Deployment is
//!   ready or while what one rolls from is not known;
//! - `initialized`, and the ready replicas the API servers' count, when the API servers'
//!   Deployment is ready (the host tells a Deployment ready once every replica of what it
//!   applied last is updated and available, so the count is all or nothing);
//! - the condition `ObjectsReady` names what is not there, not applied with the answer's
//!   images or not ready yet, and a desired version that waits for a rollout to finish;
//! - the endpoint is the infrastructure's when it gives one, else the address of the API
//!   servers' load balancer once the host tells it (their Service is of type LoadBalancer by
//!   default; until then the API servers' and the controller manager's Deployments are left
//!   out and the endpoint is none), else, for a ClusterIP Service, its name
//!   (`<cluster>-apiserver.<namespace>.svc:6443`). The serving certificate names it, and the
//!   host mints the admin kubeconfig for it.

use capw_sdk::control_plane::{
    ControlPlaneStatus, HostedObject, Plan, PlanInput, SharedDatastore, Step,
};
use capw_sdk::types::{ClusterRef, Condition, ConditionStatus, Endpoint, ErrorCode, ProviderError};
use serde_json::Value;

use crate::certificates;
use crate::config::{
    ApiServerService, DEFAULT_API_SERVER_REPLICAS, Datastore, HostedControlPlaneConfig,
    MAX_API_SERVER_REPLICAS,
};
use crate::manifests::{self, ControlPlane, ManifestError};
use crate::names::{API_SERVER_PORT, NameError, Names};
use crate::version::{self, VersionError};

/// The condition that says which objects are not ready, and which desired version waits for
/// a rollout to finish.
pub const OBJECTS_READY: &str = "ObjectsReady";

/// The objects not ready a condition's message names; it counts the others.
const SHOWN_NOT_READY: usize = 5;

/// The field of the Cluster that asks for tolerated failures, as messages name it.
const FAILURES_TOLERATED_FIELD: &str = "spec.topology.controlPlane.failuresTolerated";

/// Why `plan` refuses an input. Every variant but [`PlanError::Manifest`] and
/// [`VersionError::Unreadable`] is bad input: the same input fails again, so the host reports
/// it and waits for the Cluster to change.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The Cluster's name cannot name the objects.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The desired version cannot be reached from the one applied, or the one applied cannot
    /// be read.
    #[error(transparent)]
    Version(#[from] VersionError),
    /// The Cluster asks for a replica count other than the config's `apiServerReplicas`.
    #[error(
        "replicas {asked} (spec.topology.controlPlane.replicas) and the config's \
         apiServerReplicas {configured} differ: give the API servers' count in one place"
    )]
    ReplicasConflict {
        /// The Cluster's count.
        asked: u32,
        /// The config's.
        configured: u32,
    },
    /// The Cluster asks for more API servers than the provider runs.
    #[error(
        "replicas {replicas} is more than the {MAX_API_SERVER_REPLICAS} API servers a hosted \
         control plane runs"
    )]
    TooManyReplicas {
        /// The Cluster's count.
        replicas: u32,
    },
    /// The Cluster asks for failures tolerated that one etcd member cannot promise.
    #[error(
        "{FAILURES_TOLERATED_FIELD} {failures_tolerated}: the dedicated datastore is one etcd \
         member, which tolerates no failure"
    )]
    FailuresTolerated {
        /// The Cluster's ask.
        failures_tolerated: u32,
    },
    /// A manifest could not be written: a fault of the provider, not of the input.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

impl From<PlanError> for ProviderError {
    fn from(e: PlanError) -> Self {
        match &e {
            PlanError::Manifest(m) => {
                ProviderError::permanent(ErrorCode::Internal, format!("{m}: {}", m.source))
            }
            // A Deployment changed by hand: the plan can go on once it is set back.
            PlanError::Version(VersionError::Unreadable { .. }) => {
                ProviderError::retryable(ErrorCode::Conflict, e.to_string())
            }
            _ => ProviderError::permanent(ErrorCode::InvalidInput, e.to_string()),
        }
    }
}

/// The API servers to run: the config's count, else the Cluster's, else
/// [`DEFAULT_API_SERVER_REPLICAS`].
///
/// # Errors
///
/// [`PlanError::ReplicasConflict`] when both give a count and they differ,
/// [`PlanError::TooManyReplicas`] for a Cluster's count above [`MAX_API_SERVER_REPLICAS`].
pub fn api_server_replicas(
    config: &HostedControlPlaneConfig,
    input: &PlanInput,
) -> Result<u32, PlanError> {
    match (config.api_server_replicas, input.replicas) {
        (Some(configured), 0) => Ok(configured),
        (Some(configured), asked) if asked == configured => Ok(configured),
        (Some(configured), asked) => Err(PlanError::ReplicasConflict { asked, configured }),
        (None, 0) => Ok(DEFAULT_API_SERVER_REPLICAS),
        (None, replicas) if replicas > MAX_API_SERVER_REPLICAS => {
            Err(PlanError::TooManyReplicas { replicas })
        }
        (None, replicas) => Ok(replicas),
    }
}

/// One object the answer holds, as the host tells it back.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    api_version: String,
    kind: String,
    name: String,
    /// Its Pod template's images, for a Deployment or StatefulSet.
    images: Vec<String>,
}

impl Expected {
    fn of(object: &Value) -> Self {
        let text = |pointer: &str| {
            (object.pointer(pointer).and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned()
        };
        Self {
            api_version: text("/apiVersion"),
            kind: text("/kind"),
            name: text("/metadata/name"),
            images: manifests::images(object),
        }
    }

    fn secret(name: String) -> Self {
        Self {
            api_version: "v1".into(),
            kind: "Secret".into(),
            name,
            images: Vec::new(),
        }
    }

    /// How the host tells of it, when it applied it.
    fn observed<'a>(&self, objects: &'a [HostedObject]) -> Option<&'a HostedObject> {
        objects.iter().find(|o| {
            o.api_version == self.api_version && o.kind == self.kind && o.name == self.name
        })
    }

    /// Why it is not as answered and ready, for the condition; `None` when it is.
    fn waiting(&self, objects: &[HostedObject]) -> Option<String> {
        let why = match self.observed(objects) {
            None => "not applied yet".into(),
            Some(o) if o.images != self.images => format!(
                "applied with {}, not yet with {}",
                o.images.join(", "),
                self.images.join(", ")
            ),
            Some(o) if o.ready => return None,
            Some(o) => o.message.clone().unwrap_or_else(|| "not ready".into()),
        };
        Some(format!("{} {}: {why}", self.kind, self.name))
    }
}

/// The answer of `plan` for the Cluster `cluster` and `input`.
///
/// # Guarantees
///
/// - Pure and deterministic: the same cluster, config and input give the same answer.
/// - The step is `apply-manifests` with every object of the control plane; every object and
///   certificate Secret is named with the Cluster's name and a dash first and carries its
///   namespace.
///
/// # Errors
///
/// [`PlanError`] for a Cluster or a change the control plane cannot take.
pub fn plan(
    cluster: &ClusterRef,
    config: &HostedControlPlaneConfig,
    input: &PlanInput,
) -> Result<Plan, PlanError> {
    let names = Names::new(cluster)?;
    let replicas = api_server_replicas(config, input)?;
    if let Some(failures_tolerated) = input.failures_tolerated.filter(|n| *n > 0) {
        return Err(PlanError::FailuresTolerated { failures_tolerated });
    }
    let observed = version::observe(&names, &input.objects)?;
    let target = version::target(&observed, input.version)?;
    let reached = reached_at(&names, config, input);
    let cp = ControlPlane {
        names: &names,
        version: target,
        api_server_replicas: replicas,
        service: config.api_server_service,
        endpoint: reached.as_ref(),
        shared_datastore: matches!(config.datastore, Datastore::Shared { .. }),
    };
    let objects = manifests::objects(&cp);
    let certificates = certificates::secrets(&names, reached.as_ref(), cp.shared_datastore);
    let shared_datastore = match &config.datastore {
        Datastore::Shared { name } => Some(SharedDatastore {
            name: name.clone(),
            secret: names.datastore(),
        }),
        Datastore::Dedicated {} => None,
    };

    let expected = (objects.iter().map(Expected::of))
        .chain(
            certificates
                .iter()
                .map(|s| Expected::secret(s.name.clone())),
        )
        .chain(
            shared_datastore
                .iter()
                .map(|d| Expected::secret(d.secret.clone())),
        );
    let mut waiting: Vec<String> = expected.filter_map(|e| e.waiting(&input.objects)).collect();
    if cp.waits_for_endpoint() {
        waiting.insert(
            0,
            format!(
                "the API servers wait for the address of Service {}'s load balancer",
                names.api_server_service()
            ),
        );
    }
    if target != input.version {
        waiting.insert(
            0,
            format!(
                "version {} waits until the rollout of {target} is done",
                input.version
            ),
        );
    }
    let ready = waiting.is_empty();
    let serving = observed.api_server.is_some_and(|a| a.ready);
    Ok(Plan {
        step: Step::ApplyManifests(manifests::render(&objects)?),
        status: ControlPlaneStatus {
            initialized: serving,
            ready,
            version: version::running(&observed),
            endpoint: endpoint(&names, config, reached),
            conditions: vec![objects_ready(&waiting)],
            failures_tolerated: ready.then_some(0),
        },
        replicas,
        ready_replicas: if serving { replicas } else { 0 },
        up_to_date_replicas: if ready { replicas } else { 0 },
        certificates,
        shared_datastore,
    })
}

/// Where the API servers are reached from outside the management cluster, once known: the
/// infrastructure's endpoint when it gives one, else the first address the load balancer of
/// their Service was given (the host tells it, `hosted-object.addresses`), when that Service
/// is of type LoadBalancer.
fn reached_at(
    names: &Names,
    config: &HostedControlPlaneConfig,
    input: &PlanInput,
) -> Option<Endpoint> {
    if input.endpoint.is_some() {
        return input.endpoint.clone();
    }
    if config.api_server_service != ApiServerService::LoadBalancer {
        return None;
    }
    let service = names.api_server_service();
    let told = (input.objects.iter())
        .find(|o| o.api_version == "v1" && o.kind == "Service" && o.name == service)?;
    Some(Endpoint {
        host: told.addresses.first()?.clone(),
        port: API_SERVER_PORT,
    })
}

/// The control plane's endpoint: where it is reached from outside, else (a ClusterIP Service)
/// the API servers' Service name, from inside the management cluster; none while the load
/// balancer has no address.
fn endpoint(
    names: &Names,
    config: &HostedControlPlaneConfig,
    reached: Option<Endpoint>,
) -> Option<Endpoint> {
    reached.or_else(|| {
        (config.api_server_service == ApiServerService::ClusterIp).then(|| Endpoint {
            host: names.api_server_host(),
            port: API_SERVER_PORT,
        })
    })
}

/// `ObjectsReady`: True once nothing waits, else False naming what waits.
fn objects_ready(waiting: &[String]) -> Condition {
    if waiting.is_empty() {
        return Condition::new(
            OBJECTS_READY,
            ConditionStatus::True,
            "AllReady",
            "every object of the control plane is applied and ready",
        );
    }
    let mut message = waiting
        .iter()
        .take(SHOWN_NOT_READY)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if waiting.len() > SHOWN_NOT_READY {
        message.push_str(&format!("; and {} more", waiting.len() - SHOWN_NOT_READY));
    }
    Condition::new(OBJECTS_READY, ConditionStatus::False, "NotReady", message)
}

#[cfg(test)]
mod tests;
