use std::time::Duration;

use super::control_planes::parse_version;
use super::*;
use crate::faults::SplitMix64;
use crate::fixtures::{
    CA_CERT_HASH, CA_HASH, TOKEN, init_cloud_config, init_cloud_config_with_ca, join_cloud_config,
};
use crate::model::{
    ControlPlaneState, CreateInstance, CreateLoadBalancer, CreateManagedControlPlane,
    CreateNetwork, Instance, InstanceState, LoadBalancerState, MAX_FAILURE_REASON_LEN,
    ManagedControlPlane, RegisterBootstrap, Role, UpdateManagedControlPlane,
};

/// Credentials of a managed control plane, minted once for all tests.
fn creds() -> ServiceCredentials {
    static MINTED: std::sync::OnceLock<ServiceCredentials> = std::sync::OnceLock::new();
    MINTED
        .get_or_init(|| {
            ServiceCredentials::mint("m1", std::time::SystemTime::now())
                .unwrap_or_else(|e| panic!("mint: {e}"))
        })
        .clone()
}

fn settings() -> CloudSettings {
    CloudSettings {
        zones: vec!["zone-a".into(), "zone-b".into()],
        domain: "sim".into(),
        timings: Timings::uniform(Duration::from_millis(10)),
        real_boot: false,
        loopback_seed: 0,
    }
}

fn instance_req(token: &str, cluster: &str, role: Role, data: &str) -> CreateInstance {
    CreateInstance {
        instance_type: None,
        client_token: token.into(),
        name: format!("m-{token}"),
        cluster: cluster.into(),
        role,
        zone: None,
        tags: BTreeMap::new(),
        bootstrap_data: BASE64.encode(data),
    }
}

/// A cluster `c1` with a network, a load balancer and a bootstrap registration.
fn cluster() -> CloudState {
    let s = settings();
    let mut state = CloudState::default();
    state
        .create_network(
            CreateNetwork {
                client_token: None,
                cluster: "c1".into(),
                name: "n".into(),
            },
            0,
        )
        .ok();
    state
        .create_load_balancer(
            CreateLoadBalancer {
                client_token: None,
                cluster: "c1".into(),
                name: "lb".into(),
                port: None,
            },
            0,
            &s,
        )
        .ok();
    state
        .register_bootstrap(
            "c1",
            RegisterBootstrap {
                token: TOKEN.into(),
                ca_cert_hash: CA_HASH.into(),
            },
        )
        .ok();
    state
}

#[test]
fn instances_boot_through_every_state() {
    let s = settings();
    let mut state = cluster();
    let data = init_cloud_config("lb-1.sim:6443", TOKEN);
    let (i, outcome) = state
        .create_instance(
            instance_req("t1", "c1", Role::ControlPlane, &data),
            1000,
            &s,
        )
        .unwrap();
    assert_eq!(outcome, Outcome::Created);
    assert_eq!(i.state, InstanceState::Pending);
    assert_eq!(i.addresses[0].address, "10.0.4.10");
    assert_eq!(i.zone, "zone-a");
    state.advance(1009, &s);
    assert_eq!(state.instance(&i.id).unwrap().state, InstanceState::Pending);
    state.advance(1010, &s);
    assert_eq!(state.instance(&i.id).unwrap().state, InstanceState::Booting);
    assert!(state.advance(1020, &s));
    assert_eq!(state.instance(&i.id).unwrap().state, InstanceState::Running);
    assert!(!state.advance(5000, &s));
}

#[test]
fn bad_bootstrap_data_fails_the_instance_with_a_reason() {
    let s = settings();
    let mut state = cluster();
    let data = join_cloud_config("10.0.0.1:6443", TOKEN, CA_HASH, false);
    let (i, _) = state
        .create_instance(instance_req("t1", "c1", Role::Worker, &data), 0, &s)
        .unwrap();
    state.advance(100, &s);
    let i = state.instance(&i.id).unwrap();
    assert_eq!(i.state, InstanceState::Failed);
    assert_eq!(
        i.reason,
        "bootstrap: joins endpoint 10.0.0.1:6443, cluster endpoint is lb-1.sim:6443"
    );
}

#[test]
fn a_client_token_makes_one_instance_ever() {
    let s = settings();
    let mut state = cluster();
    let req = instance_req("t1", "c1", Role::Worker, "#cloud-config\n");
    let (first, _) = state.create_instance(req.clone(), 0, &s).unwrap();
    let (again, outcome) = state.create_instance(req.clone(), 5, &s).unwrap();
    assert_eq!(
        (first.id.as_str(), outcome),
        (again.id.as_str(), Outcome::Existing)
    );
    let mut other = req.clone();
    other.name = "other".into();
    assert!(matches!(
        state.create_instance(other, 5, &s),
        Err(StateError::TokenMismatch { .. })
    ));
    assert!(state.delete_instance(&first.id));
    assert!(!state.delete_instance(&first.id));
    assert_eq!(
        state.create_instance(req, 6, &s).err(),
        Some(StateError::TokenOfDeleted { id: first.id })
    );
}

