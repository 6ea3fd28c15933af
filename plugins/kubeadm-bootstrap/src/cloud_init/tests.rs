use capw_simcloud::boot_check::{self, BootExpectations, ClusterSecrets, KubeadmAction};
use capw_simcloud::model::{self, Role};
use serde::Deserialize as _;
use serde_yaml_ng::Value;

use super::*;
use crate::testing::{item, items, request, without};

fn config() -> KubeadmBootstrapConfig {
    KubeadmBootstrapConfig::default()
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

fn data(role: MachineRole) -> String {
    ok(generate(&config(), "c1", &request("c1-m-1", role, items())))
}

fn parse(text: &str) -> Value {
    ok(serde_yaml_ng::from_str(text))
}

/// The content of the file written at `path`, if any.
fn file(cloud: &Value, path: &str) -> Option<(String, String)> {
    cloud["write_files"].as_sequence()?.iter().find_map(|f| {
        (f["path"].as_str() == Some(path)).then(|| {
            (
                f["content"].as_str().unwrap_or_default().to_owned(),
                f["permissions"].as_str().unwrap_or_default().to_owned(),
            )
        })
    })
}

fn kubeadm_docs(cloud: &Value) -> Vec<Value> {
    let Some((text, mode)) = file(cloud, KUBEADM_CONFIG_PATH) else {
        panic!("no kubeadm config in {cloud:?}");
    };
    assert_eq!(mode, "0600");
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| ok(Value::deserialize(d)))
        .collect()
}

fn boot(text: &str, role: Role) -> Result<KubeadmAction, String> {
    let items = items();
    let (token, hash) = (
        item(&items, "bootstrap-token"),
        item(&items, "ca-cert-hash"),
    );
    let endpoint = model::Endpoint {
        host: "lb-1.sim".into(),
        port: 6443,
    };
    boot_check::check(
        text.as_bytes(),
        &BootExpectations {
            cluster: "c1",
            role,
            endpoint: Some(&endpoint),
            secrets: Some(ClusterSecrets {
                token: &token,
                ca_cert_hash: &hash,
                previous_token: None,
            }),
            cluster_judges_token: false,
        },
    )
    .map(|verdict| verdict.action)
    .map_err(|e| e.to_string())
}

#[test]
fn the_sim_learns_token_and_hash_from_the_init() {
    let items = items();
    let endpoint = model::Endpoint {
        host: "lb-1.sim".into(),
        port: 6443,
    };
    let verdict = ok(boot_check::check(
        data(MachineRole::Init).as_bytes(),
        &BootExpectations {
            cluster: "c1",
            role: Role::ControlPlane,
            endpoint: Some(&endpoint),
            secrets: None,
            cluster_judges_token: false,
        },
    ));
    let Some(learnt) = verdict.registers else {
        panic!("nothing learnt");
    };
    assert_eq!(learnt.token, item(&items, "bootstrap-token"));
    assert_eq!(learnt.ca_cert_hash, item(&items, "ca-cert-hash"));
}

#[test]
fn every_role_passes_the_sim_boot_check() {
    assert_eq!(
        boot(&data(MachineRole::Init), Role::ControlPlane),
        Ok(KubeadmAction::Init)
    );
    assert_eq!(
        boot(&data(MachineRole::JoinControlPlane), Role::ControlPlane),
        Ok(KubeadmAction::Join {
            control_plane: true
        })
    );
    assert_eq!(
        boot(&data(MachineRole::Worker), Role::Worker),
        Ok(KubeadmAction::Join {
            control_plane: false
        })
    );
    // And the sim tells the roles apart.
    assert!(boot(&data(MachineRole::Init), Role::Worker).is_err());
    assert!(boot(&data(MachineRole::Worker), Role::ControlPlane).is_err());
}

