//! Killing `capw up` (SIGKILL, no chance to clean up) at many points during create, scale
//! and delete, then starting it again: never a duplicate or orphan instance, and it converges.
//!
//! simcloud runs in this test's process, so the cloud outlives every killed `capw`, as a real
//! cloud would. After every kill the test reads the store and simcloud's inventory and checks
//! that each instance belongs to a Machine that is still recorded, and that no Machine has more
//! than one instance; after every phase, that the counts are exactly what the topology asks.

#[path = "../common/mod.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use capw_simcloud::model::Inventory;
use capw_simcloud::{RealBoot, SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use capw_store::Store;

const TOKEN: &str = "crash-test-token";

/// Control-plane machines, workers, version.
type Topology = (u32, u32, &'static str);

struct Setup {
    _tmp: tempfile::TempDir,
    state_dir: PathBuf,
    manifest: PathBuf,
    sim: SimCloudHandle,
    /// The class says how to reach etcd (`spec.controlPlane.etcd`), so the host keeps the
    /// membership: only where the machines really run etcd.
    keeps_etcd: bool,
    /// The worker class's health check also judges a machine whose Node has not registered
    /// within this many seconds, and may replace one machine at a time.
    node_startup_timeout: Option<u32>,
    /// `capw up` reaches the workload clusters (`--workload-clusters connect`): the machines
    /// really run, so Nodes are watched, drained and health-checked, and etcd's membership is
    /// the host's. Without it (a simulated cloud), those steps are skipped.
    connect: bool,
}

impl Setup {
    /// `capw up` against the sim started by the test, reaching workload clusters when the
    /// setup says so.
    fn up(&self) -> Command {
        let mut cmd = self.capw();
        cmd.args(["up", "--no-simcloud", "--timeout", "5m"]);
        if self.connect {
            cmd.args(["--workload-clusters", "connect"]);
        }
        cmd
    }

    fn capw(&self) -> Command {
        common::capw_with_state(&self.state_dir)
    }

    /// Runs capw with `args`, fails the test unless it succeeds, and gives its output.
    fn run_ok(&self, args: &[&str]) -> Vec<u8> {
        let out = self.capw().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "capw {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Writes alpha with `cp` control-plane machines and `workers` workers at `version` and
    /// applies it.
    fn apply(&self, (cp, workers, version): Topology) {
        let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/quickstart");
        let mut text = String::new();
        for file in ["00-providers.yaml", "10-class.yaml"] {
            text += &std::fs::read_to_string(quickstart.join(file)).unwrap();
            text += "\n---\n";
        }
        text += &format!(
            "apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: alpha, namespace: default}}
spec:
  topology:
    classRef: {{name: sim-kubeadm}}
    version: {version}
    controlPlane: {{replicas: {cp}}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: {workers}}}
"
        );
        let mut text = text.replace("http://127.0.0.1:7480", &self.sim.base_url());
        if self.keeps_etcd {
            let provider = "    provider: kubeadm-control-plane\n";
            assert!(text.contains(provider), "the quickstart's class changed");
            text = text.replacen(
                provider,
                &format!(
                    "{provider}    etcd: {{caCertificateItem: etcd/ca.crt, caKeyItem: etcd/ca.key}}\n"
                ),
                1,
            );
        }
        if let Some(seconds) = self.node_startup_timeout {
            let checks = "          checks:\n";
            assert!(
                text.contains(checks),
                "the quickstart's worker health check changed"
            );
            text = text.replacen(
                checks,
                &format!("{checks}            nodeStartupTimeoutSeconds: {seconds}\n"),
                1,
            );
            // 40% of a pool of two rounds down to none: let one machine be replaced.
            let trigger = "triggerIf: {unhealthyLessThanOrEqualTo: 40%}";
            assert!(
                text.contains(trigger),
                "the quickstart's worker trigger changed"
            );
            text = text.replacen(trigger, "triggerIf: {unhealthyLessThanOrEqualTo: 1}", 1);
        }
        std::fs::write(&self.manifest, text).unwrap();
        self.run_ok(&["apply", "-f", self.manifest.to_str().unwrap()]);
    }

    /// Starts `capw up` and SIGKILLs it after `after`; true when it was still running.
    async fn up_and_kill(&self, after: Duration) -> bool {
        let mut child = self
            .up()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        tokio::time::sleep(after).await;
        let running = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        running
    }

    /// The Machines of alpha in the store: idempotency key → name.
    fn machines(&self) -> BTreeMap<String, String> {
        let store = Store::open(&self.state_dir.join("state.redb")).unwrap();
        store
            .list("Machine", Some("default"))
            .unwrap()
            .into_iter()
            .filter(|m| m["spec"]["clusterName"] == "alpha")
            .map(|m| {
                (
                    m["spec"]["idempotencyKey"].as_str().unwrap().to_owned(),
                    m["metadata"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// etcd's client for `cluster`, its certificate signed by the etcd CA that
    /// `capw get cluster-secrets` prints from the cluster's Secret.
    fn etcd_client(&self, cluster: &str) -> capw_test_support::real_boot::EtcdClient {
        let items: Vec<(String, Vec<u8>)> = ["etcd/ca.crt", "etcd/ca.key"]
            .into_iter()
            .map(|item| {
                let bytes = self.run_ok(&["get", "cluster-secrets", cluster, item]);
                (item.to_owned(), bytes)
            })
            .collect();
        capw_test_support::real_boot::EtcdClient::from_secret_items(&items)
    }

    async fn inventory(&self) -> Inventory {
        capw_test_support::simcloud_inventory(&self.sim.base_url(), TOKEN).await
    }

    /// alpha's instances by client token; fails on two instances of one token.
    async fn instances(&self) -> BTreeMap<String, String> {
        let inv = self.inventory().await;
        let mut out = BTreeMap::new();
        for i in inv
            .clusters
            .get("alpha")
            .map(|c| c.instances.clone())
            .unwrap_or_default()
        {
            let previous = out.insert(i.client_token.clone(), i.id.clone());
            assert!(
                previous.is_none(),
                "two instances for key {}",
                i.client_token
            );
        }
        out
    }

    /// Every instance belongs to a recorded Machine: no orphan, no duplicate. Returns
    /// (machines, instances) as seen.
    async fn check_no_orphans(&self, when: &str) -> (usize, usize) {
        let instances = self.instances().await;
        let machines = self.machines();
        let orphans: BTreeSet<&String> = instances
            .keys()
            .filter(|k| !machines.contains_key(*k))
            .collect();
        assert!(
            orphans.is_empty(),
            "{when}: instances without a Machine: {orphans:?}"
        );
        (machines.len(), instances.len())
    }
}

/// The kill schedule of a campaign: the first kill after `first_ms`, each next one `step_ms`
/// later, at most `per_phase` a phase, so the kills land while providers load, while the
/// infrastructure comes up, during machine creates and deletes, and while status is written,
/// until a run finishes before its kill.
#[derive(Clone, Copy)]
struct Kills {
    first_ms: u64,
    step_ms: u64,
    per_phase: u64,
}

/// Where a campaign's kills landed.
struct Landed {
    /// Kills that landed while capw ran.
    kills: u64,
    /// The distinct (phase, Machines, cloud instances) a kill left that are neither the
    /// phase's start nor its end: kills in the middle of a change.
    mid_change: BTreeSet<(String, (usize, usize))>,
}

impl Landed {
    /// Asserts at least `kills` kills landed, and at least `mid_change` of them in the
    /// middle of a change, in at least `phases` phases: the campaign reached the points it
    /// is about, not only before and after them.
    fn assert_at_least(&self, kills: u64, mid_change: usize, phases: usize) {
        assert!(
            self.kills >= kills,
            "only {} kills landed while capw ran",
            self.kills
        );
        let in_phases: BTreeSet<&str> = self.mid_change.iter().map(|(p, _)| p.as_str()).collect();
        assert!(
            self.mid_change.len() >= mid_change && in_phases.len() >= phases,
            "kills in the middle of a change: {:?}",
            self.mid_change
        );
    }
}

/// Applies each phase's topology (or deletes alpha), kills `capw up` on `kills`' schedule
/// until a run finishes before its kill, checks no orphan or duplicate after every kill, and
/// that the converged counts are exact. `after_phase` checks what the cloud itself holds.
async fn campaign(
    setup: &Setup,
    phases: &[(&str, Option<Topology>)],
    kills: Kills,
    after_phase: impl AsyncFn(&Setup, &str, Option<Topology>),
) -> Landed {
    let mut landed = 0;
    let mut points = BTreeSet::new();
    let mut mid_change = BTreeSet::new();
    let mut start = (0, 0);
    for &(phase, topology) in phases {
        let want = topology.map_or(0, |(cp, w, _)| (cp + w) as usize);
        match topology {
            Some(topology) => setup.apply(topology),
            None => {
                setup.run_ok(&["delete", "cluster", "alpha"]);
            }
        }
        for k in 0..kills.per_phase {
            let ms = kills.first_ms + k * kills.step_ms;
            let killed = setup.up_and_kill(Duration::from_millis(ms)).await;
            let seen = setup
                .check_no_orphans(&format!("{phase}, killed after {ms} ms"))
                .await;
            if !killed {
                eprintln!("{phase}: finished within {ms} ms: (machines, instances) = {seen:?}");
                break;
            }
            landed += 1;
            eprintln!("{phase}: killed after {ms} ms: (machines, instances) = {seen:?}");
            points.insert((phase, seen));
            if seen != start && seen != (want, want) {
                mid_change.insert((phase.to_owned(), seen));
            }
        }
        // Left alone, it converges.
        let out = setup.up().output().unwrap();
        assert!(
            out.status.success(),
            "{phase}: capw up did not converge: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let (machines, instances) = setup.check_no_orphans(&format!("{phase}, converged")).await;
        assert_eq!((machines, instances), (want, want), "{phase}");
        start = (want, want);
        after_phase(setup, phase, topology).await;
    }
    let inv = setup.inventory().await;
    assert!(
        !inv.clusters.contains_key("alpha"),
        "{:?}",
        inv.clusters.get("alpha")
    );
    let store = Store::open(&setup.state_dir.join("state.redb")).unwrap();
    assert!(store.list("Cluster", None).unwrap().is_empty());
    eprintln!(
        "{landed} kills of a running capw; {} distinct (phase, machines, instances) points, \
         {} in the middle of a change: {mid_change:?}",
        points.len(),
        mid_change.len()
    );
    Landed {
        kills: landed,
        mid_change,
    }
}

/// `round`'s phases `count` times, each named after its round.
fn rounds(count: u32, round: &[(&str, Option<Topology>)]) -> Vec<(String, Option<Topology>)> {
    (1..=count)
        .flat_map(|r| {
            round
                .iter()
                .map(move |(phase, topology)| (format!("round {r}: {phase}"), *topology))
        })
        .collect()
}

/// A simcloud that boots its instances for real, in a temporary directory that holds its
/// machines (the guard stops them if the test fails).
async fn real_boot_sim() -> (
    tempfile::TempDir,
    SimCloudHandle,
    capw_test_support::real_boot::MachinesGuard,
) {
    use capw_test_support::real_boot::{MachinesGuard, kube_binaries};
    let tmp = tempfile::tempdir().unwrap();
    let machines = tmp.path().join("machines");
    let guard = MachinesGuard(machines.clone());
    let sim = SimCloud::start(
        SimCloudConfig::new(TOKEN)
            .with_timings(Timings::uniform(Duration::from_millis(200)))
            .with_real_boot(RealBoot {
                kube_binaries: kube_binaries(),
                machines_dir: machines,
            }),
    )
    .await
    .unwrap();
    (tmp, sim, guard)
}

/// A setup around `sim`, with simcloud's token where the quickstart's grant reads it.
fn setup(tmp: tempfile::TempDir, sim: SimCloudHandle) -> Setup {
    let state_dir = tmp.path().join(".capw");
    std::fs::create_dir_all(state_dir.join("secrets/simcloud")).unwrap();
    std::fs::write(state_dir.join("secrets/simcloud/token"), TOKEN).unwrap();
    Setup {
        manifest: tmp.path().join("alpha.yaml"),
        _tmp: tmp,
        state_dir,
        sim,
        keeps_etcd: false,
        node_startup_timeout: None,
        connect: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_capw_anywhere_never_duplicates_or_orphans_and_it_converges() {
    capw_test_support::init_tracing();
    let sim = SimCloud::start(
        SimCloudConfig::new(TOKEN).with_timings(Timings::uniform(Duration::from_millis(800))),
    )
    .await
    .unwrap();
    let setup = setup(tempfile::tempdir().unwrap(), sim);
    // Each killed run gets a little further, so a phase converges after a dozen kills or
    // so: three rounds of the cluster's whole life make over a hundred.
    let round: [(&str, Option<Topology>); 5] = [
        ("create 1+2", Some((1, 2, "v1.34.1"))),
        ("scale up to 3+4", Some((3, 4, "v1.34.1"))),
        ("upgrade to v1.34.2", Some((3, 4, "v1.34.2"))),
        ("scale down to 1+1", Some((1, 1, "v1.34.2"))),
        ("delete", None),
    ];
    let names = rounds(3, &round);
    let phases: Vec<(&str, Option<Topology>)> =
        names.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let kills = Kills {
        first_ms: 80,
        step_ms: 80,
        per_phase: 25,
    };
    let landed = campaign(&setup, &phases, kills, async |_, _, _| {}).await;
    landed.assert_at_least(100, 8, 6);
}

/// The same with real boot: the instances run real etcd, kube-apiserver,
/// kube-controller-manager and kube-scheduler, so a kill can land while a member joins or leaves etcd, and the
/// class has the host keep etcd's membership (a kill can land between marking a machine
/// deleted, moving leadership and removing its member). After every phase, etcd's members are
/// the control-plane machines by name (none left for a deleted machine, none missing), exactly the live cluster's load balancer runs, every machine runs the
/// phase's version (an upgrade keeps none of the old ones), and after the delete no process
/// or directory of a machine or load balancer is left.
/// Two rounds of the cluster's life, a kill every 300 ms, make about a hundred kills (each
/// round waits for real Nodes to be Ready, drained and gone: about four minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_capw_during_real_boots_never_duplicates_or_leaves_etcd_members() {
    use capw_test_support::real_boot::{KUBE_VERSIONS, processes_naming};
    capw_test_support::init_tracing();
    let (tmp, sim, _guard) = real_boot_sim().await;
    let setup = Setup {
        keeps_etcd: true,
        connect: true,
        ..setup(tmp, sim)
    };
    let [v1, v2] = KUBE_VERSIONS;
    let round: [(&str, Option<Topology>); 5] = [
        ("create 1+1", Some((1, 1, v1))),
        ("scale up to 3+2", Some((3, 2, v1))),
        ("upgrade", Some((3, 2, v2))),
        // Each machine that goes is drained first (its Node cordoned, its Pods evicted) and a
        // member leaves etcd: kills land between marking a machine deleted, the drain's
        // rounds, the member's removal and the delete.
        ("scale down to 1+1", Some((1, 1, v2))),
        ("delete", None),
    ];
    let names = rounds(2, &round);
    let phases: Vec<(&str, Option<Topology>)> =
        names.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let kills = Kills {
        first_ms: 400,
        step_ms: 300,
        per_phase: 20,
    };
    // The version and instance ids of the phase before: an upgrade replaces every machine.
    let before_phase: std::sync::Mutex<Option<(&str, BTreeSet<String>)>> = Default::default();
    let landed = campaign(&setup, &phases, kills, async |setup, phase, topology| {
        let cp = topology.map_or(0, |(cp, _, _)| cp as usize);
        let machines = setup
            .sim
            .machines_dir()
            .expect("a real-boot sim has a machines directory")
            .to_owned();
        let inv = setup.inventory().await;
        let alpha = inv.clusters.get("alpha").cloned().unwrap_or_default();
        let control_plane: Vec<_> = alpha
            .instances
            .iter()
            .filter(|i| i.role == capw_simcloud::model::Role::ControlPlane)
            .cloned()
            .collect();
        assert_eq!(control_plane.len(), cp, "{phase}: control-plane instances");
        if let Some(first) = control_plane.first() {
            // No member without a machine, no machine without a member: by name.
            let mut members = setup
                .etcd_client("alpha")
                .members(&first.addresses[0].address);
            members.sort();
            let mut names: Vec<String> = (control_plane.iter())
                .map(|i| i.tags["capw.dev/machine"].clone())
                .collect();
            names.sort();
            assert_eq!(
                members, names,
                "{phase}: etcd members against the control-plane machines"
            );
        }

        // Exactly the live cluster's balancer is there: one while alpha exists, none after.
        let load_balancers: BTreeSet<String> = alpha
            .load_balancers
            .iter()
            .map(|lb| lb.id.clone())
            .collect();
        assert_eq!(
            load_balancers.len(),
            usize::from(topology.is_some()),
            "{phase}: load balancers {load_balancers:?}"
        );
        let left: BTreeSet<String> = std::fs::read_dir(&machines)
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        let lb_dirs: BTreeSet<String> = left
            .iter()
            .filter(|n| n.starts_with("lb-"))
            .cloned()
            .collect();
        assert_eq!(
            lb_dirs, load_balancers,
            "{phase}: load balancer directories"
        );

        // Every machine runs the phase's version: the one it booted, its agent's binaries.
        let ids: BTreeSet<String> = alpha.instances.iter().map(|i| i.id.clone()).collect();
        if let Some((_, _, version)) = topology {
            for id in &ids {
                let machine = machines.join(id);
                let booted = std::fs::read_to_string(
                    machine.join("rootfs/etc/kubernetes/capw/kubernetes-version"),
                )
                .unwrap_or_else(|e| panic!("{phase}: {id}: {e}"));
                assert_eq!(booted.trim(), version, "{phase}: {id} booted");
                let procs = processes_naming(&machine);
                assert!(
                    procs
                        .iter()
                        .any(|p| p.contains(&format!("/{version}/bin/"))),
                    "{phase}: {id} runs no binary of {version}: {procs:?}"
                );
                for other in KUBE_VERSIONS.iter().filter(|v| **v != version) {
                    assert!(
                        procs.iter().all(|p| !p.contains(&format!("/{other}/bin/"))),
                        "{phase}: {id} runs {other}: {procs:?}"
                    );
                }
            }
        }
        // An upgrade keeps none of the machines of the version before.
        let mut previous = before_phase.lock().unwrap();
        if let (Some((_, _, version)), Some((was, before))) = (topology, previous.as_ref())
            && version != *was
        {
            let kept: Vec<&String> = ids.intersection(before).collect();
            assert!(kept.is_empty(), "{phase}: machines of {was} kept: {kept:?}");
        }
        *previous = topology.map(|(_, _, version)| (version, ids));

        if topology.is_none() {
            assert!(left.is_empty(), "machine directories left: {left:?}");
            let procs = processes_naming(&machines);
            assert!(procs.is_empty(), "processes left: {procs:?}");
        }
    })
    .await;
    landed.assert_at_least(80, 4, 4);
    setup.sim.destroy_machines().await.unwrap();
}

/// A remediation under kills, on real machines: the pool grows by one worker whose Node never
/// registers (simcloud's `unregistered_nodes`), the pool's health check judges it after its
/// startup timeout, and it is drained (nothing to drain: it has no Node), deleted and replaced,
/// while `capw up` is killed every few hundred milliseconds. Once settled: no instance without
/// a Machine, none twice, etcd's members the control-plane machines, and the phase converged,
/// which needs every worker's Node Ready: the machine that never registered is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_capw_during_a_remediation_never_duplicates_or_orphans() {
    use capw_test_support::real_boot::KUBE_VERSIONS;
    capw_test_support::init_tracing();
    let (tmp, sim, _guard) = real_boot_sim().await;
    let setup = Setup {
        keeps_etcd: true,
        connect: true,
        node_startup_timeout: Some(20),
        ..setup(tmp, sim)
    };
    let v = KUBE_VERSIONS[0];
    let phases: [(&str, Option<Topology>); 3] = [
        ("create 1+1", Some((1, 1, v))),
        ("grow by a worker that never registers", Some((1, 2, v))),
        ("delete", None),
    ];
    let kills = Kills {
        first_ms: 400,
        step_ms: 300,
        per_phase: 25,
    };
    let base = setup.sim.base_url();
    let landed = campaign(&setup, &phases, kills, async |setup, phase, topology| {
        if phase == "create 1+1" {
            // The next instance booted, the new worker, never registers its Node.
            capw_test_support::simcloud_set_faults(
                &base,
                TOKEN,
                serde_json::json!({"unregistered_nodes": 1}),
            )
            .await;
            return;
        }
        if topology.is_some() {
            // The fault was taken: an instance booted that never registered its Node.
            let faults = capw_test_support::simcloud_faults(&base, TOKEN).await;
            assert_eq!(faults["faults"]["unregistered_nodes"], 0, "{faults}");
            let inv = setup.inventory().await;
            let alpha = inv.clusters.get("alpha").cloned().unwrap_or_default();
            // Converged with every Node Ready: the worker that never registered was replaced.
            assert_eq!(alpha.instances.len(), 3, "{phase}: {faults}");
            let first = alpha
                .instances
                .iter()
                .find(|i| i.role == capw_simcloud::model::Role::ControlPlane)
                .expect("a control-plane instance");
            let members = setup
                .etcd_client("alpha")
                .members(&first.addresses[0].address);
            assert_eq!(members, [first.tags["capw.dev/machine"].clone()], "{phase}");
        }
    })
    .await;
    landed.assert_at_least(20, 2, 2);
    setup.sim.destroy_machines().await.unwrap();
}
