//! What tests of the real boot share: where the Kubernetes binaries are, a guard that tears
//! a cloud's machines down, and the processes a directory's machines left behind.

use std::path::{Path, PathBuf};

/// The Kubernetes versions `tests/kube-env` builds, oldest first: the quickstart runs the
/// first, upgrades go to the second.
pub const KUBE_VERSIONS: [&str; 2] = ["v1.34.4", "v1.35.4"];

/// The root of the Kubernetes binaries: `$CAPW_KUBE_BINARIES`, else `$CAPW_KUBE_ENV_CACHE`,
/// else `~/.cache/capw-kube-env` (where `make kube-env` builds them).
///
/// # Panics
///
/// When `<root>/<version>/bin/capw-node` is missing for a version of [`KUBE_VERSIONS`], with
/// how to build them: these tests run the real binaries, never a stand-in.
pub fn kube_binaries() -> PathBuf {
    let root = ["CAPW_KUBE_BINARIES", "CAPW_KUBE_ENV_CACHE"]
        .iter()
        .find_map(std::env::var_os)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/capw-kube-env")
        });
    for version in KUBE_VERSIONS {
        let needed = root.join(version).join("bin").join("capw-node");
        assert!(
            needed.is_file(),
            "this test runs the real Kubernetes binaries, and {} is missing: build them with \
             `make kube-env` (`make test` does), or set CAPW_KUBE_BINARIES to the root holding \
             <version>/bin",
            needed.display()
        );
    }
    root
}

/// Destroys every machine under its directory when dropped, so that a failing test leaves
/// no process behind.
pub struct MachinesGuard(pub PathBuf);

impl Drop for MachinesGuard {
    fn drop(&mut self) {
        if let Err(e) = capw_simcloud::machines::destroy_all(&self.0) {
            eprintln!(
                "destroying the machines in {}: {}",
                self.0.display(),
                capw_simcloud::error_chain(&e)
            );
        }
    }
}

/// The command lines of the processes that mention `dir` (every process of a machine names
/// its directory).
pub fn processes_naming(dir: &Path) -> Vec<String> {
    let dir = dir.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&dir))
        .collect()
}