#[test]
fn a_deleted_networks_block_is_used_again_and_running_out_is_its_own_error() {
    let mut state = CloudState::default();
    let create = |state: &mut CloudState, cluster: &str| {
        state
            .create_network(
                CreateNetwork {
                    client_token: None,
                    cluster: cluster.into(),
                    name: "n".into(),
                },
                0,
            )
            .map(|(n, _)| (n.id, n.cidr))
    };
    let (first, cidr) = create(&mut state, "c0").unwrap();
    assert_eq!(cidr, "10.0.4.0/22");
    assert_eq!(create(&mut state, "c1").unwrap().1, "10.0.8.0/22");
    assert!(state.delete_network(&first).unwrap());
    // The lowest free block, under a new id.
    let (id, cidr) = create(&mut state, "c2").unwrap();
    assert_ne!(id, first);
    assert_eq!(cidr, "10.0.4.0/22");
    assert_eq!(state.index, state.built_index());
    // Every block of 10.0.0.0/8 taken (block 0 is never used).
    for i in 3..=16_383 {
        create(&mut state, &format!("c{i}")).unwrap();
    }
    let err = create(&mut state, "one-too-many").unwrap_err();
    assert!(matches!(err, StateError::Exhausted { .. }), "{err:?}");
    // A cluster's second network is still refused as that, not as running out.
    assert!(matches!(
        create(&mut state, "c5"),
        Err(StateError::AlreadyExists { .. })
    ));
}

#[test]
fn addresses_count_up_per_network() {
    let s = settings();
    let mut state = cluster();
    state
        .create_network(
            CreateNetwork {
                client_token: None,
                cluster: "c2".into(),
                name: "n".into(),
            },
            0,
        )
        .unwrap();
    let mut address = |token: &str, cluster: &str| {
        state
            .create_instance(instance_req(token, cluster, Role::Worker, ""), 0, &s)
            .map(|(i, _)| i.addresses[0].address.clone())
    };
    assert_eq!(address("a", "c1").unwrap(), "10.0.4.10");
    assert_eq!(address("b", "c1").unwrap(), "10.0.4.11");
    assert_eq!(address("c", "c2").unwrap(), "10.0.8.10");
    assert_eq!(
        address("d", "c3").err(),
        Some(StateError::NoNetwork {
            cluster: "c3".into()
        })
    );
}

#[test]
fn networks_in_use_are_kept() {
    let s = settings();
    let mut state = cluster();
    let (i, _) = state
        .create_instance(instance_req("a", "c1", Role::Worker, ""), 0, &s)
        .unwrap();
    assert!(matches!(
        state.delete_network("net-1"),
        Err(StateError::NetworkInUse { count: 1, .. })
    ));
    state.delete_instance(&i.id);
    assert_eq!(state.delete_network("net-1"), Ok(true));
    assert_eq!(state.delete_network("net-1"), Ok(false));
}

#[test]
fn managed_control_planes_update_versions_not_replicas() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, _) = state
        .create_control_plane(
            CreateManagedControlPlane {
                client_token: Some("t".into()),
                cluster: "m1".into(),
                name: "cp".into(),
                version: "v1.31.0".into(),
                replicas: 3,
            },
            creds(),
            0,
            &s,
        )
        .unwrap();
    assert_eq!((cp.state, cp.endpoint), (ControlPlaneState::Creating, None));
    let upgrade = |v: &str| UpdateManagedControlPlane {
        version: Some(v.into()),
        replicas: None,
    };
    assert!(matches!(
        state.update_control_plane(&cp.id, upgrade("1.32.0"), 1, &s),
        Err(StateError::Busy {
            state: "creating",
            ..
        })
    ));
    state.advance(10, &s);
    let ready = state.control_plane(&cp.id, &s).unwrap();
    assert_eq!(ready.state, ControlPlaneState::Ready);
    assert_eq!(
        ready.endpoint.map(|e| e.to_string()).as_deref(),
        Some("mcp-1.sim:443")
    );
    assert_eq!(
        state.update_control_plane(
            &cp.id,
            UpdateManagedControlPlane {
                version: None,
                replicas: Some(5)
            },
            11,
            &s
        ),
        Err(StateError::Immutable {
            field: "replicas",
            from: "3".into(),
            to: "5".into()
        })
    );
    assert!(matches!(
        state.update_control_plane(&cp.id, upgrade("1.30.9"), 11, &s),
        Err(StateError::InvalidField {
            field: "version",
            ..
        })
    ));
    assert!(matches!(
        state.update_control_plane(&cp.id, upgrade("1.33.0"), 11, &s),
        Err(StateError::InvalidField {
            field: "version",
            ..
        })
    ));
    let updating = state
        .update_control_plane(&cp.id, upgrade("1.32.0"), 20, &s)
        .unwrap();
    assert_eq!(updating.state, ControlPlaneState::Updating);
    assert_eq!(updating.version, "v1.31.0");
    assert_eq!(updating.target_version.as_deref(), Some("1.32.0"));
    // Asking again for the same target is fine; another is not.
    assert!(
        state
            .update_control_plane(&cp.id, upgrade("v1.32.0"), 21, &s)
            .is_ok()
    );
    assert!(
        state
            .update_control_plane(&cp.id, upgrade("1.32.1"), 21, &s)
            .is_err()
    );
    state.advance(30, &s);
    let done = state.control_plane(&cp.id, &s).unwrap();
    assert_eq!(
        (done.state, done.version.as_str()),
        (ControlPlaneState::Ready, "1.32.0")
    );
}

