use std::time::Duration;

use super::control_planes::parse_version;
use super::*;
use crate::fixtures::{CA_HASH, TOKEN, init_cloud_config, join_cloud_config};
use crate::model::{
    ControlPlaneState, CreateInstance, CreateLoadBalancer, CreateManagedControlPlane,
    CreateNetwork, InstanceState, RegisterBootstrap, Role, UpdateManagedControlPlane,
};

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
    assert_eq!(i.addresses[0].address, "10.0.16.10");
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
    assert_eq!(address("a", "c1").unwrap(), "10.0.16.10");
    assert_eq!(address("b", "c1").unwrap(), "10.0.16.11");
    assert_eq!(address("c", "c2").unwrap(), "10.0.32.10");
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
