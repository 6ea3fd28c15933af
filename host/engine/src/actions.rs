//! Cluster-wide actions and observations: infrastructure, secrets, the control-plane plan,
//! the finalizer. Machine actions are in [`crate::machines`].

use std::sync::Arc;

use crate::store::{ObjectKey, ObjectStore, StoreError, TypedObjects, key_of};
use capw_api::{Cluster, ClusterInfrastructure};
use capw_reconcile::{Hook, PlanStep, PlanView};
use capw_runtime::bootstrap::SecretsState;
use capw_runtime::control_plane::{Member, PlanInput, Step};
use capw_runtime::infrastructure::ClusterState;
use capw_runtime::lifecycle_hooks::{Hook as WitHook, HookRequest, HookResponse};
use capw_runtime::types::{Deletion, KubernetesVersion, MachineRef};
use capw_topology::ProviderConfig;

use crate::calls::{ActionNote, chain, context, endpoint};
use crate::config::EngineConfig;
use crate::objects::{
    CLUSTER_FINALIZER, InfrastructureRecord, SECRET_KIND, applied, cluster_secret_name,
    infrastructure_object, secret_object,
};
use crate::registry::{LoadedProvider, ProviderRegistry};
use crate::view::{Snapshot, machine_view, parse_version};

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

    /// A store failure as a note on `condition`.
    pub fn store_failed(condition: &'static str, e: &StoreError) -> ActionNote {
        ActionNote::host_failed(condition, "StoreError", chain(e))
    }
}

/// The bootstrap config that makes the cluster's secrets: the control plane's, else the
/// first pool's.
pub(crate) fn secrets_bootstrap(d: &capw_topology::DesiredState) -> Option<&ProviderConfig> {
    (d.control_plane.bootstrap.as_ref()).or_else(|| d.pools.first().map(|p| &p.bootstrap))
}

const INFRA: &str = "InfrastructureReady";