#[test]
fn workers_of_a_managed_cluster_join_its_endpoint() {
    let s = settings();
    let mut state = CloudState::default();
    state
        .create_network(
            CreateNetwork {
                client_token: None,
                cluster: "m1".into(),
                name: "n".into(),
            },
            0,
        )
        .unwrap();
    state
        .create_control_plane(
            CreateManagedControlPlane {
                client_token: None,
                cluster: "m1".into(),
                name: "cp".into(),
                version: "1.31.0".into(),
                replicas: 2,
            },
            creds(),
            0,
            &s,
        )
        .unwrap();
    state
        .register_bootstrap(
            "m1",
            RegisterBootstrap {
                token: TOKEN.into(),
                ca_cert_hash: CA_HASH.into(),
            },
        )
        .unwrap();
    let data = join_cloud_config("mcp-1.sim:443", TOKEN, CA_HASH, false);
    let (i, _) = state
        .create_instance(instance_req("w", "m1", Role::Worker, &data), 0, &s)
        .unwrap();
    state.advance(100, &s);
    assert_eq!(state.instance(&i.id).unwrap().state, InstanceState::Running);
}

#[test]
fn versions_parse() {
    assert_eq!(parse_version("v1.31.2"), Ok((1, 31, 2)));
    assert_eq!(parse_version("1.31.2"), Ok((1, 31, 2)));
    assert!(parse_version("1.31").is_err());
    assert!(parse_version("1.31.x").is_err());
    assert!(parse_version("1.31.2.3").is_err());
    assert!(parse_version("1..2").is_err());
}

#[test]
fn inventory_groups_by_cluster() {
    let s = settings();
    let state = cluster();
    let inventory = state.inventory(None, &s);
    let c1 = &inventory.clusters["c1"];
    assert_eq!((c1.networks.len(), c1.load_balancers.len()), (1, 1));
    assert_eq!(
        c1.bootstrap.as_ref().map(|b| b.token_id.as_str()),
        Some("abcdef")
    );
    assert!(state.inventory(Some("c2"), &s).clusters.is_empty());
}

// ---- the index against the records ----

/// Delays that differ per phase, so that phases fall due out of step.
fn uneven_settings() -> CloudSettings {
    CloudSettings {
        timings: Timings {
            provision: Duration::from_millis(7),
            boot: Duration::from_millis(13),
            load_balancer: Duration::from_millis(5),
            control_plane_create: Duration::from_millis(11),
            control_plane_update: Duration::from_millis(9),
            join_token_ttl: Duration::from_millis(30),
        },
        ..settings()
    }
}

const CLUSTERS: u64 = 5;

/// One step of a made-up workload over [`CLUSTERS`] clusters: creates, updates and deletes of
/// every kind, some of them refused, drawn from `rng`. Instances carry init or join data
/// aimed at their cluster's endpoint as it is at creation, so some boot and some fail.
fn random_step(state: &mut CloudState, rng: &mut SplitMix64, now_ms: u64, s: &CloudSettings) {
    let cluster = format!("c{}", rng.next_u64() % CLUSTERS);
    let token = format!("t{}", rng.next_u64() % 40);
    let pick = |rng: &mut SplitMix64, counter: u64| rng.next_u64() % counter.max(1) + 1;
    // Refusals are part of the workload: only what the state keeps matters here.
    match rng.next_u64() % 10 {
        0 => {
            let _ = state.create_network(
                CreateNetwork {
                    client_token: Some(token),
                    cluster,
                    name: "n".into(),
                },
                now_ms,
            );
        }
        1 => {
            let _ = state.delete_network(&Kind::Network.id(pick(rng, state.counters.network)));
        }
        2 => {
            let _ = state.create_load_balancer(
                CreateLoadBalancer {
                    client_token: Some(token),
                    cluster,
                    name: "lb".into(),
                    port: None,
                },
                now_ms,
                s,
            );
        }
        3 => {
            let id = Kind::LoadBalancer.id(pick(rng, state.counters.load_balancer));
            state.delete_load_balancer(&id);
        }
        4 => {
            // Only in c3 and c4: a managed control plane registers its own token, which the
            // fixtures' data do not carry, so instances elsewhere still get to run.
            let cluster = format!("c{}", 3 + rng.next_u64() % 2);
            let _ = state.create_control_plane(
                CreateManagedControlPlane {
                    client_token: Some(token),
                    cluster,
                    name: "cp".into(),
                    version: "1.31.0".into(),
                    replicas: 3,
                },
                creds(),
                now_ms,
                s,
            );
        }
        // The newest control plane: the one most likely still creating, which can fail.
        5 if rng.next_u64().is_multiple_of(3) => {
            let id = Kind::ControlPlane.id(state.counters.control_plane);
            let _ = state.fail_control_plane(&id, "the service failed", now_ms);
        }
        5 => {
            let id = Kind::ControlPlane.id(pick(rng, state.counters.control_plane));
            let version = Some(format!("1.{}.0", 31 + rng.next_u64() % 3));
            let update = UpdateManagedControlPlane {
                version,
                replicas: None,
            };
            let _ = state.update_control_plane(&id, update, now_ms, s);
        }
        6 => {
            state.delete_instance(&Kind::Instance.id(pick(rng, state.counters.instance)));
        }
        _ => {
            let endpoint = state
                .cluster_endpoint(&cluster, s)
                .map_or_else(|| "nowhere:6443".to_owned(), |e| e.to_string());
            let (role, data) = match rng.next_u64() % 4 {
                0 => (
                    Role::ControlPlane,
                    init_cloud_config_with_ca(&endpoint, TOKEN),
                ),
                1 => (
                    Role::ControlPlane,
                    join_cloud_config(&endpoint, TOKEN, CA_CERT_HASH, true),
                ),
                2 => (
                    Role::Worker,
                    join_cloud_config(&endpoint, TOKEN, CA_CERT_HASH, false),
                ),
                _ => (Role::Worker, "#cloud-config\n".to_owned()),
            };
            let token = format!("i{}", rng.next_u64() % 400);
            let _ = state.create_instance(instance_req(&token, &cluster, role, &data), now_ms, s);
        }
    }
}

