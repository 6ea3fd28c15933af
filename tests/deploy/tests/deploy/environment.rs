//! The test environment itself: an owned one stops when its handle drops, also while a
//! failing test unwinds.

use std::path::Path;

use capw_test_support::kube::KubeEnv;

/// Whether process `pid` is alive (a zombie left for its reaper counts as gone).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

fn pid(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{name}.pid")))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn an_owned_environment_stops_when_a_failing_test_unwinds() {
    let (sender, receiver) = std::sync::mpsc::channel();
    let failing_test = std::thread::spawn(move || {
        let env = KubeEnv::start();
        let out = env
            .kubectl()
            .args(["get", "--raw", "/readyz"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the environment answers before the failure"
        );
        let dir = env.dir().to_path_buf();
        sender
            .send((dir.clone(), pid(&dir, "etcd"), pid(&dir, "kube-apiserver")))
            .unwrap();
        panic!("a test failing while it holds the environment");
    });
    assert!(failing_test.join().is_err(), "the test thread panicked");
    let (dir, etcd, apiserver) = receiver.recv().unwrap();
    assert!(!alive(&etcd), "etcd ({etcd}) still runs");
    assert!(
        !alive(&apiserver),
        "kube-apiserver ({apiserver}) still runs"
    );
    assert!(!dir.exists(), "{} is left behind", dir.display());
}
