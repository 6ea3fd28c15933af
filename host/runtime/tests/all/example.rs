//! The example provider through the runtime: every contract function is called and every
//! record and variant of the contract crosses the boundary and comes back as expected.

use capw_runtime::bootstrap::{
    BootstrapFormat, BootstrapRequest, ControlPlaneMember, SecretItem, SecretsState,
};
use capw_runtime::control_plane::{MachineToCreate, Member, PlanInput, Step};
use capw_runtime::infrastructure::{
    ClusterInfrastructure, ClusterState, FailureDomain, ListedMachine, MachinePhase, MachineSpec,
};
use capw_runtime::lifecycle_hooks::{Hook, HookRequest, HookResponse};
use capw_runtime::metadata::{ControlPlaneShape, ExtensionPoint, FieldError};
use capw_runtime::types::{
    Address, AddressKind, Condition, ConditionStatus, Deletion, Endpoint, ErrorCode, InProgress,
    KubernetesVersion, MachineRef, MachineRole,
};
use capw_runtime::{CallFailure, Provider};
use serde_json::json;

use crate::support::{ctx, example, runtime};

const V1_35_0: KubernetesVersion = KubernetesVersion {
    major: 1,
    minor: 35,
    patch: 0,
};

fn machine(name: &str) -> MachineRef {
    MachineRef {
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}

fn simulated() -> InProgress {
    InProgress {
        reason: "Simulated".into(),
        message: "simulated in-progress".into(),
        requeue_after_ms: 2000,
        conditions: vec![Condition {
            type_: "Simulated".into(),
            status: ConditionStatus::Unknown,
            reason: "Simulated".into(),
            message: "simulated".into(),
        }],
    }
}

async fn provider() -> Provider {
    example(&runtime()).await
}

#[tokio::test]
async fn describe_round_trips_metadata() {
    let p = provider().await;
    let m = p.describe().await.unwrap();
    assert_eq!(m.name, "example");
    assert_eq!(
        m.extension_points,
        vec![
            ExtensionPoint::Infrastructure,
            ExtensionPoint::Bootstrap,
            ExtensionPoint::ControlPlane,
            ExtensionPoint::LifecycleHooks
        ]
    );
    assert_eq!(
        m.capabilities.control_plane_shape,
        Some(ControlPlaneShape::Machines)
    );
    assert!(m.capabilities.control_plane_scalable);
    assert!(m.requested_grants.http_hosts.is_empty());
    let schema: serde_json::Value = serde_json::from_str(&m.config_schema).unwrap();
    assert_eq!(schema["type"], "object");
}

#[tokio::test]
async fn validate_config_reports_every_problem_with_its_path() {
    let p = provider().await;
    assert_eq!(
        p.validate_config(r#"{"region":"eu-1"}"#).await.unwrap(),
        Ok(())
    );

    let errors = p
        .validate_config(r#"{"region":"EU 1","zones":["a","a"],"port":0}"#)
        .await
        .unwrap()
        .unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, vec!["/region", "/zones/1", "/port"], "{errors:?}");

    let errors = p
        .validate_config(r#"{"region":"eu","zones":["a",7]}"#)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].path, "/zones/1");

    let errors: Vec<FieldError> = p
        .validate_config(r#"{"region":"eu","colour":"red"}"#)
        .await
        .unwrap()
        .unwrap_err();
    assert!(errors[0].message.contains("colour"), "{errors:?}");
}

#[tokio::test]
async fn infrastructure_cluster_calls() {
    let p = provider().await;
    let c = ctx(
        "alpha",
        json!({"region": "eu-1", "zones": ["a", "b"], "port": 7443}),
    );
    assert_eq!(
        p.reconcile_cluster(&c).await.unwrap(),
        ClusterState::Ready(ClusterInfrastructure {
            control_plane_endpoint: Some(Endpoint {
                host: "alpha.eu-1.example.test".into(),
                port: 7443,
            }),
            failure_domains: vec![
                FailureDomain {
                    name: "a".into(),
                    control_plane: true
                },
                FailureDomain {
                    name: "b".into(),
                    control_plane: true
                },
            ],
            conditions: vec![Condition {
                type_: "NetworkReady".into(),
                status: ConditionStatus::True,
                reason: "Provisioned".into(),
                message: String::new(),
            }],
        })
    );
    assert_eq!(p.delete_cluster(&c).await.unwrap(), Deletion::Deleted);

    let pending = ctx(
        "alpha",
        json!({"region": "eu-1", "simulate": "in-progress"}),
    );
    assert_eq!(
        p.reconcile_cluster(&pending).await.unwrap(),
        ClusterState::InProgress(simulated())
    );
    assert_eq!(
        p.delete_cluster(&pending).await.unwrap(),
        Deletion::InProgress(simulated())
    );
}

#[tokio::test]
async fn infrastructure_machine_calls() {
    let p = provider().await;
    let c = ctx(
        "alpha",
        json!({"region": "eu-1", "existingMachines": ["m-0", "m-1"]}),
    );
    let spec = MachineSpec {
        machine: machine("alpha-cp-0"),
        role: MachineRole::JoinControlPlane,
        pool: "control-plane".into(),
        version: V1_35_0,
        failure_domain: Some("b".into()),
        bootstrap_data: vec![7; 1234],
    };
    let status = p.reconcile_machine(&c, &spec).await.unwrap();
    assert_eq!(
        status.provider_id.as_deref(),
        Some("example://alpha/alpha-key-1")
    );
    assert_eq!(status.phase, MachinePhase::Running);
    assert_eq!(status.failure_domain.as_deref(), Some("b"));
    assert_eq!(
        status.message,
        "role=join-control-plane pool=control-plane version=v1.35.0 bootstrap=1234 bytes"
    );
    assert_eq!(status.requeue_after_ms, None);
    assert_eq!(status.addresses.len(), 2);
    assert_eq!(status.addresses[0].kind, AddressKind::InternalIp);
    assert!(status.addresses[0].address.starts_with("10.0."));
    assert_eq!(
        status.addresses[1],
        Address {
            kind: AddressKind::Hostname,
            address: "alpha-cp-0".into()
        }
    );
    // Deterministic for the same idempotency key: the same machine, not a second one.
    assert_eq!(p.reconcile_machine(&c, &spec).await.unwrap(), status);

    assert_eq!(
        p.delete_machine(&c, &spec.machine).await.unwrap(),
        Deletion::Deleted
    );
    assert_eq!(
        p.list_machines(&c).await.unwrap(),
        vec![
            ListedMachine {
                idempotency_key: "uid-alpha-m-0".into(),
                provider_id: "example://alpha/uid-alpha-m-0".into(),
                machine_name: "m-0".into(),
                phase: MachinePhase::Running,
            },
            ListedMachine {
                idempotency_key: "uid-alpha-m-1".into(),
                provider_id: "example://alpha/uid-alpha-m-1".into(),
                machine_name: "m-1".into(),
                phase: MachinePhase::Running,
            },
        ]
    );

    let pending = ctx(
        "alpha",
        json!({"region": "eu-1", "simulate": "in-progress"}),
    );
    let status = p.reconcile_machine(&pending, &spec).await.unwrap();
    assert_eq!(status.phase, MachinePhase::Provisioning);
    assert_eq!(status.provider_id, None);
    assert_eq!(status.requeue_after_ms, Some(2000));
}

#[tokio::test]
async fn bootstrap_calls() {
    let p = provider().await;
    let c = ctx("alpha", json!({"region": "eu-1"}));
    let secrets = match p.cluster_secrets(&c).await.unwrap() {
        SecretsState::Ready(items) => items,
        other => panic!("expected secrets, got {other:?}"),
    };
    assert_eq!(
        secrets,
        vec![
            SecretItem {
                name: "ca.crt".into(),
                data: b"example-ca:uid-alpha".to_vec()
            },
            SecretItem {
                name: "bootstrap-token".into(),
                data: b"example-token:uid-alpha".to_vec()
            },
        ]
    );
    let endpoint = Endpoint {
        host: "alpha.eu-1.example.test".into(),
        port: 6443,
    };
    let request = BootstrapRequest {
        machine: machine("alpha-cp-1"),
        role: MachineRole::JoinControlPlane,
        version: V1_35_0,
        endpoint: endpoint.clone(),
        secrets: secrets.clone(),
        control_plane_members: vec![ControlPlaneMember {
            name: "alpha-cp-0".into(),
            address: "10.0.0.1".into(),
        }],
        join: None,
    };
    let data = p.generate_bootstrap(&c, &request).await.unwrap();
    assert_eq!(data.format, BootstrapFormat::CloudConfig);
    assert_eq!(
        String::from_utf8(data.data).unwrap(),
        "#cloud-config\n# role: join-control-plane\n# version: v1.35.0\n\
         # endpoint: alpha.eu-1.example.test:6443\n# members: alpha-cp-0\n\
         # secrets: ca.crt,bootstrap-token\n"
    );
    let kubeconfig = p.kubeconfig(&c, &endpoint, &secrets).await.unwrap();
    assert!(
        kubeconfig.contains("server: https://alpha.eu-1.example.test:6443"),
        "{kubeconfig}"
    );
    assert!(kubeconfig.contains("current-context:"), "{kubeconfig}");

    let pending = ctx(
        "alpha",
        json!({"region": "eu-1", "simulate": "in-progress"}),
    );
    assert_eq!(
        p.cluster_secrets(&pending).await.unwrap(),
        SecretsState::InProgress(simulated())
    );
}

fn member(name: &str, created_at: u64, ready: bool, version: KubernetesVersion) -> Member {
    Member {
        machine: machine(name),
        version,
        failure_domain: Some("a".into()),
        ready,
        created_at,
        deleting: false,
        etcd: capw_runtime::control_plane::EtcdMembership::Unknown,
        out_of_date: Vec::new(),
        unhealthy: Vec::new(),
    }
}

#[tokio::test]
async fn control_plane_plan_steps() {
    let p = provider().await;
    let c = ctx("alpha", json!({"region": "eu-1"}));
    let mut input = PlanInput {
        version: V1_35_0,
        replicas: 3,
        members: vec![],
        failure_domains: vec!["a".into(), "b".into()],
        endpoint: Some(Endpoint {
            host: "alpha.eu-1.example.test".into(),
            port: 6443,
        }),
        failures_tolerated: None,
        objects: Vec::new(),
    };
    let plan = p.plan(&c, &input).await.unwrap();
    assert_eq!(
        plan.step,
        Step::CreateMachine(MachineToCreate {
            init: true,
            version: V1_35_0,
            failure_domain: Some("a".into()),
        })
    );
    assert!(!plan.initialized);
    assert_eq!(plan.endpoint, input.endpoint);

    input.members = vec![member("cp-0", 10, false, V1_35_0)];
    let plan = p.plan(&c, &input).await.unwrap();
    match plan.step {
        Step::Wait(w) => assert_eq!(w.reason, "WaitingForMachines"),
        other => panic!("expected wait, got {other:?}"),
    }

    input.members = vec![member("cp-0", 10, true, V1_35_0)];
    let plan = p.plan(&c, &input).await.unwrap();
    assert_eq!(
        plan.step,
        Step::CreateMachine(MachineToCreate {
            init: false,
            version: V1_35_0,
            failure_domain: Some("b".into()),
        })
    );
    assert!(plan.initialized);
    assert_eq!((plan.replicas, plan.ready_replicas), (1, 1));

    input.replicas = 1;
    input.members = vec![
        member("cp-1", 20, true, V1_35_0),
        member("cp-0", 10, true, V1_35_0),
    ];
    let plan = p.plan(&c, &input).await.unwrap();
    assert_eq!(plan.step, Step::DeleteMachine(machine("cp-0")));

    input.members = vec![member("cp-1", 20, true, V1_35_0)];
    assert_eq!(p.plan(&c, &input).await.unwrap().step, Step::None);

    let hosted = ctx("alpha", json!({"region": "eu-1", "hosted": true}));
    match p.plan(&hosted, &input).await.unwrap().step {
        Step::ApplyManifests(m) => assert!(m[0].contains("alpha-control-plane"), "{m:?}"),
        other => panic!("expected manifests, got {other:?}"),
    }
}

#[tokio::test]
async fn lifecycle_hooks() {
    let p = provider().await;
    let request = HookRequest {
        hook: Hook::BeforeClusterUpgrade,
        from_version: Some(V1_35_0),
        to_version: KubernetesVersion {
            major: 1,
            minor: 36,
            patch: 1,
        },
    };
    let c = ctx("alpha", json!({"region": "eu-1"}));
    assert_eq!(
        p.call_hook(&c, &request).await.unwrap(),
        HookResponse::Proceed
    );
    let pending = ctx(
        "alpha",
        json!({"region": "eu-1", "simulate": "in-progress"}),
    );
    assert_eq!(
        p.call_hook(&pending, &request).await.unwrap(),
        HookResponse::Hold(simulated())
    );
}

#[tokio::test]
async fn provider_errors_keep_code_retry_and_delay() {
    let p = provider().await;
    let retry = ctx(
        "alpha",
        json!({"region": "eu-1", "simulate": "retryable-error"}),
    );
    let err = p.reconcile_cluster(&retry).await.unwrap_err();
    let CallFailure::Provider(e) = err.failure() else {
        panic!("expected a provider error, got {err:?}");
    };
    assert_eq!(e.code, ErrorCode::Unavailable);
    assert!(e.retryable);
    assert_eq!(e.retry_after_ms, Some(1500));
    assert_eq!(err.failure().reason(), "ProviderError");

    let fatal = ctx(
        "alpha",
        json!({"region": "eu-1", "simulate": "permanent-error"}),
    );
    let err = p
        .plan(
            &fatal,
            &PlanInput {
                version: V1_35_0,
                replicas: 1,
                members: vec![],
                failure_domains: vec![],
                endpoint: None,
                failures_tolerated: None,
                objects: Vec::new(),
            },
        )
        .await
        .unwrap_err();
    let e = err.provider_error().unwrap();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.retryable);
    assert_eq!(e.retry_after_ms, None);
    assert!(
        err.to_string().contains("simulated permanent failure"),
        "{err}"
    );
}

#[tokio::test]
async fn a_config_that_does_not_parse_is_an_invalid_input_error() {
    let p = provider().await;
    let c = ctx("alpha", json!({"region": 12}));
    let err = p.reconcile_cluster(&c).await.unwrap_err();
    assert_eq!(err.provider_error().unwrap().code, ErrorCode::InvalidInput);
}
