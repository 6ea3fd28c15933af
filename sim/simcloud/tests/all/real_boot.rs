//! Real boot without a control plane: addresses, the files a machine gets, refusals before
//! anything starts (a missing image, kubeadm's verdict), and what a restart keeps.

use std::collections::BTreeSet;
use std::fs;
use std::net::Ipv4Addr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use capw_simcloud::fixtures::{CA_CERT, TOKEN, kubeadm_init_docs};
use capw_simcloud::model::{Instance, InstanceState, LoadBalancer, LoadBalancerList};
use capw_simcloud::{RealBoot, SimCloudConfig};
use reqwest::StatusCode;

use crate::support::{Sim, body, fast_config};

/// The version the Kubernetes binaries are built for first (`tests/kube-env`).
pub const KUBE_VERSION: &str = "v1.35.4";

pub use capw_test_support::real_boot::{MachinesGuard, kube_binaries};

/// A fast real-boot config with binaries under `bins` and machines under `machines`.
pub fn real_config(bins: &Path, machines: &Path) -> SimCloudConfig {
    fast_config().with_real_boot(RealBoot {
        kube_binaries: bins.to_owned(),
        machines_dir: machines.to_owned(),
    })
}

/// The fixtures' init documents for `endpoint` and `token`, for the version of the binaries.
pub fn init_docs(endpoint: &str, token: &str) -> String {
    kubeadm_init_docs(endpoint, token).replace("v1.31.0", KUBE_VERSION)
}

/// Cloud-config for an `init` asking for `version`, with a CA, a key and `kubeadm_docs`.
pub fn init_data(version: &str, kubeadm_docs: &str) -> String {
    let indent = |text: &str| {
        text.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    };
    format!(
        "#cloud-config
write_files:
- path: /etc/kubernetes/capw/kubernetes-version
  content: \"{version}\\n\"
- path: /etc/kubernetes/pki/ca.crt
  permissions: '0644'
  content: |
{}- path: /etc/kubernetes/pki/ca.key
  permissions: '0600'
  content: not really a key
- path: /run/kubeadm/kubeadm.yaml
  permissions: '0600'
  content: |
{}runcmd:
- kubeadm init --config /run/kubeadm/kubeadm.yaml
",
        indent(CA_CERT),
        indent(kubeadm_docs),
        version = version,
    )
}

fn loopback(address: &str) -> Ipv4Addr {
    let ip: Ipv4Addr = address.parse().unwrap_or_else(|e| panic!("{address}: {e}"));
    assert!(ip.is_loopback(), "{ip} is not a loopback address");
    assert_ne!(ip.octets()[1], 0, "{ip} is in 127.0.0.0/16");
    ip
}

fn address_of(instance: &Instance) -> Ipv4Addr {
    loopback(&instance.addresses[0].address)
}

