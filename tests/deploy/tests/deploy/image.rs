//! The controller image `make image` builds (scripts/image.sh): pushed to a real registry and
//! pulled back by skopeo, a client we did not write, it runs capw as a non-root user and carries
//! its labels; `deploy/` pinned to the pushed digest validates on a real API server.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use capw_test_support::kube::KubeEnv;
use capw_test_support::registry::TestRegistry;
use serde_json::Value;

use crate::{deploy_dir, succeeded};

/// Where scripts/image.sh puts the binary in the image.
const BINARY_PATH: &str = "usr/local/bin/capw";

/// The labels every image carries (`org.opencontainers.image.revision` only when built from a
/// git checkout).
const LABELS: [&str; 6] = [
    "title",
    "version",
    "source",
    "licenses",
    "description",
    "created",
];

/// A command that runs its arguments with `rootfs` as the root directory: `chroot` as root,
/// else inside a user namespace where this user is root (`unshare --map-root-user`).
fn in_root_file_system(rootfs: &Path) -> Command {
    // /proc/self belongs to the process's effective user.
    let root = std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0);
    let mut command = if root {
        Command::new("chroot")
    } else {
        let mut unshare = Command::new("unshare");
        unshare.args(["--map-root-user", "chroot"]);
        unshare
    };
    command.arg(rootfs);
    command
}

/// The directory `make image` writes: `CAPW_IMAGE_DIR`, else `image/` in `CARGO_TARGET_DIR`,
/// else in the workspace's `target/`.
fn image_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CAPW_IMAGE_DIR") {
        return dir.into();
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
        .join("image")
}

fn image_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/image.sh")
}

/// A blob of an OCI image layout, as JSON.
fn blob(layout: &Path, digest: &str) -> Value {
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    let path = layout.join("blobs/sha256").join(hex);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap()
}

/// The image config of the layout's only image.
fn config(layout: &Path) -> Value {
    let index: Value = serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap())
        .expect("index.json is JSON");
    let manifests = index["manifests"]
        .as_array()
        .expect("an index lists manifests");
    assert_eq!(manifests.len(), 1, "one image in {index}");
    let manifest = blob(layout, manifests[0]["digest"].as_str().unwrap());
    blob(layout, manifest["config"]["digest"].as_str().unwrap())
}

#[test]
fn the_built_image_runs_capw_as_non_root_and_installs_by_its_digest() {
    let image_dir = image_dir();
    assert!(
        image_dir.join("oci/index.json").exists(),
        "no image in {}: build it first with `make image`",
        image_dir.display()
    );
    let registry = TestRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let overlay = work.path().join("overlay");

    let pushed = succeeded(
        "scripts/image.sh push",
        Command::new(image_script())
            .arg("push")
            .arg(format!("{}/capw:test", registry.host()))
            .arg(&overlay)
            .env("CAPW_IMAGE_DIR", &image_dir)
            .output()
            .unwrap(),
    );
    let pushed = pushed.trim();
    let (repository, digest) = pushed
        .split_once('@')
        .unwrap_or_else(|| panic!("`repository@digest` printed, got {pushed:?}"));
    assert_eq!(repository, format!("{}/capw", registry.host()));

    let pulled = work.path().join("pulled");
    succeeded(
        "skopeo copy (pull by digest)",
        Command::new("skopeo")
            .args(["copy", "--quiet", "--src-tls-verify=false"])
            .arg(format!("docker://{pushed}"))
            .arg(format!("oci:{}:capw", pulled.display()))
            .output()
            .unwrap(),
    );
    let bundle = work.path().join("bundle");
    succeeded(
        "umoci unpack",
        Command::new("umoci")
            .args(["unpack", "--rootless", "--image"])
            .arg(format!("{}:capw", pulled.display()))
            .arg(&bundle)
            .output()
            .unwrap(),
    );
    // Inside the image's root file system alone (chroot): the binary finds its dynamic loader and
    // every library in the image, none from this machine.
    let version = succeeded(
        "capw --version inside the image's root file system",
        in_root_file_system(&bundle.join("rootfs"))
            .arg(format!("/{BINARY_PATH}"))
            .arg("--version")
            .output()
            .unwrap(),
    );
    assert_eq!(
        version.trim(),
        format!("capw {}", env!("CARGO_PKG_VERSION"))
    );

    let config = config(&pulled);
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!([format!("/{BINARY_PATH}")])
    );
    // A numeric, non-zero user: the kubelet can check runAsNonRoot only against a number.
    let user = config["config"]["User"].as_str().unwrap_or_default();
    let uid: u32 = user
        .split(':')
        .next()
        .and_then(|uid| uid.parse().ok())
        .unwrap_or_else(|| panic!("a numeric user, got {user:?}"));
    assert_ne!(uid, 0, "the image runs as root");
    let labels = &config["config"]["Labels"];
    for label in LABELS {
        let value = labels[format!("org.opencontainers.image.{label}")]
            .as_str()
            .unwrap_or_default();
        assert!(!value.is_empty(), "label {label} missing in {labels}");
    }
    assert_eq!(
        labels["org.opencontainers.image.version"],
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(labels["org.opencontainers.image.licenses"], "Apache-2.0");

    let env = KubeEnv::shared();
    // A server-side dry run of namespaced objects needs their namespace to exist.
    succeeded(
        "kubectl apply namespace.yaml",
        env.kubectl()
            .args(["apply", "--server-side", "-f"])
            .arg(deploy_dir().join("namespace.yaml"))
            .output()
            .unwrap(),
    );
    let applied: Value = serde_json::from_str(&succeeded(
        "kubectl apply --dry-run=server -k <the pushed image's kustomization>",
        env.kubectl()
            .args([
                "apply",
                "--server-side",
                "--dry-run=server",
                "-o",
                "json",
                "-k",
            ])
            .arg(&overlay)
            .output()
            .unwrap(),
    ))
    .unwrap();
    let deployment = applied["items"]
        .as_array()
        .expect("a list of the applied objects")
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "capw-controller")
        .expect("the controller's Deployment among the applied objects");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        format!("{repository}@{digest}")
    );
}
