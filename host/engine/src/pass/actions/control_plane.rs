//! The control plane: `PlanControlPlane`, the control-plane provider's next step for the
//! current members, as the core's [`PlanView`]; for a control plane a service runs (contract
//! 0.3), `ReconcileControlPlane` and `DeleteControlPlane`.

use capw_reconcile::{EtcdView, PlanStep, PlanView, ServiceView, WorkloadView, node_ready};
use capw_runtime::control_plane::{EtcdMembership, Member, PlanInput, Step};
use capw_runtime::types::{Deletion, MachineRef};

use crate::objects::kubeconfig::kubeconfig_object;
use crate::objects::{SERVICE_CA_ITEM, SERVICE_JOIN_TOKEN_ITEM, SecretItems, secret_object};

use crate::pass::convert::wit_version;
use crate::pass::env::{Env, ProviderStatus, ServiceOutcome, context, desired_control_plane};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::{Snapshot, control_plane_changes, machine_view};

/// Whether the cluster's control-plane provider is told what makes a member out of date
/// besides its version (contract 0.3 on), and so rolls a changed machine-shaping input.
pub(crate) fn rolls_inputs(env: &Env, s: &Snapshot) -> bool {
    let Ok(desired) = &s.desired else {
        return false;
    };
    env.registry
        .get(&desired.control_plane.config.provider)
        .is_some_and(|p| {
            let version = &p.provider.info().contract.version;
            let mut parts = version.split('.').map(|n| n.parse::<u64>().unwrap_or(0));
            (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (0, 3)
        })
}

/// The condition the control plane's calls report on.
const COND: &str = "ControlPlaneReady";

/// `PlanControlPlane`: the control-plane provider's next step for the current members.
///
/// A member is `ready` when its machine runs and, where the host observes the workload
/// cluster, its Node is Ready: a NotReady member (or one whose Node is unknown because the
/// workload cluster does not answer) never counts toward the provider's quorum arithmetic.
/// With workload cluster access off, the machine's phase is all the host knows.
///
/// From contract 0.3 on the provider is also told whether etcd lists each member (where the
/// host observed etcd in this pass), what makes it out of date, and why it is to be replaced
/// as unhealthy (`remediate`: by machine name, what the core's health checks allow replacing
/// now); older providers' bindings leave all three out.
pub(crate) async fn plan(
    env: &Env,
    s: &Snapshot,
    workload: &WorkloadView,
    etcd: &EtcdView,
    remediate: &[(String, String)],
) -> Result<(PlanView, ProviderStatus), ActionNote> {
    let (desired, provider, version) = desired_control_plane(env, s, COND)?;
    let cp = &desired.control_plane;
    let members = s
        .machines
        .iter()
        .filter(|m| m.spec.role != capw_api::MachineRole::Worker)
        .filter_map(|m| {
            let view = machine_view(m, None)?;
            Some(Member {
                machine: MachineRef {
                    name: view.name.clone(),
                    uid: m.metadata.uid.clone().unwrap_or_default(),
                },
                version: wit_version(view.version),
                failure_domain: view.failure_domain.clone(),
                ready: view.phase == capw_reconcile::MachinePhase::Running
                    && node_ready(view.provider_id.as_deref(), workload),
                created_at: view.created_at,
                deleting: view.deleting,
                etcd: match etcd.lists(&view.name) {
                    None => EtcdMembership::Unknown,
                    Some(true) => EtcdMembership::Member,
                    Some(false) => EtcdMembership::NotMember,
                },
                out_of_date: control_plane_changes(m, desired, &cp.version),
                unhealthy: (remediate.iter())
                    .filter(|(name, _)| *name == view.name)
                    .map(|(_, why)| why.clone())
                    .collect(),
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
            .map(|_| s.endpoint()),
        failures_tolerated: cp.failures_tolerated,
        objects: Vec::new(),
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
        // The host takes a member out of etcd before it deletes its machine, whichever step
        // chose the machine; it can only where the class says how to reach etcd.
        Step::RemoveEtcdMember(m) if cp.etcd.is_some() => PlanStep::Delete { machine: m.name },
        Step::RemoveEtcdMember(m) => {
            return Err(ActionNote::host_failed(
                COND,
                "Unsupported",
                format!(
                    "the provider asks to remove {} from etcd (remove-etcd-member), and the class does not say how the host reaches etcd (spec.controlPlane.etcd); no machine was deleted",
                    m.name
                ),
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
    let view = PlanView {
        step,
        initialized: out.initialized,
        replicas: out.replicas,
        ready_replicas: out.ready_replicas,
        up_to_date_replicas: out.up_to_date_replicas,
    };
    let status = ProviderStatus {
        ready: out.ready,
        version: out.version,
        conditions: out.conditions,
        failures_tolerated: out.failures_tolerated,
        remediated: None,
    };
    Ok((view, status))
}

/// The idempotency key of the calls that drive a service's control plane: one per cluster.
fn service_key(s: &Snapshot) -> String {
    format!("{}-control-plane", s.uid)
}

/// `ReconcileControlPlane`: the provider moves the control plane its service runs toward the
/// desired one (side effects on the service, idempotent by the cluster's key) and says where
/// it stands. The host records what it said in the `ClusterInfrastructure` object and stores
/// how to reach and join it: the CA and the service's join token with the cluster's secrets,
/// the admin kubeconfig in the kubeconfig Secret (where the host reaches workload clusters).
/// Each is written only when it changed. The note says why the service is not as desired yet.
pub(crate) async fn reconcile_service(
    env: &Env,
    s: &Snapshot,
) -> Result<(ServiceView, ProviderStatus, ActionNote), ActionNote> {
    let (desired, provider, version) = desired_control_plane(env, s, COND)?;
    let cp = &desired.control_plane;
    let input = PlanInput {
        version: wit_version(version),
        replicas: cp.replicas,
        members: Vec::new(),
        failure_domains: (s.infrastructure.as_ref())
            .map(|r| r.control_plane_domains.clone())
            .unwrap_or_default(),
        endpoint: None,
        failures_tolerated: cp.failures_tolerated,
        objects: Vec::new(),
    };
    let ctx = context(s, &provider, &cp.config.config, &service_key(s));
    let out = provider
        .provider
        .reconcile_control_plane(&ctx, &input)
        .await
        .map_err(|e| ActionNote::failed(COND, &e))?;
    let plan = out.plan;
    let (settled, note, message) = match &plan.step {
        Step::Wait(p) => (false, ActionNote::in_progress(COND, p), p.message.clone()),
        _ => (true, ActionNote::done(), String::new()),
    };
    let endpoint = (out.access.as_ref().map(|a| a.endpoint.clone()))
        .or_else(|| plan.endpoint.clone())
        .map(|e| (e.host, e.port));
    let mut stored = s.join_credentials().is_some();
    if let Some(access) = &out.access {
        stored = store_access(env, s, access).await?;
    }
    let ready = plan.ready.unwrap_or(false);
    // Settled but not ready: the provider asks nothing more of the service, which does not
    // serve (it failed); its conditions say why.
    let state = match (settled, ready) {
        (true, true) => "Ready",
        (true, false) => "NotReady",
        (false, _) => "InProgress",
    };
    let outcome = ServiceOutcome::new(plan, state, (settled, ready, stored), endpoint, message);
    env.record_service(s, outcome.record).await?;
    let (view, status) = (outcome.view, outcome.status);
    Ok((view, status, note))
}

/// Stores the service's access where the cluster's other providers and people find it, each
/// piece only when it changed; whether all of it is stored (the kubeconfig is left out where
/// the host does not reach workload clusters, as for the machines shape).
async fn store_access(
    env: &Env,
    s: &Snapshot,
    access: &capw_runtime::control_plane::ControlPlaneAccess,
) -> Result<bool, ActionNote> {
    let token = access
        .join_token
        .as_ref()
        .and_then(|t| serde_json::to_vec(t).ok());
    let items: SecretItems = [(
        SERVICE_CA_ITEM.to_owned(),
        access.ca_certificate.clone().into_bytes(),
    )]
    .into_iter()
    .chain(token.map(|t| (SERVICE_JOIN_TOKEN_ITEM.to_owned(), t)))
    .collect();
    if s.secrets.as_ref() != Some(&items) {
        let object = secret_object(&s.namespace, &s.name, &s.uid, &items);
        env.store
            .apply(object)
            .await
            .map_err(|e| Env::store_failed(COND, &e))?;
    }
    let endpoint = format!("{}:{}", access.endpoint.host, access.endpoint.port);
    let current = s
        .kubeconfig
        .as_ref()
        .is_some_and(|k| k.endpoint == endpoint && k.value == access.admin_kubeconfig.as_bytes());
    if env.cluster_cache.is_some() && !current {
        let object = kubeconfig_object(
            &s.namespace,
            &s.name,
            &s.uid,
            &endpoint,
            access.admin_kubeconfig.as_bytes(),
        );
        env.store
            .apply(object)
            .await
            .map_err(|e| Env::store_failed(capw_reconcile::CONTROL_PLANE_AVAILABLE, &e))?;
        tracing::info!(cluster = %s.name, endpoint = %endpoint, "kubeconfig stored from the control plane's service");
    }
    Ok(true)
}

/// `DeleteControlPlane`: call `delete-control-plane` until the service's control plane is
/// gone, then record it deleted.
pub(crate) async fn delete_service(env: &Env, s: &Snapshot) -> ActionNote {
    let Ok(desired) = &s.desired else {
        return ActionNote::done();
    };
    let provider = match env.provider(&desired.control_plane.config, COND) {
        Ok(p) => p,
        Err(note) => return note,
    };
    let ctx = context(
        s,
        &provider,
        &desired.control_plane.config.config,
        &service_key(s),
    );
    match provider.provider.delete_control_plane(&ctx).await {
        Ok(Deletion::Deleted) => env.record_service_deleted(s).await,
        Ok(Deletion::InProgress(p)) => ActionNote::in_progress(COND, &p),
        Err(e) => ActionNote::failed(COND, &e),
    }
}
