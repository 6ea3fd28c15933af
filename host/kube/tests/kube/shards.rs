//! Shards across replicas: three replicas split many Clusters, one is killed mid-scale, and
//! the others take its shards over without doing anything twice.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use capw_kube::ShardConfig;
use futures::StreamExt as _;
use kube::runtime::watcher;

use super::*;

const SHARDS: u32 = 6;
const CLUSTERS: usize = 30;
const LEASE: Duration = Duration::from_secs(4);

/// Cluster `c-<i>` of the quickstart's class: one control-plane machine and one worker.
fn cluster(namespace: &str, i: usize) -> String {
    format!(
        "apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: c-{i:02}, namespace: {namespace}}}
spec:
  topology:
    classRef: {{name: sim-kubeadm}}
    version: v1.34.4
    controlPlane: {{replicas: 1}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: 1}}
---
"
    )
}

impl World {
    fn sharded(&self, identity: &str) -> ControllerConfig {
        let mut config = self.config(identity, None);
        config.sharding = Some(ShardConfig {
            shards: SHARDS,
            lease: LeaseConfig {
                name: "capw-controller".into(),
                namespace: self.namespace.clone(),
                identity: identity.into(),
                duration: LEASE,
                renew_every: LEASE / 4,
            },
        });
        config
    }

    /// The holder of each shard Lease that is held and unexpired, by shard.
    async fn shard_holders(&self) -> BTreeMap<u32, String> {
        let leases: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
            kube::Api::namespaced(self.client.clone(), &self.namespace);
        let mut holders = BTreeMap::new();
        for shard in 0..SHARDS {
            let Some(lease) = leases
                .get_opt(&format!("capw-controller-shard-{shard}"))
                .await
                .unwrap()
            else {
                continue;
            };
            let spec = lease.spec.unwrap_or_default();
            let (Some(holder), Some(renewed)) = (spec.holder_identity, spec.renew_time) else {
                continue;
            };
            let secs = i64::from(spec.lease_duration_seconds.unwrap_or(0));
            if renewed.0 + jiff::SignedDuration::from_secs(secs) > jiff::Timestamp::now() {
                holders.insert(shard, holder);
            }
        }
        holders
    }

    /// Waits until every shard is held and each of `replicas` holds its share.
    async fn wait_balanced(&self, replicas: &[&str]) -> BTreeMap<u32, String> {
        let share = (SHARDS as usize).div_ceil(replicas.len());
        wait(
            &format!("{SHARDS} shards split among {replicas:?}"),
            || async {
                let holders = self.shard_holders().await;
                let balanced = holders.len() == SHARDS as usize
                    && replicas
                        .iter()
                        .all(|r| holders.values().filter(|h| h == r).count() == share);
                balanced.then_some(holders)
            },
        )
        .await
    }
}

/// Every Machine name the API server showed, and every Machine it deleted.
#[derive(Default)]
struct MachineLog {
    seen: BTreeSet<String>,
    deleted: Vec<String>,
}

