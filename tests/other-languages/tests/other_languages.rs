//! The example providers in C, Python, JavaScript and Go, built from source by `make examples`,
//! loaded in capw's runtime and called for real. They implement the same behaviour
//! (plugins/other-languages/README.md), so one set of checks runs against each.

use std::sync::Arc;

use capw_runtime::bootstrap::{
    BootstrapFormat, BootstrapRequest, ControlPlaneMember, SecretItem, SecretsState,
};
use capw_runtime::metadata::{ExtensionPoint, FieldError};
use capw_runtime::types::{
    CallContext, ClusterRef, Endpoint, ErrorCode, KubernetesVersion, MachineRef, MachineRole,
    ProviderError,
};
use capw_runtime::{CallError, ExtensionPoint as Point, Grants, Provider, Runtime, RuntimeConfig};

/// Loads the example in `lang` from the plugin directory, without a compile cache.
async fn load(lang: &str) -> Provider {
    capw_test_support::init_tracing();
    let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
    let bytes = capw_test_support::component(&format!("capw_example_{lang}"));
    runtime
        .load(
            &format!("{lang}-example"),
            Arc::from(bytes),
            Grants::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("loading the {lang} example: {e:#}"))
}

fn ctx(config: &str) -> CallContext {
    CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: "c1".into(),
            uid: "uid-7f3a".into(),
        },
        config: config.into(),
        idempotency_key: "c1-key-1".into(),
        deadline_ms: 10_000,
    }
}

fn token() -> SecretItem {
    SecretItem {
        name: "bootstrap-token".into(),
        data: b"token:uid-7f3a".to_vec(),
    }
}

fn request(secrets: Vec<SecretItem>) -> BootstrapRequest {
    BootstrapRequest {
        machine: MachineRef {
            name: "m2".into(),
            uid: "u2".into(),
        },
        role: MachineRole::JoinControlPlane,
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 2,
        },
        endpoint: Endpoint {
            host: "c1.example.test".into(),
            port: 6443,
        },
        secrets,
        control_plane_members: vec![
            ControlPlaneMember {
                name: "m0".into(),
                address: "10.0.0.1".into(),
            },
            ControlPlaneMember {
                name: "m1".into(),
                address: "10.0.0.2".into(),
            },
        ],
        join: None,
    }
}

/// The provider's own error inside a failed call.
fn provider_error(e: CallError) -> ProviderError {
    match e.provider_error() {
        Some(err) => err.clone(),
        None => panic!("not a provider error: {e:#}"),
    }
}

fn errors(list: &[(&str, &str)]) -> Vec<FieldError> {
    list.iter()
        .map(|(path, message)| FieldError {
            path: (*path).into(),
            message: (*message).into(),
        })
        .collect()
}

async fn describes_itself(p: &Provider, lang: &str) {
    let m = p.describe().await.unwrap();
    assert_eq!(m.name, format!("{lang}-example"));
    assert_eq!(m.version, "0.1.0");
    assert_eq!(m.extension_points, vec![ExtensionPoint::Bootstrap]);
    assert_eq!(m.capabilities.control_plane_shape, None);
    assert!(m.requested_grants.http_hosts.is_empty() && m.requested_grants.secrets.is_empty());
    let schema: serde_json::Value = serde_json::from_str(&m.config_schema).unwrap();
    let expected: serde_json::Value = serde_json::from_str(include_str!(
        "../../../plugins/other-languages/config-schema.json"
    ))
    .unwrap();
    assert_eq!(schema, expected, "{lang}: config schema");
    assert_eq!(p.info().extension_points(), vec![Point::Bootstrap]);
}

