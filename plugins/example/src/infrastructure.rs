//! Infrastructure: an endpoint named after the cluster and region, one failure domain per zone,
//! and machines whose addresses derive from their idempotency key.

use capw_sdk::infrastructure::{
    ClusterInfrastructure, ClusterState, FailureDomain, ListedMachine, MachinePhase, MachineSpec,
    MachineStatus,
};
use capw_sdk::types::{
    Address, AddressKind, ClusterRef, Condition, ConditionStatus, Deletion, Endpoint, MachineRef,
    ProviderError,
};
use capw_sdk::{Context, Infrastructure};

use crate::config::ExampleConfig;
use crate::{ExampleProvider, simulate};

impl Infrastructure for ExampleProvider {
    /// Ready at once: endpoint `{cluster}.{region}.example.test:{port}`, one control-plane
    /// failure domain per zone, condition `NetworkReady`.
    fn reconcile_cluster(ctx: &Context<ExampleConfig>) -> Result<ClusterState, ProviderError> {
        if let Some(progress) = simulate::outcome(&ctx.config)? {
            return Ok(ClusterState::InProgress(progress));
        }
        // Exercises the host-log import; the answer does not depend on it.
        capw_sdk::log::info(
            "cluster infrastructure ready",
            &[
                ("cluster", &ctx.cluster().name),
                ("region", &ctx.config.region),
            ],
        );
        Ok(ClusterState::Ready(ClusterInfrastructure {
            control_plane_endpoint: Some(endpoint(ctx.cluster(), &ctx.config)),
            failure_domains: ctx
                .config
                .zones
                .iter()
                .map(|zone| FailureDomain {
                    name: zone.clone(),
                    control_plane: true,
                })
                .collect(),
            conditions: vec![Condition::new(
                "NetworkReady",
                ConditionStatus::True,
                "Provisioned",
                "",
            )],
        }))
    }

    /// Nothing exists, so there is nothing to delete.
    fn delete_cluster(ctx: &Context<ExampleConfig>) -> Result<Deletion, ProviderError> {
        if let Some(progress) = simulate::outcome(&ctx.config)? {
            return Ok(Deletion::InProgress(progress));
        }
        Ok(Deletion::Deleted)
    }

    /// Running at once, with provider id `example://{cluster}/{key}`, an internal IP derived
    /// from the idempotency key (see [`internal_ip`]) and the machine's name as host name.
    fn reconcile_machine(
        ctx: &Context<ExampleConfig>,
        spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        if let Some(progress) = simulate::outcome(&ctx.config)? {
            return Ok(MachineStatus {
                provider_id: None,
                phase: MachinePhase::Provisioning,
                addresses: Vec::new(),
                failure_domain: spec.failure_domain,
                message: progress.message,
                requeue_after_ms: Some(progress.requeue_after_ms),
                conditions: progress.conditions,
            });
        }
        Ok(MachineStatus {
            provider_id: Some(provider_id(ctx.cluster(), ctx.idempotency_key())),
            phase: MachinePhase::Running,
            addresses: vec![
                Address {
                    kind: AddressKind::InternalIp,
                    address: internal_ip(ctx.idempotency_key()),
                },
                Address {
                    kind: AddressKind::Hostname,
                    address: spec.machine.name.clone(),
                },
            ],
            message: format!(
                "role={} pool={} version={} bootstrap={} bytes",
                spec.role,
                spec.pool,
                spec.version,
                spec.bootstrap_data.len()
            ),
            failure_domain: spec.failure_domain,
            requeue_after_ms: None,
            conditions: Vec::new(),
        })
    }

    /// Nothing exists, so there is nothing to delete.
    fn delete_machine(
        ctx: &Context<ExampleConfig>,
        _machine: MachineRef,
    ) -> Result<Deletion, ProviderError> {
        if let Some(progress) = simulate::outcome(&ctx.config)? {
            return Ok(Deletion::InProgress(progress));
        }
        Ok(Deletion::Deleted)
    }

    /// One running machine per name in `existingMachines`, keyed `{cluster uid}-{name}`, then
    /// one per key in `foreignMachines`, named after its key.
    fn list_machines(ctx: &Context<ExampleConfig>) -> Result<Vec<ListedMachine>, ProviderError> {
        simulate::failure(&ctx.config)?;
        let existing = ctx
            .config
            .existing_machines
            .iter()
            .map(|name| (format!("{}-{name}", ctx.cluster().uid), name.clone()));
        let foreign = ctx
            .config
            .foreign_machines
            .iter()
            .map(|key| (key.clone(), key.clone()));
        Ok(existing
            .chain(foreign)
            .map(|(key, name)| ListedMachine {
                provider_id: provider_id(ctx.cluster(), &key),
                idempotency_key: key,
                machine_name: name,
                phase: MachinePhase::Running,
            })
            .collect())
    }
}