#[test]
fn init_carries_init_and_cluster_configuration() {
    let text = data(MachineRole::Init);
    assert!(text.starts_with("#cloud-config\n"), "{text}");
    let cloud = parse(&text);
    assert_eq!(
        cloud["runcmd"],
        parse("['kubeadm init --config /run/kubeadm/kubeadm.yaml']")
    );
    let docs = kubeadm_docs(&cloud);
    assert_eq!(docs.len(), 2);
    let (init, cluster) = (&docs[0], &docs[1]);
    assert_eq!(init["apiVersion"].as_str(), Some("kubeadm.k8s.io/v1beta4"));
    assert_eq!(init["kind"].as_str(), Some("InitConfiguration"));
    let token = item(&items(), "bootstrap-token");
    assert_eq!(
        init["bootstrapTokens"][0]["token"].as_str(),
        Some(token.as_str())
    );
    assert_eq!(init["bootstrapTokens"][0]["ttl"].as_str(), Some("24h0m0s"));
    assert_eq!(init["nodeRegistration"]["name"].as_str(), Some("c1-m-1"));
    assert_eq!(init["localAPIEndpoint"]["bindPort"].as_u64(), Some(6443));
    assert_eq!(cluster["kind"].as_str(), Some("ClusterConfiguration"));
    assert_eq!(
        cluster["apiVersion"].as_str(),
        Some("kubeadm.k8s.io/v1beta4")
    );
    assert_eq!(cluster["kubernetesVersion"].as_str(), Some("v1.35.2"));
    assert_eq!(
        cluster["controlPlaneEndpoint"].as_str(),
        Some("lb-1.sim:6443")
    );
    assert_eq!(cluster["clusterName"].as_str(), Some("c1"));
    assert_eq!(cluster["encryptionAlgorithm"].as_str(), Some("RSA-2048"));
    assert_eq!(
        cluster["networking"]["podSubnet"].as_str(),
        Some("192.168.0.0/16")
    );
    assert_eq!(
        cluster["networking"]["serviceSubnet"].as_str(),
        Some("10.96.0.0/12")
    );
    assert_eq!(
        cluster["networking"]["dnsDomain"].as_str(),
        Some("cluster.local")
    );
}

#[test]
fn control_plane_machines_get_the_shared_pki_and_workers_no_key() {
    let items = items();
    for role in [MachineRole::Init, MachineRole::JoinControlPlane] {
        let cloud = parse(&data(role));
        for (name, kind) in CONTROL_PLANE_FILES {
            let Some((content, mode)) = file(&cloud, &format!("/etc/kubernetes/pki/{name}")) else {
                panic!("{role}: no {name}");
            };
            assert_eq!(content, item(&items, name), "{role}: {name}");
            assert_eq!(mode, if kind.is_secret() { "0600" } else { "0644" });
        }
    }
    let text = data(MachineRole::Worker);
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    assert!(!text.contains("/etc/kubernetes/pki/"), "{text}");
    assert!(!text.contains("etcd-members"), "{text}");
}

#[test]
fn joins_pin_the_ca_and_only_control_plane_joins_have_a_control_plane_section() {
    let items = items();
    for (role, control_plane) in [
        (MachineRole::JoinControlPlane, true),
        (MachineRole::Worker, false),
    ] {
        let cloud = parse(&data(role));
        assert_eq!(
            cloud["runcmd"],
            parse("['kubeadm join --config /run/kubeadm/kubeadm.yaml']")
        );
        let docs = kubeadm_docs(&cloud);
        assert_eq!(docs.len(), 1);
        let join = &docs[0];
        assert_eq!(join["kind"].as_str(), Some("JoinConfiguration"));
        let discovery = &join["discovery"]["bootstrapToken"];
        assert_eq!(
            discovery["apiServerEndpoint"].as_str(),
            Some("lb-1.sim:6443")
        );
        assert_eq!(
            discovery["token"].as_str(),
            Some(item(&items, "bootstrap-token").as_str())
        );
        assert_eq!(
            discovery["caCertHashes"],
            parse(&format!("['{}']", item(&items, "ca-cert-hash")))
        );
        assert_eq!(join["nodeRegistration"]["name"].as_str(), Some("c1-m-1"));
        assert_eq!(join.get("controlPlane").is_some(), control_plane, "{role}");
        assert_eq!(
            file(&cloud, KUBERNETES_VERSION_PATH).map(|f| f.0),
            Some("v1.35.2\n".into())
        );
    }
}

#[test]
fn control_plane_joins_name_the_etcd_members_sorted() {
    let cloud = parse(&data(MachineRole::JoinControlPlane));
    assert_eq!(
        file(&cloud, ETCD_MEMBERS_PATH).map(|f| f.0),
        Some("c1-cp-a=https://10.0.0.1:2380\nc1-cp-b=https://[fd00::2]:2380\n".into())
    );
    let mut reordered = request("c1-m-1", MachineRole::JoinControlPlane, items());
    reordered.control_plane_members.reverse();
    assert_eq!(
        ok(generate(&config(), "c1", &reordered)),
        data(MachineRole::JoinControlPlane),
        "pure in the members' order"
    );
}

#[test]
fn roles_and_members_must_agree() {
    let mut init = request("c1-m-1", MachineRole::Init, items());
    init.control_plane_members = request("x", MachineRole::Worker, vec![]).control_plane_members;
    assert!(matches!(
        generate(&config(), "c1", &init),
        Err(GenerateError::InitWithMembers { count: 2 })
    ));
    for role in [MachineRole::JoinControlPlane, MachineRole::Worker] {
        let mut join = request("c1-m-1", role, items());
        join.control_plane_members.clear();
        let Err(e) = generate(&config(), "c1", &join) else {
            panic!("{role} without members accepted");
        };
        assert!(matches!(e, GenerateError::JoinWithoutMembers { .. }), "{e}");
        assert!(e.to_string().contains(role.as_str()), "{e}");
    }
}

