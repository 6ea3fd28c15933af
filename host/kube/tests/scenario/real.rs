//! The scenario on real workload clusters: simcloud boots real etcd, kube-apiserver,
//! kube-controller-manager and kube-scheduler for every control-plane machine and a kubelet
//! stand-in for every machine (docs/workload-clusters.md), and the host reaches each cluster
//! through the kubeconfig Secret it stored. Everything checked about Nodes, etcd and versions
//! is asked of those real components. [`hung_api`] times one cluster's step beside another
//! whose API hangs.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_engine::store::ObjectKey;
use capw_engine::{ClusterCacheConfig, Executor, PassOutcome};
use capw_simcloud::model::{Instance, Role};
use capw_test_support::condition;
use capw_test_support::real_boot::{EtcdClient, KUBE_VERSIONS, listening_on};
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::{Driver, Expect, Scenario, WAIT};
use capw_test_support::silent::SilentListener;

/// How long the Nodes may take to follow the Machines once a step settled.
const NODES_WAIT: Duration = Duration::from_secs(120);

impl Scenario {
    pub(super) fn machines_dir(&self) -> &std::path::Path {
        &self
            .machines
            .as_ref()
            .expect("a real-boot scenario has a machines directory")
            .0
    }

    /// The workload cluster's admin kubeconfig, from the Secret `<cluster>-kubeconfig` the
    /// host stored (key `value`).
    async fn kubeconfig(&self, cluster: &str) -> Kubeconfig {
        let key =
            ObjectKey::namespaced("Secret", &self.namespace, &format!("{cluster}-kubeconfig"));
        let secret = self
            .store
            .get(&key)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: no Secret {cluster}-kubeconfig", self.mode));
        let owner = &secret["metadata"]["ownerReferences"][0];
        assert_eq!(
            owner["kind"], "Cluster",
            "{}: the Secret's owner",
            self.mode
        );
        assert_eq!(owner["name"], cluster, "{}: the Secret's owner", self.mode);
        let value = capw_engine::kubeconfig_value(&secret).expect("the Secret holds `value`");
        Kubeconfig::from_yaml(std::str::from_utf8(&value).unwrap()).unwrap()
    }

