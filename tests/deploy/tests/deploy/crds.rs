//! The CRDs install and establish; the API server enforces their schemas, serves the status
//! subresource and prints the columns.

use capw_api::Cluster;
use capw_test_support::kube::KubeEnv;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use serde_json::json;

use crate::succeeded;

fn cluster(name: &str, replicas: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": { "name": name },
        "spec": {
            "topology": {
                "classRef": { "name": "sim" },
                "version": "v1.35.4",
                "controlPlane": { "replicas": replicas },
                "workers": { "machineDeployments": [ { "class": "default", "name": "md-0", "replicas": 2 } ] }
            }
        }
    })
}

#[tokio::test]
async fn a_valid_cluster_is_accepted_with_status_and_printer_columns() {
    let env = KubeEnv::shared();
    env.apply_crds(capw_api::crds()).await;
    let namespace = env.create_namespace("crds-valid").await;
    let clusters: Api<Cluster> = Api::namespaced(env.client().await, &namespace);

    let cluster: Cluster = serde_json::from_value(cluster("alpha", json!(3))).unwrap();
    let created = clusters
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
    assert_eq!(created.spec, cluster.spec);
    assert!(
        created.status.is_none(),
        "status is not written through the main resource"
    );

    let status = json!({ "status": {
        "phase": "Provisioning",
        "controlPlane": { "desiredReplicas": 3, "readyReplicas": 1 },
        "workersReadyReplicas": 0,
        "workersDesiredReplicas": 2
    }});
    let patched = clusters
        .patch_status("alpha", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let counters = patched.status.unwrap().control_plane.unwrap().counters;
    assert_eq!((counters.ready_replicas, counters.desired_replicas), (1, 3));

    let table = succeeded(
        "kubectl get clusters",
        env.kubectl()
            .args(["get", "clusters.capw.dev", "-n", &namespace])
            .output()
            .unwrap(),
    );
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "PHASE",
            "VERSION",
            "CP READY",
            "CP DESIRED",
            "WORKERS READY",
            "WORKERS DESIRED",
            "AGE"
        ],
        "{table}"
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        row[..7],
        ["alpha", "Provisioning", "v1.35.4", "1", "3", "0", "2"],
        "{table}"
    );
}

#[tokio::test]
async fn a_cluster_breaking_the_schema_is_refused_with_the_field_path() {
    let env = KubeEnv::shared();
    env.apply_crds(capw_api::crds()).await;
    let namespace = env.create_namespace("crds-invalid").await;
    let resource = ApiResource::erase::<Cluster>(&());
    let clusters: Api<DynamicObject> =
        Api::namespaced_with(env.client().await, &namespace, &resource);

    let wrong_type: DynamicObject =
        serde_json::from_value(cluster("wrong-type", json!("three"))).unwrap();
    let err = clusters
        .create(&PostParams::default(), &wrong_type)
        .await
        .expect_err("a string where an integer belongs is refused");
    let message = err.to_string();
    assert!(
        message.contains("spec.topology.controlPlane.replicas"),
        "{message}"
    );
    assert!(message.contains("integer"), "{message}");

    let mut missing = cluster("missing-version", json!(1));
    missing["spec"]["topology"]
        .as_object_mut()
        .unwrap()
        .remove("version");
    let missing: DynamicObject = serde_json::from_value(missing).unwrap();
    let err = clusters
        .create(&PostParams::default(), &missing)
        .await
        .expect_err("a Cluster without a version is refused");
    let message = err.to_string();
    assert!(message.contains("spec.topology.version"), "{message}");
    assert!(message.contains("Required"), "{message}");

    let listed = clusters.list(&Default::default()).await.unwrap();
    assert!(listed.items.is_empty(), "nothing refused was stored");
}
