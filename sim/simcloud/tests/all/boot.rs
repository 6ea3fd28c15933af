use capw_simcloud::fixtures::{
    CA_HASH, TOKEN, cloud_config_with_files, init_cloud_config, join_cloud_config,
    kubeadm_join_docs,
};
use capw_simcloud::model::InstanceState;
use reqwest::{Method, StatusCode};

use crate::support::Sim;

#[tokio::test]
async fn good_bootstrap_data_boots() {
    let sim = Sim::start().await;
    let lb = sim.setup_cluster("c1").await;
    let endpoint = lb.endpoint.to_string();
    let cases = [
        ("init", "control-plane", init_cloud_config(&endpoint, TOKEN)),
        (
            "cp-join",
            "control-plane",
            join_cloud_config(&endpoint, TOKEN, CA_HASH, true),
        ),
        (
            "worker",
            "worker",
            join_cloud_config(&endpoint, TOKEN, CA_HASH, false),
        ),
    ];
    for (token, role, data) in cases {
        let (_, created) = sim.create_instance(token, "c1", role, &data).await;
        let settled = sim.settled_instance(&created.id).await;
        assert_eq!(
            settled.state,
            InstanceState::Running,
            "{token}: {}",
            settled.reason
        );
        assert_eq!(settled.reason, "");
    }
}

#[tokio::test]
async fn bad_bootstrap_data_fails_with_the_reason() {
    let sim = Sim::start().await;
    let lb = sim.setup_cluster("c1").await;
    let ep = lb.endpoint.to_string();
    let other_token = "zzzzzz.0123456789abcdef";
    let other_hash = format!("sha256:{}", "a".repeat(64));
    let cases: Vec<(&str, &str, String, String)> = vec![
        (
            "not-cloud-config",
            "worker",
            "#!/bin/sh\nkubeadm join\n".into(),
            "bootstrap: data is not cloud-config: the first line must be `#cloud-config`".into(),
        ),
        (
            "not-yaml",
            "worker",
            "#cloud-config\nruncmd: [kubeadm\n".into(),
            "bootstrap: cloud-config is not valid YAML".into(),
        ),
        (
            "no-kubeadm",
            "worker",
            "#cloud-config\nruncmd:\n- echo hi\n".into(),
            "bootstrap: runcmd runs neither `kubeadm init` nor `kubeadm join`".into(),
        ),
        (
            "wrong-endpoint",
            "worker",
            join_cloud_config("10.0.0.1:6443", TOKEN, CA_HASH, false),
            format!("bootstrap: joins endpoint 10.0.0.1:6443, cluster endpoint is {ep}"),
        ),
        (
            "wrong-init-endpoint",
            "control-plane",
            init_cloud_config("lb-9.sim:6443", TOKEN),
            format!("bootstrap: initialises with endpoint lb-9.sim:6443, cluster endpoint is {ep}"),
        ),
        (
            "wrong-token",
            "worker",
            join_cloud_config(&ep, other_token, CA_HASH, false),
            "bootstrap: discovery.bootstrapToken.token does not match the bootstrap token registered for cluster c1".into(),
        ),
        (
            "malformed-token",
            "control-plane",
            init_cloud_config(&ep, "short.token"),
            "bootstrap: InitConfiguration.bootstrapTokens[].token is not a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}".into(),
        ),
        (
            "wrong-ca-hash",
            "worker",
            join_cloud_config(&ep, TOKEN, &other_hash, false),
            format!("bootstrap: caCertHashes [\"{other_hash}\"] do not include the CA cert hash registered for cluster c1 ({CA_HASH})"),
        ),
        (
            "old-api",
            "worker",
            cloud_config_with_files(
                &[("/k.yaml", &kubeadm_join_docs(&ep, TOKEN, CA_HASH, false).replace("v1beta4", "v1beta3"))],
                "kubeadm join --config /k.yaml",
            ),
            "bootstrap: kubeadm config /k.yaml has a JoinConfiguration of apiVersion kubeadm.k8s.io/v1beta3; want kubeadm.k8s.io/v1beta4".into(),
        ),
        (
            "worker-init",
            "worker",
            init_cloud_config(&ep, TOKEN),
            "bootstrap: a worker runs `kubeadm init`; only a control-plane instance may initialise the cluster".into(),
        ),
    ];
    for (token, role, data, want) in cases {
        let (_, created) = sim.create_instance(token, "c1", role, &data).await;
        let settled = sim.settled_instance(&created.id).await;
        assert_eq!(settled.state, InstanceState::Failed, "{token}");
        assert!(
            settled.reason.starts_with(&want),
            "{token}: got {:?}, want {want:?}",
            settled.reason
        );
        assert!(
            !settled.reason.contains(other_token),
            "a token leaked: {}",
            settled.reason
        );
    }
}

