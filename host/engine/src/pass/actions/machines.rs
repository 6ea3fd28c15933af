//! Machine actions: create (intent first), reconcile, delete, and orphans.

use std::collections::BTreeMap;
use std::time::Duration;

use capw_api::{
    Condition, ConditionStatus, Machine, MachineAddress, MachinePhase, MachineShape, MachineSpec,
    MachineStatus, NodeRef, ObjectMeta, set_condition,
};
use capw_reconcile::MachineIntent;
use capw_runtime::bootstrap::{BootstrapRequest, ControlPlaneMember};
use capw_runtime::infrastructure as infra;
use capw_runtime::types::{Deletion, MachineRef};
use capw_text::error_chain as chain;
use capw_topology::{DesiredState, ProviderConfig};
use kube::Resource as _;

use crate::objects::{CLUSTER_LABEL, MACHINE_FINALIZER, encode, machine_key, machine_name, now};
use crate::pass::convert::{
    api_address_type, api_condition_status, api_phase, api_role, core_version, wit_role,
    wit_version,
};
use crate::pass::env::{Env, context, secrets_bootstrap};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::{ObjectKey, decode, key_of};

const INFRA: &str = "InfrastructureReady";
/// The Cluster's condition while machines no Machine names are being deleted: false, with
/// reason [`DELETING_ORPHAN`], until the infrastructure stops listing them.
pub(crate) const ORPHANS_DELETED: &str = "OrphansDeleted";
/// The reason of [`ORPHANS_DELETED`] while an orphan answered deleted is still listed.
const DELETING_ORPHAN: &str = "DeletingOrphan";
/// The Cluster's condition while the infrastructure lists machines that are not the
/// cluster's: false, with reason [`FOREIGN_MACHINES_LISTED`], until a listing holds none.
pub(crate) const MACHINES_LISTED_OWN: &str = "ListedMachinesOwned";
/// The reason of [`MACHINES_LISTED_OWN`].
const FOREIGN_MACHINES_LISTED: &str = "ForeignMachinesListed";
const BOOTSTRAP: &str = "BootstrapReady";

fn is_control_plane(m: &Machine) -> bool {
    m.spec.role != capw_api::MachineRole::Worker
}

/// The infrastructure config for machine `m`: its pool's, the control plane's machine
/// config, else the cluster's.
fn infra_config<'a>(d: &'a DesiredState, m: &Machine) -> &'a ProviderConfig {
    if is_control_plane(m) {
        return d
            .control_plane
            .machine_infrastructure
            .as_ref()
            .unwrap_or(&d.infrastructure);
    }
    (d.pools.iter().find(|p| p.name == m.spec.pool))
        .map_or(&d.infrastructure, |p| &p.infrastructure)
}

/// The bootstrap config for machine `m`: its pool's, else the control plane's.
fn bootstrap_config<'a>(d: &'a DesiredState, m: &Machine) -> Option<&'a ProviderConfig> {
    if !is_control_plane(m)
        && let Some(pool) = d.pools.iter().find(|p| p.name == m.spec.pool)
    {
        return Some(&pool.bootstrap);
    }
    secrets_bootstrap(d)
}

fn machine_ref(m: &Machine) -> MachineRef {
    MachineRef {
        name: m.metadata.name.clone().unwrap_or_default(),
        uid: m.metadata.uid.clone().unwrap_or_default(),
    }
}

fn machine_object_key(s: &Snapshot, name: &str) -> ObjectKey {
    key_of::<Machine>(&s.namespace, name)
}

/// Writes `change` into machine `name`'s status where the action's own note already says
/// what happened (a failure, a deletion under way): a write that fails is not the action's
/// outcome, so it is logged as a warning naming the Machine, and the next pass writes again.
async fn record_status(
    env: &Env,
    s: &Snapshot,
    name: &str,
    change: impl Fn(&mut MachineStatus) + Send + Sync,
) {
    if let Err(e) = env.write_machine_status(s, name, change).await {
        tracing::warn!(
            cluster = %s.name,
            machine = %format!("{}/{name}", s.namespace),
            error = %chain(&e),
            "the Machine's status was not written; the next pass writes it again",
        );
    }
}

