//! The hosted example (examples/hosted) in a management cluster whose workloads run: the
//! control plane the host applies is a real etcd, real kube-apiservers and a real
//! kube-controller-manager, run as Pods of the management cluster (the real
//! kube-controller-manager and kube-scheduler of the test environment roll them out and place
//! them; its kubelet stand-in runs them as local processes; its Service routing stand-in gives
//! the API servers' Service a load balancer address). The host reaches the hosted API servers
//! through that address with the admin kubeconfig it minted; everything checked about versions
//! and Nodes is asked of them. Its two workers are real-boot machines whose kubelet stand-ins
//! join with kubeadm's own token discovery and the kubelet's own TLS bootstrap, against what
//! the host wrote into the hosted API server (cluster-info, the bootstrap RBAC, the token).

use capw_api::parse_manifests;
use capw_test_support::real_boot::KUBE_VERSIONS;
use serde_json::Value;

use super::{Expect, Scenario};

/// The processes whose command line holds `needle`, as `pid: command line`.
fn processes_with(needle: &str) -> Vec<String> {
    super::processes_where(|raw| {
        String::from_utf8_lossy(raw)
            .replace('\0', " ")
            .contains(needle)
    })
    .into_iter()
    .map(|(pid, line)| format!("{pid}: {line}"))
    .collect()
}

impl Scenario {
    /// The hosted example's providers, class and Cluster `epsilon`, in this scenario's
    /// namespace, with provider names of its own (WasmProviders are cluster-scoped).
    fn hosted(&self) -> Vec<Value> {
        let providers = ["sim-infra", "kubeadm-bootstrap", "hosted-control-plane"];
        let text = crate::common::example_in("hosted", &self.namespace, &self.sim, &providers);
        parse_manifests(&text)
            .unwrap()
            .iter()
            .map(|o| o.to_json().unwrap())
            .collect()
    }