    /// A client of the workload cluster through its endpoint, or straight to `server`.
    pub(super) async fn workload(&self, cluster: &str, server: Option<String>) -> kube::Client {
        let mut config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig(cluster).await,
            &KubeConfigOptions::default(),
        )
        .await
        .unwrap();
        if let Some(server) = server {
            config.cluster_url = server.parse().unwrap();
        }
        kube::Client::try_from(config).unwrap()
    }

    async fn instances(&self, cluster: &str) -> Vec<Instance> {
        self.inventory()
            .await
            .clusters
            .get(&self.cloud_key(cluster))
            .map(|c| c.instances.clone())
            .unwrap_or_default()
    }

    /// The cluster's etcd members, asked through one of its control-plane instances by
    /// etcdctl with a client certificate signed by the etcd CA of the cluster's Secret.
    async fn etcd_members(&self, cluster: &str) -> Vec<String> {
        let key = ObjectKey::namespaced(
            "Secret",
            &self.namespace,
            &capw_engine::cluster_secret_name(cluster),
        );
        let secret =
            self.store.get(&key).await.unwrap().unwrap_or_else(|| {
                panic!("{}: no Secret of {cluster}'s cluster secrets", self.mode)
            });
        let items = capw_engine::stored_secret_items(&secret).expect("the cluster Secret's items");
        let instances = self.instances(cluster).await;
        let first = instances
            .iter()
            .find(|i| i.role == Role::ControlPlane)
            .expect("a control-plane instance");
        EtcdClient::from_secret_items(&items).members(&first.addresses[0].address)
    }

    /// Waits until the workload cluster's Nodes are exactly the Machines: one Node per
    /// Machine, `spec.providerID` the Machine's provider id, Ready, and each Machine's
    /// `nodeRef` naming it and `NodeHealthy` True.
    pub(super) async fn assert_nodes_follow(&self, cluster: &str) {
        let started = Instant::now();
        let client = self.workload(cluster, None).await;
        let nodes_api: Api<Node> = Api::all(client);
        loop {
            let why = match nodes_api.list(&Default::default()).await {
                Err(e) => Some(format!("listing Nodes: {e}")),
                Ok(nodes) => {
                    let machines = self.machines(cluster).await;
                    let want: BTreeSet<String> = machines
                        .iter()
                        .filter_map(|m| m["status"]["providerId"].as_str().map(str::to_owned))
                        .collect();
                    let have: BTreeSet<String> = nodes
                        .items
                        .iter()
                        .filter_map(|n| n.spec.as_ref()?.provider_id.clone())
                        .collect();
                    let not_ready: Vec<String> = nodes
                        .items
                        .iter()
                        .filter(|n| !node_ready(n))
                        .filter_map(|n| n.metadata.name.clone())
                        .collect();
                    let names: BTreeSet<String> = nodes
                        .items
                        .iter()
                        .filter_map(|n| n.metadata.name.clone())
                        .collect();
                    let unlinked: Vec<String> = machines
                        .iter()
                        .filter(|m| {
                            !m["status"]["nodeRef"]["name"]
                                .as_str()
                                .is_some_and(|n| names.contains(n))
                                || condition(m, "NodeHealthy")["status"] != "True"
                        })
                        .filter_map(|m| m["metadata"]["name"].as_str().map(str::to_owned))
                        .collect();
                    (want != have
                        || want.len() != machines.len()
                        || !not_ready.is_empty()
                        || !unlinked.is_empty())
                    .then(|| {
                        format!(
                            "machines' provider ids {want:?}, Nodes' {have:?}, not Ready \
                             {not_ready:?}, Machines without a healthy nodeRef {unlinked:?}"
                        )
                    })
                }
            };
            let Some(why) = why else { break };
            assert!(
                started.elapsed() < NODES_WAIT,
                "{}: {cluster}'s Nodes do not follow its Machines: {why}",
                self.mode
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Every control-plane instance's API server, asked directly, reports `version`.
    async fn assert_api_servers_at(&self, cluster: &str, version: &str) {
        for instance in self.instances(cluster).await {
            if instance.role != Role::ControlPlane {
                continue;
            }
            let server = format!("https://{}:6443", instance.addresses[0].address);
            let client = self.workload(cluster, Some(server.clone())).await;
            let info = client.apiserver_version().await.unwrap();
            assert_eq!(
                info.git_version, version,
                "{}: the API server at {server}",
                self.mode
            );
        }
    }

    /// Waits until no process of the cloud's machines runs, nothing listens on `addresses`
    /// and the machines directory is empty; fails after a minute naming what is left.
    pub(super) async fn assert_machines_gone(&self, addresses: &[Ipv4Addr]) {
        let machines = self.machines_dir();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let procs = capw_test_support::real_boot::processes_naming(machines);
            let ports = listening_on(addresses);
            let dirs: Vec<String> = std::fs::read_dir(machines)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            if procs.is_empty() && ports.is_empty() && dirs.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{}: left after the delete: processes {procs:?}, listening {ports:?}, directories {dirs:?}",
                self.mode
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn set_replicas(&self, cluster: &str, control_plane: u32, workers: u32) {
        self.update_cluster(cluster, move |c| {
            let cp = c["spec"]["topology"]["controlPlane"]
                .as_object_mut()
                .unwrap();
            cp.remove("failuresTolerated");
            cp.insert("replicas".into(), control_plane.into());
            c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = workers.into();
        })
        .await;
    }
}

fn node_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn ready(control_plane: usize, workers: usize, version: &str) -> Expect<'_> {
    Expect::Ready {
        control_plane,
        workers,
        version,
    }
}

/// Create, a ConfigMap in the workload cluster, scale the control plane 1→3→1 (the 3 asked as
/// `failuresTolerated: 1`) and the
/// workers 2→3→1, upgrade to the next minor version, delete: checked against the workload
/// cluster's own Nodes, etcd and API servers, and nothing of it left after the delete.
pub(super) async fn run(mut s: Scenario) {
    let [v1, v2] = KUBE_VERSIONS;
    s.apply(s.quickstart()).await;
    s.settle(&[("alpha", ready(1, 2, v1))]).await;
    s.assert_cloud_matches(&["alpha"]).await;
    s.assert_nodes_follow("alpha").await;

    // Something written into the workload cluster, to find again after the upgrade.
    let client = s.workload("alpha", None).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let written: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "written-before-the-upgrade"},
        "data": {"mode": s.mode},
    }))
    .unwrap();
    config_maps
        .create(&PostParams::default(), &written)
        .await
        .unwrap();

    // The control plane 1 → 3 → 1, the 3 asked as one failure tolerated: etcd's membership
    // follows, member by member.
    s.update_cluster("alpha", |c| {
        let cp = c["spec"]["topology"]["controlPlane"]
            .as_object_mut()
            .unwrap();
        cp.remove("replicas");
        cp.insert("failuresTolerated".into(), 1.into());
    })
    .await;
    s.settle(&[("alpha", ready(3, 2, v1))]).await;
    s.assert_nodes_follow("alpha").await;
    let mut members = s.etcd_members("alpha").await;
    members.sort();
    let mut control_plane: Vec<String> = (s.machines("alpha").await.iter())
        .filter(|m| m["spec"]["role"] != "Worker")
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    control_plane.sort();
    assert_eq!(members, control_plane, "{}: etcd members", s.mode);
    // What the status says the three tolerate counts the members ready now: on a busy machine a
    // Node can miss a heartbeat right after the settle and count for nothing for a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let c = s.store.get(&s.key("alpha")).await.unwrap().unwrap();
        if c["status"]["controlPlane"]["failuresTolerated"] == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{}: the three members never tolerated one failure: {:#}",
            s.mode,
            c["status"]
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    s.set_replicas("alpha", 1, 2).await;
    s.settle(&[("alpha", ready(1, 2, v1))]).await;
    s.assert_nodes_follow("alpha").await;
    assert_eq!(
        s.etcd_members("alpha").await.len(),
        1,
        "{}: etcd members",
        s.mode
    );

    // Workers 2 → 3 → 1: the Nodes follow.
    s.set_replicas("alpha", 1, 3).await;
    s.settle(&[("alpha", ready(1, 3, v1))]).await;
    s.assert_nodes_follow("alpha").await;
    s.set_replicas("alpha", 1, 1).await;
    s.settle(&[("alpha", ready(1, 1, v1))]).await;
    s.assert_nodes_follow("alpha").await;
    s.assert_cloud_matches(&["alpha"]).await;

    // Upgrade to the next minor version: other binaries, the same data.
    s.update_cluster("alpha", |c| c["spec"]["topology"]["version"] = v2.into())
        .await;
    s.settle(&[("alpha", ready(1, 1, v2))]).await;
    s.assert_nodes_follow("alpha").await;
    s.assert_api_servers_at("alpha", v2).await;
    let found = config_maps.get("written-before-the-upgrade").await.unwrap();
    assert_eq!(
        found
            .data
            .unwrap_or_default()
            .get("mode")
            .map(String::as_str),
        Some(s.mode),
        "{}: the ConfigMap written before the upgrade",
        s.mode
    );
    assert_eq!(
        s.etcd_members("alpha").await.len(),
        1,
        "{}: etcd members",
        s.mode
    );

    // Delete: no process, no listening port, no directory of the cluster left.
    let inventory = s.inventory().await;
    let cloud = inventory.clusters.get(&s.cloud_key("alpha")).unwrap();
    let mut addresses: Vec<Ipv4Addr> = cloud
        .instances
        .iter()
        .map(|i| i.addresses[0].address.parse().unwrap())
        .collect();
    addresses.extend(
        cloud
            .load_balancers
            .iter()
            .map(|lb| lb.endpoint.host.parse::<Ipv4Addr>().unwrap()),
    );
    assert!(
        !listening_on(&addresses).is_empty(),
        "{}: nothing listens on alpha's addresses",
        s.mode
    );
    s.store.delete(&s.key("alpha")).await.unwrap();
    s.settle(&[("alpha", Expect::Gone)]).await;
    assert!(
        s.inventory().await.clusters.is_empty(),
        "{}: simcloud still holds something",
        s.mode
    );
    s.assert_machines_gone(&addresses).await;
    s.stop().await;
}