fn condition(type_: &str, ok: bool, reason: &str, message: impl Into<String>) -> Condition {
    let status = if ok {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    Condition::new(type_, status, reason, message, now())
}

/// What shapes a new machine of `intent`'s pool now (the control plane's for its machines).
fn shape_of(s: &Snapshot, intent: &MachineIntent) -> Option<MachineShape> {
    let desired = s.desired.as_ref().ok()?;
    if intent.role.is_control_plane() {
        return desired.control_plane.machine_shape.clone();
    }
    let pool = desired.pools.iter().find(|p| p.name == intent.pool)?;
    Some(pool.shape.clone())
}

/// `CreateMachine`: the Machine object with its name and idempotency key is stored first;
/// only then is any provider asked to create anything.
pub(crate) async fn create(env: &Env, s: &Snapshot, intent: &MachineIntent) -> ActionNote {
    let name = machine_name(&s.name, &intent.pool);
    let machine = Machine {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(s.namespace.clone()),
            labels: Some([(CLUSTER_LABEL.to_string(), s.name.clone())].into()),
            finalizers: Some(vec![MACHINE_FINALIZER.into()]),
            ..ObjectMeta::default()
        },
        spec: MachineSpec {
            cluster_name: s.name.clone(),
            role: api_role(intent.role),
            pool: intent.pool.clone(),
            version: intent.version.to_string(),
            failure_domain: intent.failure_domain.clone(),
            idempotency_key: machine_key(&s.uid, &name),
            shape: shape_of(s, intent),
        },
        status: Some(MachineStatus::default()),
    };
    let stored = encode(&machine, &Machine::kind(&()))
        .map_err(|e| ActionNote::host_failed(INFRA, "StoreError", chain(&e)))
        .map(|v| env.store.create(v));
    let stored = match stored {
        Ok(create) => create.await.map_err(|e| Env::store_failed(INFRA, &e)),
        Err(note) => Err(note),
    };
    let stored: Machine = match stored.and_then(|v| {
        decode::<Machine>(v).map_err(|e| ActionNote::host_failed(INFRA, "StoreError", chain(&e)))
    }) {
        Ok(m) => m,
        Err(note) => return note,
    };
    tracing::info!(cluster = %s.name, machine = %name, role = ?intent.role, "machine intent stored");
    reconcile(env, s, &stored).await
}

/// `ReconcileMachine`: bootstrap data until the infrastructure has the machine, then
/// `reconcile-machine`, and the answer into the Machine's status.
pub(crate) async fn reconcile(env: &Env, s: &Snapshot, m: &Machine) -> ActionNote {
    let Ok(desired) = &s.desired else {
        return ActionNote::done();
    };
    let name = m.metadata.name.clone().unwrap_or_default();
    let key = m.spec.idempotency_key.clone();
    let status = m.status.clone().unwrap_or_default();
    let mut bootstrap_data = Vec::new();
    if status.provider_id.is_none() {
        match bootstrap(env, s, desired, m).await {
            Ok(data) => bootstrap_data = data,
            Err(note) => {
                if let Some((_, reason, message)) = &note.condition {
                    record_status(env, s, &name, |st| {
                        set_condition(
                            &mut st.conditions,
                            condition(BOOTSTRAP, false, reason, message.clone()),
                        );
                    })
                    .await;
                }
                return note;
            }
        }
    }
    let config = infra_config(desired, m);
    let provider = match env.provider(config, INFRA) {
        Ok(p) => p,
        Err(note) => return note,
    };
    let ctx = context(s, &provider, &config.config, &key);
    let Some(version) = core_version(&m.spec.version) else {
        return ActionNote::done();
    };
    let spec = infra::MachineSpec {
        machine: machine_ref(m),
        role: wit_role(m.spec.role),
        pool: m.spec.pool.clone(),
        version: wit_version(version),
        failure_domain: m.spec.failure_domain.clone(),
        bootstrap_data,
    };
    match provider.provider.reconcile_machine(&ctx, &spec).await {
        Ok(answer) => {
            let requeue = answer
                .requeue_after_ms
                .map(|ms| Duration::from_millis(ms.into()));
            let observe_nodes = env.cluster_cache.is_some();
            let written = env
                .write_machine_status(s, &name, |st| {
                    apply_answer(st, &name, answer.clone(), observe_nodes)
                })
                .await;
            match written {
                Ok(()) => ActionNote::done().requeue_after(requeue),
                Err(e) => Env::store_failed(INFRA, &e),
            }
        }
        Err(e) => {
            let note = ActionNote::failed(INFRA, &e);
            record_status(env, s, &name, |st| {
                set_condition(
                    &mut st.conditions,
                    condition(INFRA, false, e.failure().reason(), chain(&e)),
                );
            })
            .await;
            // The failure is the machine's; the cluster shows it through the machine.
            ActionNote {
                condition: None,
                ..note
            }
        }
    }
}

