//! `reconcile-machine`, `delete-machine` and `list-machines`: one simcloud instance per
//! machine, keyed by the machine's idempotency key.
//!
//! The idempotency key is the instance's `client_token`. simcloud never creates a second
//! instance for a token, and never creates again for the token of a deleted instance, so a
//! retried or late create can neither duplicate a machine nor bring a deleted one back.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capw_sdk::infrastructure::{ListedMachine, MachinePhase, MachineSpec, MachineStatus};
use capw_sdk::types::{
    Address, AddressKind, Condition, ConditionStatus, Deletion, InProgress, MachineRole,
};
use capw_sdk::{Context, log};
use capw_sim_client::{ClientError, query};

use crate::api::{self, CreateInstance, Instance, InstanceList, InstanceState, Role, codes};
use crate::config::SimInfraConfig;
use crate::{Client, naming};

/// When to look again at an instance that is pending or booting, in milliseconds.
pub const INSTANCE_REQUEUE_MS: u32 = 2_000;

/// When to look again at an instance being deleted.
pub const DELETE_REQUEUE: Duration = Duration::from_secs(2);

/// Reports the instance of `ctx.idempotency_key()`, creating it first when there is none.
///
/// # Guarantees
///
/// At most one instance ever exists for a key. When simcloud refuses the create because the
/// key's instance was deleted (or the network has no address left), the answer is phase
/// `failed` with simcloud's reason, and nothing is created: the host replaces the machine
/// under a new key.
///
/// # Errors
///
/// [`ClientError`] when a request fails; a missing network (`409 failed_precondition`) is a
/// retryable conflict, a key reused with another name or role a permanent one.
pub fn reconcile(
    client: &Client<'_>,
    ctx: &Context<SimInfraConfig>,
    spec: &MachineSpec,
) -> Result<MachineStatus, ClientError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    if let Some(instance) = find(client, &cluster, ctx.idempotency_key())? {
        return Ok(status(&instance));
    }
    let zone = spec
        .failure_domain
        .as_deref()
        .or(ctx.config.zones.first().map(String::as_str));
    let body = create_request(
        &cluster,
        ctx.idempotency_key(),
        spec,
        zone,
        ctx.config.instance_type.as_deref(),
    );
    match client.post::<_, Instance>("/v1/instances", &body) {
        Ok(instance) => {
            log::info(
                "instance created",
                &[
                    ("cluster", &cluster),
                    ("machine", &spec.machine.name),
                    ("instance", &instance.id),
                    ("zone", &instance.zone),
                ],
            );
            Ok(status(&instance))
        }
        Err(e) if e.is_api(409, codes::CONFLICT) => Ok(refused(
            e.api_message().unwrap_or("simcloud refused the create"),
        )),
        Err(e) => Err(e),
    }
}

/// Deletes the instance of `ctx.idempotency_key()`.
///
/// # Guarantees
///
/// `deleted` when no instance has the key any more, including when there never was one;
/// `in-progress` while simcloud still lists it after the delete.
///
/// # Errors
///
/// [`ClientError`] when a request fails.
pub fn delete(client: &Client<'_>, ctx: &Context<SimInfraConfig>) -> Result<Deletion, ClientError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    let Some(instance) = find(client, &cluster, ctx.idempotency_key())? else {
        return Ok(Deletion::Deleted);
    };
    client.delete(&format!("/v1/instances/{}", instance.id))?;
    log::info(
        "instance deleted",
        &[("cluster", &cluster), ("instance", &instance.id)],
    );
    Ok(match find(client, &cluster, ctx.idempotency_key())? {
        None => Deletion::Deleted,
        Some(still) => Deletion::InProgress(
            InProgress::new(
                "InstanceDeleting",
                format!("instance {} is being deleted", still.id),
            )
            .requeue_after(DELETE_REQUEUE),
        ),
    })
}

/// Every instance of the cluster, whoever created it.
///
/// # Errors
///
/// [`ClientError`] when the request fails.
pub fn list(
    client: &Client<'_>,
    ctx: &Context<SimInfraConfig>,
) -> Result<Vec<ListedMachine>, ClientError> {
    let cluster = naming::sim_cluster(ctx.cluster());
    let found: InstanceList =
        client.get(&format!("/v1/instances{}", query(&[("cluster", &cluster)])))?;
    Ok(found.instances.iter().map(listed).collect())
}

/// The instance created with `key` in `cluster`, if it still exists.
fn find(client: &Client<'_>, cluster: &str, key: &str) -> Result<Option<Instance>, ClientError> {
    let found: InstanceList = client.get(&format!(
        "/v1/instances{}",
        query(&[("cluster", cluster), ("client_token", key)])
    ))?;
    Ok(found.instances.into_iter().next())
}

