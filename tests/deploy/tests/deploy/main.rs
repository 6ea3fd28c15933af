//! `deploy/` and capw's CRDs on a real kube-apiserver and etcd (`tests/kube-env`, started
//! once for this binary; `make kube-env` builds it), and the controller image `make image`
//! builds, through a real registry.

mod crds;
mod drift;
mod environment;
mod image;
mod manifests;

use std::path::PathBuf;
use std::process::Output;

/// The repository's `deploy/` directory.
fn deploy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// Panics with the command's output unless it succeeded; returns its stdout.
fn succeeded(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