/// The moves of [`CloudState::advance`] found by walking every record, as the sim did before
/// it kept an index: the reference the indexed advance must agree with.
fn advance_by_walk(state: &mut CloudState, now_ms: u64, s: &CloudSettings) {
    let t = &s.timings;
    let due = |since: u64, delay: Duration| now_ms >= since.saturating_add(millis(delay));
    for lb in state.load_balancers.values_mut() {
        if lb.state == LoadBalancerState::Provisioning && due(lb.created_at_ms, t.load_balancer) {
            lb.state = LoadBalancerState::Active;
        }
    }
    for cp in state.control_planes.values_mut() {
        match cp.state {
            ControlPlaneState::Creating if due(cp.created_at_ms, t.control_plane_create) => {
                cp.state = ControlPlaneState::Ready;
            }
            ControlPlaneState::Updating if due(cp.updated_at_ms, t.control_plane_update) => {
                if let Some(target) = cp.target_version.take() {
                    cp.version = target;
                }
                cp.state = ControlPlaneState::Ready;
            }
            _ => {}
        }
    }
    let renewals: Vec<u64> = state
        .control_planes
        .values()
        .filter(|cp| cp.credentials.is_some() && due(cp.token_issued_at_ms, t.join_token_ttl / 2))
        .map(|cp| cp.id)
        .collect();
    for id in renewals {
        state.renew_join_token(id, now_ms);
    }
    for i in state.instances.values_mut() {
        if i.state == InstanceState::Pending && due(i.created_at_ms, t.provision) {
            i.state = InstanceState::Booting;
        }
    }
    let booted = |i: &InstanceRecord| {
        i.state == InstanceState::Booting && due(i.created_at_ms, t.provision + t.boot)
    };
    let finished: Vec<u64> = state
        .instances
        .values()
        .filter(|i| !s.real_boot && booted(i))
        .map(|i| i.id)
        .collect();
    for id in finished {
        state.finish_boot(id, s);
    }
    state.rebuild_index();
}

/// `filter` applied to every instance, one by one.
fn instances_by_walk(state: &CloudState, filter: &InstanceFilter) -> Vec<Instance> {
    state
        .instances(&InstanceFilter::default())
        .into_iter()
        .filter(|i| filter.matches(&i.cluster, &i.client_token, &i.tags))
        .collect()
}

/// Fails when the index differs from one built afresh, or a listing by cluster or token
/// differs from the same filter over every record.
fn assert_index_matches_records(state: &CloudState, s: &CloudSettings, step: usize) {
    assert_eq!(
        state.index,
        state.built_index(),
        "index drifted at step {step}"
    );
    let all = state.inventory(None, s);
    // A few tokens per step, a different few each step: every one is checked in time.
    let used = state.instance_tokens.keys().skip(step % 50).step_by(50);
    let unused = "unused".to_owned();
    for token in used.map(Some).chain([None, Some(&unused)]) {
        let clusters = (0..=CLUSTERS).map(|c| Some(format!("c{c}")));
        for cluster in clusters.chain([None]) {
            let filter = InstanceFilter {
                cluster: cluster.clone(),
                client_token: token.cloned(),
                tags: Vec::new(),
            };
            let expected = instances_by_walk(state, &filter);
            assert_eq!(
                state.instances(&filter),
                expected,
                "{filter:?} at step {step}"
            );
            if token.is_none()
                && let Some(c) = cluster.as_deref()
            {
                let mine = all.clusters.get(c).cloned().unwrap_or_default();
                assert_eq!(state.networks(Some(c)), mine.networks);
                assert_eq!(state.load_balancers(Some(c), s), mine.load_balancers);
                assert_eq!(
                    state.control_planes(Some(c), s),
                    mine.managed_control_planes
                );
                let only = state.inventory(Some(c), s);
                assert_eq!(only.clusters.get(c).cloned().unwrap_or_default(), mine);
            }
        }
    }
}