/// The bootstrap data for `m`, or the note of why not (its condition is the one the Machine
/// shows).
async fn bootstrap(
    env: &Env,
    s: &Snapshot,
    desired: &DesiredState,
    m: &Machine,
) -> Result<Vec<u8>, ActionNote> {
    let Some(config) = bootstrap_config(desired, m) else {
        return Err(ActionNote::host_failed(
            BOOTSTRAP,
            "NoBootstrapProvider",
            "the class names no bootstrap provider".into(),
        ));
    };
    // A worker joins a control plane a service runs with what the service handed out, and
    // the cluster has no secrets of its bootstrap provider's making.
    let join = s.service_control_plane().then(|| s.join_credentials());
    let (secrets, join) = match (join, s.contract_secrets()) {
        (Some(Some(join)), _) => (Vec::new(), Some(join)),
        (None, Some(secrets)) => (secrets, None),
        _ => {
            return Err(ActionNote::host_failed(
                BOOTSTRAP,
                "WaitingForSecrets",
                "the cluster secrets are not stored yet".into(),
            ));
        }
    };
    let provider = env.provider(config, BOOTSTRAP)?;
    let role = wit_role(m.spec.role);
    let members = if m.spec.role == capw_api::MachineRole::Init {
        Vec::new()
    } else {
        s.machines
            .iter()
            .filter(|o| is_control_plane(o) && o.metadata.deletion_timestamp.is_none())
            .filter_map(|o| {
                let st = o.status.as_ref()?;
                (st.phase == MachinePhase::Running).then(|| ControlPlaneMember {
                    name: o.metadata.name.clone().unwrap_or_default(),
                    address: st
                        .addresses
                        .first()
                        .map(|a| a.address.clone())
                        .unwrap_or_default(),
                })
            })
            .collect()
    };
    let version = core_version(&m.spec.version).unwrap_or(capw_reconcile::Version {
        major: 0,
        minor: 0,
        patch: 0,
    });
    let request = BootstrapRequest {
        machine: machine_ref(m),
        role,
        version: wit_version(version),
        endpoint: s.endpoint(),
        secrets,
        control_plane_members: members,
        join,
    };
    let ctx = context(s, &provider, &config.config, &m.spec.idempotency_key);
    match provider.provider.generate_bootstrap(&ctx, &request).await {
        Ok(data) => {
            let name = m.metadata.name.clone().unwrap_or_default();
            record_status(env, s, &name, |st| {
                st.bootstrap_ready = true;
                set_condition(
                    &mut st.conditions,
                    condition(BOOTSTRAP, true, "DataGenerated", ""),
                );
            })
            .await;
            Ok(data.data)
        }
        Err(e) => Err(ActionNote::failed(BOOTSTRAP, &e)),
    }
}

/// The infrastructure's answer in a Machine's status. With `observe_nodes` (workload cluster
/// access on) nodeRef and readiness come from the machine's Node (the `nodes` action), not
/// from here.
fn apply_answer(
    st: &mut MachineStatus,
    name: &str,
    answer: infra::MachineStatus,
    observe_nodes: bool,
) {
    st.phase = api_phase(answer.phase);
    // A machine the infrastructure has accepted leaves Pending: its bootstrap data is given.
    if st.phase == MachinePhase::Pending && answer.provider_id.is_some() {
        st.phase = MachinePhase::Provisioning;
    }
    if answer.provider_id.is_some() {
        st.provider_id = answer.provider_id;
    }
    st.addresses = answer
        .addresses
        .into_iter()
        .map(|a| MachineAddress {
            type_: api_address_type(a.kind).into(),
            address: a.address,
        })
        .collect();
    let running = st.phase == MachinePhase::Running;
    if !observe_nodes {
        st.ready = running;
        st.node_ref = running.then(|| NodeRef { name: name.into() });
    } else if !running {
        st.ready = false;
    }
    st.failure_message = (st.phase == MachinePhase::Failed).then(|| answer.message.clone());
    if st.created_at.is_none() && st.provider_id.is_some() {
        st.created_at = Some(now());
    }
    let reason = format!("{:?}", st.phase);
    set_condition(
        &mut st.conditions,
        condition(INFRA, running, &reason, answer.message),
    );
    for c in answer.conditions {
        let status = api_condition_status(c.status);
        let type_ = format!("Infrastructure{}", c.type_);
        set_condition(
            &mut st.conditions,
            Condition::new(type_, status, c.reason, c.message, now()),
        );
    }
}

