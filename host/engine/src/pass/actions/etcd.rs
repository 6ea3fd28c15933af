//! `ObserveEtcd`, `RemoveEtcdMember`, `RemoveEtcdOrphan`: the control plane's etcd
//! membership, kept by the host where the class says how to reach etcd
//! (`spec.controlPlane.etcd`).
//!
//! Observed before each decision of a live cluster (one member list and one status call
//! through the first control-plane machine that answers); a member leaves etcd, leadership
//! moved off it first, before its machine is deleted; a member no machine has is removed.
//! Each step records its progress on the Machine's `EtcdMember` condition, and each is safe
//! to repeat: a kill anywhere is finished by the next pass.

use std::time::Duration;

use capw_api::{ConditionStatus, Machine, MachineRole};
use capw_reconcile::{ETCD_MEMBER, ETCD_MEMBERSHIP, EtcdMemberView, EtcdView, WorkloadView};
use capw_text::error_chain as chain;
use capw_workload::{EtcdAccess, EtcdMembership};

use crate::pass::env::Env;
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::key_of;

/// How long one etcd call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// What the pass knows of etcd: the core's view and, where it was read, the access and the
/// membership the actions use.
#[derive(Clone, Debug, Default)]
pub(crate) struct EtcdObservation {
    pub view: EtcdView,
    seen: Option<(EtcdAccess, EtcdMembership)>,
}

/// The first address of a machine, where its etcd listens.
fn host_of(m: &Machine) -> Option<String> {
    let status = m.status.as_ref()?;
    status.addresses.first().map(|a| a.address.clone())
}

/// Whether `member` is `m`'s: it has the machine's name, or its peer URL names the machine's
/// address (a member added and never started has no name yet).
fn runs_on(member: &capw_workload::EtcdMember, m: &Machine) -> bool {
    let name = m.metadata.name.as_deref();
    (!member.name.is_empty() && name == Some(member.name.as_str()))
        || host_of(m).is_some_and(|h| member.peer_hosts().any(|p| p == h))
}

fn control_plane(s: &Snapshot) -> impl Iterator<Item = &Machine> {
    s.machines
        .iter()
        .filter(|m| m.spec.role != MachineRole::Worker)
}

/// Reads the membership where the host keeps it.
pub(crate) async fn observe(s: &Snapshot, workload: &WorkloadView) -> EtcdObservation {
    let unmanaged = EtcdObservation::default();
    let Ok(desired) = &s.desired else {
        return unmanaged;
    };
    let Some(access) = &desired.control_plane.etcd else {
        return unmanaged;
    };
    if s.deleting() || control_plane(s).next().is_none() {
        return unmanaged;
    }
    let with_view = |view| EtcdObservation { view, seen: None };
    if !workload.observed() {
        return with_view(EtcdView::Skipped {
            reason: "workload cluster access is off (--workload-clusters off): nothing is asked \
                     of etcd, and a member leaves with its machine's own reset"
                .into(),
        });
    }
    // Machines that run first, the ones going last: the call goes to a member that stays.
    let mut machines: Vec<&Machine> = control_plane(s).collect();
    machines.sort_by_key(|m| {
        (
            m.metadata.deletion_timestamp.is_some(),
            m.status.as_ref().map(|st| st.phase) != Some(capw_api::MachinePhase::Running),
        )
    });
    let hosts: Vec<String> = machines.iter().filter_map(|m| host_of(m)).collect();
    if hosts.is_empty() {
        return with_view(EtcdView::Skipped {
            reason: "no control-plane machine has an address yet".into(),
        });
    }
    let item = |name: &str, field: &str| -> Result<String, String> {
        let items = s
            .secrets
            .as_ref()
            .ok_or("the cluster's secrets are not stored yet")?;
        let (_, bytes) = items.iter().find(|(n, _)| n == name).ok_or_else(|| {
            format!("the cluster's secrets have no item `{name}` (spec.controlPlane.etcd.{field})")
        })?;
        String::from_utf8(bytes.clone())
            .map_err(|_| format!("the secret item `{name}` is not text"))
    };
    let client = item(&access.ca_certificate_item, "caCertificateItem").and_then(|ca| {
        let key = item(&access.ca_key_item, "caKeyItem")?;
        EtcdAccess::new(&ca, &key, access.client_port, CALL_TIMEOUT).map_err(|e| e.to_string())
    });
    let client = match client {
        Ok(c) => c,
        Err(message) => return with_view(EtcdView::Unreachable { message }),
    };
    match client.membership(&hosts).await {
        Ok(membership) => {
            let members = (membership.members.iter())
                .map(|member| EtcdMemberView {
                    id: member.id,
                    name: member.name.clone(),
                    machine: (machines.iter())
                        .find(|m| runs_on(member, m))
                        .and_then(|m| m.metadata.name.clone()),
                })
                .collect();
            EtcdObservation {
                view: EtcdView::Observed { members },
                seen: Some((client, membership)),
            }
        }
        Err(e) => with_view(EtcdView::Unreachable {
            message: e.to_string(),
        }),
    }
}