#[test]
fn listings_by_cluster_and_token_match_a_walk_over_every_record() {
    let s = uneven_settings();
    let mut state = CloudState::default();
    let mut rng = SplitMix64(7);
    let mut now = 0;
    let (mut seen, mut seen_cp) = (Vec::new(), Vec::new());
    for step in 0..600 {
        random_step(&mut state, &mut rng, now, &s);
        now += rng.next_u64() % 6;
        state.advance(now, &s);
        assert_index_matches_records(&state, &s, step);
        for i in state.instances.values() {
            if !seen.contains(&i.state) {
                seen.push(i.state);
            }
        }
        for cp in state.control_planes.values() {
            if !seen_cp.contains(&cp.state) {
                seen_cp.push(cp.state);
            }
        }
    }
    // The workload reached every state, so every path that moves a record ran.
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(seen_cp.len(), 4, "{seen_cp:?}");
}

#[test]
fn advance_moves_what_a_walk_over_every_record_moves() {
    let s = uneven_settings();
    let (mut indexed, mut walked) = (CloudState::default(), CloudState::default());
    let mut rng = SplitMix64(11);
    let mut now = 1_000;
    for step in 0..800 {
        let mut twin = rng.clone();
        random_step(&mut indexed, &mut rng, now, &s);
        random_step(&mut walked, &mut twin, now, &s);
        // Clocks that sometimes stand still and sometimes jump past several delays.
        now += match rng.next_u64() % 8 {
            0 => 40,
            n => n % 4,
        };
        let changed = indexed.advance(now, &s);
        let before = serde_json::to_value(&walked).unwrap();
        advance_by_walk(&mut walked, now, &s);
        let after = serde_json::to_value(&walked).unwrap();
        assert_eq!(changed, before != after, "step {step}");
        assert_eq!(
            serde_json::to_value(&indexed).unwrap(),
            after,
            "step {step}"
        );
        assert_eq!(indexed.index, indexed.built_index(), "step {step}");
    }
}

#[test]
fn a_loaded_state_keeps_advancing() {
    let s = settings();
    let mut state = cluster();
    let data = init_cloud_config("lb-1.sim:6443", TOKEN);
    let (i, _) = state
        .create_instance(instance_req("t1", "c1", Role::ControlPlane, &data), 0, &s)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    crate::store::save(&path, &crate::store::encode(&state).unwrap()).unwrap();
    let mut loaded = crate::store::load(&path).unwrap().unwrap();
    assert_eq!(loaded.index, state.index);
    assert_eq!(loaded.instances(&InstanceFilter::default()).len(), 1);
    assert!(loaded.advance(20, &s));
    assert_eq!(
        loaded.instance(&i.id).unwrap().state,
        InstanceState::Running
    );
    assert_eq!(
        loaded.load_balancer("lb-1", &s).unwrap().state,
        LoadBalancerState::Active
    );
    assert_eq!(loaded.index, loaded.built_index());
}

#[test]
fn a_real_boot_stays_booting_until_its_machine_settles_it() {
    let s = CloudSettings {
        real_boot: true,
        ..settings()
    };
    let mut state = cluster();
    let mut create = |token: &str| {
        let req = instance_req(token, "c1", Role::Worker, "#cloud-config\n");
        state
            .create_instance(req, 0, &s)
            .map(|(i, _)| i.id)
            .unwrap()
    };
    let (settled, deleted) = (create("a"), create("b"));
    assert!(state.advance(1_000, &s));
    assert!(!state.advance(1_000_000, &s));
    assert_eq!(
        state.instance(&settled).unwrap().state,
        InstanceState::Booting
    );
    assert!(state.settle_machine(&settled, MachineOutcome::Ready));
    assert!(state.delete_instance(&deleted));
    assert_eq!(state.index, state.built_index());
    assert_eq!(
        state.instance(&settled).unwrap().state,
        InstanceState::Running
    );
    assert!(state.settle_machine(&settled, MachineOutcome::Failed("gone".into())));
    assert_eq!(state.index, state.built_index());
}

// ---- managed control planes as a service ----

fn managed(state: &mut CloudState, s: &CloudSettings) -> (ManagedControlPlane, ServiceCredentials) {
    let credentials = creds();
    state
        .create_network(
            CreateNetwork {
                client_token: None,
                cluster: "m1".into(),
                name: "n".into(),
            },
            0,
        )
        .unwrap();
    let (cp, _) = state
        .create_control_plane(
            CreateManagedControlPlane {
                client_token: Some("m1-cp".into()),
                cluster: "m1".into(),
                name: "cp".into(),
                version: "1.34.4".into(),
                replicas: 3,
            },
            credentials.clone(),
            0,
            s,
        )
        .unwrap();
    (cp, credentials)
}