/// `DeleteMachine`: mark it deleted, call `delete-machine` until the infrastructure says it
/// is gone, then drop its finalizer (which removes it).
pub(crate) async fn delete(env: &Env, s: &Snapshot, m: &Machine) -> ActionNote {
    let name = m.metadata.name.clone().unwrap_or_default();
    let key = machine_object_key(s, &name);
    if m.metadata.deletion_timestamp.is_none() {
        tracing::info!(cluster = %s.name, machine = %name, "deleting machine");
        if let Err(e) = env.store.delete(&key).await {
            return Env::store_failed(INFRA, &e);
        }
    }
    let Ok(desired) = &s.desired else {
        return ActionNote::done();
    };
    let config = infra_config(desired, m);
    let provider = match env.provider(config, INFRA) {
        Ok(p) => p,
        Err(note) => return note,
    };
    let ctx = context(s, &provider, &config.config, &m.spec.idempotency_key);
    match provider
        .provider
        .delete_machine(&ctx, &machine_ref(m))
        .await
    {
        Ok(Deletion::Deleted) => {
            env.delete_node(s, m).await;
            match env.remove_finalizer(&key, MACHINE_FINALIZER).await {
                Ok(()) => ActionNote::done(),
                Err(e) => Env::store_failed(INFRA, &e),
            }
        }
        Ok(Deletion::InProgress(p)) => {
            record_status(env, s, &name, |st| {
                st.phase = MachinePhase::Deleting;
                set_condition(
                    &mut st.conditions,
                    condition(INFRA, false, &p.reason, p.message.clone()),
                );
            })
            .await;
            ActionNote {
                condition: None,
                ..ActionNote::in_progress(INFRA, &p)
            }
        }
        Err(e) => {
            record_status(env, s, &name, |st| {
                set_condition(
                    &mut st.conditions,
                    condition(INFRA, false, e.failure().reason(), chain(&e)),
                );
            })
            .await;
            ActionNote::failed(INFRA, &e)
        }
    }
}

/// What the infrastructure listed that no Machine of the cluster names.
pub(crate) struct Unnamed {
    /// Orphans: machines keyed as this host keys the cluster's machines, by key → name. Only
    /// these are ever deleted.
    pub orphans: BTreeMap<String, String>,
    /// A note when the listing held machines whose keys this host did not issue for this
    /// cluster (another cluster's, or nobody's): they are left alone and the cluster says so.
    pub foreign: Option<ActionNote>,
}

/// `ListMachines`: the infrastructure's machines no Machine object has. A machine the host
/// made for this cluster is keyed `<cluster uid>-<machine name>` ([`machine_key`]), so any
/// other key is not this cluster's to delete, whatever the provider says: a provider that
/// lists another cluster's machines must not get them deleted.
pub(crate) async fn unnamed(env: &Env, s: &Snapshot) -> Result<Unnamed, ActionNote> {
    let Ok(desired) = &s.desired else {
        return Err(ActionNote::done());
    };
    let provider = env.provider(&desired.infrastructure, INFRA)?;
    let ctx = context(
        s,
        &provider,
        &desired.infrastructure.config,
        &format!("{}-list", s.uid),
    );
    let listed = provider
        .provider
        .list_machines(&ctx)
        .await
        .map_err(|e| ActionNote::failed(INFRA, &e))?;
    let ours = machine_key(&s.uid, "");
    let (orphans, foreign): (Vec<_>, Vec<_>) = listed
        .into_iter()
        .filter(|l| {
            !s.machines
                .iter()
                .any(|m| m.spec.idempotency_key == l.idempotency_key)
        })
        .partition(|l| l.idempotency_key.starts_with(&ours));
    let foreign = foreign.first().map(|first| {
        ActionNote::host_failed(
            MACHINES_LISTED_OWN,
            FOREIGN_MACHINES_LISTED,
            format!(
                "the infrastructure listed {} machine(s) whose idempotency keys this host did \
                 not issue for this cluster, e.g. {} (key {}); they are left alone",
                foreign.len(),
                first.machine_name,
                first.idempotency_key
            ),
        )
    });
    Ok(Unnamed {
        orphans: orphans
            .into_iter()
            .map(|l| (l.idempotency_key, l.machine_name))
            .collect(),
        foreign,
    })
}

/// `DeleteOrphan`: delete a machine the infrastructure has and no Machine names.
pub(crate) async fn delete_orphan(env: &Env, s: &Snapshot, key: &str, name: &str) -> ActionNote {
    let Ok(desired) = &s.desired else {
        return ActionNote::done();
    };
    let provider = match env.provider(&desired.infrastructure, INFRA) {
        Ok(p) => p,
        Err(note) => return note,
    };
    tracing::info!(cluster = %s.name, key, "deleting orphan machine");
    let ctx = context(s, &provider, &desired.infrastructure.config, key);
    let machine = MachineRef {
        name: name.into(),
        uid: String::new(),
    };
    match provider.provider.delete_machine(&ctx, &machine).await {
        // Deleted, so the next listing should not have it. Until one does not, the cluster
        // says so, and its passes back off as after a failure: an orphan the infrastructure
        // keeps listing after answering `deleted` is asked again, but ever less often.
        Ok(Deletion::Deleted) => ActionNote::host_failed(
            ORPHANS_DELETED,
            DELETING_ORPHAN,
            format!(
                "the infrastructure answered that machine {} (idempotency key {key}), which \
                 no Machine names, is deleted; waiting for it to leave the infrastructure's \
                 list of machines",
                name
            ),
        ),
        Ok(Deletion::InProgress(p)) => ActionNote::in_progress(INFRA, &p),
        Err(e) => ActionNote::failed(INFRA, &e),
    }
}