#[test]
fn bad_names_addresses_and_endpoints_are_refused() {
    let bad_machine = request("C1 M1", MachineRole::Worker, items());
    assert!(matches!(
        generate(&config(), "c1", &bad_machine),
        Err(GenerateError::BadName {
            what: "machine name",
            ..
        })
    ));
    let mut bad_member = request("c1-m-1", MachineRole::JoinControlPlane, items());
    bad_member.control_plane_members[0].address = "10.0.0.1\nevil=x".into();
    let Err(e) = generate(&config(), "c1", &bad_member) else {
        panic!("newline in an address accepted");
    };
    assert!(matches!(e, GenerateError::BadMemberAddress { .. }), "{e}");
    assert!(!e.to_string().contains('\n'), "{e}");
    let mut bad_endpoint = request("c1-m-1", MachineRole::Worker, items());
    bad_endpoint.endpoint.port = 0;
    assert!(matches!(
        generate(&config(), "c1", &bad_endpoint),
        Err(GenerateError::Endpoint(_))
    ));
}

#[test]
fn missing_or_garbled_items_name_the_item_and_never_the_content() {
    let token = item(&items(), "bootstrap-token");
    for (role, name) in [
        (MachineRole::Worker, "bootstrap-token"),
        (MachineRole::Worker, "ca.crt"),
        (MachineRole::Init, "sa.key"),
        (MachineRole::JoinControlPlane, "etcd/ca.key"),
    ] {
        let missing = request("c1-m-1", role, without(&items(), name));
        let Err(e) = generate(&config(), "c1", &missing) else {
            panic!("{role} without {name} accepted");
        };
        assert!(
            matches!(e, GenerateError::Secrets(SecretsError::Missing { .. })),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("`{name}`")), "{e}");
    }
    // A key where a certificate belongs.
    let mut swapped = items();
    let key = item(&swapped, "ca.key");
    for i in &mut swapped {
        if i.name == "front-proxy-ca.crt" {
            i.data = key.clone().into_bytes();
        }
    }
    let Err(e) = generate(
        &config(),
        "c1",
        &request("c1-m-1", MachineRole::Init, swapped),
    ) else {
        panic!("a key as a certificate accepted");
    };
    let shown = e.to_string();
    assert!(
        shown.contains("`front-proxy-ca.crt` is not a PEM certificate"),
        "{shown}"
    );
    assert!(
        !shown.contains("BEGIN") && !shown.contains(&token),
        "{shown}"
    );
    // A hash of another CA.
    let mut mixed = items();
    for i in &mut mixed {
        if i.name == "ca-cert-hash" {
            i.data = format!("sha256:{}", "0".repeat(64)).into_bytes();
        }
    }
    assert!(matches!(
        generate(
            &config(),
            "c1",
            &request("c1-m-1", MachineRole::Worker, mixed)
        ),
        Err(GenerateError::Secrets(SecretsError::HashMismatch))
    ));
}

#[test]
fn config_reaches_the_kubeadm_documents() {
    let config = KubeadmBootstrapConfig {
        key_algorithm: crate::config::KeyAlgorithm::EcdsaP256,
        pod_subnet: "10.244.0.0/16".into(),
        api_server_bind_port: 8443,
        bootstrap_token_ttl_hours: 48,
        ..KubeadmBootstrapConfig::default()
    };
    let init = ok(generate(
        &config,
        "c1",
        &request("c1-m-1", MachineRole::Init, items()),
    ));
    let docs = kubeadm_docs(&parse(&init));
    assert_eq!(
        docs[0]["bootstrapTokens"][0]["ttl"].as_str(),
        Some("48h0m0s")
    );
    assert_eq!(docs[0]["localAPIEndpoint"]["bindPort"].as_u64(), Some(8443));
    assert_eq!(docs[1]["encryptionAlgorithm"].as_str(), Some("ECDSA-P256"));
    assert_eq!(
        docs[1]["networking"]["podSubnet"].as_str(),
        Some("10.244.0.0/16")
    );
    let join = ok(generate(
        &config,
        "c1",
        &request("c1-m-2", MachineRole::JoinControlPlane, items()),
    ));
    let docs = kubeadm_docs(&parse(&join));
    assert_eq!(
        docs[0]["controlPlane"]["localAPIEndpoint"]["bindPort"].as_u64(),
        Some(8443)
    );
}

