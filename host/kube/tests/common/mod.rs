//! What the kube test binaries share: the quickstart moved into a test's namespace, and
//! simcloud's inventory.

use capw_simcloud::SimCloudHandle;
use capw_simcloud::model::Inventory;

/// The quickstart's manifests in namespace `ns`, pointed at `sim`, with provider names
/// prefixed by `ns` (WasmProviders are cluster-scoped and tests share one API server).
pub fn quickstart_in(ns: &str, sim: &SimCloudHandle) -> String {
    capw_test_support::quickstart()
        .replace("http://127.0.0.1:7480", &sim.base_url())
        .replace("namespace: default", &format!("namespace: {ns}"))
        .replace("sim-infra", &format!("{ns}-sim-infra"))
        .replace("kubeadm-bootstrap", &format!("{ns}-kubeadm-bootstrap"))
        .replace(
            "kubeadm-control-plane",
            &format!("{ns}-kubeadm-control-plane"),
        )
}

/// Everything `sim` holds, by cluster.
pub async fn inventory(sim: &SimCloudHandle, token: &str) -> Inventory {
    capw_test_support::simcloud_inventory(&sim.base_url(), token).await
}
