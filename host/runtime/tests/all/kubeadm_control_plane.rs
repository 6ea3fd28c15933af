//! The kubeadm control-plane provider, built to a component, planning through the runtime.

use capw_runtime::control_plane::{Member, PlanInput, Step};
use capw_runtime::types::{Endpoint, ErrorCode, KubernetesVersion, MachineRef};
use capw_runtime::{ExtensionPoint, Grants};
use serde_json::json;

use crate::support::{component, ctx, runtime};

const V1_35: KubernetesVersion = KubernetesVersion {
    major: 1,
    minor: 35,
    patch: 0,
};

fn input(replicas: u32, members: Vec<Member>) -> PlanInput {
    PlanInput {
        version: V1_35,
        replicas,
        members,
        failure_domains: vec!["a".into(), "b".into(), "c".into()],
        endpoint: Some(Endpoint {
            host: "lb-1.sim".into(),
            port: 6443,
        }),
        failures_tolerated: None,
        objects: Vec::new(),
    }
}

fn ready(name: &str, domain: &str, created_at: u64) -> Member {
    Member {
        machine: MachineRef {
            name: name.into(),
            uid: format!("uid-{name}"),
        },
        version: V1_35,
        failure_domain: Some(domain.into()),
        ready: true,
        created_at,
        deleting: false,
        etcd: capw_runtime::control_plane::EtcdMembership::Unknown,
        out_of_date: Vec::new(),
        unhealthy: Vec::new(),
    }
}

#[tokio::test]
async fn plans_init_then_joins_and_refuses_even_replicas() {
    let rt = runtime();
    let p = rt
        .load(
            "kubeadm-control-plane",
            component("capw_kubeadm_control_plane"),
            Grants::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        p.info().extension_points(),
        vec![ExtensionPoint::ControlPlane]
    );
    let c = ctx("k1", json!({}));

    match p.plan(&c, &input(3, vec![])).await.unwrap().step {
        Step::CreateMachine(m) => {
            assert!(m.init);
            assert_eq!(m.failure_domain.as_deref(), Some("a"));
        }
        other => panic!("expected the init machine, got {other:?}"),
    }

    let out = p
        .plan(&c, &input(3, vec![ready("k1-cp-0", "a", 1)]))
        .await
        .unwrap();
    assert!(out.initialized);
    match out.step {
        Step::CreateMachine(m) => {
            assert!(!m.init);
            assert_eq!(m.failure_domain.as_deref(), Some("b"));
        }
        other => panic!("expected a join, got {other:?}"),
    }

    let err = p.plan(&c, &input(4, vec![])).await.unwrap_err();
    let e = err.provider_error().unwrap();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.retryable);
    assert!(e.message.contains("replicas"), "{}", e.message);

    // Infrastructure is not among its extension points: calling it is answered, not a crash.
    let err = p.reconcile_cluster(&c).await.unwrap_err();
    assert_eq!(err.provider_error().unwrap().code, ErrorCode::Unsupported);
}