#[tokio::test]
async fn the_check_uses_the_registration_at_boot_time() {
    let sim = Sim::start().await;
    sim.post(
        "/v1/networks",
        serde_json::json!({"cluster": "c1", "name": "n"}),
    )
    .await;
    // No load balancer and no registration yet: the cluster has nothing to join.
    let data = join_cloud_config("lb-1.sim:6443", TOKEN, CA_HASH, false);
    let (_, i) = sim.create_instance("early", "c1", "worker", &data).await;
    let early = sim.settled_instance(&i.id).await;
    assert_eq!(early.state, InstanceState::Failed);
    assert_eq!(
        early.reason,
        "bootstrap: cluster c1 has no endpoint (no load balancer and no ready managed control plane)"
    );
    sim.post(
        "/v1/load-balancers",
        serde_json::json!({"cluster": "c1", "name": "lb"}),
    )
    .await;
    let (_, i) = sim
        .create_instance("unregistered", "c1", "worker", &data)
        .await;
    let unregistered = sim.settled_instance(&i.id).await;
    assert_eq!(
        unregistered.reason,
        "bootstrap: no bootstrap token registered for cluster c1"
    );
    let r = sim
        .send(
            Method::PUT,
            "/v1/clusters/c1/bootstrap",
            Some(serde_json::json!({"token": TOKEN, "ca_cert_hash": CA_HASH})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let (_, i) = sim
        .create_instance("registered", "c1", "worker", &data)
        .await;
    assert_eq!(
        sim.settled_instance(&i.id).await.state,
        InstanceState::Running
    );
}

#[tokio::test]
async fn registrations_are_validated_and_never_echo_the_token() {
    let sim = Sim::start().await;
    let put = |body| sim.send(Method::PUT, "/v1/clusters/c1/bootstrap", Some(body));
    let r = put(serde_json::json!({"token": "nope", "ca_cert_hash": CA_HASH})).await;
    let e = crate::support::error(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(e.error.field.as_deref(), Some("token"));
    let r = put(serde_json::json!({"token": TOKEN, "ca_cert_hash": "md5:00"})).await;
    let e = crate::support::error(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(e.error.field.as_deref(), Some("ca_cert_hash"));
    let r = put(serde_json::json!({"token": TOKEN, "ca_cert_hash": CA_HASH})).await;
    let text = r.text().await.unwrap_or_default();
    assert!(!text.contains(TOKEN), "{text}");
    let r = sim.get("/v1/clusters/c1/bootstrap").await;
    let text = r.text().await.unwrap_or_default();
    assert!(
        text.contains("\"token_id\":\"abcdef\"") && !text.contains(TOKEN),
        "{text}"
    );
    assert_eq!(
        sim.delete("/v1/clusters/c1/bootstrap").await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim.get("/v1/clusters/c1/bootstrap").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_first_init_makes_the_registration_of_a_cluster_without_one() {
    use capw_simcloud::fixtures::{CA_CERT_HASH, init_cloud_config_with_ca};
    let sim = Sim::start().await;
    sim.post(
        "/v1/networks",
        serde_json::json!({"cluster": "c1", "name": "n"}),
    )
    .await;
    sim.post(
        "/v1/load-balancers",
        serde_json::json!({"cluster": "c1", "name": "lb"}),
    )
    .await;
    let endpoint = "lb-1.sim:6443";

    // Without a CA to learn the hash from, the init cannot make one.
    let (_, i) = sim
        .create_instance(
            "no-ca",
            "c1",
            "control-plane",
            &init_cloud_config(endpoint, TOKEN),
        )
        .await;
    let no_ca = sim.settled_instance(&i.id).await;
    assert_eq!(no_ca.state, InstanceState::Failed);
    assert!(
        no_ca
            .reason
            .contains("init writes no CA certificate to /etc/kubernetes/pki/ca.crt"),
        "{}",
        no_ca.reason
    );
    assert_eq!(
        sim.get("/v1/clusters/c1/bootstrap").await.status(),
        StatusCode::NOT_FOUND
    );

    let (_, i) = sim
        .create_instance(
            "init",
            "c1",
            "control-plane",
            &init_cloud_config_with_ca(endpoint, TOKEN),
        )
        .await;
    assert_eq!(
        sim.settled_instance(&i.id).await.state,
        InstanceState::Running
    );
    let registration: serde_json::Value = sim
        .get("/v1/clusters/c1/bootstrap")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        registration,
        serde_json::json!({"token_id": "abcdef", "ca_cert_hash": CA_CERT_HASH})
    );

    // Joins now pin the learnt CA; the fixture's other hash no longer passes.
    let (_, i) = sim
        .create_instance(
            "worker",
            "c1",
            "worker",
            &join_cloud_config(endpoint, TOKEN, CA_CERT_HASH, false),
        )
        .await;
    assert_eq!(
        sim.settled_instance(&i.id).await.state,
        InstanceState::Running
    );
    let (_, i) = sim
        .create_instance(
            "stale",
            "c1",
            "worker",
            &join_cloud_config(endpoint, TOKEN, CA_HASH, false),
        )
        .await;
    let stale = sim.settled_instance(&i.id).await;
    assert_eq!(stale.state, InstanceState::Failed);
    assert!(
        stale.reason.contains("do not include the CA cert hash"),
        "{}",
        stale.reason
    );
}