/// The credentials a service hands out: this fixture cluster's CA certificate (standing in for
/// the service's) and a token of its own.
fn service_join_request(role: MachineRole) -> (BootstrapRequest, String) {
    let token = ok(crate::token::BootstrapToken::generate());
    let mut request = request("c1-w-1", role, Vec::new());
    request.control_plane_members.clear();
    request.join = Some(JoinCredentials {
        ca_certificate: item(&items(), "ca.crt"),
        token: Some(capw_sdk::types::JoinToken {
            item: "bootstrap-token".into(),
            id: token.id().into(),
            secret: token.as_str()[7..].into(),
            ttl_seconds: 86_400,
            extra_groups: vec!["system:bootstrappers:kubeadm:default-node-token".into()],
        }),
    });
    (request, token.as_str().to_owned())
}

#[test]
fn a_worker_joins_a_services_control_plane_with_its_token_pinned_to_its_ca() {
    let (request, token) = service_join_request(MachineRole::Worker);
    let text = ok(generate(&config(), "c1", &request));
    let cloud = parse(&text);
    assert_eq!(
        cloud["runcmd"],
        parse("['kubeadm join --config /run/kubeadm/kubeadm.yaml']")
    );
    let docs = kubeadm_docs(&cloud);
    assert_eq!(docs.len(), 1);
    let join = &docs[0];
    assert_eq!(join["kind"].as_str(), Some("JoinConfiguration"));
    assert!(join.get("controlPlane").is_none(), "{join:?}");
    let discovery = &join["discovery"]["bootstrapToken"];
    assert_eq!(
        discovery["apiServerEndpoint"].as_str(),
        Some("lb-1.sim:6443")
    );
    assert_eq!(discovery["token"].as_str(), Some(token.as_str()));
    let hash = item(&items(), "ca-cert-hash");
    assert_eq!(discovery["caCertHashes"], parse(&format!("['{hash}']")));
    assert_eq!(
        file(&cloud, KUBERNETES_VERSION_PATH).map(|f| f.0),
        Some("v1.35.2\n".into())
    );
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    assert!(!text.contains(PKI_DIR), "{text}");

    // simcloud's boot check accepts it as a join of the service's cluster.
    let endpoint = model::Endpoint {
        host: "lb-1.sim".into(),
        port: 6443,
    };
    let verdict = boot_check::check(
        text.as_bytes(),
        &BootExpectations {
            cluster: "c1",
            role: Role::Worker,
            endpoint: Some(&endpoint),
            secrets: Some(ClusterSecrets {
                token: &token,
                ca_cert_hash: &hash,
                previous_token: None,
            }),
            cluster_judges_token: false,
        },
    );
    assert_eq!(
        verdict.map(|v| v.action).map_err(|e| e.to_string()),
        Ok(KubeadmAction::Join {
            control_plane: false
        })
    );
}

#[test]
fn control_plane_machines_do_not_join_a_services_control_plane() {
    for role in [MachineRole::Init, MachineRole::JoinControlPlane] {
        let (request, _) = service_join_request(role);
        let Err(e) = generate(&config(), "c1", &request) else {
            panic!("{role} joined a service's control plane");
        };
        assert!(
            matches!(e, GenerateError::ControlPlaneJoinsService { .. }),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("control-plane machines do not join a service's control plane"),
            "{e}"
        );
    }
}

#[test]
fn unusable_service_credentials_are_refused_without_quoting_the_secret() {
    let (mut no_token, _) = service_join_request(MachineRole::Worker);
    if let Some(join) = no_token.join.as_mut() {
        join.token = None;
    }
    assert!(matches!(
        generate(&config(), "c1", &no_token),
        Err(GenerateError::ServiceJoinWithoutToken)
    ));

    let (mut bad_token, _) = service_join_request(MachineRole::Worker);
    let secret = "NOT-A-TOKEN-SECRET";
    if let Some(token) = bad_token.join.as_mut().and_then(|j| j.token.as_mut()) {
        token.secret = secret.into();
    }
    let Err(e) = generate(&config(), "c1", &bad_token) else {
        panic!("a malformed token accepted");
    };
    assert!(matches!(e, GenerateError::BadServiceToken { .. }), "{e}");
    assert!(!e.to_string().contains(secret), "{e}");

    let (mut bad_ca, _) = service_join_request(MachineRole::Worker);
    if let Some(join) = bad_ca.join.as_mut() {
        join.ca_certificate = "not a certificate".into();
    }
    assert!(matches!(
        generate(&config(), "c1", &bad_ca),
        Err(GenerateError::BadServiceCa(_))
    ));
}