fn log_machines(w: &World) -> (Arc<Mutex<MachineLog>>, JoinHandle<()>) {
    let log = Arc::new(Mutex::new(MachineLog::default()));
    let api: kube::Api<capw_api::Machine> = kube::Api::namespaced(w.client.clone(), &w.namespace);
    let writer = log.clone();
    let task = tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default()).boxed();
        while let Some(event) = events.next().await {
            let mut log = writer.lock().unwrap();
            match event {
                Ok(watcher::Event::Apply(m) | watcher::Event::InitApply(m)) => {
                    log.seen.insert(kube::ResourceExt::name_any(&m));
                }
                Ok(watcher::Event::Delete(m)) => {
                    log.deleted.push(kube::ResourceExt::name_any(&m));
                }
                _ => {}
            }
        }
    });
    (log, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_shard_holder_is_replaced_mid_scale_and_nothing_is_done_twice() {
    let w = World::new("capw-shards").await;
    // The quickstart's providers and class, without its clusters.
    let example = common::quickstart_in(&w.namespace, &w.sim);
    let class: String = example
        .split("\n---\n")
        .filter(|doc| !doc.contains("\nkind: Cluster\n"))
        .map(|doc| format!("{doc}\n---\n"))
        .collect();
    let path = w.tmp.path().join("class.yaml");
    std::fs::write(&path, class).unwrap();
    w.kubectl(&["apply", "-f", path.to_str().unwrap()]);

    let names = ["replica-a", "replica-b", "replica-c"];
    let mut replicas: BTreeMap<&str, Replica> = names
        .iter()
        .map(|&name| (name, w.start(w.sharded(name))))
        .collect();
    w.wait_balanced(&names).await;
    let (log, logger) = log_machines(&w);

    let clusters: String = (0..CLUSTERS).map(|i| cluster(&w.namespace, i)).collect();
    let path = w.tmp.path().join("clusters.yaml");
    std::fs::write(&path, clusters).unwrap();
    w.kubectl(&["apply", "-f", path.to_str().unwrap()]);

    // Mid-scale: some machines are there, most are not.
    wait("a third of the machines", || async {
        let n = w
            .store
            .list("Machine", Some(&w.namespace))
            .await
            .unwrap()
            .len();
        (n >= 2 * CLUSTERS / 3).then_some(())
    })
    .await;
    let holders = w.shard_holders().await;
    let victim = "replica-b";
    let orphaned: Vec<u32> = holders
        .iter()
        .filter(|(_, h)| h.as_str() == victim)
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(orphaned.len(), 2, "{holders:?}");
    replicas.remove(victim).unwrap().kill().await;
    let killed = Instant::now();
    // Its clusters were still on their way: the survivors have work to take over.
    let mut unfinished = Vec::new();
    for i in 0..CLUSTERS {
        let name = format!("c-{i:02}");
        if !orphaned.contains(&capw_kube::shard_of(&w.namespace, &name, SHARDS)) {
            continue;
        }
        let c = w.get("Cluster", &name).await.unwrap();
        if condition(&c, "Ready")["status"] != "True" {
            unfinished.push(name);
        }
    }
    assert!(
        !unfinished.is_empty(),
        "every cluster of shards {orphaned:?} was Ready before {victim} was killed"
    );

    // The survivors take its shards within two lease durations and split all six.
    let after = w.wait_balanced(&["replica-a", "replica-c"]).await;
    let takeover = killed.elapsed();
    assert!(
        takeover <= LEASE * 2,
        "shards {orphaned:?} taken over after {takeover:?}, lease {LEASE:?}: {after:?}"
    );

    // Every cluster converges with exactly its machines, one cloud instance each.
    let inventory = loop {
        let mut all = true;
        for i in 0..CLUSTERS {
            let name = format!("c-{i:02}");
            let c = w.get("Cluster", &name).await.unwrap();
            all &= condition(&c, "Ready")["status"] == "True"
                && c["status"]["observedGeneration"] == c["metadata"]["generation"];
        }
        if all {
            break w.inventory().await;
        }
        assert!(
            killed.elapsed() < WAIT,
            "the clusters did not converge within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let mut machines = 0;
    for i in 0..CLUSTERS {
        let name = format!("c-{i:02}");
        let of_cluster = w.machines(&name).await;
        let roles: Vec<&str> = of_cluster
            .iter()
            .map(|m| m["spec"]["role"].as_str().unwrap())
            .collect();
        assert_eq!(of_cluster.len(), 2, "{name}: {roles:?}");
        assert!(roles.contains(&"Worker"), "{name}: {roles:?}");
        w.assert_no_duplicates(&name).await;
        machines += of_cluster.len();
    }
    let instances: usize = inventory.clusters.values().map(|c| c.instances.len()).sum();
    assert_eq!(instances, machines, "cloud instances against Machines");

    // No Machine was made as a duplicate and removed: every one seen is still there.
    logger.abort();
    {
        let log = log.lock().unwrap();
        assert!(log.deleted.is_empty(), "deleted: {:?}", log.deleted);
        assert_eq!(log.seen.len(), machines, "seen: {:?}", log.seen);
    }

    for (_, replica) in replicas {
        replica.stop().await;
    }
    // A graceful stop releases the shards.
    assert!(w.shard_holders().await.is_empty());
}
