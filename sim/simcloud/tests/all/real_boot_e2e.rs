//! Real boot end to end through the HTTP API: a cluster's network and load balancer, an
//! `init` instance booted from the kubeadm bootstrap provider's data, its API answering
//! through the load balancer, the faults that fail it (a Node held back, a killed
//! kube-apiserver, a silent load balancer), and a delete that leaves nothing behind.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use capw_kubeadm_bootstrap::pki::ClusterPki;
use capw_kubeadm_bootstrap::secrets::{self, SecretSet};
use capw_kubeadm_bootstrap::token::BootstrapToken;
use capw_kubeadm_bootstrap::{KeyAlgorithm, KubeadmBootstrapConfig, cloud_init, kubeconfig};
use capw_sdk::bootstrap::BootstrapRequest;
use capw_sdk::types::{Endpoint, KubernetesVersion, MachineRef, MachineRole};
use capw_simcloud::FaultConfig;
use capw_simcloud::model::{FaultsView, Instance, InstanceState, LoadBalancer, LoadBalancerState};
use capw_test_support::{simcloud_cluster_faults, simcloud_instance_faults};
use reqwest::StatusCode;
use serde_json::json;

use capw_test_support::real_boot::processes_naming;

use crate::real_boot::{MachinesGuard, kube_binaries, real_config};
use crate::support::{API_TOKEN, Sim, body};

/// How long a control plane may take to come up on a busy machine.
const BOOT_LIMIT: Duration = Duration::from_secs(180);

