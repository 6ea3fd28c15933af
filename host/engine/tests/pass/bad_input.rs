//! Bad input never gets past the topology: each bad Cluster is blocked with a condition that
//! names the field, and nothing is created for it, in the store or in the cloud.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{
    ClusterOutcome, Env, cluster, condition, first_of_kind, inventory, machines, manifests, settle,
};

fn bad_cluster(name: &str, class: &str, variables: Value) -> Value {
    json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"topology": {
            "classRef": {"name": class},
            "version": "v1.34.1",
            "variables": variables,
        }},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_bad_input_is_named_with_its_path_and_changes_nothing() {
    let env = Env::start(Duration::from_millis(10)).await;
    let mut objects: Vec<Value> = manifests(&env.sim, "")
        .into_iter()
        .filter(|o| o["kind"] != "Cluster")
        .collect();
    let class = first_of_kind(&objects, "ClusterClass");
    // A class naming a provider nobody installed, and one whose infrastructure config the
    // provider's schema refuses.
    let mut ghost = class.clone();
    ghost["metadata"]["name"] = "ghost".into();
    ghost["spec"]["infrastructure"]["provider"] = "no-such-provider".into();
    let mut refused = class.clone();
    refused["metadata"]["name"] = "refused".into();
    refused["spec"]["infrastructure"]["config"] = json!({"zones": "not-a-list"});
    objects.extend([ghost, refused]);
    let cases = [
        (
            bad_cluster(
                "bad-variable",
                "sim-kubeadm",
                json!([{"name": "keyAlgorithm", "value": "dsa-1024"}]),
            ),
            "keyAlgorithm",
        ),
        (
            bad_cluster("no-class", "missing-class", json!([])),
            "missing-class",
        ),
        (
            bad_cluster("no-provider", "ghost", json!([])),
            "no-such-provider",
        ),
        (
            bad_cluster("bad-config", "refused", json!([])),
            "spec.infrastructure.config.zones",
        ),
    ];
    objects.extend(cases.iter().map(|(c, _)| c.clone()));
    env.apply(objects);
    let executor = env.executor().await;
    let version = env.store.resource_version().unwrap();
    let report = settle(&executor).await;

    for (c, needle) in &cases {
        let name = c["metadata"]["name"].as_str().unwrap();
        assert!(
            matches!(
                report.outcomes[&format!("default/{name}")],
                ClusterOutcome::Blocked(_)
            ),
            "{name}: {report:?}"
        );
        let stored = cluster(&env.store, name).unwrap();
        let topology = condition(&stored, "TopologyReconciled");
        assert_eq!(topology["status"], "False", "{name}: {stored:#}");
        assert_eq!(topology["reason"], "InvalidTopology", "{name}");
        let message = topology["message"].as_str().unwrap();
        assert!(
            message.contains(needle),
            "{name}: {message:?} lacks {needle:?}"
        );
        assert!(machines(&env.store, name).is_empty(), "{name}");
        assert!(
            stored["metadata"]["finalizers"].is_null(),
            "{name}: a finalizer means work began"
        );
    }
    assert!(inventory(&env.sim).await.clusters.is_empty());
    // Only the four status writes happened; a second run writes nothing.
    assert_eq!(env.store.resource_version().unwrap(), version + 4);
    settle(&executor).await;
    assert_eq!(env.store.resource_version().unwrap(), version + 4);
}
