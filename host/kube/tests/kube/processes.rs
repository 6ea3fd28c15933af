//! Two real `capw controller` processes with leader election against the real API server:
//! the leader is SIGKILLed in the middle of a scale-up, the standby takes the Lease and
//! finishes the job with nothing done twice, including a scale-up asked for once the leader
//! is dead (work only the standby can have done), and a SIGTERM then stops the survivor
//! cleanly (exit 0) with its Lease released. [`Process`] also runs the shard replicas of
//! `shards.rs`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use capw_test_support::bounded::output_within;

use super::{KUBECTL_LIMIT, STOP, World, capw_binary, wait};

/// A `capw controller` process; killed when dropped, so a failed test leaves none behind.
pub(super) struct Process {
    child: Child,
    identity: &'static str,
}

impl Process {
    /// A replica that reconciles only while it holds the leader Lease `capw-controller`.
    fn start(w: &World, identity: &'static str, lease: Duration) -> Process {
        Self::spawn(w, identity, lease, &["--leader-elect"])
    }

    /// A replica of `shards` shards, each held through its Lease `capw-controller-shard-<i>`.
    pub(super) fn start_sharded(
        w: &World,
        identity: &'static str,
        lease: Duration,
        shards: u32,
    ) -> Process {
        let shards = shards.to_string();
        Self::spawn(w, identity, lease, &["--shards", &shards])
    }

    /// `capw controller` for `w`'s namespace, coordinating with the others by `coordination`
    /// (its leader-election or sharding flags), its log in `<tmp>/<identity>.log`.
    fn spawn(w: &World, identity: &'static str, lease: Duration, coordination: &[&str]) -> Process {
        let log = std::fs::File::create(w.tmp.path().join(format!("{identity}.log"))).unwrap();
        let child = Command::new(capw_binary())
            .arg("--state-dir")
            .arg(w.tmp.path().join(identity))
            .arg("--plugin-dir")
            .arg(capw_test_support::plugin_dir())
            .arg("--cache-dir")
            .arg(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"))
            .arg("controller")
            .arg("--kubeconfig")
            .arg(w.env.kubeconfig())
            .args(coordination)
            .args(["--lease-name", "capw-controller"])
            .args(["--lease-namespace", &w.namespace])
            .args(["--watch-namespace", &w.namespace])
            .args(["--lease-duration-seconds", &lease.as_secs().to_string()])
            .args(["--identity", identity])
            .args([
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "0",
            ])
            .args(["--max-requeue-seconds", "1"])
            .env_remove("CAPW_LOG")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        Process { child, identity }
    }

    /// Sends `signal` (`KILL`, `TERM`) and waits at most [`STOP`] for the process to end.
    pub(super) async fn signal_and_wait(mut self, signal: &str) -> ExitStatus {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} {}", self.identity);
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > STOP {
                let _ = self.child.kill();
                panic!(
                    "{} did not end within {STOP:?} of SIG{signal}",
                    self.identity
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // A failed test leaves no controller behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl World {
    /// The idempotency keys of the instances simcloud holds for `cluster`.
    pub(crate) async fn instance_tokens(&self, cluster: &str) -> BTreeSet<String> {
        self.inventory()
            .await
            .clusters
            .get(&self.cloud_key(cluster))
            .map(|c| c.instances.iter().map(|i| i.client_token.clone()).collect())
            .unwrap_or_default()
    }

    /// The leader Lease's holder (empty once released), or `None` before the Lease exists.
    fn lease_holder(&self) -> Option<String> {
        let out = output_within(
            self.env
                .kubectl()
                .args(["get", "lease", "capw-controller", "-n", &self.namespace])
                .args(["-o", "jsonpath={.spec.holderIdentity}"]),
            KUBECTL_LIMIT,
        );
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_controller_processes_hand_over_on_sigkill_and_release_the_lease_on_sigterm() {
    use std::os::unix::process::ExitStatusExt as _;

    let w = World::new("capw-processes").await;
    let lease = Duration::from_secs(4);
    let first = Process::start(&w, "process-a", lease);
    wait("process-a leading", || async {
        (w.lease_holder().as_deref() == Some("process-a")).then_some(())
    })
    .await;
    let second = Process::start(&w, "process-b", lease);
    w.kubectl(&["apply", "-f", w.example().to_str().unwrap()]);
    w.wait_ready("alpha").await;
    assert_eq!(w.lease_holder().as_deref(), Some("process-a"));

    // Scale up, and SIGKILL the leader as soon as the first new machine's intent is stored.
    let before = w.machines("alpha").await.len();
    w.scale_workers("alpha", 4);
    wait("a new machine", || async {
        (w.machines("alpha").await.len() > before).then_some(())
    })
    .await;
    let killed = Instant::now();
    let status = first.signal_and_wait("KILL").await;
    assert_eq!(status.signal(), Some(9), "{status:?}");
    // What the leader left: it may have finished the scale-up before it died.
    let left_by_leader = w.instance_tokens("alpha").await;

    // The standby takes the Lease once it expires.
    wait("process-b leading", || async {
        (w.lease_holder().as_deref() == Some("process-b")).then_some(())
    })
    .await;
    let handover = killed.elapsed();
    eprintln!("hand-over {handover:?} after SIGKILL, lease {lease:?}");
    assert!(
        handover <= lease * 2 + Duration::from_secs(2),
        "hand-over took {handover:?}, lease {lease:?}"
    );

    // A fifth worker, asked for once the leader is dead, is work only the standby can do: a
    // Machine, its instance from the infrastructure provider, the new generation observed.
    // It finishes the first scale-up with it: every Machine has exactly one instance.
    w.scale_workers("alpha", 5);
    w.wait_workers("alpha", 5).await;
    let made_by_standby: Vec<String> = w
        .instance_tokens("alpha")
        .await
        .difference(&left_by_leader)
        .cloned()
        .collect();
    assert!(
        !made_by_standby.is_empty(),
        "no instance was made after the leader died"
    );

    // SIGTERM: running passes finish, the Lease is released, the process exits 0.
    let status = second.signal_and_wait("TERM").await;
    assert!(status.success(), "process-b after SIGTERM: {status:?}");
    assert_eq!(
        w.lease_holder().as_deref(),
        Some(""),
        "the Lease was not released"
    );
}