/// The infrastructure provider and the context of a cluster-wide call to it; a note (done when
/// the cluster has no valid desired state, so nothing to call) otherwise.
fn infra_call(
    env: &Env,
    s: &Snapshot,
) -> Result<(Arc<LoadedProvider>, capw_runtime::types::CallContext), ActionNote> {
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let provider = env.provider(&desired.infrastructure, INFRA)?;
    let ctx = context(s, &provider, &desired.infrastructure.config, &infra_key(s));
    Ok((provider, ctx))
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
) -> Result<(Arc<LoadedProvider>, capw_runtime::types::CallContext), ActionNote> {
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

fn infra_key(s: &Snapshot) -> String {
    format!("{}-infra", s.uid)
}

async fn write_record(
    env: &Env,
    s: &Snapshot,
    record: &InfrastructureRecord,
) -> Result<(), ActionNote> {
    store_record(env, s, record)
        .await
        .map_err(|e| Env::store_failed(INFRA, &e))
}

/// Stores the infrastructure record of the cluster of `s`: the object, then its status.
pub(crate) async fn store_record(
    env: &Env,
    s: &Snapshot,
    record: &InfrastructureRecord,
) -> Result<(), StoreError> {
    env.store
        .apply_as(&infrastructure_object(&s.namespace, &s.name))
        .await?;
    let key = key_of::<ClusterInfrastructure>(&s.namespace, &s.name);
    let status = serde_json::to_value(record).unwrap_or_default();
    env.store.update_status(&key, status, None).await?;
    Ok(())
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
        ..InfrastructureRecord::default()
    };
    let note = match provider.provider.reconcile_cluster(&ctx).await {
        Ok(ClusterState::Ready(infra)) => {
            record.state = "Ready".into();
            let e = infra.control_plane_endpoint;
            record.endpoint = Some((e.host, e.port));
            record.failure_domains = infra
                .failure_domains
                .iter()
                .map(|d| d.name.clone())
                .collect();
            record.control_plane_domains = (infra.failure_domains.iter())
                .filter(|d| d.control_plane)
                .map(|d| d.name.clone())
                .collect();
            ActionNote::done()
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

/// `EnsureSecrets`: store the bootstrap provider's cluster secrets once they are ready.
pub(crate) async fn ensure_secrets(env: &Env, s: &Snapshot) -> ActionNote {
    const COND: &str = "ControlPlaneInitialized";
    let (provider, ctx) = match bootstrap_call(env, s, COND, "secrets") {
        Ok(call) => call,
        Err(note) => return note,
    };
    match provider.provider.cluster_secrets(&ctx).await {
        Ok(SecretsState::Ready(items)) => {
            let items = items.into_iter().map(|i| (i.name, i.data)).collect();
            let object = secret_object(&s.namespace, &s.name, &s.uid, &items);
            match env.store.apply(object).await {
                Ok(_) => ActionNote::done(),
                Err(e) => Env::store_failed(COND, &e),
            }
        }
        Ok(SecretsState::InProgress(p)) => ActionNote::in_progress(COND, &p),
        Err(e) => ActionNote::failed(COND, &e),
    }
}

fn wit_version(v: capw_reconcile::Version) -> KubernetesVersion {
    KubernetesVersion {
        major: v.major,
        minor: v.minor,
        patch: v.patch,
    }
}

/// `PlanControlPlane`: the control-plane provider's next step for the current members.
pub(crate) async fn plan(env: &Env, s: &Snapshot) -> Result<PlanView, ActionNote> {
    const COND: &str = "ControlPlaneReady";
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let cp = &desired.control_plane;
    let provider = env.provider(&cp.config, COND)?;
    let version = parse_version(&cp.version).ok_or_else(|| {
        ActionNote::host_failed(COND, "InvalidVersion", format!("version {:?}", cp.version))
    })?;
    let members = s
        .machines
        .iter()
        .filter(|m| m.spec.role != capw_api::MachineRole::Worker)
        .filter_map(|m| {
            let view = machine_view(m)?;
            Some(Member {
                machine: MachineRef {
                    name: view.name.clone(),
                    uid: m.metadata.uid.clone().unwrap_or_default(),
                },
                version: wit_version(view.version),
                failure_domain: view.failure_domain.clone(),
                ready: view.phase == capw_reconcile::MachinePhase::Running,
                created_at: view.created_at,
                deleting: view.deleting,
            })
        })
        .collect();
    let input = PlanInput {
        version: wit_version(version),
        replicas: cp.replicas,
        members,
        failure_domains: s
            .infrastructure
            .as_ref()
            .map(|r| r.control_plane_domains.clone())
            .unwrap_or_default(),
        endpoint: s
            .infrastructure
            .as_ref()
            .and_then(|r| r.endpoint.as_ref())
            .map(|_| endpoint(s)),
    };
    let ctx = context(s, &provider, &cp.config.config, &format!("{}-plan", s.uid));
    let out = provider
        .provider
        .plan(&ctx, &input)
        .await
        .map_err(|e| ActionNote::failed(COND, &e))?;
    let step = match out.step {
        Step::None => PlanStep::None,
        Step::CreateMachine(c) => PlanStep::Create {
            init: c.init,
            failure_domain: c.failure_domain,
        },
        Step::DeleteMachine(m) => PlanStep::Delete { machine: m.name },
        Step::Wait(_) => PlanStep::Wait,
        Step::RemoveEtcdMember(_) => {
            return Err(ActionNote::host_failed(
                COND,
                "Unsupported",
                "removing a member from etcd (remove-etcd-member) is not served by this host yet; no machine was deleted".into(),
            ));
        }
        Step::ApplyManifests(_) => {
            return Err(ActionNote::host_failed(
                COND,
                "Unsupported",
                "hosted control planes (apply-manifests) are not served in local mode".into(),
            ));
        }
    };
    Ok(PlanView {
        step,
        initialized: out.initialized,
        replicas: out.replicas,
        ready_replicas: out.ready_replicas,
        up_to_date_replicas: out.up_to_date_replicas,
    })
}

/// `RemoveFinalizer`: drop what the executor kept for the cluster, then its finalizer.
pub(crate) async fn remove_finalizer(env: &Env, s: &Snapshot) -> ActionNote {
    if let Some(cache) = &env.cluster_cache {
        cache.evict(&crate::workload::cluster_id(s));
    }
    let owned = [
        ObjectKey::namespaced(SECRET_KIND, &s.namespace, &cluster_secret_name(&s.name)),
        ObjectKey::namespaced(
            SECRET_KIND,
            &s.namespace,
            &crate::kubeconfig::kubeconfig_secret_name(&s.name),
        ),
        key_of::<ClusterInfrastructure>(&s.namespace, &s.name),
    ];
    for key in owned {
        match env.store.delete(&key).await {
            Ok(_) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Env::store_failed("Ready", &e),
        }
    }
    let key = key_of::<Cluster>(&s.namespace, &s.name);
    match env.remove_finalizer(&key, CLUSTER_FINALIZER).await {
        Ok(()) => ActionNote::done(),
        Err(e) => Env::store_failed("Ready", &e),
    }
}

/// `CallHook`: ask every hook provider of the class, in order; when all proceed, record the
/// hook point as passed for `to` in the Cluster's status. A hold or an error stops at that
/// provider and holds only this transition.
pub(crate) async fn call_hook(
    env: &Env,
    s: &Snapshot,
    hook: Hook,
    from: Option<capw_reconcile::Version>,
    to: capw_reconcile::Version,
) -> ActionNote {
    const COND: &str = capw_reconcile::HOOKS_PASSED;
    let Ok(desired) = &s.desired else {
        return ActionNote::done();
    };
    let request = HookRequest {
        hook: match hook {
            Hook::BeforeClusterCreate => WitHook::BeforeClusterCreate,
            Hook::AfterControlPlaneInitialized => WitHook::AfterControlPlaneInitialized,
            Hook::BeforeClusterUpgrade => WitHook::BeforeClusterUpgrade,
            Hook::AfterControlPlaneUpgrade => WitHook::AfterControlPlaneUpgrade,
            Hook::AfterClusterUpgrade => WitHook::AfterClusterUpgrade,
            Hook::BeforeClusterDelete => WitHook::BeforeClusterDelete,
        },
        from_version: from.map(wit_version),
        to_version: wit_version(to),
    };
    for config in &desired.hooks {
        let provider = match env.provider(config, COND) {
            Ok(p) => p,
            Err(note) => return note,
        };
        let key = format!("{}-{}-{to}", s.uid, hook.as_str());
        let ctx = context(s, &provider, &config.config, &key);
        match provider.provider.call_hook(&ctx, &request).await {
            Ok(HookResponse::Proceed) => {}
            Ok(HookResponse::Hold(p)) => {
                tracing::info!(cluster = %s.name, hook = hook.as_str(), provider = %config.provider, reason = %p.reason, "hook holds");
                let mut note = ActionNote::in_progress(COND, &p);
                if let Some((_, reason, message)) = &mut note.condition {
                    *message = format!(
                        "{} held by {}: {reason}: {message}",
                        hook.as_str(),
                        config.provider
                    );
                    *reason = format!("{}Held", capitalized(hook.as_str()));
                }
                return note;
            }
            Err(e) => return ActionNote::failed(COND, &e),
        }
    }
    tracing::info!(cluster = %s.name, hook = hook.as_str(), version = %to, "hook passed");
    let key = key_of::<Cluster>(&s.namespace, &s.name);
    let (name, version) = (hook.as_str(), to.to_string());
    let written = env
        .store
        .update(&key, &mut |o| {
            if !o["status"].is_object() {
                o["status"] = serde_json::json!({});
            }
            if !o["status"]["hooks"].is_object() {
                o["status"]["hooks"] = serde_json::json!({});
            }
            o["status"]["hooks"][name] = version.clone().into();
            Ok(())
        })
        .await;
    match written {
        Ok(_) => ActionNote::done(),
        Err(e) => Env::store_failed(COND, &e),
    }
}

/// `beforeClusterCreate` as `BeforeClusterCreate`.
fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}