#[test]
fn a_managed_control_plane_registers_its_token_and_ca_and_gives_credentials_once_ready() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, credentials) = managed(&mut state, &s);
    assert_eq!(cp.failures_tolerated, 1);
    let registered = state.bootstrap("m1").unwrap();
    assert_eq!(registered.ca_cert_hash, credentials.ca_cert_hash);
    assert_eq!(registered.token_id, credentials.join_token(0)[..6]);
    assert!(matches!(
        state.control_plane_credentials(&cp.id, &s),
        Err(StateError::NotReady { .. })
    ));
    state.advance(10, &s);
    let got = state.control_plane_credentials(&cp.id, &s).unwrap();
    assert_eq!(got.endpoint.to_string(), "mcp-1.sim:443");
    assert_eq!(got.ca_certificate, credentials.ca_cert_pem);
    assert_eq!(got.join_token, credentials.join_token(0));
    assert_eq!(got.join_token_ttl_seconds, 24 * 60 * 60);
    assert_eq!(
        got.join_token_groups,
        ["system:bootstrappers:kubeadm:default-node-token"]
    );
    let kubeconfig: serde_yaml_ng::Value = serde_yaml_ng::from_str(&got.admin_kubeconfig).unwrap();
    assert_eq!(
        kubeconfig["clusters"][0]["cluster"]["server"].as_str(),
        Some("https://mcp-1.sim:443")
    );
}

#[test]
fn a_worker_joins_a_managed_control_plane_with_its_token_and_ca_hash_only() {
    let s = settings();
    let mut state = CloudState::default();
    let (_, credentials) = managed(&mut state, &s);
    state.advance(10, &s);
    let good = join_cloud_config(
        "mcp-1.sim:443",
        &credentials.join_token(0),
        &credentials.ca_cert_hash,
        false,
    );
    let wrong_token = join_cloud_config("mcp-1.sim:443", TOKEN, &credentials.ca_cert_hash, false);
    let (ok, _) = state
        .create_instance(instance_req("w1", "m1", Role::Worker, &good), 10, &s)
        .unwrap();
    let (bad, _) = state
        .create_instance(instance_req("w2", "m1", Role::Worker, &wrong_token), 10, &s)
        .unwrap();
    state.advance(100, &s);
    assert_eq!(
        state.instance(&ok.id).unwrap().state,
        InstanceState::Running
    );
    let failed = state.instance(&bad.id).unwrap();
    assert_eq!(failed.state, InstanceState::Failed);
    assert!(failed.reason.contains("token"), "{}", failed.reason);
    assert!(!failed.reason.contains(TOKEN), "no token in reasons");
}

#[test]
fn the_join_token_is_renewed_past_half_its_life_and_the_renewed_one_still_joins() {
    let s = CloudSettings {
        timings: Timings {
            join_token_ttl: Duration::from_millis(1000),
            ..Timings::uniform(Duration::from_millis(10))
        },
        ..settings()
    };
    let mut state = CloudState::default();
    let (cp, credentials) = managed(&mut state, &s);
    state.advance(499, &s);
    let first = state.control_plane_credentials(&cp.id, &s).unwrap();
    assert_eq!(first.join_token, credentials.join_token(0));
    let old_join = join_cloud_config(
        "mcp-1.sim:443",
        &first.join_token,
        &credentials.ca_cert_hash,
        false,
    );
    let (late, _) = state
        .create_instance(instance_req("w1", "m1", Role::Worker, &old_join), 495, &s)
        .unwrap();
    assert!(state.advance(500, &s), "the renewal is a change");
    let renewed = state.control_plane_credentials(&cp.id, &s).unwrap();
    assert_ne!(renewed.join_token[..6], first.join_token[..6]);
    assert_eq!(renewed.join_token_issued_at, 0, "issued at 500 ms");
    assert_eq!(
        state.bootstrap("m1").unwrap().token_id,
        renewed.join_token[..6]
    );
    state.advance(600, &s);
    assert_eq!(
        state.instance(&late.id).unwrap().state,
        InstanceState::Running,
        "a join made just before the renewal still passes"
    );
    state.advance(1000, &s);
    assert_eq!(
        state
            .control_plane_credentials(&cp.id, &s)
            .unwrap()
            .join_token,
        credentials.join_token(2)
    );
    assert_eq!(state.built_index(), state.index);
}

#[test]
fn auto_upgrade_starts_an_update_of_a_ready_control_plane_only() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    let to = |v: &str| crate::model::AutoUpgrade { version: v.into() };
    assert!(matches!(
        state.auto_upgrade_control_plane(&cp.id, to("1.35.4"), 1, &s),
        Err(StateError::NotReady {
            state: "creating",
            ..
        })
    ));
    state.advance(10, &s);
    let updating = state
        .auto_upgrade_control_plane(&cp.id, to("1.35.4"), 10, &s)
        .unwrap();
    assert_eq!(updating.state, ControlPlaneState::Updating);
    assert_eq!(updating.target_version.as_deref(), Some("1.35.4"));
    assert!(matches!(
        state.auto_upgrade_control_plane(&cp.id, to("1.35.4"), 11, &s),
        Err(StateError::NotReady { .. })
    ));
    state.advance(20, &s);
    assert_eq!(state.control_plane(&cp.id, &s).unwrap().version, "1.35.4");
}

