use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::*;
use crate::fixtures::{
    CA_HASH, TOKEN, cloud_config_with_files, init_cloud_config, join_cloud_config,
    kubeadm_init_docs, kubeadm_join_docs,
};

fn endpoint() -> Endpoint {
    Endpoint {
        host: "lb-1.sim".into(),
        port: 6443,
    }
}

fn run(data: &str, role: Role) -> Result<KubeadmAction, BootCheckError> {
    let endpoint = endpoint();
    let verdict = check(
        data.as_bytes(),
        &BootExpectations {
            cluster: "c1",
            role,
            endpoint: Some(&endpoint),
            secrets: Some(ClusterSecrets {
                token: TOKEN,
                ca_cert_hash: CA_HASH,
                previous_token: None,
            }),
            cluster_judges_token: false,
        },
    )?;
    assert_eq!(
        verdict.registers, None,
        "a registered cluster learns nothing"
    );
    Ok(verdict.action)
}

fn reason(data: &str, role: Role) -> String {
    match run(data, role) {
        Ok(action) => panic!("accepted ({action:?}): {data}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn token_and_hash_forms() {
    assert!(is_bootstrap_token("abcdef.0123456789abcdef"));
    assert!(!is_bootstrap_token("ABCDEF.0123456789abcdef"));
    assert!(!is_bootstrap_token("abcde.0123456789abcdef"));
    assert!(!is_bootstrap_token("abcdef0123456789abcdef"));
    assert!(!is_bootstrap_token("abcdef.0123456789abcde_"));
    assert!(is_ca_cert_hash(CA_HASH));
    assert!(!is_ca_cert_hash("sha1:abcd"));
    assert!(!is_ca_cert_hash(&CA_HASH[..70]));
}

#[test]
fn endpoints_parse_with_kubeadm_default_port() {
    let e = |h: &str, p| {
        Some(Endpoint {
            host: h.into(),
            port: p,
        })
    };
    assert_eq!(parse_endpoint("lb-1.sim:6443"), e("lb-1.sim", 6443));
    assert_eq!(parse_endpoint("lb-1.sim"), e("lb-1.sim", 6443));
    assert_eq!(parse_endpoint("[fd00::1]:443"), e("fd00::1", 443));
    assert_eq!(parse_endpoint("[fd00::1]"), e("fd00::1", 6443));
    assert_eq!(parse_endpoint("lb:x"), None);
    assert_eq!(parse_endpoint(""), None);
}

#[test]
fn accepts_init_of_a_control_plane() {
    let data = init_cloud_config("lb-1.sim:6443", TOKEN);
    assert_eq!(
        run(&data, Role::ControlPlane).ok(),
        Some(KubeadmAction::Init)
    );
}

#[test]
fn accepts_worker_and_control_plane_joins() {
    let worker = join_cloud_config("lb-1.sim:6443", TOKEN, CA_HASH, false);
    assert_eq!(
        run(&worker, Role::Worker).ok(),
        Some(KubeadmAction::Join {
            control_plane: false
        })
    );
    let cp = join_cloud_config("LB-1.sim:6443", TOKEN, CA_HASH, true);
    assert_eq!(
        run(&cp, Role::ControlPlane).ok(),
        Some(KubeadmAction::Join {
            control_plane: true
        })
    );
}

#[test]
fn accepts_base64_files_argv_runcmd_and_default_port() {
    let docs = BASE64.encode(kubeadm_join_docs("lb-1.sim", TOKEN, CA_HASH, false));
    let data = format!(
        "#cloud-config\nwrite_files:\n- path: /run/kubeadm/join.yaml\n  encoding: b64\n  content: {docs}\nruncmd:\n- [kubeadm, join, --config, /run/kubeadm/join.yaml]\n"
    );
    assert!(
        run(&data, Role::Worker).is_ok(),
        "{:?}",
        run(&data, Role::Worker)
    );
}

#[test]
fn accepts_a_heredoc_in_runcmd() {
    let docs = kubeadm_init_docs("lb-1.sim:6443", TOKEN);
    let indented: String = docs.lines().map(|l| format!("    {l}\n")).collect();
    let data = format!(
        "#cloud-config\nruncmd:\n- |\n    cat <<'EOF' > /tmp/kubeadm.yaml\n{indented}    EOF\n    kubeadm init --config=/tmp/kubeadm.yaml && touch /done\n"
    );
    assert_eq!(
        run(&data, Role::ControlPlane).ok(),
        Some(KubeadmAction::Init)
    );
}

#[test]
fn rejects_data_that_is_not_cloud_config() {
    assert_eq!(
        reason("#!/bin/sh\nkubeadm init\n", Role::ControlPlane),
        "data is not cloud-config: the first line must be `#cloud-config`"
    );
    let endpoint = endpoint();
    let err = check(
        &[0xff, 0xfe],
        &BootExpectations {
            cluster: "c1",
            role: Role::Worker,
            endpoint: Some(&endpoint),
            secrets: None,
            cluster_judges_token: false,
        },
    );
    assert!(matches!(err, Err(BootCheckError::NotUtf8)));
}

#[test]
fn rejects_invalid_yaml() {
    let r = reason("#cloud-config\nruncmd: [kubeadm\n", Role::Worker);
    assert!(r.starts_with("cloud-config is not valid YAML: "), "{r}");
    assert_eq!(
        reason("#cloud-config\n- a\n", Role::Worker),
        "cloud-config is not a YAML mapping"
    );
}

#[test]
fn rejects_data_without_kubeadm() {
    assert_eq!(
        reason("#cloud-config\n", Role::Worker),
        "runcmd runs neither `kubeadm init` nor `kubeadm join`"
    );
    assert_eq!(
        reason("#cloud-config\nruncmd:\n- echo hello\n", Role::Worker),
        "runcmd runs neither `kubeadm init` nor `kubeadm join`"
    );
    assert_eq!(
        reason(
            "#cloud-config\nruncmd:\n- kubeadm join lb-1.sim:6443 --token abcdef.0123456789abcdef\n",
            Role::Worker
        ),
        "`kubeadm join` runs without `--config`; the sim reads kubeadm.k8s.io/v1beta4 documents from the file it names"
    );
    assert_eq!(
        reason(
            "#cloud-config\nruncmd:\n- kubeadm init --config /a\n- kubeadm join --config /b\n",
            Role::ControlPlane
        ),
        "runcmd runs kubeadm 2 times (`kubeadm init` and `kubeadm join`); want one"
    );
}

#[test]
fn rejects_a_config_file_nobody_writes() {
    let data = cloud_config_with_files(
        &[("/other.yaml", "x: 1")],
        "kubeadm init --config /run/kubeadm/kubeadm.yaml",
    );
    assert_eq!(
        reason(&data, Role::ControlPlane),
        "`kubeadm init --config /run/kubeadm/kubeadm.yaml`, but no write_files entry or runcmd heredoc writes /run/kubeadm/kubeadm.yaml"
    );
}

#[test]
fn rejects_other_kubeadm_api_versions_and_missing_documents() {
    let old = kubeadm_init_docs("lb-1.sim:6443", TOKEN).replace("v1beta4", "v1beta3");
    let data = cloud_config_with_files(&[("/k.yaml", &old)], "kubeadm init --config /k.yaml");
    assert_eq!(
        reason(&data, Role::ControlPlane),
        "kubeadm config /k.yaml has a ClusterConfiguration of apiVersion kubeadm.k8s.io/v1beta3; want kubeadm.k8s.io/v1beta4"
    );
    let join_docs = kubeadm_join_docs("lb-1.sim:6443", TOKEN, CA_HASH, true);
    let data = cloud_config_with_files(&[("/k.yaml", &join_docs)], "kubeadm init --config /k.yaml");
    assert_eq!(
        reason(&data, Role::ControlPlane),
        "kubeadm config /k.yaml has no kubeadm.k8s.io/v1beta4 InitConfiguration document"
    );
}

#[test]
fn rejects_role_mismatches() {
    let init = init_cloud_config("lb-1.sim:6443", TOKEN);
    assert_eq!(
        reason(&init, Role::Worker),
        "a worker runs `kubeadm init`; only a control-plane instance may initialise the cluster"
    );
    let cp_join = join_cloud_config("lb-1.sim:6443", TOKEN, CA_HASH, true);
    assert_eq!(
        reason(&cp_join, Role::Worker),
        "a worker joins as a control-plane node (its JoinConfiguration has a `controlPlane` section)"
    );
    let worker_join = join_cloud_config("lb-1.sim:6443", TOKEN, CA_HASH, false);
    assert_eq!(
        reason(&worker_join, Role::ControlPlane),
        "a control-plane instance joins as a worker (its JoinConfiguration has no `controlPlane` section)"
    );
}

#[test]
fn rejects_the_wrong_endpoint() {
    let join = join_cloud_config("10.0.0.1:6443", TOKEN, CA_HASH, false);
    assert_eq!(
        reason(&join, Role::Worker),
        "joins endpoint 10.0.0.1:6443, cluster endpoint is lb-1.sim:6443"
    );
    let init = init_cloud_config("lb-1.sim:443", TOKEN);
    assert_eq!(
        reason(&init, Role::ControlPlane),
        "initialises with endpoint lb-1.sim:443, cluster endpoint is lb-1.sim:6443"
    );
    let data = init_cloud_config("lb-1.sim:6443", TOKEN);
    let err = check(
        data.as_bytes(),
        &BootExpectations {
            cluster: "c1",
            role: Role::ControlPlane,
            endpoint: None,
            secrets: None,
            cluster_judges_token: false,
        },
    );
    assert_eq!(
        err.map_err(|e| e.to_string()).err().as_deref(),
        Some("cluster c1 has no endpoint (no load balancer and no ready managed control plane)")
    );
}

#[test]
fn rejects_unregistered_malformed_and_wrong_tokens() {
    let data = join_cloud_config("lb-1.sim:6443", TOKEN, CA_HASH, false);
    let endpoint = endpoint();
    let err = check(
        data.as_bytes(),
        &BootExpectations {
            cluster: "c1",
            role: Role::Worker,
            endpoint: Some(&endpoint),
            secrets: None,
            cluster_judges_token: false,
        },
    );
    assert_eq!(
        err.map_err(|e| e.to_string()).err().as_deref(),
        Some("no bootstrap token registered for cluster c1")
    );
    let malformed = join_cloud_config("lb-1.sim:6443", "Abcdef.0123456789abcdef", CA_HASH, false);
    assert_eq!(
        reason(&malformed, Role::Worker),
        "discovery.bootstrapToken.token is not a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}"
    );
    let other = join_cloud_config("lb-1.sim:6443", "zzzzzz.0123456789abcdef", CA_HASH, false);
    assert_eq!(
        reason(&other, Role::Worker),
        "discovery.bootstrapToken.token does not match the bootstrap token registered for cluster c1"
    );
    let init = init_cloud_config("lb-1.sim:6443", "zzzzzz.0123456789abcdef");
    assert_eq!(
        reason(&init, Role::ControlPlane),
        "InitConfiguration.bootstrapTokens[].token does not match the bootstrap token registered for cluster c1"
    );
    assert!(!reason(&init, Role::ControlPlane).contains("zzzzzz"));
}

#[test]
fn with_a_real_boot_the_cluster_judges_the_token_and_only_its_form_is_checked() {
    let endpoint = endpoint();
    let expect = BootExpectations {
        cluster: "c1",
        role: Role::Worker,
        endpoint: Some(&endpoint),
        secrets: Some(ClusterSecrets {
            token: TOKEN,
            ca_cert_hash: CA_HASH,
            previous_token: None,
        }),
        cluster_judges_token: true,
    };
    // A token renewed in the workload cluster since the init registered the first one.
    let renewed = join_cloud_config("lb-1.sim:6443", "zzzzzz.0123456789abcdef", CA_HASH, false);
    assert!(check(renewed.as_bytes(), &expect).is_ok());
    let malformed = join_cloud_config("lb-1.sim:6443", "Abcdef.0123456789abcdef", CA_HASH, false);
    assert!(matches!(
        check(malformed.as_bytes(), &expect),
        Err(BootCheckError::TokenFormat { .. })
    ));
    // The CA it pins is still the registered one.
    let other_ca = join_cloud_config(
        "lb-1.sim:6443",
        "zzzzzz.0123456789abcdef",
        "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        false,
    );
    assert!(matches!(
        check(other_ca.as_bytes(), &expect),
        Err(BootCheckError::CaCertHashMismatch { .. })
    ));
}

#[test]
fn a_real_boot_worker_joining_a_control_plane_outside_the_cloud_is_checked_for_form_only() {
    // A hosted control plane: the cloud has no load balancer, managed control plane or
    // registration of the cluster; the worker's own discovery judges its join.
    let outside = |role, judges| BootExpectations {
        cluster: "c1",
        role,
        endpoint: None,
        secrets: None,
        cluster_judges_token: judges,
    };
    let join = join_cloud_config("100.81.0.1:6443", "zzzzzz.0123456789abcdef", CA_HASH, false);
    assert!(matches!(
        check(join.as_bytes(), &outside(Role::Worker, true)).map(|v| v.action),
        Ok(KubeadmAction::Join {
            control_plane: false
        })
    ));
    for (data, want) in [
        (
            join_cloud_config("100.81.0.1:6443", "Zzzzzz.0123456789abcdef", CA_HASH, false),
            "TokenFormat",
        ),
        (
            join_cloud_config(
                "100.81.0.1:6443",
                "zzzzzz.0123456789abcdef",
                "sha256:00",
                false,
            ),
            "CaCertHashFormat",
        ),
        (
            join_cloud_config(
                "not an endpoint:x",
                "zzzzzz.0123456789abcdef",
                CA_HASH,
                false,
            ),
            "BadEndpoint",
        ),
    ] {
        let got = format!("{:?}", check(data.as_bytes(), &outside(Role::Worker, true)));
        assert!(got.contains(want), "want {want}, got {got}");
    }
    // Simulated machines have no discovery to judge them; a control-plane join is never
    // outside the cloud: both still need the cluster's endpoint.
    assert!(matches!(
        check(join.as_bytes(), &outside(Role::Worker, false)),
        Err(BootCheckError::NoClusterEndpoint { .. })
    ));
    let cp = join_cloud_config("100.81.0.1:6443", "zzzzzz.0123456789abcdef", CA_HASH, true);
    assert!(matches!(
        check(cp.as_bytes(), &outside(Role::ControlPlane, true)),
        Err(BootCheckError::NoClusterEndpoint { .. })
    ));
}

#[test]
fn rejects_joins_without_the_registered_ca_hash() {
    let docs = kubeadm_join_docs("lb-1.sim:6443", TOKEN, CA_HASH, false)
        .replace(&format!("      - {CA_HASH}\n"), "")
        .replace("caCertHashes:\n", "unsafeSkipCAVerification: true\n");
    let data = cloud_config_with_files(&[("/k.yaml", &docs)], "kubeadm join --config /k.yaml");
    assert_eq!(
        reason(&data, Role::Worker),
        "join carries no discovery.bootstrapToken.caCertHashes"
    );
    let bad = join_cloud_config("lb-1.sim:6443", TOKEN, "sha256:1234", false);
    assert_eq!(
        reason(&bad, Role::Worker),
        "caCertHashes entry `sha256:1234` is not sha256:<64 hex digits>"
    );
    let other_hash = format!("sha256:{}", "0".repeat(64));
    let other = join_cloud_config("lb-1.sim:6443", TOKEN, &other_hash, false);
    let r = reason(&other, Role::Worker);
    assert!(
        r.starts_with("caCertHashes [\"sha256:0000")
            && r.ends_with(&format!("registered for cluster c1 ({CA_HASH})")),
        "{r}"
    );
}

#[test]
fn rejects_file_discovery_and_unsupported_encodings() {
    let docs = format!(
        "apiVersion: {KUBEADM_API_VERSION}\nkind: JoinConfiguration\ndiscovery:\n  file:\n    kubeConfigPath: /etc/kubernetes/discovery.yaml\n"
    );
    let data = cloud_config_with_files(&[("/k.yaml", &docs)], "kubeadm join --config /k.yaml");
    assert_eq!(
        reason(&data, Role::Worker),
        "JoinConfiguration uses discovery.file; the sim checks bootstrap-token discovery only"
    );
    let data = "#cloud-config\nwrite_files:\n- path: /k.yaml\n  encoding: gz+b64\n  content: H4sI\nruncmd:\n- kubeadm join --config /k.yaml\n";
    assert_eq!(
        reason(data, Role::Worker),
        "write_files entry /k.yaml has encoding `gz+b64`; the sim reads plain text and b64 only"
    );
}

#[test]
fn the_ca_cert_hash_is_kubeadms() {
    use crate::fixtures::{CA_CERT, CA_CERT_HASH};
    assert_eq!(ca_cert_hash(CA_CERT).unwrap(), CA_CERT_HASH);
    let err = ca_cert_hash("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    assert!(
        err.unwrap_err()
            .to_string()
            .starts_with("/etc/kubernetes/pki/ca.crt is not a PEM certificate"),
    );
}

#[test]
fn an_init_of_an_unregistered_cluster_registers_it() {
    use crate::fixtures::{CA_CERT_HASH, init_cloud_config_with_ca};
    let endpoint = endpoint();
    let unregistered = |data: &str| {
        check(
            data.as_bytes(),
            &BootExpectations {
                cluster: "c1",
                role: Role::ControlPlane,
                endpoint: Some(&endpoint),
                secrets: None,
                cluster_judges_token: false,
            },
        )
    };
    let verdict = unregistered(&init_cloud_config_with_ca("lb-1.sim:6443", TOKEN)).unwrap();
    assert_eq!(
        verdict,
        Verdict {
            action: KubeadmAction::Init,
            registers: Some(LearnedSecrets {
                token: TOKEN.into(),
                ca_cert_hash: CA_CERT_HASH.into(),
            }),
        }
    );
    let err = unregistered(&init_cloud_config("lb-1.sim:6443", TOKEN)).unwrap_err();
    assert!(matches!(err, BootCheckError::NoCaCert { .. }), "{err}");
}

#[test]
fn an_init_carrying_another_ca_than_the_registered_one_fails() {
    use crate::fixtures::init_cloud_config_with_ca;
    // The registration pins the fixture's CA_HASH; the written CA hashes otherwise.
    let data = init_cloud_config_with_ca("lb-1.sim:6443", TOKEN);
    assert!(
        reason(&data, Role::ControlPlane).contains("do not include the CA cert hash registered"),
        "{}",
        reason(&data, Role::ControlPlane)
    );
}