/// A real-boot sim on `state` injecting `faults`, with the cluster `e2e`'s network and load
/// balancer, and an init instance created from the kubeadm bootstrap provider's data: the sim,
/// the load balancer, the instance and the secret items.
async fn boot_init(
    bins: &Path,
    machines: &Path,
    state: &Path,
    faults: FaultConfig,
) -> (
    Sim,
    LoadBalancer,
    Instance,
    Vec<capw_sdk::bootstrap::SecretItem>,
) {
    let sim = Sim::with(
        real_config(bins, machines)
            .with_state_file(state)
            .with_faults(faults),
    )
    .await;
    let r = sim
        .post("/v1/networks", json!({"cluster": "e2e", "name": "e2e-net"}))
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = sim
        .post(
            "/v1/load-balancers",
            json!({"cluster": "e2e", "name": "e2e-lb"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let lb: LoadBalancer = body(r).await;
    let pki = ClusterPki::generate(KeyAlgorithm::EcdsaP256, SystemTime::now())
        .unwrap_or_else(|e| panic!("{e}"));
    let token = BootstrapToken::generate().unwrap_or_else(|e| panic!("{e}"));
    let items = secrets::to_items(&pki, &token).unwrap_or_else(|e| panic!("{e}"));
    let config = KubeadmBootstrapConfig {
        key_algorithm: KeyAlgorithm::EcdsaP256,
        ..KubeadmBootstrapConfig::default()
    };
    let request = BootstrapRequest {
        machine: MachineRef {
            name: "e2e-cp-0".into(),
            uid: "uid-e2e-cp-0".into(),
        },
        role: MachineRole::Init,
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 4,
        },
        endpoint: Endpoint {
            host: lb.endpoint.host.clone(),
            port: lb.endpoint.port,
        },
        secrets: items.clone(),
        control_plane_members: Vec::new(),
        join: None,
    };
    let data = cloud_init::generate(&config, "e2e", &request).unwrap_or_else(|e| panic!("{e}"));
    let (_, instance) = sim
        .create_instance("cp-0", "e2e", "control-plane", &data)
        .await;
    (sim, lb, instance, items)
}

/// Polls instance `id` until it is `state`; fails on another final state or after `limit`.
async fn wait_state(sim: &Sim, id: &str, state: InstanceState, limit: Duration) -> Instance {
    let deadline = Instant::now() + limit;
    loop {
        let r = sim.get(&format!("/v1/instances/{id}")).await;
        let now: Instance = body(r).await;
        if now.state == state {
            return now;
        }
        assert!(
            now.state != InstanceState::Failed || state == InstanceState::Failed,
            "the instance failed: {}",
            now.reason
        );
        assert!(
            Instant::now() < deadline,
            "still {:?} after {limit:?}",
            now.state
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// How long a restarted sim is watched for a late verdict on what it adopted: many passes
/// of its machines loop (one every 200 ms), well past its first seconds.
const ADOPTION_WATCH: Duration = Duration::from_secs(6);

/// The pid in a machine's pid file.
fn pid_in(file: &Path) -> i32 {
    fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Whether process `pid` runs: it exists and is not a zombie (the machines' processes are
/// this test process's children, and a dead child stays listed until reaped).
fn alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state letter follows the command name, which is in parentheses.
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// Reads instance `instance` and load balancer `lb` every 200 ms for `window`, the last read
/// after it: at every read the instance is `running`, the balancer `active`, and each is still
/// the process that ran before the restart (`agent_pid`, `lb_pid`): adopted, neither failed
/// nor launched again. Returns the number of reads.
async fn stays_adopted(
    sim: &Sim,
    instance: &Instance,
    lb: &LoadBalancer,
    (agent_pid, lb_pid): (i32, i32),
    window: Duration,
) -> usize {
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    let started = Instant::now();
    let mut reads = 0;
    loop {
        let since = started.elapsed();
        let now: Instance = body(sim.get(&format!("/v1/instances/{}", instance.id)).await).await;
        assert_eq!(
            now.state,
            InstanceState::Running,
            "{since:?} after the restart: {}",
            now.reason
        );
        let balancer: LoadBalancer =
            body(sim.get(&format!("/v1/load-balancers/{}", lb.id)).await).await;
        assert_eq!(
            balancer.state,
            LoadBalancerState::Active,
            "{since:?} after the restart"
        );
        for (file, before) in [
            (machines.join(&instance.id).join("agent.pid"), agent_pid),
            (machines.join(&lb.id).join("lb.pid"), lb_pid),
        ] {
            assert_eq!(
                pid_in(&file),
                before,
                "{since:?} after the restart: {} was replaced",
                file.display()
            );
            assert!(
                alive(before),
                "{since:?} after the restart: {} ({before}) is gone",
                file.display()
            );
        }
        reads += 1;
        if since >= window {
            return reads;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How long a kubectl request through the load balancer may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(4);

/// kubectl of the cluster's version with an admin kubeconfig.
struct Kubectl {
    bin: std::path::PathBuf,
    kubeconfig: std::path::PathBuf,
}

impl Kubectl {
    /// Runs kubectl with `args`, each request bounded by [`REQUEST_TIMEOUT`].
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.bin)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg(format!("--request-timeout={}s", REQUEST_TIMEOUT.as_secs()))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run kubectl: {e}"))
    }

    /// Runs kubectl with `args` until it succeeds (`ok`) or fails (`!ok`); fails the test
    /// about `what` after `limit`.
    async fn wait(&self, what: &str, ok: bool, limit: Duration, args: &[&str]) {
        let deadline = Instant::now() + limit;
        loop {
            let out = self.run(args);
            if out.status.success() == ok {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: still {} after {limit:?}: {}{}",
                if ok { "failing" } else { "answering" },
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

#[tokio::test]
async fn a_restarted_sim_adopts_its_machines_and_fails_one_whose_agent_died() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let state = dir.path().join("state.json");
    let (sim, lb, instance, _) = boot_init(&bins, &machines, &state, FaultConfig::default()).await;
    wait_state(&sim, &instance.id, InstanceState::Running, BOOT_LIMIT).await;
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    sim.handle
        .shutdown()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // The machine and its balancer outlive the sim, and the next sim adopts them: for
    // seconds, not only at its first look.
    let instance_dir = machines.join(&instance.id);
    assert!(!processes_naming(&instance_dir).is_empty());
    let pids = (
        pid_in(&instance_dir.join("agent.pid")),
        pid_in(&machines.join(&lb.id).join("lb.pid")),
    );
    let sim = Sim::with(real_config(&bins, &machines).with_state_file(&state)).await;
    let reads = stays_adopted(&sim, &instance, &lb, pids, ADOPTION_WATCH).await;
    assert!(reads >= 5, "only {reads} reads in {ADOPTION_WATCH:?}");

    // Its agent dies: the instance fails, saying so; the balancer it leaves stays adopted.
    let (pid, lb_pid) = pids;
    let killed = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(killed.success());
    let failed = wait_state(
        &sim,
        &instance.id,
        InstanceState::Failed,
        Duration::from_secs(20),
    )
    .await;
    assert!(
        failed.reason.starts_with("the machine's agent exited"),
        "{}",
        failed.reason
    );
    assert_eq!(pid_in(&machines.join(&lb.id).join("lb.pid")), lb_pid);
    assert!(alive(lb_pid));
    let r = sim.delete(&format!("/v1/instances/{}", instance.id)).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(processes_naming(&instance_dir), Vec::<String>::new());
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(processes_naming(&machines), Vec::<String>::new());
}

/// The init's control plane answers through the load balancer, and each fault does to it what
/// it says: its Node appears only once let register, its API goes while its kube-apiserver is
/// stopped and comes back once started, and hangs while the balancer is silent.
#[tokio::test]
async fn an_init_instance_runs_a_real_control_plane_behind_its_load_balancer() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    // Its Node does not register until told to: the cloud's unregistered_nodes fault.
    let unregistered = FaultConfig {
        unregistered_nodes: 1,
        ..FaultConfig::default()
    };
    let (sim, lb, instance, items) = boot_init(
        &bins,
        &machines,
        &dir.path().join("state.json"),
        unregistered,
    )
    .await;
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    let endpoint = Endpoint {
        host: lb.endpoint.host.clone(),
        port: lb.endpoint.port,
    };
    let running = wait_state(&sim, &instance.id, InstanceState::Running, BOOT_LIMIT).await;
    assert_eq!(running.addresses, instance.addresses);

    // Through the load balancer, with the cluster's CA and an admin certificate from it.
    let admin = kubeconfig::admin_kubeconfig(
        "e2e",
        &endpoint,
        SecretSet::new(&items),
        KeyAlgorithm::EcdsaP256,
        SystemTime::now(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig_file = dir.path().join("admin.conf");
    fs::write(&kubeconfig_file, admin).unwrap_or_else(|e| panic!("{e}"));
    let kubectl = Kubectl {
        bin: bins
            .join(crate::real_boot::KUBE_VERSION)
            .join("bin/kubectl"),
        kubeconfig: kubeconfig_file,
    };
    let through_lb = format!("{} /readyz through the load balancer", lb.endpoint);
    kubectl
        .wait(
            &through_lb,
            true,
            Duration::from_secs(60),
            &["get", "--raw", "/readyz"],
        )
        .await;

    // The machine runs, its Node is held back; told to, it registers.
    let view: FaultsView = body(sim.get("/v1/admin/faults").await).await;
    assert_eq!(view.faults.unregistered_nodes, 0, "the boot took none");
    let held = machines.join(&instance.id).join("faults/node-unregistered");
    assert!(held.is_file(), "{} is missing", held.display());
    let node = ["get", "node", running.name.as_str()];
    let out = kubectl.run(&node);
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("NotFound"),
        "the Node of a held-back kubelet: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let base = sim.handle.base_url();
    let id = instance.id.as_str();
    simcloud_instance_faults(&base, API_TOKEN, id, json!({"node": "registered"})).await;
    kubectl
        .wait("the Node registering", true, Duration::from_secs(30), &node)
        .await;

    // Its kube-apiserver killed, the cluster's API does not answer; started again, it does.
    simcloud_instance_faults(&base, API_TOKEN, id, json!({"apiServer": "stopped"})).await;
    kubectl
        .wait(
            &through_lb,
            false,
            Duration::from_secs(20),
            &["get", "--raw", "/readyz"],
        )
        .await;
    simcloud_instance_faults(&base, API_TOKEN, id, json!({"apiServer": "running"})).await;
    kubectl
        .wait(
            &through_lb,
            true,
            Duration::from_secs(90),
            &["get", "--raw", "/readyz"],
        )
        .await;

    // A silent load balancer: connections hang (the request times out); forwarding, they are
    // answered again.
    let silent = json!({"loadBalancer": "silent"});
    simcloud_cluster_faults(&base, API_TOKEN, "e2e", silent).await;
    kubectl
        .wait(
            &through_lb,
            false,
            Duration::from_secs(20),
            &["get", "--raw", "/readyz"],
        )
        .await;
    let started = Instant::now();
    let out = kubectl.run(&["get", "--raw", "/readyz"]);
    assert!(!out.status.success(), "answered while silent");
    assert!(
        started.elapsed() >= REQUEST_TIMEOUT - Duration::from_millis(500),
        "the request failed after {:?}, before its timeout: the connection did not hang: {}",
        started.elapsed(),
        String::from_utf8_lossy(&out.stderr)
    );
    let forwarding = json!({"loadBalancer": "forwarding"});
    simcloud_cluster_faults(&base, API_TOKEN, "e2e", forwarding).await;
    kubectl
        .wait(
            &through_lb,
            true,
            Duration::from_secs(20),
            &["get", "--raw", "/readyz"],
        )
        .await;

    let instance_dir = machines.join(&instance.id);
    let r = sim.delete(&format!("/v1/instances/{}", instance.id)).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(!instance_dir.exists(), "{} is left", instance_dir.display());
    assert_eq!(processes_naming(&instance_dir), Vec::<String>::new());

    let lb_dir = machines.join(&lb.id);
    assert!(lb_dir.exists());
    let r = sim.delete(&format!("/v1/load-balancers/{}", lb.id)).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(!lb_dir.exists(), "{} is left", lb_dir.display());
    assert_eq!(processes_naming(&machines), Vec::<String>::new());
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}
