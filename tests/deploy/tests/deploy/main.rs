//! `deploy/` and capw's CRDs on a real kube-apiserver and etcd (`tests/kube-env`, started
//! once for this binary; `make kube-env` builds it). The controller image `make image` builds
//! is installed and run by the deploy test of capw-kube's scenarios
//! (host/kube/tests/scenario/deployed.rs).

mod crds;
mod drift;
mod environment;
mod manifests;

use std::path::PathBuf;

use capw_test_support::bounded::succeeded;

/// The repository's `deploy/` directory.
fn deploy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}
