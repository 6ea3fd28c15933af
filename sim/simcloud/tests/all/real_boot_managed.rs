//! A managed control plane booted for real: its own etcd, kube-apiserver,
//! kube-controller-manager and kube-scheduler on a loopback address, reached with the admin
//! kubeconfig of its credentials, joined by a worker with its token and CA hash, upgraded in
//! place one minor up, and deleted without a process or a file left; and one whose agent
//! failed, shown `failed` and not started again.

use std::process::Command;
use std::time::{Duration, Instant};

use capw_simcloud::fixtures::{cloud_config_with_files, kubeadm_join_docs};
use capw_simcloud::model::{
    ControlPlaneState, InstanceState, ManagedControlPlane, ManagedControlPlaneCredentials,
};
use capw_test_support::real_boot::processes_naming;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::real_boot::{MachinesGuard, kube_binaries, real_config};
use crate::support::{Sim, body};

/// How long the service may take to come up, or to upgrade, on a busy machine.
const SERVICE_LIMIT: Duration = Duration::from_secs(240);

/// Polls `path` until `done`; fails after `limit`.
async fn wait_for_cp(
    sim: &Sim,
    path: &str,
    limit: Duration,
    done: impl Fn(&ManagedControlPlane) -> bool,
) -> ManagedControlPlane {
    let deadline = Instant::now() + limit;
    loop {
        let cp: ManagedControlPlane = body(sim.get(path).await).await;
        if done(&cp) {
            return cp;
        }
        assert!(Instant::now() < deadline, "{path} did not settle: {cp:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `kubectl --kubeconfig K args`, its stdout; `None` when it fails.
fn kubectl(bin: &std::path::Path, kubeconfig: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = Command::new(bin)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--request-timeout=5s")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run kubectl: {e}"));
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The gitVersion `/version` answers.
fn served_version(bin: &std::path::Path, kubeconfig: &std::path::Path) -> Option<String> {
    let text = kubectl(bin, kubeconfig, &["get", "--raw", "/version"])?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["gitVersion"].as_str().map(str::to_owned)
}

/// Cluster `m1`'s network and a managed control plane for it at v1.34.4 with `replicas`
/// replicas, created (`client_token` when given); the control plane as created.
async fn create_service(
    sim: &Sim,
    client_token: Option<&str>,
    replicas: u32,
) -> ManagedControlPlane {
    let r = sim
        .post("/v1/networks", json!({"cluster": "m1", "name": "m1-net"}))
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let mut request =
        json!({"cluster": "m1", "name": "cp", "version": "1.34.4", "replicas": replicas});
    if let Some(token) = client_token {
        request["client_token"] = token.into();
    }
    let r = sim.post("/v1/managed-control-planes", request).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    body(r).await
}

#[tokio::test]
async fn a_managed_control_plane_serves_joins_upgrades_and_goes_without_a_trace() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let sim = Sim::with(real_config(&bins, &machines)).await;
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    let cp = create_service(&sim, Some("m1-cp"), 3).await;
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let ready = wait_for_cp(&sim, &path, SERVICE_LIMIT, |cp| {
        cp.state == ControlPlaneState::Ready
    })
    .await;
    let endpoint = ready
        .endpoint
        .clone()
        .unwrap_or_else(|| panic!("no endpoint"));
    assert!(endpoint.host.starts_with("127."), "{endpoint}");
    assert_eq!(endpoint.port, 6443);

    let creds: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;
    assert_eq!(creds.endpoint, endpoint);
    let kubeconfig = dir.path().join("admin.conf");
    std::fs::write(&kubeconfig, &creds.admin_kubeconfig).unwrap_or_else(|e| panic!("{e}"));
    let kubectl_bin = bins.join("v1.35.4/bin/kubectl");
    assert_eq!(
        served_version(&kubectl_bin, &kubeconfig).as_deref(),
        Some("v1.34.4")
    );
    let nodes = kubectl(&kubectl_bin, &kubeconfig, &["get", "nodes", "-o", "name"]);
    assert_eq!(
        nodes.as_deref(),
        Some(""),
        "a managed control plane has no Node"
    );

    // A worker joins with the service's token and CA hash.
    let data = cloud_config_with_files(
        &[
            ("/etc/kubernetes/capw/kubernetes-version", "v1.34.4"),
            (
                "/run/kubeadm/kubeadm.yaml",
                &kubeadm_join_docs(
                    &endpoint.to_string(),
                    &creds.join_token,
                    &capw_simcloud::boot_check::ca_cert_hash(&creds.ca_certificate)
                        .unwrap_or_else(|e| panic!("{e}")),
                    false,
                ),
            ),
        ],
        "kubeadm join --config /run/kubeadm/kubeadm.yaml",
    );
    let (_, worker) = sim.create_instance("w-0", "m1", "worker", &data).await;
    let deadline = Instant::now() + SERVICE_LIMIT;
    loop {
        let now: capw_simcloud::model::Instance =
            body(sim.get(&format!("/v1/instances/{}", worker.id)).await).await;
        assert_ne!(now.state, InstanceState::Failed, "{}", now.reason);
        let node_ready = kubectl(
            &kubectl_bin,
            &kubeconfig,
            &[
                "get",
                "node",
                &worker.name,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
            ],
        );
        if now.state == InstanceState::Running && node_ready.as_deref() == Some("True") {
            break;
        }
        assert!(Instant::now() < deadline, "the worker's Node is not Ready");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    // An in-place upgrade, one minor up.
    let r = sim
        .send(Method::PATCH, &path, Some(json!({"version": "1.35.4"})))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let upgraded = wait_for_cp(&sim, &path, SERVICE_LIMIT, |cp| {
        cp.state == ControlPlaneState::Ready && cp.version == "1.35.4"
    })
    .await;
    assert_eq!(upgraded.endpoint, Some(endpoint));
    assert_eq!(
        served_version(&kubectl_bin, &kubeconfig).as_deref(),
        Some("v1.35.4")
    );

    let r = sim.delete(&format!("/v1/instances/{}", worker.id)).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let service_dir = machines.join(&cp.id);
    assert!(service_dir.is_dir());
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert!(!service_dir.exists(), "its directory is removed");
    assert_eq!(
        processes_naming(&service_dir),
        Vec::<String>::new(),
        "no process of it is left"
    );
    assert_eq!(
        sim.get("/v1/clusters/m1/bootstrap").await.status(),
        StatusCode::NOT_FOUND
    );
}

/// The agent's verdict is the state's: a service whose agent wrote `failed: reason` turns
/// `failed` with that reason, its agent is not started again (not even with its pid file gone,
/// as after a host reboot), the admin API does not fail it by hand, and it deletes cleanly.
/// The agent's files are staged as a failed agent leaves them, so nothing boots.
#[tokio::test]
async fn a_service_whose_agent_failed_turns_failed_and_is_not_started_again() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    // A service the cloud does not have: the sim removes it before its API serves, after
    // which a directory staged for a service it has is left alone.
    let decoy = machines.join("mcp-99");
    std::fs::create_dir_all(&decoy).unwrap_or_else(|e| panic!("{e}"));
    let _guard = MachinesGuard(machines.clone());
    let sim = Sim::with(real_config(&bins, &machines)).await;
    assert!(!decoy.exists(), "the orphan outlived the sim's start");
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    let service_dir = machines.join("mcp-1");
    std::fs::create_dir_all(&service_dir).unwrap_or_else(|e| panic!("{e}"));
    let reason = "etcd did not become healthy within 2m0s";
    for (file, content) in [
        ("agent.pid", "2147483646\n".to_owned()),
        ("status", format!("failed: {reason}\n")),
    ] {
        std::fs::write(service_dir.join(file), content).unwrap_or_else(|e| panic!("{e}"));
    }

    let cp = create_service(&sim, None, 1).await;
    assert_eq!(cp.id, "mcp-1");
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let failed = wait_for_cp(&sim, &path, Duration::from_secs(20), |cp| {
        cp.state == ControlPlaneState::Failed
    })
    .await;
    assert_eq!(failed.failure_reason.as_deref(), Some(reason));
    assert_eq!(failed.endpoint, None, "it never served");

    std::fs::remove_file(service_dir.join("agent.pid")).unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !service_dir.join("agent.pid").exists() && !service_dir.join("logs").exists(),
        "no agent was started for a failed service"
    );
    let r = sim
        .send(
            Method::PUT,
            &format!("/v1/admin/managed-control-planes/{}/fail", cp.id),
            Some(json!({"reason": "by hand"})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let r = sim
        .send(Method::PATCH, &path, Some(json!({"version": "1.35.4"})))
        .await;
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let now: ManagedControlPlane = body(sim.get(&path).await).await;
    assert_eq!(now, failed);

    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert!(!service_dir.exists(), "its directory is removed");
    assert_eq!(
        sim.get("/v1/clusters/m1/bootstrap").await.status(),
        StatusCode::NOT_FOUND
    );
}

/// A service keeps running when simcloud stops, as a cloud's would, and the next simcloud on
/// the same state adopts it: for seconds it stays `ready`, served by the same agent (never
/// started again), answering with the same credentials; then it is deleted without a trace.
#[tokio::test]
async fn a_restarted_sim_adopts_a_running_service() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let state = dir.path().join("state.json");
    let sim = Sim::with(real_config(&bins, &machines).with_state_file(&state)).await;
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    let cp = create_service(&sim, Some("m1-cp"), 1).await;
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    wait_for_cp(&sim, &path, SERVICE_LIMIT, |cp| {
        cp.state == ControlPlaneState::Ready
    })
    .await;
    let creds: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;
    let pid_file = machines.join(&cp.id).join("agent.pid");
    let pid_of = || -> i32 {
        std::fs::read_to_string(&pid_file)
            .unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()))
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()))
    };
    let agent = pid_of();
    sim.handle
        .shutdown()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !processes_naming(&machines.join(&cp.id)).is_empty(),
        "the service stopped with simcloud"
    );

    let sim = Sim::with(real_config(&bins, &machines).with_state_file(&state)).await;
    let kubeconfig = dir.path().join("admin.conf");
    std::fs::write(&kubeconfig, &creds.admin_kubeconfig).unwrap_or_else(|e| panic!("{e}"));
    let kubectl_bin = bins.join("v1.34.4/bin/kubectl");
    let started = Instant::now();
    let mut reads = 0;
    while started.elapsed() < Duration::from_secs(6) {
        let now: ManagedControlPlane = body(sim.get(&path).await).await;
        assert_eq!(now.state, ControlPlaneState::Ready, "{now:?}");
        assert_eq!(pid_of(), agent, "the service's agent was started again");
        reads += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(reads >= 5, "only {reads} reads");
    assert_eq!(
        served_version(&kubectl_bin, &kubeconfig).as_deref(),
        Some("v1.34.4"),
        "the adopted service answers with the credentials it gave before"
    );
    let again: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;
    assert_eq!(again.endpoint, creds.endpoint);
    assert_eq!(again.ca_certificate, creds.ca_certificate);

    let service_dir = machines.join(&cp.id);
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert!(!service_dir.exists(), "its directory is removed");
    assert_eq!(
        processes_naming(&service_dir),
        Vec::<String>::new(),
        "no process of it is left"
    );
}