/// Writes each control-plane Machine's `EtcdMember` where it changed: a member, not a
/// member (a running machine etcd does not list), or, for a machine being deleted where the
/// host asks nothing of etcd, skipped and why.
pub(crate) async fn record_members(
    env: &Env,
    s: &Snapshot,
    etcd: &EtcdObservation,
) -> Option<ActionNote> {
    for m in control_plane(s) {
        let name = m.metadata.name.as_deref().unwrap_or_default();
        let deleting = m.metadata.deletion_timestamp.is_some();
        let running = m.status.as_ref().map(|st| st.phase) == Some(capw_api::MachinePhase::Running);
        let judged = match &etcd.view {
            EtcdView::Skipped { reason } if deleting => {
                (ConditionStatus::Unknown, "Skipped", reason.clone())
            }
            EtcdView::Observed { members } => {
                match members.iter().find(|x| x.machine.as_deref() == Some(name)) {
                    Some(member) => (
                        ConditionStatus::True,
                        "Member",
                        format!("etcd member {:x}", member.id),
                    ),
                    // The removal said so already; keep its word.
                    None if deleting => continue,
                    None if running => (
                        ConditionStatus::False,
                        "NotAMember",
                        "the machine runs and etcd does not list it".into(),
                    ),
                    None => continue,
                }
            }
            _ => continue,
        };
        if let Err(note) = env.write_machine_condition(s, m, ETCD_MEMBER, judged).await {
            return Some(note);
        }
    }
    None
}

/// `RemoveEtcdMember`: marks `m` deleted (so the next pass goes on with it whatever
/// happens here), moves leadership off it when it leads, then removes its member through
/// another member.
pub(crate) async fn remove_member(
    env: &Env,
    s: &Snapshot,
    m: &Machine,
    etcd: &EtcdObservation,
) -> ActionNote {
    let name = m.metadata.name.clone().unwrap_or_default();
    if m.metadata.deletion_timestamp.is_none() {
        tracing::info!(cluster = %s.name, machine = %name, "deleting control-plane machine: its etcd member goes first");
        if let Err(e) = env
            .store
            .delete(&key_of::<Machine>(&s.namespace, &name))
            .await
        {
            return Env::store_failed(ETCD_MEMBERSHIP, &e);
        }
    }
    let Some((client, membership)) = &etcd.seen else {
        return ActionNote::done();
    };
    let own_host = host_of(m);
    let Some(member) = (membership.members.iter()).find(|x| runs_on(x, m)) else {
        return ActionNote::done();
    };
    // Another member, one whose machine stays, to lead and to take the request.
    let stays = |x: &&capw_workload::EtcdMember| {
        x.id != member.id
            && s.machines.iter().any(|o| {
                o.metadata.deletion_timestamp.is_none()
                    && o.metadata.name.as_deref() != Some(name.as_str())
                    && runs_on(x, o)
            })
    };
    let Some(other) = membership.members.iter().find(stays) else {
        return ActionNote::host_failed(
            ETCD_MEMBERSHIP,
            "NoOtherMember",
            format!("{name} cannot leave etcd: no other member's machine stays"),
        );
    };
    let other_host = other.peer_hosts().next().unwrap_or_default().to_owned();
    let failed = |step: &str, e: &capw_workload::EtcdError| {
        ActionNote::host_failed(
            ETCD_MEMBERSHIP,
            "EtcdCallFailed",
            format!("{step} for {name}: {}", chain(e)),
        )
    };
    if membership.leader == Some(member.id) {
        let Some(leader_host) = own_host.as_deref() else {
            return ActionNote::done();
        };
        if let Err(e) = client.move_leader(leader_host, other.id).await {
            return failed("moving etcd leadership", &e);
        }
        let moved = (
            ConditionStatus::False,
            "LeadershipMoved",
            format!("etcd leadership moved to {}", other.name),
        );
        if let Err(note) = env.write_machine_condition(s, m, ETCD_MEMBER, moved).await {
            return note;
        }
    }
    if let Err(e) = client.remove_member(&other_host, member.id).await {
        return failed("removing the etcd member", &e);
    }
    tracing::info!(cluster = %s.name, machine = %name, member = %format!("{:x}", member.id), "etcd member removed");
    let removed = (
        ConditionStatus::False,
        "Removed",
        format!(
            "etcd member {:x} removed through {other_host}; the machine is deleted next",
            member.id
        ),
    );
    match env
        .write_machine_condition(s, m, ETCD_MEMBER, removed)
        .await
    {
        Ok(()) => ActionNote::done(),
        Err(note) => note,
    }
}

/// `RemoveEtcdOrphan`: removes member `id`, which no Machine has, through a member that
/// has one.
pub(crate) async fn remove_orphan(
    s: &Snapshot,
    id: u64,
    name: &str,
    etcd: &EtcdObservation,
) -> ActionNote {
    let Some((client, membership)) = &etcd.seen else {
        return ActionNote::done();
    };
    let hosts: Vec<&str> = (membership.members.iter())
        .filter(|x| x.id != id)
        .flat_map(|x| x.peer_hosts())
        .filter(|h| s.machines.iter().any(|m| host_of(m).as_deref() == Some(*h)))
        .collect();
    let Some(host) = hosts.first() else {
        return ActionNote::done();
    };
    match client.remove_member(host, id).await {
        Ok(()) => {
            tracing::info!(cluster = %s.name, member = %format!("{id:x}"), name, "etcd member without a machine removed");
            ActionNote::done()
        }
        Err(e) => ActionNote::host_failed(
            ETCD_MEMBERSHIP,
            "EtcdCallFailed",
            format!(
                "removing etcd member {id:x} ({name}), which no machine has: {}",
                chain(&e)
            ),
        ),
    }
}