/// The cluster's control-plane endpoint.
pub fn endpoint(cluster: &ClusterRef, config: &ExampleConfig) -> Endpoint {
    Endpoint {
        host: format!("{}.{}.example.test", cluster.name, config.region),
        port: config.port,
    }
}

/// The provider id of the machine created with `idempotency_key`.
pub fn provider_id(cluster: &ClusterRef, idempotency_key: &str) -> String {
    format!("example://{}/{}", cluster.name, idempotency_key)
}

/// `10.0.{a}.{b}` from the 32-bit FNV-1a hash `h` of the key: `a = (h >> 8) & 0xff`,
/// `b = h % 254 + 1`, so `b` is never a network or broadcast octet. The same key always gives
/// the same address, as a retried create must.
pub fn internal_ip(idempotency_key: &str) -> String {
    let hash = fnv1a(idempotency_key.as_bytes());
    let a = (hash >> 8) & 0xff;
    let b = hash % 254 + 1;
    format!("10.0.{a}.{b}")
}

/// 32-bit FNV-1a: tiny, stable across platforms and releases, unlike `std`'s hasher.
fn fnv1a(bytes: &[u8]) -> u32 {
    const OFFSET_BASIS: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    bytes.iter().fold(OFFSET_BASIS, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{context, machine, version};
    use capw_sdk::types::MachineRole;

    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn internal_ip_is_deterministic_and_in_range() {
        assert_eq!(internal_ip("key-1"), internal_ip("key-1"));
        for key in ["", "a", "key-1", "key-2", "zzzzzzzzzzzz"] {
            let ip = internal_ip(key);
            let last: u32 = ip
                .rsplit('.')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            assert!((1..=254).contains(&last), "{ip}");
            assert!(ip.starts_with("10.0."), "{ip}");
        }
    }

    #[test]
    fn cluster_is_ready() {
        let c = context(r#"{"region": "eu-1", "zones": ["x", "y"], "port": 8443}"#);
        let Ok(ClusterState::Ready(infra)) = ExampleProvider::reconcile_cluster(&c) else {
            panic!("not ready");
        };
        let endpoint = infra.control_plane_endpoint.unwrap();
        assert_eq!(endpoint.host, "c1.eu-1.example.test");
        assert_eq!(endpoint.port, 8443);
        assert_eq!(infra.failure_domains.len(), 2);
        assert_eq!(infra.conditions[0].type_, "NetworkReady");
    }

    #[test]
    fn machine_runs() {
        let c = context(r#"{"region": "eu-1"}"#);
        let spec = MachineSpec {
            machine: machine("m1"),
            role: MachineRole::JoinControlPlane,
            pool: "control-plane".into(),
            version: version(35),
            failure_domain: Some("b".into()),
            bootstrap_data: vec![0; 12],
        };
        let status = match ExampleProvider::reconcile_machine(&c, spec) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(status.provider_id.as_deref(), Some("example://c1/key-1"));
        assert_eq!(status.phase, MachinePhase::Running);
        assert_eq!(status.addresses[1].address, "m1");
        assert_eq!(status.failure_domain.as_deref(), Some("b"));
        assert_eq!(
            status.message,
            "role=join-control-plane pool=control-plane version=v1.35.0 bootstrap=12 bytes"
        );
    }

    #[test]
    fn lists_existing_machines_then_foreign_ones() {
        let c = context(
            r#"{"region": "eu-1", "existingMachines": ["m7"], "foreignMachines": ["u9-m1"]}"#,
        );
        assert_eq!(
            ExampleProvider::list_machines(&c),
            Ok(vec![
                ListedMachine {
                    idempotency_key: "uid-c1-m7".into(),
                    provider_id: "example://c1/uid-c1-m7".into(),
                    machine_name: "m7".into(),
                    phase: MachinePhase::Running,
                },
                ListedMachine {
                    idempotency_key: "u9-m1".into(),
                    provider_id: "example://c1/u9-m1".into(),
                    machine_name: "u9-m1".into(),
                    phase: MachinePhase::Running,
                },
            ])
        );
    }

    #[test]
    fn simulated_in_progress_machine_has_no_provider_id() {
        let c = context(r#"{"region": "eu-1", "simulate": "in-progress"}"#);
        let spec = MachineSpec {
            machine: machine("m1"),
            role: MachineRole::Worker,
            pool: "md-0".into(),
            version: version(35),
            failure_domain: None,
            bootstrap_data: Vec::new(),
        };
        let Ok(status) = ExampleProvider::reconcile_machine(&c, spec) else {
            panic!("simulated in-progress is not an error");
        };
        assert_eq!(status.provider_id, None);
        assert_eq!(status.phase, MachinePhase::Provisioning);
        assert_eq!(status.requeue_after_ms, Some(2000));
        assert_eq!(
            ExampleProvider::delete_cluster(&c),
            Ok(Deletion::InProgress(simulate::in_progress()))
        );
        // list-machines has no in-progress form.
        assert_eq!(ExampleProvider::list_machines(&c), Ok(Vec::new()));
    }
}