#[test]
fn deleting_a_managed_control_plane_removes_its_registration_only() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    assert!(state.delete_control_plane(&cp.id));
    assert!(state.bootstrap("m1").is_err());
    let (cp, _) = state
        .create_control_plane(
            CreateManagedControlPlane {
                client_token: None,
                cluster: "m1".into(),
                name: "cp".into(),
                version: "1.34.4".into(),
                replicas: 1,
            },
            creds(),
            1,
            &s,
        )
        .unwrap();
    assert_eq!(cp.failures_tolerated, 0);
    state
        .register_bootstrap(
            "m1",
            RegisterBootstrap {
                token: TOKEN.into(),
                ca_cert_hash: CA_HASH.into(),
            },
        )
        .unwrap();
    assert!(state.delete_control_plane(&cp.id));
    assert_eq!(
        state.bootstrap("m1").unwrap().ca_cert_hash,
        CA_HASH,
        "a registration made by someone else stays"
    );
    assert_eq!(state.built_index(), state.index);
}

#[test]
fn a_real_boot_control_plane_is_ready_when_its_service_serves_its_version() {
    let s = CloudSettings {
        real_boot: true,
        ..settings()
    };
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    state.advance(1000, &s);
    assert_eq!(
        state.control_plane(&cp.id, &s).unwrap().state,
        ControlPlaneState::Creating,
        "no timer makes it ready"
    );
    let plan = state.service_plan(&s);
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0].version, "1.34.4");
    assert!(!state.settle_service(&cp.id, "v1.33.0", 1000));
    assert!(state.settle_service(&cp.id, "v1.34.4", 1000));
    let ready = state.control_plane(&cp.id, &s).unwrap();
    let endpoint = ready.endpoint.unwrap();
    assert!(endpoint.host.starts_with("127."), "{endpoint}");
    assert_eq!(endpoint.port, MANAGED_REAL_API_PORT);
    let update = UpdateManagedControlPlane {
        version: Some("1.35.4".into()),
        replicas: None,
    };
    state
        .update_control_plane(&cp.id, update, 1001, &s)
        .unwrap();
    assert_eq!(state.service_plan(&s)[0].version, "1.35.4");
    state.advance(5000, &s);
    assert!(!state.settle_service(&cp.id, "v1.34.4", 5000));
    assert!(state.settle_service(&cp.id, "v1.35.4", 5000));
    let upgraded = state.control_plane(&cp.id, &s).unwrap();
    assert_eq!(
        (upgraded.state, upgraded.version.as_str()),
        (ControlPlaneState::Ready, "1.35.4")
    );
    assert_eq!(state.built_index(), state.index);
}

// ---- a managed control plane's service that failed ----

fn upgrade_to(version: &str) -> UpdateManagedControlPlane {
    UpdateManagedControlPlane {
        version: Some(version.into()),
        replicas: None,
    }
}

#[test]
fn a_service_that_fails_while_creating_is_failed_for_good_with_its_first_reason() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    assert_eq!(
        state.fail_control_plane(&cp.id, "etcd did not start", 5),
        Ok(true)
    );
    assert_eq!(state.index, state.built_index(), "no timer left for it");
    let failed = state.control_plane(&cp.id, &s).unwrap();
    assert_eq!(failed.state, ControlPlaneState::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some("etcd did not start"));
    assert_eq!(failed.endpoint, None, "it never served");
    assert!(matches!(
        state.control_plane_credentials(&cp.id, &s),
        Err(StateError::NotReady {
            state: "failed",
            ..
        })
    ));
    // Its create delay passes: it does not turn ready.
    state.advance(1_000, &s);
    assert_eq!(state.control_plane(&cp.id, &s).unwrap(), failed);

    // Reported again, with the same reason or another: nothing changes.
    assert_eq!(
        state.fail_control_plane(&cp.id, "etcd did not start", 9),
        Ok(false)
    );
    assert_eq!(
        state.fail_control_plane(&cp.id, "something else", 9),
        Ok(false)
    );
    assert_eq!(state.control_plane(&cp.id, &s).unwrap(), failed);

    // No update, not even to the version it has; replicas as they are still pass.
    for version in ["1.34.4", "1.35.0"] {
        let Err(e) = state.update_control_plane(&cp.id, upgrade_to(version), 10, &s) else {
            panic!("a failed control plane took {version}");
        };
        assert!(matches!(e, StateError::Failed { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "managed control plane mcp-1 failed (etcd did not start) and cannot be updated; \
             delete it and create another"
        );
    }
    let same = UpdateManagedControlPlane {
        version: None,
        replicas: Some(3),
    };
    assert!(state.update_control_plane(&cp.id, same, 10, &s).is_ok());
    assert!(matches!(
        state.auto_upgrade_control_plane(
            &cp.id,
            crate::model::AutoUpgrade {
                version: "1.35.0".into()
            },
            10,
            &s
        ),
        Err(StateError::NotReady {
            state: "failed",
            ..
        })
    ));

    assert!(state.delete_control_plane(&cp.id));
    assert!(
        state.bootstrap("m1").is_err(),
        "its registration goes with it"
    );
    assert_eq!(state.index, state.built_index());
}

#[test]
fn a_service_that_fails_while_updating_keeps_its_endpoint_and_credentials() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, credentials) = managed(&mut state, &s);
    state.advance(10, &s);
    assert!(matches!(
        state.fail_control_plane(&cp.id, "boom", 10),
        Err(StateError::NotReady { state: "ready", .. })
    ));
    let served = state.control_plane_credentials(&cp.id, &s).unwrap();
    state
        .update_control_plane(&cp.id, upgrade_to("1.35.4"), 11, &s)
        .unwrap();
    assert_eq!(
        state.fail_control_plane(&cp.id, "kube-apiserver v1.35.4 did not become ready", 12),
        Ok(true)
    );
    assert_eq!(state.index, state.built_index());
    state.advance(1_000, &s);
    let failed = state.control_plane(&cp.id, &s).unwrap();
    assert_eq!(failed.state, ControlPlaneState::Failed);
    assert_eq!(
        (failed.version.as_str(), failed.target_version.as_deref()),
        ("1.34.4", Some("1.35.4")),
        "the version it served and the one it failed to reach"
    );
    assert_eq!(failed.endpoint, Some(served.endpoint.clone()));
    let still = state.control_plane_credentials(&cp.id, &s).unwrap();
    assert_eq!(
        (still.endpoint, still.ca_certificate, still.join_token),
        (
            served.endpoint,
            served.ca_certificate,
            credentials.join_token(0)
        )
    );
    assert!(matches!(
        state.update_control_plane(&cp.id, upgrade_to("1.35.4"), 13, &s),
        Err(StateError::Failed { .. })
    ));
}