/// How long a probe of a workload API waits for its answer in [`hung_api`]: several times
/// what beta needs for a step (a few seconds), so that beta's passes, each of which probes
/// beta's API first, would take a multiple of that step's time if any of them waited for one
/// of alpha's hung probes.
const HUNG_PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Beta's step may take this many times as long with alpha's API hung as with it healthy...
const SLOWDOWN: u32 = 3;

/// ... and this much longer, for the noise of a shared machine.
const SLACK: Duration = Duration::from_secs(10);

/// How [`hung_api`]'s host reaches workload clusters: the defaults, but a probe that waits
/// [`HUNG_PROBE_TIMEOUT`].
pub(super) fn hung_api_access() -> ClusterCacheConfig {
    ClusterCacheConfig {
        probe_timeout: HUNG_PROBE_TIMEOUT,
        ..ClusterCacheConfig::default()
    }
}

/// Passes the embedded mode keeps making over some clusters, each in a task of its own (as
/// `capw up` does) and on after they converged, so that a changed spec is picked up. Empty in
/// the Kubernetes mode, whose controller runs all along. The passes stop when it drops.
struct Passes(Vec<JoinHandle<()>>);

impl Drop for Passes {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// `kubeconfig` (YAML) with every cluster's `server` replaced by `server`, and nothing else
/// changed.
fn with_server(kubeconfig: &[u8], server: &str) -> Vec<u8> {
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_slice(kubeconfig).unwrap();
    let clusters = doc["clusters"]
        .as_sequence_mut()
        .expect("a kubeconfig lists its clusters");
    assert!(!clusters.is_empty(), "a kubeconfig without clusters");
    for named in clusters {
        named["cluster"]["server"] = server.into();
    }
    serde_yaml_ng::to_string(&doc).unwrap().into_bytes()
}

impl Scenario {
    /// In the embedded mode, passes over `clusters` until the result drops; nothing in the
    /// Kubernetes mode.
    fn keep_passing(&self, clusters: &[&str]) -> Passes {
        let Some(Driver::Embedded(executor)) = &self.driver else {
            return Passes(Vec::new());
        };
        let tasks = clusters
            .iter()
            .map(|name| {
                let executor: Executor = (**executor).clone();
                let key = self.key(name);
                tokio::spawn(async move {
                    let bounds = executor.config().requeue;
                    let mut requeue = bounds.start();
                    loop {
                        let wait = match executor.reconcile(&key).await {
                            Ok(PassOutcome::Progress {
                                status,
                                requeue: hint,
                                failed,
                            }) => requeue.progress(status.as_ref(), hint, failed),
                            Ok(PassOutcome::Gone) => return,
                            // Converged or blocked: looked at again soon, for a new spec.
                            Ok(PassOutcome::Converged(_) | PassOutcome::Blocked(_)) => {
                                requeue = bounds.start();
                                bounds.max
                            }
                            Err(e) => {
                                eprintln!("{key}: pass failed: {e}");
                                bounds.max
                            }
                        };
                        tokio::time::sleep(wait).await;
                    }
                })
            })
            .collect();
        Passes(tasks)
    }

