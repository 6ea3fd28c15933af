//! The scenario through an unreliable cloud, in both modes: simcloud fails requests (some
//! after applying them, so their answers are lost), throttles with `Retry-After` and hangs
//! a few, while the real engine (the local mode's executor, or the controller against the
//! API server) drives the reference providers. Everything converges, every Machine has
//! exactly one instance, nothing is left after delete, and the faults really fired.

use capw_simcloud::FaultConfig;
use serde_json::{Value, json};

use super::{Expect, Scenario};

/// 15% of resource requests fail with a 500 whose change was applied anyway, 8% are
/// throttled with `Retry-After: 1`, 1% hang until the provider's request times out.
pub fn unreliable() -> FaultConfig {
    FaultConfig {
        seed: 18,
        error_rate: 0.15,
        error_after_apply: true,
        throttle_rate: 0.08,
        retry_after_secs: 1,
        hang_rate: 0.01,
        ..FaultConfig::default()
    }
}

impl Scenario {
    /// Prints simcloud's fault counters and checks each kind fired.
    async fn assert_faults_fired(&self, kinds: &[&str]) {
        let faults = self.fault_stats().await;
        let stats = &faults["stats"];
        eprintln!("{}: simcloud faults: {stats}", self.mode);
        for kind in kinds {
            assert!(
                stats[kind].as_u64() > Some(0),
                "{}: no request was {kind}: {stats}",
                self.mode
            );
        }
    }
}

/// Create, scale, upgrade and delete one cluster through the faults.
pub async fn run(mut s: Scenario) {
    s.apply(s.quickstart()).await;
    let v1 = "v1.34.4";
    let ready = |control_plane, workers, version| Expect::Ready {
        control_plane,
        workers,
        version,
    };
    s.settle(&[("alpha", ready(1, 2, v1))]).await;
    s.assert_cloud_matches(&["alpha"]).await;

    s.update_cluster("alpha", |c| {
        c["spec"]["topology"]["controlPlane"]["replicas"] = 3.into();
        c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 3.into();
    })
    .await;
    s.settle(&[("alpha", ready(3, 3, v1))]).await;
    s.assert_cloud_matches(&["alpha"]).await;

    let v2 = "v1.34.5";
    s.update_cluster("alpha", |c| c["spec"]["topology"]["version"] = v2.into())
        .await;
    s.settle(&[("alpha", ready(3, 3, v2))]).await;
    s.assert_cloud_matches(&["alpha"]).await;

    s.store.delete(&s.key("alpha")).await.unwrap();
    s.settle(&[("alpha", Expect::Gone)]).await;
    assert!(s.machines("alpha").await.is_empty());
    s.assert_cloud_empty().await;
    // One cluster makes a few hundred requests: a hang (1%) is likely, not certain.
    s.assert_faults_fired(&["errored", "throttled"]).await;
    s.stop().await;
}

/// `count` clusters of one control-plane machine and two workers come up and go through the
/// faults at once.
pub async fn many(mut s: Scenario, count: usize) {
    let quickstart = s.quickstart();
    let alpha = quickstart
        .iter()
        .find(|o| o["kind"] == "Cluster")
        .expect("the quickstart has a Cluster")
        .clone();
    let names: Vec<String> = (0..count).map(|i| format!("c-{i:02}")).collect();
    let mut objects: Vec<Value> = quickstart
        .into_iter()
        .filter(|o| o["kind"] != "Cluster")
        .collect();
    for name in &names {
        let mut cluster = alpha.clone();
        cluster["metadata"]["name"] = json!(name);
        objects.push(cluster);
    }
    s.apply(objects).await;
    let ready = Expect::Ready {
        control_plane: 1,
        workers: 2,
        version: "v1.34.4",
    };
    let all: Vec<(&str, Expect<'_>)> = names.iter().map(|n| (n.as_str(), ready)).collect();
    s.settle(&all).await;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    s.assert_cloud_matches(&refs).await;

    for name in &names {
        s.store.delete(&s.key(name)).await.unwrap();
    }
    let gone: Vec<(&str, Expect<'_>)> = names.iter().map(|n| (n.as_str(), Expect::Gone)).collect();
    s.settle(&gone).await;
    s.assert_cloud_empty().await;
    s.assert_faults_fired(&["errored", "throttled", "hung"])
        .await;
    s.stop().await;
}
