use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capw_sdk::bootstrap::SecretsState;
use capw_sdk::metadata::{self, ExtensionPoint};
use capw_sdk::testing::{self, context};
use capw_sdk::types::{ErrorCode, MachineRole};
use capw_sdk::{ControlPlane, Infrastructure};
use serde_yaml_ng::Value;

use super::*;
use crate::pki::KeyPair;
use crate::testing::{endpoint, item, items, request, without};

fn ok<T, E: std::fmt::Debug>(r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e:?}"),
    }
}

#[test]
fn describe_says_bootstrap_only() {
    let m = metadata::describe::<KubeadmBootstrap>();
    assert_eq!(m.name, "kubeadm-bootstrap");
    assert_eq!(m.extension_points, vec![ExtensionPoint::Bootstrap]);
    assert!(m.requested_grants.http_hosts.is_empty());
    assert!(m.requested_grants.secrets.is_empty());
    let schema = testing::config_schema::<KubeadmBootstrap>();
    assert_eq!(schema["additionalProperties"], false, "{schema}");
    let props = &schema["properties"];
    assert_eq!(props["keyAlgorithm"]["default"], "rsa-2048", "{schema}");
    assert_eq!(
        props["serviceSubnet"]["default"], "10.96.0.0/12",
        "{schema}"
    );
    assert_eq!(props["apiServerBindPort"]["default"], 6443, "{schema}");
    assert_eq!(props["bootstrapTokenTtlHours"]["maximum"], 8760, "{schema}");
    let schema_text = schema.to_string();
    assert!(schema_text.contains("ecdsa-p256"), "{schema}");
}

#[test]
fn cluster_secrets_are_ready_in_one_call_with_every_item() {
    let state = ok(KubeadmBootstrap::cluster_secrets(&context(
        r#"{"keyAlgorithm": "ecdsa-p256"}"#,
    )));
    let SecretsState::Ready(items) = state else {
        panic!("{state:?}");
    };
    let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ca.crt",
            "ca.key",
            "etcd/ca.crt",
            "etcd/ca.key",
            "front-proxy-ca.crt",
            "front-proxy-ca.key",
            "sa.pub",
            "sa.key",
            "bootstrap-token",
            "ca-cert-hash"
        ]
    );
    let set = SecretSet::new(&items);
    assert_eq!(ok(set.ca_cert_hash()), item(&items, "ca-cert-hash"));
    assert!(set.token().is_ok());
}

#[test]
fn rsa_cluster_secrets_finish_in_one_call() {
    let started = Instant::now();
    let state = ok(KubeadmBootstrap::cluster_secrets(&context("{}")));
    eprintln!("native rsa-2048 cluster-secrets: {:?}", started.elapsed());
    let SecretsState::Ready(items) = state else {
        panic!("{state:?}");
    };
    assert!(item(&items, "ca.key").starts_with("-----BEGIN PRIVATE KEY-----"));
    assert!(ok(SecretSet::new(&items).ca()).key.algorithm() == KeyAlgorithm::Rsa2048);
}

#[test]
fn generate_answers_cloud_config() {
    let data = ok(KubeadmBootstrap::generate(
        &context("{}"),
        request("c1-m-1", MachineRole::Worker, items()),
    ));
    assert_eq!(data.format, BootstrapFormat::CloudConfig);
    assert!(data.data.starts_with(b"#cloud-config\n"));
}

#[test]
fn generate_refusals_are_permanent_invalid_input() {
    let mut lonely = request("c1-w-1", MachineRole::Worker, items());
    lonely.control_plane_members.clear();
    let Err(e) = KubeadmBootstrap::generate(&context("{}"), lonely) else {
        panic!("a worker without a control plane accepted");
    };
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.retryable);
    let Err(e) = KubeadmBootstrap::generate(
        &context("{}"),
        request("c1-m-1", MachineRole::Init, without(&items(), "sa.key")),
    ) else {
        panic!("init without sa.key accepted");
    };
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("`sa.key`"), "{}", e.message);
}

#[test]
fn a_control_plane_machine_with_join_credentials_is_refused_as_invalid_input() {
    let mut request = request("c1-m-1", MachineRole::Init, Vec::new());
    request.join = Some(capw_sdk::bootstrap::JoinCredentials {
        ca_certificate: item(&items(), "ca.crt"),
        token: None,
    });
    let Err(e) = KubeadmBootstrap::generate(&context("{}"), request) else {
        panic!("an init joined a service's control plane");
    };
    assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
    assert!(
        e.message
            .contains("control-plane machines do not join a service's control plane"),
        "{}",
        e.message
    );
}

