//! The demo class (sim-infra + kubeadm) produces the expected desired state.

use capw_topology::{ProviderSchemas, compute_desired_state};
use serde_json::{Value, json};

use crate::fixtures::demo;

fn as_value(config: &serde_json::Map<String, Value>) -> Value {
    Value::Object(config.clone())
}

#[test]
fn demo_cluster_desired_state() {
    let (cluster, class) = demo();
    let state = compute_desired_state(&cluster, &class, &ProviderSchemas::new()).expect("valid");

    assert_eq!(
        Value::Object(state.variables.clone().into_iter().collect()),
        json!({
            "region": "eu-1",
            "network": {"cidr": "10.20.0.0/16", "mtu": 1500},
            "workerMachineType": "m.medium",
        })
    );
    assert_eq!(state.infrastructure.provider, "sim-infra");
    assert_eq!(
        as_value(&state.infrastructure.config),
        json!({
            "region": "eu-1",
            "network": {"cidr": "10.20.0.0/16", "mtu": 1500},
            "clusterName": "demo-eu-1",
        })
    );

    let cp = &state.control_plane;
    assert_eq!(
        (
            cp.config.provider.as_str(),
            cp.replicas,
            cp.version.as_str()
        ),
        ("kubeadm-control-plane", 3, "v1.34.1")
    );
    // auditLogging is optional and unset: its `add` is skipped.
    assert_eq!(
        as_value(&cp.config.config),
        json!({"etcd": {"local": {}}, "apiServer": {"extraArgs": {}}})
    );
    let cp_infra = cp.machine_infrastructure.as_ref().expect("machine infra");
    assert_eq!(
        (cp_infra.provider.as_str(), as_value(&cp_infra.config)),
        ("sim-infra", json!({"machineType": "m.large"}))
    );
    assert_eq!(
        cp.bootstrap.as_ref().map(|b| b.provider.as_str()),
        Some("kubeadm-bootstrap")
    );

    let pools: Vec<_> = state
        .pools
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.class.as_str(),
                p.replicas,
                p.failure_domain.as_deref(),
                as_value(&p.infrastructure.config),
            )
        })
        .collect();
    assert_eq!(
        pools,
        [
            (
                "md-0",
                "default-worker",
                2,
                Some("eu-1a"),
                json!({"machineType": "m.medium"})
            ),
            (
                "md-big",
                "default-worker",
                1,
                None,
                json!({"machineType": "m.xlarge"})
            ),
            (
                "gpu",
                "gpu-worker",
                1,
                None,
                json!({"machineType": "g.large"})
            ),
        ]
    );
    assert_eq!(state.pools[1].variables["workerMachineType"], "m.xlarge");
    assert_eq!(
        state.pools[2].bootstrap.origin.to_string(),
        "spec.workers.machineDeployments[1].bootstrap.config (pool \"gpu\")"
    );

    let origins: Vec<_> = state
        .provider_configs()
        .iter()
        .map(|c| (c.provider.as_str(), c.origin.path.as_str()))
        .collect();
    assert_eq!(origins.len(), 10);
    assert_eq!(origins[0], ("sim-infra", "spec.infrastructure.config"));
    assert_eq!(
        origins[3],
        ("kubeadm-bootstrap", "spec.controlPlane.bootstrap.config")
    );
}

#[test]
fn demo_configs_checked_against_provider_schemas() {
    let (cluster, class) = demo();
    let schema = json!({
        "type": "object",
        "properties": {"machineType": {"enum": ["m.small", "m.medium", "m.large"]}},
    });
    let schemas = ProviderSchemas::from([("sim-infra".to_owned(), schema)]);
    let errors = crate::fixtures::errors(&cluster, &class, &schemas);
    let paths: Vec<_> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "spec.workers.machineDeployments[0].infrastructure.config.machineType",
            "spec.workers.machineDeployments[1].infrastructure.config.machineType",
        ]
    );
    assert!(
        errors[0]
            .message
            .contains("provider \"sim-infra\" for pool \"md-big\""),
        "{}",
        errors[0]
    );
}

#[test]
fn inputs_untouched_on_error_and_success() {
    let (mut cluster, class) = demo();
    cluster.spec.topology.version = "latest".into();
    let (before_cluster, before_class) = (cluster.clone(), class.clone());
    assert!(compute_desired_state(&cluster, &class, &ProviderSchemas::new()).is_err());
    assert_eq!((&cluster, &class), (&before_cluster, &before_class));
    let (cluster, class) = demo();
    let first = compute_desired_state(&cluster, &class, &ProviderSchemas::new()).expect("valid");
    let again = compute_desired_state(&cluster, &class, &ProviderSchemas::new()).expect("valid");
    assert_eq!(first, again);
    assert_eq!((cluster, class), demo());
}