/// The create request for `spec`, keyed by `key`, in `zone` (simcloud's first when none), of
/// `instance_type` (simcloud's default when none).
pub fn create_request(
    cluster: &str,
    key: &str,
    spec: &MachineSpec,
    zone: Option<&str>,
    instance_type: Option<&str>,
) -> CreateInstance {
    let tags = BTreeMap::from([
        (naming::TAG_CLUSTER.to_owned(), cluster.to_owned()),
        (naming::TAG_MACHINE.to_owned(), spec.machine.name.clone()),
        (naming::TAG_POOL.to_owned(), spec.pool.clone()),
    ]);
    CreateInstance {
        client_token: key.to_owned(),
        name: spec.machine.name.clone(),
        cluster: cluster.to_owned(),
        role: role(spec.role),
        zone: zone.map(str::to_owned),
        instance_type: instance_type.map(str::to_owned),
        tags,
        bootstrap_data: BASE64.encode(&spec.bootstrap_data),
    }
}

/// simcloud's role for a machine role: both control-plane roles are `control-plane`.
pub fn role(role: MachineRole) -> Role {
    match role {
        MachineRole::Init | MachineRole::JoinControlPlane => Role::ControlPlane,
        MachineRole::Worker => Role::Worker,
    }
}

/// The machine phase of an instance state.
pub fn phase(state: InstanceState) -> MachinePhase {
    match state {
        InstanceState::Pending => MachinePhase::Pending,
        InstanceState::Booting => MachinePhase::Provisioning,
        InstanceState::Running => MachinePhase::Running,
        InstanceState::Failed => MachinePhase::Failed,
    }
}

