//! One cluster through its life: control plane 1→3→1, workers 2→5→0, a version upgrade
//! (control plane first, one extra machine at a time, then workers), delete. A watcher on the
//! store sees every Machine come and go, so the surge bound is checked at every write, not
//! only at the end.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capw_engine::store::{ObjectKey, WatchEventKind};
use capw_local::ClusterOutcome;
use capw_store::Store;
use serde_json::Value;

use crate::support::{Env, cluster, delete_and_settle, inventory, machines, manifests, settle};

/// A live Machine as the watcher saw it when it was added.
#[derive(Clone, Debug)]
struct Seen {
    control_plane: bool,
    pool: String,
    version: String,
}

/// What the watcher found over a phase of the test.
#[derive(Debug, Default)]
struct Watch {
    live: BTreeMap<String, Seen>,
    /// Most control-plane machines alive at once.
    max_control_plane: usize,
    /// Most machines of each worker pool alive at once.
    max_pool: BTreeMap<String, usize>,
    /// Workers created while a control-plane machine of another version than theirs lived.
    workers_before_control_plane: Vec<String>,
}

impl Watch {
    fn reset(&mut self) {
        self.max_control_plane = 0;
        self.max_pool.clear();
        self.workers_before_control_plane.clear();
    }

    fn added(&mut self, name: String, seen: Seen) {
        if !seen.control_plane
            && self
                .live
                .values()
                .any(|m| m.control_plane && m.version != seen.version)
        {
            self.workers_before_control_plane.push(name.clone());
        }
        self.live.insert(name, seen);
        let cp = self.live.values().filter(|m| m.control_plane).count();
        self.max_control_plane = self.max_control_plane.max(cp);
        let mut pools: BTreeMap<String, usize> = BTreeMap::new();
        for m in self.live.values().filter(|m| !m.control_plane) {
            *pools.entry(m.pool.clone()).or_default() += 1;
        }
        for (pool, n) in pools {
            let max = self.max_pool.entry(pool).or_default();
            *max = (*max).max(n);
        }
    }
}

/// Follows every Machine of cluster `name` from the store's change feed.
fn watch_machines(store: &Store, name: &'static str) -> Arc<Mutex<Watch>> {
    let watch = Arc::new(Mutex::new(Watch::default()));
    let mut events = store.watch();
    let (store, recorder) = (store.clone(), watch.clone());
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if event.key.kind != "Machine" {
                continue;
            }
            let machine = event.key.name.clone();
            match event.kind {
                WatchEventKind::Deleted => {
                    recorder.lock().unwrap().live.remove(&machine);
                }
                WatchEventKind::Added => {
                    let Some(m) = store.get(&event.key).unwrap() else {
                        continue;
                    };
                    if m["spec"]["clusterName"] != name {
                        continue;
                    }
                    let seen = Seen {
                        control_plane: m["spec"]["role"] != "Worker",
                        pool: m["spec"]["pool"].as_str().unwrap_or_default().into(),
                        version: m["spec"]["version"].as_str().unwrap_or_default().into(),
                    };
                    recorder.lock().unwrap().added(machine, seen);
                }
                WatchEventKind::Modified => {}
            }
        }
    });
    watch
}

fn set_topology(store: &Store, name: &str, change: impl Fn(&mut Value)) {
    store
        .update(&ObjectKey::namespaced("Cluster", "default", name), |c| {
            change(&mut c["spec"]["topology"]);
            Ok(())
        })
        .unwrap();
}

fn count(store: &Store, cluster: &str, control_plane: bool) -> usize {
    machines(store, cluster)
        .iter()
        .filter(|m| (m["spec"]["role"] != "Worker") == control_plane)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_upgrade_and_delete_one_cluster() {
    let env = Env::start(Duration::from_millis(10)).await;
    let (sim, store) = (&env.sim, &env.store);
    // The quickstart without beta: one cluster, alpha (1 control plane, 2 workers).
    env.apply(
        manifests(sim, "")
            .into_iter()
            .filter(|o| o["metadata"]["name"] != "beta")
            .collect(),
    );
    let executor = env.executor().await;
    let watch = watch_machines(store, "alpha");
    let settled = |step: &str, report: capw_local::SettleReport| {
        assert_eq!(
            report.outcomes["default/alpha"],
            ClusterOutcome::Converged,
            "{step}: {report:?}"
        );
    };

    settled("create", settle(&executor).await);
    assert_eq!(
        (count(store, "alpha", true), count(store, "alpha", false)),
        (1, 2)
    );

    // Control plane 1 → 3 → 1.
    set_topology(store, "alpha", |t| t["controlPlane"]["replicas"] = 3.into());
    settled("control plane to 3", settle(&executor).await);
    assert_eq!(count(store, "alpha", true), 3);
    set_topology(store, "alpha", |t| t["controlPlane"]["replicas"] = 1.into());
    settled("control plane to 1", settle(&executor).await);
    assert_eq!(count(store, "alpha", true), 1);
    assert_eq!(inventory(sim).await.clusters["alpha"].instances.len(), 3);

    // Workers 2 → 5 → 0.
    set_topology(store, "alpha", |t| {
        t["workers"]["machineDeployments"][0]["replicas"] = 5.into();
    });
    settled("workers to 5", settle(&executor).await);
    assert_eq!(count(store, "alpha", false), 5);
    assert_eq!(inventory(sim).await.clusters["alpha"].instances.len(), 6);
    set_topology(store, "alpha", |t| {
        t["workers"]["machineDeployments"][0]["replicas"] = 0.into();
    });
    settled("workers to 0", settle(&executor).await);
    assert_eq!(count(store, "alpha", false), 0);
    assert_eq!(inventory(sim).await.clusters["alpha"].instances.len(), 1);

    // Upgrade 3 control-plane machines and 2 workers: surge one, control plane first.
    set_topology(store, "alpha", |t| {
        t["controlPlane"]["replicas"] = 3.into();
        t["workers"]["machineDeployments"][0]["replicas"] = 2.into();
    });
    settled("back to 3 + 2", settle(&executor).await);
    watch.lock().unwrap().reset();
    set_topology(store, "alpha", |t| t["version"] = "v1.34.5".into());
    settled("upgrade", settle(&executor).await);
    let all = machines(store, "alpha");
    assert_eq!(all.len(), 5);
    assert!(
        all.iter().all(|m| m["spec"]["version"] == "v1.34.5"),
        "{all:#?}"
    );
    {
        let w = watch.lock().unwrap();
        assert_eq!(w.max_control_plane, 4, "control-plane surge: {w:?}");
        assert_eq!(w.max_pool.get("md-0"), Some(&3), "worker surge: {w:?}");
        assert!(
            w.workers_before_control_plane.is_empty(),
            "workers upgraded before the control plane: {w:?}"
        );
    }
    let inv = inventory(sim).await;
    assert_eq!(inv.clusters["alpha"].instances.len(), 5);
    let c = cluster(store, "alpha").unwrap();
    assert_eq!(c["status"]["phase"], "Provisioned", "{c:#}");

    // Delete: the Cluster and everything of it go.
    delete_and_settle(&executor, store, "alpha").await;
    assert!(!inventory(sim).await.clusters.contains_key("alpha"));
}