#[tokio::test]
async fn every_instance_and_load_balancer_gets_its_own_loopback_address() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let sim = Sim::with(real_config(&dir.path().join("bins"), &machines)).await;
    let mut seen = BTreeSet::new();
    for cluster in ["c1", "c2"] {
        let lb = sim.setup_cluster(cluster).await;
        assert_eq!(lb.endpoint.port, 6443);
        assert!(seen.insert(loopback(&lb.endpoint.host)));
        for n in 0..3 {
            let (_, instance) = sim
                .create_instance(
                    &format!("{cluster}-{n}"),
                    cluster,
                    "worker",
                    "#cloud-config\n",
                )
                .await;
            assert!(seen.insert(address_of(&instance)), "{instance:?}");
        }
    }
    assert_eq!(seen.len(), 8);
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_version_the_cloud_has_no_image_for_fails_the_boot_after_the_files_are_written() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bins = dir.path().join("bins");
    for version in ["v1.35.4", "v1.34.4"] {
        fs::create_dir_all(bins.join(version).join("bin")).unwrap_or_else(|e| panic!("{e}"));
    }
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let sim = Sim::with(real_config(&bins, &machines)).await;
    let lb = sim.setup_cluster("c1").await;
    let docs = init_docs(&lb.endpoint.to_string(), TOKEN);
    let data = init_data("v1.33.0", &docs);
    let (_, instance) = sim
        .create_instance("t1", "c1", "control-plane", &data)
        .await;
    let failed = sim.settled_instance(&instance.id).await;
    assert_eq!(failed.state, InstanceState::Failed);
    assert_eq!(
        failed.reason,
        "no image for Kubernetes v1.33.0; this cloud has v1.34.4, v1.35.4"
    );

    let machine_dir = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .join(&instance.id);
    let rootfs = machine_dir.join("rootfs");
    for (path, mode) in [
        ("etc/kubernetes/pki/ca.crt", 0o644),
        ("etc/kubernetes/pki/ca.key", 0o600),
        ("run/kubeadm/kubeadm.yaml", 0o600),
        ("etc/kubernetes/capw/kubernetes-version", 0o644),
    ] {
        let meta = fs::metadata(rootfs.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(meta.permissions().mode() & 0o7777, mode, "{path}");
    }
    let ca = fs::read_to_string(rootfs.join("etc/kubernetes/pki/ca.crt"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ca, CA_CERT);

    for _ in 0..2 {
        let r = sim.delete(&format!("/v1/instances/{}", instance.id)).await;
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
        assert!(!machine_dir.exists(), "{} is left", machine_dir.display());
    }
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn addresses_survive_a_restart_and_new_ones_do_not_collide() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let state = dir.path().join("state.json");
    let config = real_config(&dir.path().join("bins"), &machines).with_state_file(&state);

    let sim = Sim::with(config.clone()).await;
    let lb = sim.setup_cluster("c1").await;
    let (_, first) = sim
        .create_instance("t1", "c1", "worker", "#cloud-config\n")
        .await;
    sim.handle
        .shutdown()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let sim = Sim::with(config).await;
    let r = sim.get(&format!("/v1/load-balancers/{}", lb.id)).await;
    let again: LoadBalancer = body(r).await;
    assert_eq!(again.endpoint, lb.endpoint);
    let r = sim.get(&format!("/v1/instances/{}", first.id)).await;
    let again: Instance = body(r).await;
    assert_eq!(again.addresses, first.addresses);
    let (_, second) = sim
        .create_instance("t2", "c1", "worker", "#cloud-config\n")
        .await;
    let taken = [address_of(&first), loopback(&lb.endpoint.host)];
    assert!(!taken.contains(&address_of(&second)));
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn kubeadm_judges_the_documents_and_its_refusal_hides_the_token() {
    let bins = kube_binaries();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let sim = Sim::with(real_config(&bins, &machines)).await;
    let lb = sim.setup_cluster("c1").await;
    let endpoint = lb.endpoint.to_string();

    // A field kubeadm does not know: the sim's own check has nothing against it.
    let unknown_field = format!("{}  bogusField: 1\n", init_docs(&endpoint, TOKEN));
    // A token kubeadm refuses and quotes; the sim's check would refuse it too, but kubeadm
    // is the judge.
    let bad_token = "abcdefX0123456789abcdef";
    let cases = [
        ("unknown", unknown_field, "unknown field"),
        (
            "token",
            init_docs(&endpoint, bad_token),
            "was not of the form",
        ),
    ];
    for (token, docs, expected) in cases {
        let data = init_data(KUBE_VERSION, &docs);
        let (_, instance) = sim
            .create_instance(token, "c1", "control-plane", &data)
            .await;
        let failed = sim.settled_instance(&instance.id).await;
        assert_eq!(failed.state, InstanceState::Failed);
        assert!(
            failed
                .reason
                .starts_with("kubeadm refused the configuration: ")
                && failed.reason.contains(expected),
            "{}",
            failed.reason
        );
        assert!(!failed.reason.contains(bad_token) && !failed.reason.contains(TOKEN));
    }

    // What kubeadm accepts still meets the sim's own check: the endpoint must be the
    // cluster's.
    let elsewhere = init_docs("127.9.9.9:6443", TOKEN);
    let data = init_data(KUBE_VERSION, &elsewhere);
    let (_, instance) = sim
        .create_instance("elsewhere", "c1", "control-plane", &data)
        .await;
    let failed = sim.settled_instance(&instance.id).await;
    assert_eq!(failed.state, InstanceState::Failed);
    assert!(
        failed.reason.starts_with("bootstrap: ") && failed.reason.contains("127.9.9.9:6443"),
        "{}",
        failed.reason
    );
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The `lb-<n>` entries of the machines directory `machines`.
fn load_balancer_dirs(machines: &Path) -> BTreeSet<String> {
    fs::read_dir(machines)
        .unwrap_or_else(|e| panic!("{}: {e}", machines.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("lb-"))
        .collect()
}

/// Polls until the machines directory holds exactly the balancers `want`; fails after 20 s.
async fn wait_load_balancer_dirs(machines: &Path, want: &BTreeSet<String>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let seen = load_balancer_dirs(machines);
        if &seen == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "load balancer directories {seen:?}, want {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// No balancer outlives its record: a delete destroys exactly the balancer it names, none
/// comes back on a later pass, and a restarted sim destroys one whose record is gone. The
/// binaries root has no binaries, so the balancers have their directories but no process.
#[tokio::test]
async fn a_deleted_load_balancer_leaves_no_machine_and_the_others_stay() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let machines = dir.path().join("machines");
    let _guard = MachinesGuard(machines.clone());
    let state = dir.path().join("state.json");
    let config = real_config(&dir.path().join("bins"), &machines).with_state_file(&state);

    let sim = Sim::with(config.clone()).await;
    let machines = sim
        .handle
        .machines_dir()
        .unwrap_or_else(|| panic!("a real-boot sim has a machines directory"))
        .to_owned();
    let gone = sim.setup_cluster("c1").await;
    let kept = sim.setup_cluster("c2").await;
    let both: BTreeSet<String> = [gone.id.clone(), kept.id.clone()].into();
    wait_load_balancer_dirs(&machines, &both).await;

    let r = sim.delete(&format!("/v1/load-balancers/{}", gone.id)).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    // The delete answers once the balancer is destroyed.
    let only_kept: BTreeSet<String> = [kept.id.clone()].into();
    assert_eq!(load_balancer_dirs(&machines), only_kept);
    // Later passes of the machines loop (one every 200 ms) bring nothing back.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(load_balancer_dirs(&machines), only_kept);
    sim.handle
        .shutdown()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // A balancer whose delete a crash cut short (its record gone, its directory left) is
    // destroyed by the next sim before its API serves (a sweep behind the first requests would
    // take what they create for orphans); the one it has a record of stays.
    let orphan = machines.join("lb-99");
    fs::create_dir_all(orphan.join("logs")).unwrap_or_else(|e| panic!("{e}"));
    let sim = Sim::with(config).await;
    assert!(!orphan.exists(), "the orphan outlived the sim's start");
    wait_load_balancer_dirs(&machines, &only_kept).await;
    let r = sim.get("/v1/load-balancers").await;
    let list: LoadBalancerList = body(r).await;
    let ids: Vec<&str> = list
        .load_balancers
        .iter()
        .map(|lb| lb.id.as_str())
        .collect();
    assert_eq!(ids, [kept.id.as_str()]);
    sim.handle
        .destroy_machines()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}
