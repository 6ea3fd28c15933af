//! The capabilities a control-plane provider declares are honoured at admission, which both
//! modes call (`capw apply` and the webhook): a replica change for a provider that does not
//! scale, a version change for one that does not upgrade, and a class whose
//! `machineInfrastructure` does not fit the provider's shape are refused, each naming the
//! field and the capability.

use std::time::Duration;

use capw_engine::store::ObjectKey;
use serde_json::{Value, json};

use crate::support::{ClusterOutcome, Env, first_of_kind, manifests, settle};

/// A control-plane provider that declares `control-plane-scalable` and `version-upgrades`
/// false (`tests/plugins/fixed-control-plane`).
const FIXED: &str = "apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {name: fixed-control-plane}
spec:
  source: {file: {path: capw_fixed_control_plane_provider.wasm}}
";

fn refusal(result: Result<(), capw_engine::Refusal>) -> String {
    result.expect_err("refused").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_provider_is_asked_only_what_it_declares_it_can_do() {
    let env = Env::start(Duration::from_millis(5)).await;
    let mut objects: Vec<Value> = manifests(&env.sim, FIXED)
        .into_iter()
        .filter(|o| o["kind"] != "Cluster")
        .collect();
    let mut class = first_of_kind(&objects, "ClusterClass");
    class["metadata"]["name"] = "fixed".into();
    class["spec"]["controlPlane"]["provider"] = "fixed-control-plane".into();
    class["spec"]["controlPlane"]["config"] = json!({});
    objects.push(class.clone());
    let cluster = json!({
        "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "solid", "namespace": "default"},
        "spec": {"topology": {
            "classRef": {"name": "fixed"}, "version": "v1.34.4",
            "controlPlane": {"replicas": 1},
            "workers": {"machineDeployments": [
                {"class": "default-worker", "name": "md-0", "replicas": 1},
            ]},
        }},
    });
    objects.push(cluster);
    env.apply(objects);
    let executor = env.executor().await;
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/solid"], ClusterOutcome::Converged);
    let stored = env
        .store
        .get(&ObjectKey::namespaced("Cluster", "default", "solid"))
        .unwrap()
        .unwrap();

    // Scaling a control plane that does not scale.
    let mut scaled = stored.clone();
    scaled["spec"]["topology"]["controlPlane"]["replicas"] = 3.into();
    let told = refusal(executor.admit(&scaled, Some(&stored)).await);
    assert!(
        told.contains("Cluster spec.topology.controlPlane.replicas")
            && told.contains("control-plane-scalable false")
            && told.contains("from 1 to 3"),
        "{told}"
    );
    // Upgrading one that does not upgrade, even by a patch release.
    let mut upgraded = stored.clone();
    upgraded["spec"]["topology"]["version"] = "v1.34.5".into();
    let told = refusal(executor.admit(&upgraded, Some(&stored)).await);
    assert!(
        told.contains("Cluster spec.topology.version")
            && told.contains("version-upgrades false")
            && told.contains("from v1.34.4 to v1.34.5"),
        "{told}"
    );
    // A worker change asks nothing of the control plane: admitted.
    let mut more_workers = stored.clone();
    more_workers["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 2.into();
    executor.admit(&more_workers, Some(&stored)).await.unwrap();

    // A machines-shaped control plane without a machine infrastructure config.
    let mut bare = class.clone();
    bare["metadata"]["name"] = "bare".into();
    bare["spec"]["controlPlane"]
        .as_object_mut()
        .unwrap()
        .remove("machineInfrastructure");
    // Its patches no longer target the config that is gone.
    for patch in bare["spec"]["patches"].as_array_mut().unwrap() {
        patch["definitions"]
            .as_array_mut()
            .unwrap()
            .retain(|d| d["selector"]["target"] != "controlPlaneMachineInfrastructure");
    }
    let told = refusal(executor.admit(&bare, None).await);
    assert!(
        told.contains("ClusterClass spec.controlPlane.machineInfrastructure")
            && told.contains("control-plane-shape machines"),
        "{told}"
    );

    // The same changes of a cluster whose provider scales and upgrades are admitted.
    let mut alpha = stored.clone();
    alpha["metadata"] = json!({"name": "alpha", "namespace": "default"});
    alpha["spec"]["topology"]["classRef"]["name"] = "sim-kubeadm".into();
    let mut changed = alpha.clone();
    changed["spec"]["topology"]["controlPlane"]["replicas"] = 3.into();
    changed["spec"]["topology"]["version"] = "v1.34.5".into();
    executor.admit(&changed, Some(&alpha)).await.unwrap();
}