    /// Sets `cluster`'s workers to `workers` (one control-plane machine) and waits until it is
    /// Ready at its new generation with every Machine's `NodeHealthy` True, which takes an
    /// observation of its workload cluster after the new Node registered. Returns how long that
    /// took; fails past `limit`, which `bound` explains.
    async fn scale_workers_timed(
        &self,
        cluster: &str,
        workers: u32,
        limit: Duration,
        bound: &str,
    ) -> Duration {
        let [v1, _] = KUBE_VERSIONS;
        let started = Instant::now();
        self.set_replicas(cluster, 1, workers).await;
        loop {
            let mut why = self.unmet(cluster, ready(1, workers as usize, v1)).await;
            if why.is_none() {
                let unhealthy: Vec<String> = self
                    .machines(cluster)
                    .await
                    .iter()
                    .filter(|m| condition(m, "NodeHealthy")["status"] != "True")
                    .filter_map(|m| m["metadata"]["name"].as_str().map(str::to_owned))
                    .collect();
                if !unhealthy.is_empty() {
                    why = Some(format!("Machines whose Node is not healthy: {unhealthy:?}"));
                }
            }
            let took = started.elapsed();
            let Some(why) = why else {
                return took;
            };
            assert!(
                took < limit,
                "{}: {cluster} is not Ready with {workers} workers within {limit:?} ({bound}): {why}",
                self.mode
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Points the kubeconfig the host stored for `cluster` at `server` (a URL). Its endpoint
    /// annotation stays, so the host sees no reason to write it again, and keeps using it.
    async fn point_kubeconfig_at(&self, cluster: &str, server: &str) {
        let key = ObjectKey::namespaced(
            "Secret",
            &self.namespace,
            &capw_engine::kubeconfig_secret_name(cluster),
        );
        let secret = self
            .store
            .get(&key)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: no kubeconfig Secret of {cluster}", self.mode));
        let value = capw_engine::kubeconfig_value(&secret).expect("the Secret holds `value`");
        let encoded = STANDARD.encode(with_server(&value, server));
        self.store
            .update(&key, &mut |o: &mut Value| {
                o["data"][capw_engine::KUBECONFIG_KEY] = Value::String(encoded.clone());
                Ok(())
            })
            .await
            .unwrap();
    }
}

/// Two clusters, alpha (one control-plane machine) and beta (one plus workers). Beta adds a
/// worker with alpha healthy, then again with alpha's API hung (its kubeconfig pointed at a
/// listener that takes connections and never answers, so alpha's probes last their whole
/// timeout): beta's step may not take more than [`SLOWDOWN`] times its time with alpha
/// healthy, plus [`SLACK`]. Meanwhile alpha shows `ControlPlaneAvailable` False, with no
/// answer from that listener, and keeps its machines.
pub(super) async fn hung_api(mut s: Scenario) {
    let [v1, _] = KUBE_VERSIONS;
    s.apply(s.quickstart()).await;
    s.set_replicas("alpha", 1, 0).await;
    let ns = s.namespace.clone();
    s.apply(vec![json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "beta", "namespace": ns},
        "spec": {"topology": {
            "classRef": {"name": "sim-kubeadm"},
            "version": v1,
            "controlPlane": {"replicas": 1},
            "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 1}]},
        }},
    })])
    .await;
    s.settle(&[("alpha", ready(1, 0, v1)), ("beta", ready(1, 1, v1))])
        .await;
    let passes = s.keep_passing(&["alpha", "beta"]);