async fn validates_config(p: &Provider, lang: &str) {
    let valid = [
        "{}",
        r#"{"timezone": "Europe/Berlin"}"#,
        r#"{"timezone": "America/Argentina/Buenos_Aires", "packages": ["curl", "libc6", "g++-12"]}"#,
    ];
    for config in valid {
        assert_eq!(
            p.validate_config(config).await.unwrap(),
            Ok(()),
            "{lang}: {config}"
        );
    }
    let invalid: [(&str, &[(&str, &str)]); 7] = [
        ("not json", &[("", "must be a JSON object")]),
        ("[1, 2]", &[("", "must be a JSON object")]),
        (
            r#"{"timezone": 1, "colour": "red", "a/b~c": 0}"#,
            &[
                ("/timezone", "must be a string"),
                ("/colour", "unknown field"),
                ("/a~1b~0c", "unknown field"),
            ],
        ),
        (
            r#"{"timezone": "Europe/Berlin; rm -rf /"}"#,
            &[(
                "/timezone",
                "must be a time zone name such as Europe/Berlin",
            )],
        ),
        (
            r#"{"timezone": ""}"#,
            &[(
                "/timezone",
                "must be a time zone name such as Europe/Berlin",
            )],
        ),
        (
            r#"{"packages": "curl"}"#,
            &[("/packages", "must be an array of strings")],
        ),
        (
            r#"{"packages": ["curl", 7, "Bad Name", "jq", "-x"], "timezone": "UTC"}"#,
            &[
                ("/packages/1", "must be a string"),
                ("/packages/2", "must be a Debian package name"),
                ("/packages/4", "must be a Debian package name"),
            ],
        ),
    ];
    for (config, expected) in invalid {
        assert_eq!(
            p.validate_config(config).await.unwrap(),
            Err(errors(expected)),
            "{lang}: {config}"
        );
    }
    let long = format!(r#"{{"timezone": "{}"}}"#, "A".repeat(65));
    assert_eq!(
        p.validate_config(&long).await.unwrap(),
        Err(errors(&[(
            "/timezone",
            "must be a time zone name such as Europe/Berlin"
        )])),
        "{lang}: a 65-character time zone"
    );
}

async fn makes_secrets(p: &Provider, lang: &str) {
    let state = p.cluster_secrets(&ctx("{}")).await.unwrap();
    assert_eq!(state, SecretsState::Ready(vec![token()]), "{lang}");
}

async fn generates_cloud_config(p: &Provider, lang: &str) {
    let config = r#"{"timezone": "Europe/Berlin", "packages": ["curl", "jq"]}"#;
    let data = p
        .generate_bootstrap(&ctx(config), &request(vec![token()]))
        .await
        .unwrap_or_else(|e| panic!("{lang}: {e:#}"));
    assert_eq!(data.format, BootstrapFormat::CloudConfig);
    assert_eq!(
        String::from_utf8(data.data).unwrap(),
        "#cloud-config\n# role: join-control-plane\n# version: v1.35.2\n\
         # endpoint: c1.example.test:6443\n# members: m0,m1\ntimezone: Europe/Berlin\n\
         packages:\n- curl\n- jq\n",
        "{lang}"
    );

    let mut init = request(vec![token()]);
    init.role = MachineRole::Init;
    init.control_plane_members.clear();
    let data = p
        .generate_bootstrap(&ctx("{}"), &init)
        .await
        .unwrap_or_else(|e| panic!("{lang}: {e:#}"));
    assert_eq!(
        String::from_utf8(data.data).unwrap(),
        "#cloud-config\n# role: init\n# version: v1.35.2\n\
         # endpoint: c1.example.test:6443\n# members: \ntimezone: UTC\npackages: []\n",
        "{lang}"
    );

    let err = provider_error(
        p.generate_bootstrap(&ctx("{}"), &request(Vec::new()))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, ErrorCode::InvalidInput, "{lang}");
    assert_eq!(err.message, "request.secrets: no bootstrap-token", "{lang}");
    assert!(!err.retryable, "{lang}");
    assert_eq!(err.retry_after_ms, None, "{lang}");
}

async fn writes_kubeconfig(p: &Provider, lang: &str) {
    let endpoint = Endpoint {
        host: "c1.example.test".into(),
        port: 6443,
    };
    let k = p
        .kubeconfig(&ctx("{}"), &endpoint, &[token()])
        .await
        .unwrap_or_else(|e| panic!("{lang}: {e:#}"));
    assert_eq!(
        k,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n    \
         server: https://c1.example.test:6443\nusers:\n- name: c1-admin\n  user: {}\n\
         contexts:\n- name: c1-admin@c1\n  context:\n    cluster: c1\n    user: c1-admin\n\
         current-context: c1-admin@c1\n",
        "{lang}"
    );
    let v6 = Endpoint {
        host: "fd00::1".into(),
        port: 443,
    };
    let k = p.kubeconfig(&ctx("{}"), &v6, &[]).await.unwrap();
    assert!(
        k.contains("    server: https://[fd00::1]:443\n"),
        "{lang}: {k}"
    );
}

async fn refuses_a_broken_config(p: &Provider, lang: &str) {
    let broken = ctx("{ this is not JSON");
    let endpoint = Endpoint {
        host: "c1.example.test".into(),
        port: 6443,
    };
    let errors = [
        provider_error(p.cluster_secrets(&broken).await.unwrap_err()),
        provider_error(
            p.generate_bootstrap(&broken, &request(vec![token()]))
                .await
                .unwrap_err(),
        ),
        provider_error(p.kubeconfig(&broken, &endpoint, &[]).await.unwrap_err()),
    ];
    for err in errors {
        assert_eq!(err.code, ErrorCode::InvalidInput, "{lang}");
        assert_eq!(err.message, "config: must be a JSON object", "{lang}");
        assert!(!err.retryable, "{lang}");
    }
}

/// Every check, against the example in `lang`.
async fn conforms(lang: &str) {
    let p = load(lang).await;
    describes_itself(&p, lang).await;
    validates_config(&p, lang).await;
    makes_secrets(&p, lang).await;
    generates_cloud_config(&p, lang).await;
    writes_kubeconfig(&p, lang).await;
    refuses_a_broken_config(&p, lang).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn c_example() {
    conforms("c").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_example() {
    conforms("python").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn js_example() {
    conforms("js").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn go_example() {
    conforms("go").await;
}
