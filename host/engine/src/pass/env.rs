//! What every action is given: the [`Env`] (the store, the providers, the settings, the
//! workload cluster cache) and the helpers more than one action needs, written once here so
//! that no action imports another.

use std::sync::Arc;
use std::time::Duration;

use capw_api::{Condition, ConditionStatus, Machine, MachineStatus, set_condition};
use capw_runtime::types::{CallContext, ClusterRef};
use capw_text::error_chain as chain;
use capw_topology::ProviderConfig;
use serde_json::Value;

use super::note::ActionNote;
use super::snapshot::Snapshot;
use crate::config::EngineConfig;
use crate::objects::now;
use crate::providers::{LoadedProvider, ProviderRegistry};
use crate::store::{ObjectKey, ObjectStore, StoreError, TypedObjects as _, key_of};

/// How long a deleted machine's Node deletion is tried before the machine goes without it
/// (Cluster API's `nodeDeletionTimeout` defaults to 10 s as well).
const NODE_DELETION_TIMEOUT: Duration = Duration::from_secs(10);

/// What every action needs: the store, the providers, the settings.
#[derive(Clone)]
pub(crate) struct Env {
    pub store: Arc<dyn ObjectStore>,
    pub registry: Arc<ProviderRegistry>,
    pub config: EngineConfig,
    /// The clients of workload clusters; `None` when access is off.
    pub cluster_cache: Option<Arc<capw_workload::ClusterCache>>,
}

impl Env {
    /// The loaded provider `config` names, or a note saying why there is none.
    pub fn provider(
        &self,
        config: &ProviderConfig,
        condition: &'static str,
    ) -> Result<Arc<LoadedProvider>, ActionNote> {
        self.registry.get(&config.provider).ok_or_else(|| {
            ActionNote::host_failed(
                condition,
                "ProviderNotLoaded",
                self.registry.why_missing(&config.provider),
            )
        })
    }

    /// Whether the cluster's control-plane provider declares the hosted shape (contract 0.3):
    /// its control plane's objects are the host's to apply to the management cluster.
    pub fn hosted(&self, s: &Snapshot) -> bool {
        let Ok(desired) = &s.desired else {
            return false;
        };
        self.registry
            .get(&desired.control_plane.config.provider)
            .is_some_and(|p| {
                p.provider.info().metadata.capabilities.control_plane_shape
                    == Some(capw_runtime::metadata::ControlPlaneShape::Hosted)
            })
    }