    // Beta's step with alpha healthy: the baseline.
    let baseline = s
        .scale_workers_timed("beta", 2, WAIT, "the wait for a scenario's step")
        .await;

    // Alpha's API hangs. Plain HTTP, so that each probe waits its whole timeout: the client's
    // connect timeout covers a TLS handshake, and would cut a silent one short. The Secret is
    // not watched, so alpha is touched until a pass of it connected to the listener: from
    // then on its probes hang, one after the other.
    let silent = SilentListener::start(WAIT).await.unwrap();
    let server = silent.addr().to_string();
    s.point_kubeconfig_at("alpha", &format!("http://{server}"))
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pokes = 0u32;
    while silent.accepted() == 0 {
        assert!(
            Instant::now() < deadline,
            "{}: nothing of alpha connected to {server}",
            s.mode
        );
        pokes += 1;
        s.update_cluster("alpha", |c| {
            c["metadata"]["annotations"]["test.capw.dev/poke"] = pokes.to_string().into();
        })
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // The same step of beta's, with alpha's probes hung.
    let limit = (baseline * SLOWDOWN + SLACK).min(WAIT);
    let bound = format!("{SLOWDOWN} × its {baseline:?} with alpha healthy + {SLACK:?}");
    let hung = s.scale_workers_timed("beta", 3, limit, &bound).await;
    eprintln!(
        "{}: beta's step took {baseline:?} with alpha healthy, {hung:?} with alpha's API hung \
         (probes wait {HUNG_PROBE_TIMEOUT:?})",
        s.mode
    );
    assert!(
        hung <= limit,
        "{}: beta's step took {hung:?} with alpha's API hung, more than {bound}",
        s.mode
    );

    // Alpha's probes did hang, to their timeout, and alpha alone shows it.
    let deadline = Instant::now() + HUNG_PROBE_TIMEOUT + Duration::from_secs(60);
    loop {
        let alpha = s.store.get(&s.key("alpha")).await.unwrap().unwrap();
        let available = condition(&alpha, "ControlPlaneAvailable");
        let hung_up = available["status"] == "False"
            && available["reason"] == "WorkloadClusterUnreachable"
            && available["message"]
                .as_str()
                .is_some_and(|m| m.contains(&server) && m.contains("no answer within"));
        if hung_up {
            eprintln!("{}: alpha down ({available})", s.mode);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}: alpha's ControlPlaneAvailable {available}",
            s.mode
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    s.assert_cloud_matches(&["alpha", "beta"]).await;
    s.assert_nodes_follow("beta").await;

    // Closing the listener ends alpha's hung probe, so the controller stops without waiting.
    drop(passes);
    drop(silent);
    s.stop().await;
}