/// What the host learns of `instance`: its phase, ids and addresses, and when to look again
/// while it is neither running nor failed.
pub fn status(instance: &Instance) -> MachineStatus {
    let phase = phase(instance.state);
    let settled = matches!(phase, MachinePhase::Running | MachinePhase::Failed);
    let (reason, message) = match instance.state {
        InstanceState::Pending => (
            "InstancePending",
            format!("instance {} is pending", instance.id),
        ),
        InstanceState::Booting => (
            "InstanceBooting",
            format!("instance {} is booting", instance.id),
        ),
        InstanceState::Running => ("InstanceRunning", String::new()),
        InstanceState::Failed => ("InstanceFailed", instance.reason.clone()),
    };
    let ready = if phase == MachinePhase::Running {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    MachineStatus {
        provider_id: Some(instance.provider_id.clone()),
        phase,
        addresses: instance.addresses.iter().filter_map(address).collect(),
        failure_domain: Some(instance.zone.clone()),
        message: message.clone(),
        requeue_after_ms: (!settled).then_some(INSTANCE_REQUEUE_MS),
        conditions: vec![Condition::new("InstanceReady", ready, reason, message)],
    }
}

/// The answer when simcloud refuses to create the instance for good (`409 conflict`).
pub fn refused(reason: &str) -> MachineStatus {
    let message = format!("simcloud refused to create the instance: {reason}");
    MachineStatus {
        provider_id: None,
        phase: MachinePhase::Failed,
        addresses: Vec::new(),
        failure_domain: None,
        message: message.clone(),
        requeue_after_ms: None,
        conditions: vec![Condition::new(
            "InstanceReady",
            ConditionStatus::False,
            "CreateRefused",
            message,
        )],
    }
}

/// A simcloud address as a Kubernetes node address; kinds it does not know are left out.
pub fn address(address: &api::Address) -> Option<Address> {
    let kind = match address.kind.as_str() {
        "private-ip" => AddressKind::InternalIp,
        "public-ip" => AddressKind::ExternalIp,
        "private-dns" => AddressKind::InternalDns,
        "public-dns" => AddressKind::ExternalDns,
        "hostname" => AddressKind::Hostname,
        _ => return None,
    };
    Some(Address {
        kind,
        address: address.address.clone(),
    })
}

/// `instance` as list-machines reports it: the Machine's name from its tag, else the
/// instance's name.
pub fn listed(instance: &Instance) -> ListedMachine {
    ListedMachine {
        idempotency_key: instance.client_token.clone(),
        provider_id: instance.provider_id.clone(),
        machine_name: instance
            .tags
            .get(naming::TAG_MACHINE)
            .unwrap_or(&instance.name)
            .clone(),
        phase: phase(instance.state),
    }
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{machine, version};

    use super::*;

    fn instance(state: InstanceState) -> Instance {
        Instance {
            id: "i-3".into(),
            provider_id: "sim://instances/i-3".into(),
            client_token: "key-3".into(),
            name: "c1-md-0-x".into(),
            zone: "zone-b".into(),
            instance_type: "standard".into(),
            addresses: vec![
                api::Address {
                    kind: "private-ip".into(),
                    address: "10.0.4.12".into(),
                },
                api::Address {
                    kind: "carrier-pigeon".into(),
                    address: "coop 7".into(),
                },
            ],
            state,
            reason: String::new(),
            tags: BTreeMap::new(),
            cluster: "c1".into(),
            role: Role::Worker,
            network_id: "net-1".into(),
            created_at: 1,
        }
    }

    fn spec(role: MachineRole) -> MachineSpec {
        MachineSpec {
            machine: machine("c1-cp-0"),
            role,
            pool: "control-plane".into(),
            version: version(35),
            failure_domain: Some("zone-a".into()),
            bootstrap_data: b"#cloud-config\n".to_vec(),
        }
    }

    #[test]
    fn states_map_to_phases() {
        assert_eq!(phase(InstanceState::Pending), MachinePhase::Pending);
        assert_eq!(phase(InstanceState::Booting), MachinePhase::Provisioning);
        assert_eq!(phase(InstanceState::Running), MachinePhase::Running);
        assert_eq!(phase(InstanceState::Failed), MachinePhase::Failed);
    }

    #[test]
    fn unsettled_instances_are_requeued() {
        let s = status(&instance(InstanceState::Booting));
        assert_eq!(s.phase, MachinePhase::Provisioning);
        assert_eq!(s.requeue_after_ms, Some(INSTANCE_REQUEUE_MS));
        assert_eq!(s.message, "instance i-3 is booting");
        assert_eq!(s.conditions[0].reason, "InstanceBooting");
        assert_eq!(
            status(&instance(InstanceState::Pending)).phase,
            MachinePhase::Pending
        );
    }

    #[test]
    fn a_running_instance_reports_its_ids_and_addresses() {
        let s = status(&instance(InstanceState::Running));
        assert_eq!(s.phase, MachinePhase::Running);
        assert_eq!(s.requeue_after_ms, None);
        assert_eq!(s.provider_id.as_deref(), Some("sim://instances/i-3"));
        assert_eq!(s.failure_domain.as_deref(), Some("zone-b"));
        assert_eq!(
            s.addresses,
            [Address {
                kind: AddressKind::InternalIp,
                address: "10.0.4.12".into()
            }]
        );
        assert_eq!(s.conditions[0].status, ConditionStatus::True);
    }

    #[test]
    fn a_failed_instance_says_why() {
        let mut failed = instance(InstanceState::Failed);
        failed.reason = "bootstrap: no runcmd".into();
        let s = status(&failed);
        assert_eq!(s.phase, MachinePhase::Failed);
        assert_eq!(s.message, "bootstrap: no runcmd");
        assert_eq!(s.requeue_after_ms, None);
    }

    #[test]
    fn a_refused_create_is_final() {
        let s = refused("client token belonged to instance i-1, which has been deleted");
        assert_eq!(s.phase, MachinePhase::Failed);
        assert_eq!(s.provider_id, None);
        assert!(
            s.message.contains("which has been deleted"),
            "{}",
            s.message
        );
        assert_eq!(s.conditions[0].reason, "CreateRefused");
    }

    #[test]
    fn create_request_is_keyed_tagged_and_encoded() {
        let spec = spec(MachineRole::JoinControlPlane);
        let req = create_request(
            "c1",
            "key-9",
            &spec,
            spec.failure_domain.as_deref(),
            Some("large"),
        );
        let json = serde_json::to_value(&req).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({
                "client_token": "key-9",
                "name": "c1-cp-0",
                "cluster": "c1",
                "role": "control-plane",
                "zone": "zone-a",
                "instance_type": "large",
                "tags": {
                    "capw.dev/cluster": "c1",
                    "capw.dev/machine": "c1-cp-0",
                    "capw.dev/pool": "control-plane",
                },
                "bootstrap_data": "I2Nsb3VkLWNvbmZpZwo=",
            })
        );
        assert_eq!(role(MachineRole::Init), Role::ControlPlane);
        assert_eq!(role(MachineRole::Worker), Role::Worker);
    }

    #[test]
    fn listed_machines_carry_key_and_machine_name() {
        let mut tagged = instance(InstanceState::Running);
        tagged
            .tags
            .insert(naming::TAG_MACHINE.into(), "c1-md-0-abc".into());
        let l = listed(&tagged);
        assert_eq!(l.idempotency_key, "key-3");
        assert_eq!(l.provider_id, "sim://instances/i-3");
        assert_eq!(l.machine_name, "c1-md-0-abc");
        assert_eq!(l.phase, MachinePhase::Running);
        assert_eq!(
            listed(&instance(InstanceState::Pending)).machine_name,
            "c1-md-0-x"
        );
    }
}
