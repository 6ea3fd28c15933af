//! The three reference providers driven by hand, with no reconciler: a cluster endpoint, an
//! init machine, two control-plane joins and three workers come up in simcloud, each booting
//! only because its bootstrap data passed the sim's kubeadm check; deleting leaves nothing.

use std::collections::BTreeSet;
use std::time::Duration;

use capw_runtime::infrastructure::MachinePhase;
use capw_simcloud::FaultConfig;
use capw_simcloud::model::{InstanceState, Role};

use crate::driver::{Driver, inventory};
use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_comes_up_and_goes_away() {
    let runtime = support::runtime();
    let sim = support::simcloud(Duration::from_millis(20), FaultConfig::default()).await;
    let mut driver = Driver::new(&runtime, &sim, "c1").await;

    let infra = driver.ensure_infrastructure().await;
    assert!(
        infra
            .control_plane_endpoint
            .as_ref()
            .unwrap()
            .host
            .starts_with("lb-")
            && infra.control_plane_endpoint.as_ref().unwrap().port == 6443,
        "{infra:?}"
    );
    assert!(!infra.failure_domains.is_empty(), "{infra:?}");

    let steps = driver.converge_control_plane(3).await;
    assert_eq!(
        steps,
        [
            "create c1-control-plane-1",
            "create c1-control-plane-2",
            "create c1-control-plane-3"
        ]
    );
    let workers = driver.add_workers("md-0", 3).await;
    assert_eq!(workers.len(), 3);

    // Every machine runs: its bootstrap data passed the sim's check against the endpoint,
    // the token the init registered and the CA hash of the CA the init carried.
    let alive = inventory(&sim).await;
    let cluster = &alive.clusters["c1"];
    assert_eq!(cluster.instances.len(), 6, "{cluster:?}");
    for instance in &cluster.instances {
        assert_eq!(
            instance.state,
            InstanceState::Running,
            "{}: {}",
            instance.name,
            instance.reason
        );
    }
    let control_plane: Vec<_> = cluster
        .instances
        .iter()
        .filter(|i| i.role == Role::ControlPlane)
        .collect();
    assert_eq!(control_plane.len(), 3, "{cluster:?}");
    let registration = cluster.bootstrap.as_ref().expect("the init registered");
    let hash = driver
        .secrets
        .iter()
        .find(|s| s.name == "ca-cert-hash")
        .map(|s| String::from_utf8(s.data.clone()).unwrap())
        .expect("the secrets carry the CA cert hash");
    assert_eq!(registration.ca_cert_hash, hash);

    // Control-plane machines were spread over the failure domains.
    let zones: BTreeSet<_> = control_plane.iter().map(|i| i.zone.clone()).collect();
    assert_eq!(zones.len(), 3, "{zones:?}");

    // The plan is satisfied, and the infrastructure lists exactly our machines.
    let plan = driver.plan(3).await;
    assert_eq!(plan.ready_replicas, 3, "{plan:?}");
    let listed = driver
        .infra
        .list_machines(&support::ctx("c1", &driver.infra_config, "list"))
        .await
        .unwrap();
    let listed_keys: BTreeSet<_> = listed.iter().map(|m| m.idempotency_key.clone()).collect();
    let our_keys: BTreeSet<_> = driver.machines.values().map(|m| m.key.clone()).collect();
    assert_eq!(listed_keys, our_keys);
    assert!(listed.iter().all(|m| m.phase == MachinePhase::Running));

    driver.delete_cluster().await;
    let left = inventory(&sim).await;
    // Nothing of the cluster is left in the cloud, its bootstrap registration included.
    assert!(!left.clusters.contains_key("c1"), "{left:?}");
}