    /// Drops `finalizer` from the object at `key` (which removes it when it is being deleted
    /// and that was its last one); a missing object is fine.
    pub async fn remove_finalizer(
        &self,
        key: &ObjectKey,
        finalizer: &str,
    ) -> Result<(), StoreError> {
        let result = self
            .store
            .update(key, &mut |o| {
                if let Some(list) = o
                    .pointer_mut("/metadata/finalizers")
                    .and_then(|f| f.as_array_mut())
                {
                    list.retain(|f| f.as_str() != Some(finalizer));
                }
                Ok(())
            })
            .await;
        match result {
            Ok(_) | Err(StoreError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Once machine `m`'s infrastructure is gone, deletes its Node from the workload cluster, as
    /// Cluster API's Machine controller does, so that the Nodes follow the Machines.
    ///
    /// # Guarantees
    ///
    /// Best effort and bounded: a cluster being deleted (its API goes with it), a machine that
    /// never got a Node, access off, or a workload API that does not delete it within
    /// [`NODE_DELETION_TIMEOUT`] leaves the Node and never holds up the machine's deletion; the failure is logged with
    /// the endpoint and the Node's name only.
    pub async fn delete_node(&self, s: &Snapshot, m: &capw_api::Machine) {
        let (Some(cache), Some(kubeconfig)) = (self.cluster_cache.as_deref(), &s.kubeconfig) else {
            return;
        };
        let Some(node) = m.status.as_ref().and_then(|st| st.node_ref.as_ref()) else {
            return;
        };
        if s.deleting() {
            return;
        }
        // Retried within the bound: while a control-plane machine goes, the load balancer may
        // still send a request to its API server for a second.
        let bound = NODE_DELETION_TIMEOUT;
        let deleted = tokio::time::timeout(bound, async {
            loop {
                match cache
                    .delete_node(&s.cluster_id(), &kubeconfig.value, &node.name)
                    .await
                {
                    Ok(()) => return Ok(()),
                    Err(e @ capw_workload::ClusterCacheError::DeleteNode { .. }) => {
                        tracing::debug!(cluster = %s.name, node = %node.name, error = %chain(&e), "deleting the Node again");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
        match deleted {
            Ok(Ok(())) => {
                tracing::info!(cluster = %s.name, node = %node.name, "deleted the machine's Node");
            }
            Ok(Err(e)) => tracing::warn!(
                cluster = %s.name,
                node = %node.name,
                endpoint = %kubeconfig.endpoint,
                error = %chain(&e),
                "the machine's Node stays in the workload cluster",
            ),
            Err(_) => tracing::warn!(
                cluster = %s.name,
                node = %node.name,
                endpoint = %kubeconfig.endpoint,
                "the machine's Node stays in the workload cluster: no answer within {bound:?}",
            ),
        }
    }

    /// Writes `change` into the status of the cluster's Machine `name`, through the store's
    /// update (a conflict retries `change` on what is stored, so condition transition times
    /// are kept).
    pub async fn write_machine_status(
        &self,
        s: &Snapshot,
        name: &str,
        change: impl Fn(&mut MachineStatus) + Send + Sync,
    ) -> Result<(), StoreError> {
        let key = key_of::<Machine>(&s.namespace, name);
        self.store
            .update(&key, &mut |object| {
                let current = object.get("status").cloned().unwrap_or_default();
                let mut status: MachineStatus = serde_json::from_value(current).unwrap_or_default();
                change(&mut status);
                object["status"] =
                    serde_json::to_value(status).map_err(|e| StoreError::Invalid(e.to_string()))?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// Sets Machine `m`'s condition `type_` unless it already says the same (status, reason,
    /// message); a Machine deleted meanwhile is left alone. A failure is a note on `type_`.
    pub async fn write_machine_condition(
        &self,
        s: &Snapshot,
        m: &Machine,
        type_: &'static str,
        (status, reason, message): (ConditionStatus, &str, String),
    ) -> Result<(), ActionNote> {
        let same = machine_condition(m, type_)
            .is_some_and(|o| o.status == status && o.reason == reason && o.message == message);
        if same {
            return Ok(());
        }
        let c = Condition::new(type_, status, reason, message, now());
        let name = m.metadata.name.clone().unwrap_or_default();
        let written = self
            .write_machine_status(s, &name, |st| {
                set_condition(&mut st.conditions, c.clone());
            })
            .await;
        match written {
            Ok(()) | Err(StoreError::NotFound(_)) => Ok(()),
            Err(e) => Err(Env::store_failed(type_, &e)),
        }
    }

    /// Stores the infrastructure record of the cluster of `s`: the object, then its status.
    pub async fn store_infrastructure_record(
        &self,
        s: &Snapshot,
        record: &crate::objects::InfrastructureRecord,
    ) -> Result<(), StoreError> {
        self.store
            .apply_as(&crate::objects::infrastructure_object(
                &s.namespace,
                &s.name,
            ))
            .await?;
        let key = key_of::<capw_api::ClusterInfrastructure>(&s.namespace, &s.name);
        let status = serde_json::to_value(record).unwrap_or_default();
        self.store.update_status(&key, status, None).await?;
        Ok(())
    }

    /// Records what the provider said of the service's control plane in the cluster's
    /// `ClusterInfrastructure` object, when it changed.
    pub async fn record_service(
        &self,
        s: &Snapshot,
        service: capw_api::ServiceControlPlane,
    ) -> Result<(), ActionNote> {
        let mut record =
            s.infrastructure
                .clone()
                .unwrap_or_else(|| crate::objects::InfrastructureRecord {
                    cluster_uid: s.uid.clone(),
                    ..crate::objects::InfrastructureRecord::default()
                });
        if record.control_plane.as_ref() == Some(&service) {
            return Ok(());
        }
        record.control_plane = Some(service);
        self.store_infrastructure_record(s, &record)
            .await
            .map_err(|e| Env::store_failed("ControlPlaneReady", &e))
    }

    /// Records the control plane of `s` deleted, keeping what was last said of it; a note of
    /// the failure when the record cannot be written.
    pub async fn record_service_deleted(&self, s: &Snapshot) -> ActionNote {
        let kept = (s.infrastructure.as_ref()).and_then(|r| r.control_plane.clone());
        let record = capw_api::ServiceControlPlane {
            state: "Deleted".into(),
            ..kept.unwrap_or_default()
        };
        self.record_service(s, record)
            .await
            .err()
            .unwrap_or_else(ActionNote::done)
    }

    /// A store failure as a note on `condition`.
    pub fn store_failed(condition: &'static str, e: &StoreError) -> ActionNote {
        ActionNote::host_failed(condition, "StoreError", chain(e))
    }
}

/// Machine `m`'s condition of `type_`, when it has one.
pub(crate) fn machine_condition<'m>(m: &'m Machine, type_: &str) -> Option<&'m Condition> {
    let conditions = m.status.as_ref().map(|st| st.conditions.as_slice());
    conditions
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == type_)
}

/// The bootstrap config that makes the cluster's secrets: the control plane's, else the
/// first pool's.
pub(crate) fn secrets_bootstrap(d: &capw_topology::DesiredState) -> Option<&ProviderConfig> {
    (d.control_plane.bootstrap.as_ref()).or_else(|| d.pools.first().map(|p| &p.bootstrap))
}

/// The bootstrap provider that makes the cluster's secrets and kubeconfig, and the context of
/// a cluster-wide call to it keyed `<uid>-<key>`; a note (done when the cluster has no valid
/// desired state; a host failure on `condition` when the class names no bootstrap provider)
/// otherwise.
pub(crate) fn bootstrap_call(
    env: &Env,
    s: &Snapshot,
    condition: &'static str,
    key: &str,
) -> Result<(Arc<LoadedProvider>, CallContext), ActionNote> {
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let Some(config) = secrets_bootstrap(desired) else {
        return Err(ActionNote::host_failed(
            condition,
            "NoBootstrapProvider",
            "the class names no bootstrap provider".into(),
        ));
    };
    let provider = env.provider(config, condition)?;
    let ctx = context(s, &provider, &config.config, &format!("{}-{key}", s.uid));
    Ok((provider, ctx))
}

/// The context of a call about `snapshot`'s cluster with `config` and `key`; its deadline is
/// the provider's call timeout.
pub(crate) fn context(
    snapshot: &Snapshot,
    provider: &LoadedProvider,
    config: &serde_json::Map<String, Value>,
    key: &str,
) -> CallContext {
    let timeout = provider.provider.grants().limits.call_timeout;
    CallContext {
        cluster: ClusterRef {
            namespace: snapshot.namespace.clone(),
            name: snapshot.name.clone(),
            uid: snapshot.uid.clone(),
        },
        config: Value::Object(config.clone()).to_string(),
        idempotency_key: key.into(),
        deadline_ms: u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX),
    }
}

/// What the provider said of the control plane beside its step, for the Cluster's status.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProviderStatus {
    /// The control plane serves requests, as the provider sees it (`None` from 0.1).
    pub ready: Option<bool>,
    /// The version it runs, when the provider knows it; during an upgrade, the oldest.
    pub version: Option<capw_runtime::types::KubernetesVersion>,
    /// The provider's conditions, unprefixed.
    pub conditions: Vec<capw_runtime::types::Condition>,
    /// How many members may fail with the control plane still serving, as the provider says.
    pub failures_tolerated: Option<u32>,
    /// The unhealthy member this plan takes out to replace it, as the Cluster records it; set
    /// by the pass when the step removes a member it was told to replace.
    pub remediated: Option<capw_reconcile::LastRemediation>,
}

/// The desired control plane of `s`, its loaded provider and its version; a note (done when
/// the cluster has no valid desired state) otherwise.
pub(crate) fn desired_control_plane<'s>(
    env: &Env,
    s: &'s Snapshot,
    cond: &'static str,
) -> Result<
    (
        &'s capw_topology::DesiredState,
        std::sync::Arc<crate::providers::LoadedProvider>,
        capw_reconcile::Version,
    ),
    ActionNote,
> {
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let cp = &desired.control_plane;
    let provider = env.provider(&cp.config, cond)?;
    let version = super::convert::core_version(&cp.version).ok_or_else(|| {
        ActionNote::host_failed(cond, "InvalidVersion", format!("version {:?}", cp.version))
    })?;
    Ok((desired, provider, version))
}

/// Where a control plane without machines stands, as a pass found it: what the
/// `ClusterInfrastructure` object records of it, the core's view and what the Cluster shows.
pub(crate) struct ServiceOutcome {
    /// What the record keeps (`status.controlPlane`).
    pub record: capw_api::ServiceControlPlane,
    /// What the core decides on.
    pub view: capw_reconcile::ServiceView,
    /// What the Cluster's status shows of the provider's word.
    pub status: ProviderStatus,
}

impl ServiceOutcome {
    /// From the provider's `plan` as a pass took it: `state` as the record says it, whether it
    /// is `settled` and `ready` as the host judges, whether the host holds its `access`, its
    /// `endpoint` and the `message` of what it waits for.
    pub fn new(
        plan: capw_runtime::control_plane::PlanOutput,
        state: &str,
        (settled, ready, access): (bool, bool, bool),
        endpoint: Option<(String, u16)>,
        message: String,
    ) -> Self {
        let version = plan.version.as_ref().map(super::convert::core_version_text);
        ServiceOutcome {
            record: capw_api::ServiceControlPlane {
                state: state.into(),
                endpoint,
                initialized: plan.initialized,
                ready,
                version: version.clone(),
                replicas: plan.replicas,
                ready_replicas: plan.ready_replicas,
                up_to_date_replicas: plan.up_to_date_replicas,
                failures_tolerated: plan.failures_tolerated,
                message,
            },
            view: capw_reconcile::ServiceView {
                settled,
                initialized: plan.initialized,
                ready,
                version: version.as_deref().and_then(super::convert::core_version),
                replicas: plan.replicas,
                ready_replicas: plan.ready_replicas,
                up_to_date_replicas: plan.up_to_date_replicas,
                access,
            },
            status: ProviderStatus {
                ready: plan.ready.map(|r| r && ready),
                version: plan.version,
                conditions: plan.conditions,
                failures_tolerated: plan.failures_tolerated,
                remediated: None,
            },
        }
    }
}