#[test]
fn kubeconfig_has_one_cluster_user_and_current_context() {
    let items = items();
    let yaml = ok(KubeadmBootstrap::kubeconfig(
        &context(r#"{"keyAlgorithm": "ecdsa-p256"}"#),
        endpoint(),
        items.clone(),
    ));
    let config: Value = ok(serde_yaml_ng::from_str(&yaml));
    assert_eq!(config["apiVersion"].as_str(), Some("v1"));
    assert_eq!(config["kind"].as_str(), Some("Config"));
    let cluster = &config["clusters"][0];
    assert_eq!(cluster["name"].as_str(), Some("c1"));
    assert_eq!(
        cluster["cluster"]["server"].as_str(),
        Some("https://lb-1.sim:6443")
    );
    let ca = ok(BASE64.decode(
        cluster["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap_or_default(),
    ));
    assert_eq!(String::from_utf8_lossy(&ca), item(&items, "ca.crt"));
    let user = &config["users"][0];
    assert_eq!(user["name"].as_str(), Some("kubernetes-admin"));
    let cert = ok(BASE64.decode(
        user["user"]["client-certificate-data"]
            .as_str()
            .unwrap_or_default(),
    ));
    let cert = ok(pki::cert_from_pem(&cert));
    assert_eq!(
        cert.tbs_certificate().subject().to_string(),
        "CN=kubernetes-admin,O=kubeadm:cluster-admins"
    );
    assert_eq!(cert.tbs_certificate().issuer().to_string(), "CN=kubernetes");
    let key = ok(BASE64.decode(user["user"]["client-key-data"].as_str().unwrap_or_default()));
    let key = ok(KeyPair::from_pkcs8_pem(&String::from_utf8_lossy(&key)));
    assert_eq!(
        ok(key.public_key_info()),
        cert.tbs_certificate().subject_public_key_info().clone()
    );
    assert_eq!(
        config["contexts"][0]["name"].as_str(),
        Some("kubernetes-admin@c1")
    );
    assert_eq!(
        config["contexts"][0]["context"]["cluster"].as_str(),
        Some("c1")
    );
    assert_eq!(
        config["contexts"][0]["context"]["user"].as_str(),
        Some("kubernetes-admin")
    );
    assert_eq!(
        config["current-context"].as_str(),
        Some("kubernetes-admin@c1")
    );
}

#[test]
fn kubeconfig_without_the_ca_names_the_missing_item() {
    let items = items();
    let key = item(&items, "ca.key");
    for name in ["ca.crt", "ca.key"] {
        let Err(e) = KubeadmBootstrap::kubeconfig(
            &context(r#"{"keyAlgorithm": "ecdsa-p256"}"#),
            endpoint(),
            without(&items, name),
        ) else {
            panic!("kubeconfig without {name}");
        };
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(!e.retryable);
        assert!(
            e.message.contains(&format!("`{name}` is missing")),
            "{}",
            e.message
        );
    }
    let mut garbled = items.clone();
    for i in &mut garbled {
        if i.name == "ca.key" {
            i.data = key.replace('A', "B").into_bytes();
        }
    }
    let Err(e) = KubeadmBootstrap::kubeconfig(&context("{}"), endpoint(), garbled) else {
        panic!("garbled ca.key accepted");
    };
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("`ca.key`"), "{}", e.message);
    assert!(!e.message.contains("BEGIN"), "{}", e.message);

    let mut bad = endpoint();
    bad.host = String::new();
    let Err(e) = KubeadmBootstrap::kubeconfig(&context("{}"), bad, items) else {
        panic!("empty host accepted");
    };
    assert_eq!(e.code, ErrorCode::InvalidInput);
}

#[test]
fn other_points_are_unsupported() {
    let c = context("{}");
    let Err(e) = <KubeadmBootstrap as Infrastructure>::delete_cluster(&c) else {
        panic!("infrastructure answered");
    };
    assert_eq!(e.code, ErrorCode::Unsupported);
    const { assert!(!<KubeadmBootstrap as ControlPlane>::SUPPORTED) };
}

#[test]
fn the_current_join_token_is_the_stored_one_and_a_renewed_one_replaces_it_in_join_data() {
    let items = items();
    let ctx = context(r#"{"bootstrapTokenTtlHours": 48}"#);
    let current = ok(KubeadmBootstrap::current_join_token(&ctx, items.clone()))
        .unwrap_or_else(|| panic!("kubeadm-bootstrap's joins carry a token"));
    assert_eq!(current.item, "bootstrap-token");
    assert_eq!(
        format!("{}.{}", current.id, current.secret),
        item(&items, "bootstrap-token")
    );
    assert_eq!(current.ttl_seconds, 48 * 3600);
    assert_eq!(
        current.extra_groups,
        ["system:bootstrappers:kubeadm:default-node-token"]
    );

    let renewed = ok(KubeadmBootstrap::renew_join_token(&ctx, items.clone()));
    assert_eq!(renewed.item, current.item);
    assert_ne!(renewed.id, current.id);
    assert_eq!(renewed.ttl_seconds, current.ttl_seconds);
    let token = format!("{}.{}", renewed.id, renewed.secret);
    assert!(capw_simcloud::boot_check::is_bootstrap_token(&token));

    // Stored in its item, the renewed token is the one joins carry from then on.
    let mut stored = without(&items, "bootstrap-token");
    stored.push(SecretItem {
        name: renewed.item.clone(),
        data: token.clone().into_bytes(),
    });
    let again = ok(KubeadmBootstrap::current_join_token(&ctx, stored.clone()));
    assert_eq!(again.map(|t| t.id), Some(renewed.id.clone()));
    let data = ok(KubeadmBootstrap::generate(
        &ctx,
        request("w1", MachineRole::Worker, stored),
    ));
    let text = String::from_utf8(data.data).unwrap_or_default();
    assert!(
        text.contains(&token),
        "the worker's data carries the renewed token"
    );
    assert!(!text.contains(&item(&items, "bootstrap-token")));
}

#[test]
fn a_garbled_token_item_is_refused_naming_the_item_not_its_value() {
    let mut stored = without(&items(), "bootstrap-token");
    stored.push(SecretItem {
        name: "bootstrap-token".into(),
        data: b"not-a-token-SECRETVALUE".to_vec(),
    });
    let Err(e) = KubeadmBootstrap::current_join_token(&context("{}"), stored) else {
        panic!("a garbled token is refused");
    };
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("bootstrap-token"), "{}", e.message);
    assert!(!e.message.contains("SECRETVALUE"), "{}", e.message);
}