#[test]
fn a_failure_reason_is_one_line_cut_to_its_limit_and_never_blank() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    assert!(matches!(
        state.fail_control_plane(&cp.id, " \n\t ", 1),
        Err(StateError::InvalidField {
            field: "reason",
            ..
        })
    ));
    assert!(matches!(
        state.fail_control_plane("mcp-9", "boom", 1),
        Err(StateError::NotFound { .. })
    ));
    let long = format!(
        "first\r\nsecond\t\u{7}third {}",
        "é".repeat(MAX_FAILURE_REASON_LEN)
    );
    assert_eq!(state.fail_control_plane(&cp.id, &long, 1), Ok(true));
    let reason = state
        .control_plane(&cp.id, &s)
        .unwrap()
        .failure_reason
        .unwrap();
    assert!(reason.starts_with("first second third éé"), "{reason}");
    assert!(reason.ends_with("é…"), "{reason}");
    assert!(reason.len() <= MAX_FAILURE_REASON_LEN, "{}", reason.len());
    assert!(
        reason.len() > MAX_FAILURE_REASON_LEN - 8,
        "{}",
        reason.len()
    );
}

#[test]
fn a_failed_real_boot_service_is_not_run_again_nor_settled() {
    let s = CloudSettings {
        real_boot: true,
        ..settings()
    };
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    assert!(state.service_launch_order(&cp.id, &s).is_some());
    assert_eq!(state.fail_control_plane(&cp.id, "no etcd", 5), Ok(true));
    assert!(
        state.service_plan(&s).is_empty(),
        "its agent is not watched nor started"
    );
    assert!(state.service_launch_order(&cp.id, &s).is_none());
    assert!(
        !state.settle_service(&cp.id, "v1.34.4", 6),
        "a late report does not revive it"
    );
    assert_eq!(
        state.control_plane(&cp.id, &s).unwrap().state,
        ControlPlaneState::Failed
    );
    assert!(
        state.machine_ids().contains(&cp.id),
        "its directory is the cloud's until it is deleted"
    );
}

#[test]
fn a_failed_control_plane_survives_the_state_file() {
    let s = settings();
    let mut state = CloudState::default();
    let (cp, _) = managed(&mut state, &s);
    state
        .fail_control_plane(&cp.id, "etcd did not start", 5)
        .unwrap();
    let bytes = crate::store::encode(&state).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    crate::store::save(&path, &bytes).unwrap();
    let mut loaded = crate::store::load(&path).unwrap().unwrap();
    assert_eq!(loaded.index, state.index);
    assert_eq!(
        loaded.control_plane(&cp.id, &s).unwrap(),
        state.control_plane(&cp.id, &s).unwrap()
    );
    loaded.advance(1_000, &s);
    assert_eq!(
        loaded.control_plane(&cp.id, &s).unwrap().state,
        ControlPlaneState::Failed
    );
    // A record written before failures existed reads as it did: not failed.
    let mut old = serde_json::to_value(&state).unwrap();
    let record = &mut old["control_planes"]["1"];
    assert!(record.get("failure").is_some());
    record.as_object_mut().unwrap().remove("failure");
    record["state"] = "ready".into();
    let mut old: CloudState = serde_json::from_value(old).unwrap();
    old.rebuild_index();
    let view = old.control_plane(&cp.id, &s).unwrap();
    assert_eq!(
        (view.state, view.failure_reason),
        (ControlPlaneState::Ready, None)
    );
}
