//! Shards across replicas: three `capw controller --shards` processes split many Clusters,
//! the holder of two shards is SIGKILLed mid-scale, and the others take its shards over once
//! their Leases expire, without doing anything twice.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kube::runtime::watcher;

use super::processes::Process;
use super::*;

const SHARDS: u32 = 6;
const CLUSTERS: usize = 30;
const LEASE: Duration = Duration::from_secs(4);
/// How long each instance of this test's cloud boots.
const BOOT: Duration = Duration::from_secs(3);

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
    /// What shard Lease `shard` says now, if it exists.
    async fn shard_lease(&self, shard: u32) -> Option<LeaseSpec> {
        let leases: kube::Api<Lease> = kube::Api::namespaced(self.client.clone(), &self.namespace);
        leases
            .get_opt(&format!("capw-controller-shard-{shard}"))
            .await
            .unwrap()
            .map(|lease| lease.spec.unwrap_or_default())
    }

    /// The holder of each shard Lease that is held and unexpired, by shard.
    async fn shard_holders(&self) -> BTreeMap<u32, String> {
        let mut holders = BTreeMap::new();
        for shard in 0..SHARDS {
            let Some(spec) = self.shard_lease(shard).await else {
                continue;
            };
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

    /// The clusters of `shards` that are not Ready.
    async fn unfinished(&self, shards: &[u32]) -> Vec<String> {
        let mut unfinished = Vec::new();
        for i in 0..CLUSTERS {
            let name = format!("c-{i:02}");
            if !shards.contains(&capw_kube::shard_of(&self.namespace, &name, SHARDS)) {
                continue;
            }
            let c = self.get("Cluster", &name).await.unwrap();
            if condition(&c, "Ready")["status"] != "True" {
                unfinished.push(name);
            }
        }
        unfinished
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

/// The replicas are real `capw controller --shards` processes and the victim is SIGKILLed:
/// nothing of it runs on (no drop, no cleanup, no release, no task left in this process),
/// so its shards can only come free by their Leases expiring, and the work it had under way
/// is done by the survivors or not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_shard_holder_is_replaced_mid_scale_and_nothing_is_done_twice() {
    use std::os::unix::process::ExitStatusExt as _;

    // An instance boots for BOOT: a cluster needs two boots one after the other (its
    // control-plane machine's, then its worker's), so one whose machines are still being made
    // when the victim is chosen cannot be Ready by the time it is killed, however loaded the
    // machine running this test is.
    let w = World::with_timings(
        "capw-shards",
        Timings {
            boot: BOOT,
            ..Timings::uniform(Duration::from_millis(20))
        },
    )
    .await;
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
    let mut replicas: BTreeMap<&str, Process> = names
        .iter()
        .map(|&name| (name, Process::start_sharded(&w, name, LEASE, SHARDS)))
        .collect();
    w.wait_balanced(&names).await;
    let (log, logger) = log_machines(&w);

    let clusters: String = (0..CLUSTERS).map(|i| cluster(&w.namespace, i)).collect();
    let path = w.tmp.path().join("clusters.yaml");
    std::fs::write(&path, clusters).unwrap();
    w.kubectl(&["apply", "-f", path.to_str().unwrap()]);

    // Mid-scale: some machines are there, most are not.
    wait("a sixth of the machines", || async {
        let n = w
            .store
            .list("Machine", Some(&w.namespace))
            .await
            .unwrap()
            .len();
        (n >= CLUSTERS / 3).then_some(())
    })
    .await;
    // The victim is the replica with the most clusters still on their way, so that it dies
    // with work under way however the clusters hashed and however fast each replica was.
    let holders = w.shard_holders().await;
    let mut victim = names[0];
    let mut most = 0;
    for &name in &names {
        let held: Vec<u32> = holders
            .iter()
            .filter(|(_, h)| h.as_str() == name)
            .map(|(s, _)| *s)
            .collect();
        let unfinished = w.unfinished(&held).await.len();
        if unfinished > most {
            (victim, most) = (name, unfinished);
        }
    }
    let survivors: Vec<&str> = names.iter().copied().filter(|&n| n != victim).collect();
    let orphaned: Vec<u32> = holders
        .iter()
        .filter(|(_, h)| h.as_str() == victim)
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(orphaned.len(), 2, "{holders:?}");
    let killed = Instant::now();
    let status = replicas
        .remove(victim)
        .unwrap()
        .signal_and_wait("KILL")
        .await;
    assert_eq!(status.signal(), Some(9), "{victim}: {status:?}");
    // Nothing released its shards: their Leases name it until they expire, which is when
    // (and not before) another replica may take them.
    let mut expires = BTreeMap::new();
    for &shard in &orphaned {
        let lease = w.shard_lease(shard).await.unwrap_or_default();
        assert_eq!(
            lease.holder_identity.as_deref(),
            Some(victim),
            "shard {shard} right after the kill: {lease:?}"
        );
        let (Some(renewed), Some(secs)) = (&lease.renew_time, lease.lease_duration_seconds) else {
            panic!("shard {shard} held without a renewal or a duration: {lease:?}");
        };
        expires.insert(
            shard,
            renewed.0 + jiff::SignedDuration::from_secs(i64::from(secs)),
        );
    }
    // Its clusters were still on their way: the survivors have work to take over.
    let unfinished = w.unfinished(&orphaned).await;
    assert!(
        !unfinished.is_empty(),
        "every cluster of shards {orphaned:?} was Ready before {victim} was killed \
         ({most} were not when it was chosen)"
    );

    // The survivors take its shards within two lease durations and split all six.
    let after = w.wait_balanced(&survivors).await;
    let takeover = killed.elapsed();
    assert!(
        takeover <= LEASE * 2,
        "shards {orphaned:?} taken over after {takeover:?}, lease {LEASE:?}: {after:?}"
    );
    // ... once their Leases expired, never while the victim's could still be acting.
    for (shard, expiry) in &expires {
        let acquired = w
            .shard_lease(*shard)
            .await
            .and_then(|lease| lease.acquire_time)
            .map(|time| time.0);
        assert!(
            acquired.is_some_and(|time| time >= *expiry),
            "shard {shard} taken by {:?} at {acquired:?}, before {victim}'s Lease expired at \
             {expiry}",
            after.get(shard)
        );
    }

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

    // SIGTERM to both survivors at once (one stopping alone would hand its shards to the
    // other): each exits 0 with its shards released.
    let stopped = futures::future::join_all(
        replicas
            .into_iter()
            .map(|(name, replica)| async move { (name, replica.signal_and_wait("TERM").await) }),
    )
    .await;
    for (name, status) in stopped {
        assert!(status.success(), "{name} after SIGTERM: {status:?}");
    }
    let held = w.shard_holders().await;
    assert!(held.is_empty(), "held after a graceful stop: {held:?}");
}
