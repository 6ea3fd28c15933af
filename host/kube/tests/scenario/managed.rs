//! The managed example (examples/managed) on real workload clusters: simcloud's managed
//! service runs the control plane as real etcd, kube-apiserver, kube-controller-manager and
//! kube-scheduler processes with its own CA, and its workers are real kubelet stand-ins that
//! join with the token and CA the service hands out (docs/workload-clusters.md). The host
//! reaches the cluster through the admin kubeconfig the service gave it; everything checked
//! about Nodes and versions is asked of those real components.

use std::net::Ipv4Addr;

use capw_api::parse_manifests;
use capw_test_support::real_boot::{KUBE_VERSIONS, listening_on};
use serde_json::Value;

use super::{Expect, Scenario};

impl Scenario {
    /// The managed example's providers, class and Cluster `gamma`, in this scenario's
    /// namespace, with provider names of its own (WasmProviders are cluster-scoped).
    fn managed(&self) -> Vec<Value> {
        let providers = [
            "sim-infra",
            "kubeadm-bootstrap",
            "sim-managed-control-plane",
        ];
        let text = crate::common::example_in("managed", &self.namespace, &self.sim, &providers);
        parse_manifests(&text)
            .unwrap()
            .iter()
            .map(|o| o.to_json().unwrap())
            .collect()
    }

    /// The service's API server, reached through the kubeconfig Secret the host stored,
    /// reports `version`, and so does the Cluster's status.
    pub(super) async fn assert_service_at(&self, cluster: &str, version: &str) {
        let client = self.workload(cluster, None).await;
        let info = client.apiserver_version().await.unwrap();
        assert_eq!(
            info.git_version, version,
            "{}: the service's API server",
            self.mode
        );
        let c = self.store.get(&self.key(cluster)).await.unwrap().unwrap();
        assert_eq!(
            c["status"]["controlPlane"]["version"], version,
            "{}: {:#}",
            self.mode, c["status"]
        );
    }
}

fn ready(workers: usize, version: &str) -> Expect<'_> {
    Expect::Ready {
        control_plane: 0,
        workers,
        version,
    }
}

/// Create a managed cluster with two workers, its kubeconfig Secret lists them Ready, upgrade
/// one minor (the service first, the workers after it), delete: nothing of it left.
pub(super) async fn run(mut s: Scenario) {
    let [v1, v2] = KUBE_VERSIONS;
    s.apply(s.managed()).await;
    s.settle(&[("gamma", ready(2, v1))]).await;
    s.assert_cloud_matches(&["gamma"]).await;
    s.assert_nodes_follow("gamma").await;
    s.assert_service_at("gamma", v1).await;
    let inventory = s.inventory().await;
    let cloud = &inventory.clusters[&s.cloud_key("gamma")];
    assert_eq!(
        cloud.managed_control_planes.len(),
        1,
        "{}: {cloud:?}",
        s.mode
    );
    assert!(cloud.load_balancers.is_empty(), "{}: {cloud:?}", s.mode);
    let service = cloud.managed_control_planes[0].clone();

    // The upgrade: the service updated in place, then the workers replaced at the new version.
    s.update_cluster("gamma", |c| c["spec"]["topology"]["version"] = v2.into())
        .await;
    s.settle(&[("gamma", ready(2, v2))]).await;
    s.assert_service_at("gamma", v2).await;
    s.assert_nodes_follow("gamma").await;
    let inventory = s.inventory().await;
    let cloud = &inventory.clusters[&s.cloud_key("gamma")];
    let updated = &cloud.managed_control_planes[0];
    assert_eq!(updated.id, service.id, "{}: the same service", s.mode);
    for instance in &cloud.instances {
        assert!(
            instance.created_at >= updated.updated_at,
            "{}: worker {} made at {} before the service's update began at {}",
            s.mode,
            instance.name,
            instance.created_at,
            updated.updated_at
        );
    }

    // Delete: no process, no listening port, no directory, no Secret of the cluster left.
    let mut addresses: Vec<Ipv4Addr> = (cloud.instances.iter())
        .map(|i| i.addresses[0].address.parse().unwrap())
        .collect();
    let endpoint = updated.endpoint.as_ref().expect("the service's endpoint");
    addresses.push(endpoint.host.parse().unwrap());
    assert!(
        !listening_on(&addresses).is_empty(),
        "{}: nothing listens on gamma's addresses",
        s.mode
    );
    s.store.delete(&s.key("gamma")).await.unwrap();
    s.settle(&[("gamma", Expect::Gone)]).await;
    s.assert_cloud_empty().await;
    let secrets = s.store.list("Secret", Some(&s.namespace)).await.unwrap();
    let left: Vec<&Value> = (secrets.iter())
        .filter(|x| {
            x["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("gamma-"))
        })
        .collect();
    assert!(left.is_empty(), "{}: Secrets left: {left:?}", s.mode);
    s.assert_machines_gone(&addresses).await;
    s.stop().await;
}
