//! `PlanControlPlane`: the control-plane provider's next step for the current members, as
//! the core's [`PlanView`].

use capw_reconcile::{EtcdView, PlanStep, PlanView, WorkloadView, node_ready};
use capw_runtime::control_plane::{EtcdMembership, Member, PlanInput, Step};
use capw_runtime::types::{Condition, KubernetesVersion, MachineRef};

use crate::pass::convert::{core_version, wit_version};
use crate::pass::env::{Env, context};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::{Snapshot, control_plane_changes, machine_view};

/// What the provider said of the control plane beside its step, for the Cluster's status.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProviderStatus {
    /// The control plane serves requests, as the provider sees it (`None` from 0.1).
    pub ready: Option<bool>,
    /// The version it runs, when the provider knows it; during an upgrade, the oldest.
    pub version: Option<KubernetesVersion>,
    /// The provider's conditions, unprefixed.
    pub conditions: Vec<Condition>,
    /// The unhealthy member this plan takes out to replace it, as the Cluster records it; set
    /// by the pass when the step removes a member it was told to replace.
    pub remediated: Option<capw_reconcile::LastRemediation>,
}

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
    const COND: &str = "ControlPlaneReady";
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let cp = &desired.control_plane;
    let provider = env.provider(&cp.config, COND)?;
    let version = core_version(&cp.version).ok_or_else(|| {
        ActionNote::host_failed(COND, "InvalidVersion", format!("version {:?}", cp.version))
    })?;
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
        remediated: None,
    };
    Ok((view, status))
}
