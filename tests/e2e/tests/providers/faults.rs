//! The reference providers against an unreliable simcloud: 30% of resource requests fail
//! (20% with a 500 whose change was applied anyway, a lost response; 10% with a 429 and
//! `Retry-After`), and the cluster still converges with no duplicate instance.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use capw_simcloud::FaultConfig;
use capw_simcloud::model::InstanceState;

use crate::driver::{Driver, inventory};
use crate::support::{self, SIM_TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_through_errors_and_throttling_without_duplicates() {
    let runtime = support::runtime();
    let faults = FaultConfig {
        seed: 7,
        error_rate: 0.2,
        error_after_apply: true,
        throttle_rate: 0.1,
        retry_after_secs: 1,
        ..FaultConfig::default()
    };
    let sim = support::simcloud(Duration::from_millis(20), faults).await;
    let mut driver = Driver::new(&runtime, &sim, "flaky").await;

    driver.ensure_infrastructure().await;
    driver.converge_control_plane(3).await;
    driver.add_workers("md-0", 3).await;

    let inventory_now = inventory(&sim).await;
    let cluster = &inventory_now.clusters["flaky"];
    assert_eq!(cluster.networks.len(), 1, "{cluster:?}");
    assert_eq!(cluster.load_balancers.len(), 1, "{cluster:?}");
    assert_eq!(cluster.instances.len(), 6, "duplicates: {cluster:?}");
    let names: BTreeSet<_> = cluster.instances.iter().map(|i| &i.name).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(
        cluster
            .instances
            .iter()
            .all(|i| i.state == InstanceState::Running),
        "{cluster:?}"
    );

    // The faults were really met, and Retry-After reached the driver.
    let stats: serde_json::Value = capw_test_support::http()
        .get(format!("{}/v1/admin/faults", sim.base_url()))
        .bearer_auth(SIM_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(stats["stats"]["errored"].as_u64() > Some(0), "{stats}");
    assert!(stats["stats"]["throttled"].as_u64() > Some(0), "{stats}");
    assert!(
        driver.retries.throttled.load(Ordering::Relaxed) > 0,
        "{:?}",
        driver.retries
    );
    assert!(
        driver.retries.retryable.load(Ordering::Relaxed) > 0,
        "{:?}",
        driver.retries
    );

    // For the record (run with --nocapture): what the faults cost.
    eprintln!(
        "simcloud: {}; driver retries: {:?}",
        stats["stats"], driver.retries
    );

    driver.delete_cluster().await;
    let inventory_after = inventory(&sim).await;
    // Nothing of the cluster is left in the cloud, its bootstrap registration included.
    assert!(
        !inventory_after.clusters.contains_key("flaky"),
        "{inventory_after:?}"
    );
}