    /// `kubectl` against the management cluster, in the scenario's namespace.
    pub(super) fn management_kubectl(&self, args: &[&str]) -> String {
        let env = self
            .kube_env
            .as_ref()
            .expect("a hosted scenario has its own environment");
        let out = capw_test_support::bounded::output_within(
            env.kubectl().args(args).args(["-n", &self.namespace]),
            std::time::Duration::from_secs(120),
        );
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The objects capw applied for `cluster` in the management cluster, as `Kind/name`,
    /// each checked to be owned by the Cluster.
    fn owned_objects(&self, cluster: &str, uid: &str) -> Vec<String> {
        let listed: Value = serde_json::from_str(&self.management_kubectl(&[
            "get",
            "deployments,statefulsets,services,secrets,configmaps",
            "-l",
            &format!("capw.io/hosted-control-plane={cluster}"),
            "-o",
            "json",
        ]))
        .unwrap();
        let mut out = Vec::new();
        for o in listed["items"].as_array().unwrap() {
            let name = format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            );
            let owners = o["metadata"]["ownerReferences"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(
                owners
                    .iter()
                    .any(|r| r["kind"] == "Cluster" && r["uid"] == uid),
                "{name} is not owned by Cluster {cluster} ({uid}): {owners:?}"
            );
            out.push(name);
        }
        out.sort();
        out
    }
}

/// The join objects the host writes into a hosted API server, as `kind/name`, each found
/// there and marked as capw's.
async fn join_objects(s: &Scenario, cluster: &str) -> Vec<String> {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    let client = s.workload(cluster, None).await;
    let info = kube::Api::<ConfigMap>::namespaced(client.clone(), "kube-public")
        .get("cluster-info")
        .await
        .unwrap();
    let data = info.data.unwrap_or_default();
    // The bootstrap signer of the hosted controller manager signed it with the join token.
    assert!(
        data.keys().any(|k| k.starts_with("jws-kubeconfig-")),
        "cluster-info is not signed: {:?}",
        data.keys().collect::<Vec<_>>()
    );
    let mut out = vec!["ConfigMap/cluster-info".to_owned()];
    let bindings = kube::Api::<ClusterRoleBinding>::all(client)
        .list(&kube::api::ListParams::default().labels("app.kubernetes.io/managed-by=capw"))
        .await
        .unwrap();
    out.extend((bindings.items.iter()).map(|b| {
        format!(
            "ClusterRoleBinding/{}",
            b.metadata.name.clone().unwrap_or_default()
        )
    }));
    out.sort();
    out
}

/// Create the hosted cluster with two workers: its control plane's Pods run in the management
/// cluster and its API servers answer through the load balancer at the version asked, and the
/// workers join it and are Ready there; upgrade one minor (the Deployments roll to the new
/// binaries, then the workers are replaced); delete: no object, no Pod, no process left.
pub(super) async fn run(mut s: Scenario) {
    let [v1, v2] = KUBE_VERSIONS;
    s.apply(s.hosted()).await;
    let ready = |version| Expect::Ready {
        control_plane: 0,
        workers: 2,
        version,
    };
    s.settle(&[("epsilon", ready(v1))]).await;
    s.assert_service_at("epsilon", v1).await;
    s.assert_nodes_follow("epsilon").await;
    assert_eq!(
        join_objects(&s, "epsilon").await,
        [
            "ClusterRoleBinding/kubeadm:get-nodes",
            "ClusterRoleBinding/kubeadm:kubelet-bootstrap",
            "ClusterRoleBinding/kubeadm:node-autoapprove-bootstrap",
            "ClusterRoleBinding/kubeadm:node-autoapprove-certificate-rotation",
            "ConfigMap/cluster-info",
        ]
    );
    let workers_before: Vec<String> = s
        .machines("epsilon")
        .await
        .iter()
        .filter_map(|m| m["metadata"]["name"].as_str().map(str::to_owned))
        .collect();

    let cluster = s.store.get(&s.key("epsilon")).await.unwrap().unwrap();
    let uid = cluster["metadata"]["uid"].as_str().unwrap().to_owned();
    assert_eq!(
        s.owned_objects("epsilon", &uid),
        crate::common::hosted_control_plane_objects("epsilon")
    );
    // The endpoint is the load balancer's address, and the host reaches the API servers there.
    let endpoint = &cluster["status"]["controlPlaneEndpoint"];
    let address: std::net::Ipv4Addr = endpoint["host"].as_str().unwrap().parse().unwrap();
    assert_eq!(address.octets()[..2], [100, 81], "{endpoint}");
    let pods = s.management_kubectl(&["get", "pods", "-o", "wide"]);
    assert!(pods.contains("epsilon-etcd-0"), "{pods}");
    assert!(
        !processes_with("--cluster-name=epsilon").is_empty(),
        "no controller manager of epsilon runs:\n{pods}"
    );

    // The upgrade: the Deployments roll to the new version's binaries, one API server at a time.
    s.update_cluster("epsilon", |c| c["spec"]["topology"]["version"] = v2.into())
        .await;
    s.settle(&[("epsilon", ready(v2))]).await;
    s.assert_service_at("epsilon", v2).await;
    s.assert_nodes_follow("epsilon").await;
    let replaced = s.machines("epsilon").await;
    assert!(
        (replaced.iter()).all(|m| !workers_before
            .iter()
            .any(|w| m["metadata"]["name"] == *w.as_str())),
        "workers kept through the upgrade: {workers_before:?}"
    );
    let addresses: Vec<std::net::Ipv4Addr> = s
        .inventory()
        .await
        .clusters
        .get(&s.cloud_key("epsilon"))
        .map(|c| {
            (c.instances.iter())
                .map(|i| i.addresses[0].address.parse().unwrap())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(addresses.len(), 2, "the workers' machines in the cloud");

    // Delete: nothing of it left in the management cluster, no process of it left. capw
    // deletes what it applied (the kube tests' environment, which runs no garbage collector,
    // shows it does so alone); the ReplicaSets, Pods and the etcd's claim go through the
    // garbage collector, which this environment runs as any cluster does.
    s.store.delete(&s.key("epsilon")).await.unwrap();
    s.settle(&[("epsilon", Expect::Gone)]).await;
    assert_eq!(s.owned_objects("epsilon", &uid), Vec::<String>::new());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let pods = s.management_kubectl(&["get", "pods", "-o", "name"]);
        let claims = s.management_kubectl(&["get", "pvc", "-o", "name"]);
        let procs = [
            processes_with("--cluster-name=epsilon"),
            processes_with("epsilon-etcd"),
        ]
        .concat();
        if pods.trim().is_empty() && claims.trim().is_empty() && procs.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left after the delete: Pods {pods:?}, claims {claims:?}, processes {procs:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    s.assert_cloud_empty().await;
    s.assert_machines_gone(&addresses).await;
    s.stop().await;
}
