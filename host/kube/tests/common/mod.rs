//! What the kube test binaries share: the examples moved into a test's namespace, simcloud's
//! inventory, and what hosted-control-plane applies.

use capw_simcloud::SimCloudHandle;
use capw_simcloud::model::Inventory;

/// The quickstart's manifests in namespace `ns`, pointed at `sim`, with provider names
/// prefixed by `ns` (WasmProviders are cluster-scoped and tests share one API server).
pub fn quickstart_in(ns: &str, sim: &SimCloudHandle) -> String {
    let providers = ["sim-infra", "kubeadm-bootstrap", "kubeadm-control-plane"];
    example_in("quickstart", ns, sim, &providers)
}

/// Everything `sim` holds, by cluster.
pub async fn inventory(sim: &SimCloudHandle, token: &str) -> Inventory {
    capw_test_support::simcloud_inventory(&sim.base_url(), token).await
}

/// The manifests of `examples/<example>` in namespace `ns`, pointed at `sim`, with the names of
/// `providers` prefixed by `ns` (WasmProviders are cluster-scoped and tests share one API
/// server).
pub fn example_in(example: &str, ns: &str, sim: &SimCloudHandle, providers: &[&str]) -> String {
    let mut text = capw_test_support::example(example)
        .replace("http://127.0.0.1:7480", &sim.base_url())
        .replace("namespace: default", &format!("namespace: {ns}"));
    for provider in providers {
        text = text.replace(provider, &format!("{ns}-{provider}"));
    }
    text
}

/// The objects hosted-control-plane applies for `cluster`, as `Kind/name`, sorted.
#[allow(dead_code)] // the kube and scenario binaries use it, the others do not
pub fn hosted_control_plane_objects(cluster: &str) -> Vec<String> {
    let mut want: Vec<String> = [
        "Deployment/{c}-kube-apiserver",
        "Deployment/{c}-kube-controller-manager",
        "Secret/{c}-apiserver-certs",
        "Secret/{c}-controller-manager-certs",
        "Secret/{c}-etcd-certs",
        "Service/{c}-apiserver",
        "Service/{c}-etcd",
        "StatefulSet/{c}-etcd",
    ]
    .iter()
    .map(|s| s.replace("{c}", cluster))
    .collect();
    want.sort();
    want
}
