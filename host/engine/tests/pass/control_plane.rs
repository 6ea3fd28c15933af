//! What the control-plane provider says of its control plane reaches the Cluster's status:
//! its conditions under their own prefix, beside the host's, and the version it runs.

use std::time::Duration;

use serde_json::Value;

use crate::support::{ClusterOutcome, Env, cluster, manifests, settle};

fn conditions(c: &Value) -> Vec<(String, String, String)> {
    c["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("type"), text("status"), text("reason"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_providers_conditions_and_version_reach_the_cluster_under_their_prefix() {
    let env = Env::start(Duration::from_millis(5)).await;
    let objects: Vec<Value> = manifests(&env.sim, "")
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "beta")
        .collect();
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/alpha"], ClusterOutcome::Converged);
    let alpha = cluster(&env.store, "alpha").unwrap();
    let found = conditions(&alpha);
    let provided: Vec<&(String, String, String)> = found
        .iter()
        .filter(|(t, _, _)| t.starts_with("controlplane.capw.dev/"))
        .collect();
    // kubeadm-control-plane reports these four, always.
    let expected = [
        ("controlplane.capw.dev/Available", "True", "QuorumReady"),
        ("controlplane.capw.dev/Upgrading", "False", "UpToDate"),
        ("controlplane.capw.dev/ScalingUp", "False", ""),
        ("controlplane.capw.dev/ScalingDown", "False", ""),
    ];
    assert_eq!(provided.len(), expected.len(), "{found:?}");
    for (type_, status, reason) in expected {
        let c = provided
            .iter()
            .find(|(t, _, _)| t == type_)
            .unwrap_or_else(|| panic!("{type_} missing: {found:?}"));
        assert_eq!(c.1, status, "{c:?}");
        if !reason.is_empty() {
            assert_eq!(c.2, reason, "{c:?}");
        }
    }
    // The host's own conditions keep their names: nothing of the provider's lands on them.
    assert!(
        found
            .iter()
            .any(|(t, s, _)| t == "ControlPlaneReady" && s == "True")
    );
    assert!(!found.iter().any(|(t, _, _)| t == "Available"));
    assert_eq!(
        alpha["status"]["controlPlane"]["version"], "v1.34.4",
        "{alpha:#}"
    );
}
