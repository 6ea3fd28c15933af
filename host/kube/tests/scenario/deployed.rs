//! capw installed as an operator installs it, and run from its image: the image `make image`
//! built is pushed to a real registry (Debian's docker-registry on loopback) and pulled back
//! by digest with skopeo; its root file system, unpacked with umoci, is what the management
//! cluster's kubelet stand-in runs for that repository (chrooted, as the Pod's user: it has no
//! container runtime, docs/workload-clusters.md). `kubectl apply -k` of the kustomization
//! pinned to the digest installs it, `deploy/webhook-cert.sh` makes the webhook's certificate,
//! and from then on the test only does what an operator does with kubectl: providers dropped
//! into ConfigMaps, the quickstart applied through the webhook, the clusters deleted, capw
//! uninstalled. simcloud runs in this test's process, a process of its own beside the
//! controller's (the image's capw has no simulated cloud), booting real machines.
//!
//! The controller reaches the API server only with its service account's token (the Pod has
//! no other credentials), its webhook only through its Service (the API server calls the
//! Service's address; the Service routing stand-in forwards it to the Pod).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_engine::store::ObjectStore;
use capw_engine::{ClusterCacheConfig, SecretSource};
use capw_kube::KubeStore;
use capw_simcloud::FaultConfig;
use capw_test_support::bounded::{output_within, succeeded};
use capw_test_support::kube::{KubeEnv, Workloads};
use capw_test_support::registry::TestRegistry;
use serde_json::{Value, json};

use super::{Boot, Driver, Expect, Scenario, TOKEN, engine_config, sim};

/// Where scripts/image.sh puts the binary in the image.
const BINARY: &str = "/usr/local/bin/capw";
/// The CA bundle the image carries for registries that serve providers over TLS.
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";
/// The user deploy/deployment.yaml runs the controller as, and the image's.
const UID: u32 = 65532;
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
/// How long one kubectl command may take.
const KUBECTL: Duration = Duration::from_secs(300);
/// The quickstart's providers: their names and the components `make plugins` builds.
const PROVIDERS: [(&str, &str); 3] = [
    ("sim-infra", "capw_sim_infra.wasm"),
    ("kubeadm-bootstrap", "capw_kubeadm_bootstrap.wasm"),
    ("kubeadm-control-plane", "capw_kubeadm_control_plane.wasm"),
];

fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The directory `make image` writes: `CAPW_IMAGE_DIR`, else `image/` in `CARGO_TARGET_DIR`,
/// else in the workspace's `target/`.
fn image_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CAPW_IMAGE_DIR") {
        return dir.into();
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join("target"))
        .join("image")
}

/// A blob of an OCI image layout, as JSON.
fn blob(layout: &Path, digest: &str) -> Value {
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    let path = layout.join("blobs/sha256").join(hex);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap()
}

/// The image config of the layout's only image.
fn image_config(layout: &Path) -> Value {
    let index: Value = serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap())
        .expect("index.json is JSON");
    let manifests = index["manifests"]
        .as_array()
        .expect("an index lists manifests");
    assert_eq!(manifests.len(), 1, "one image in {index}");
    let manifest = blob(layout, manifests[0]["digest"].as_str().unwrap());
    blob(layout, manifest["config"]["digest"].as_str().unwrap())
}

/// The image as a registry serves it to a cluster.
struct Published {
    /// The registry on loopback that holds it.
    _registry: TestRegistry,
    /// `<registry>/capw`.
    repository: String,
    /// `sha256:...`.
    digest: String,
    /// The kustomization `scripts/image.sh push` wrote: `deploy/` with the image by digest.
    overlay: PathBuf,
    /// The root file system of the image pulled back by digest.
    rootfs: PathBuf,
    /// Its image config (`config` of the OCI image configuration).
    config: Value,
}

/// Pushes the image `make image` built to a registry on loopback, pulls it back by digest with
/// skopeo and unpacks it with umoci, both clients we did not write; checks what the image
/// says of itself (entrypoint, a numeric non-root user, its labels).
fn publish(work: &Path) -> Published {
    let image_dir = image_dir();
    assert!(
        image_dir.join("oci/index.json").exists(),
        "no image in {}: build it first with `make image`",
        image_dir.display()
    );
    let registry = TestRegistry::start();
    let overlay = work.join("overlay");
    let pushed = succeeded(
        "scripts/image.sh push",
        Command::new(repository_root().join("scripts/image.sh"))
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
    let pulled = work.join("pulled");
    succeeded(
        "skopeo copy (pull by digest)",
        Command::new("skopeo")
            .args(["copy", "--quiet", "--src-tls-verify=false"])
            .arg(format!("docker://{pushed}"))
            .arg(format!("oci:{}:capw", pulled.display()))
            .output()
            .unwrap(),
    );
    let bundle = work.join("bundle");
    succeeded(
        "umoci unpack",
        Command::new("umoci")
            .args(["unpack", "--image"])
            .arg(format!("{}:capw", pulled.display()))
            .arg(&bundle)
            .output()
            .unwrap(),
    );
    let config = image_config(&pulled)["config"].clone();
    assert_eq!(config["Entrypoint"], json!([BINARY]));
    // A numeric, non-zero user: the kubelet can check runAsNonRoot only against a number.
    let user = config["User"].as_str().unwrap_or_default();
    assert_eq!(
        user,
        format!("{UID}:{UID}"),
        "the image's user, as deploy/deployment.yaml runs it"
    );
    let labels = &config["Labels"];
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
    Published {
        _registry: registry,
        repository: repository.to_owned(),
        digest: digest.to_owned(),
        overlay,
        rootfs: bundle.join("rootfs"),
        config,
    }
}

/// The kubelet stand-in's image table entry that runs `image`'s repository from its root file
/// system, as its config says (`tests/kube-env/node/images.go`).
fn image_table(image: &Published) -> Value {
    let config = &image.config;
    json!([{
        "image": image.repository,
        "rootfs": image.rootfs,
        "entrypoint": config["Entrypoint"],
        "cmd": config["Cmd"].as_array().cloned().unwrap_or_default(),
        "env": config["Env"].as_array().cloned().unwrap_or_default(),
        "workingDir": config["WorkingDir"].as_str().unwrap_or_default(),
    }])
}

/// The processes that run the image's capw, as pids: their command line starts with it.
fn controller_processes() -> Vec<u32> {
    let command = format!("{BINARY}\0controller");
    super::processes_where(|raw| raw.starts_with(command.as_bytes()))
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// `Uid:` or `Gid:` of /proc/<pid>/status: real, effective, saved and file system ids.
fn ids(pid: u32, which: &str) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(which))
        .unwrap_or_else(|| panic!("no {which} in /proc/{pid}/status"));
    line[which.len()..]
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// Whether `a` and `b` are the same file (device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl Scenario {
    fn env(&self) -> &KubeEnv {
        self.kube_env
            .as_ref()
            .expect("a deployed scenario has its own environment")
    }

    /// `kubectl ARGS` against the management cluster, as an operator: its output, or the
    /// failure with stderr.
    fn operator(&self, args: &[&str]) -> Result<String, String> {
        let out = output_within(self.env().kubectl().args(args), KUBECTL);
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    fn operator_ok(&self, args: &[&str]) -> String {
        self.operator(args)
            .unwrap_or_else(|e| panic!("kubectl {args:?}: {e}"))
    }

    /// The names `kubectl get KINDS -l app.kubernetes.io/name=capw` lists, cluster-wide.
    fn labelled_capw(&self, kinds: &str) -> Vec<String> {
        self.operator_ok(&[
            "get",
            kinds,
            "-A",
            "-l",
            "app.kubernetes.io/name=capw",
            "-o",
            "name",
        ])
        .lines()
        .map(str::to_owned)
        .collect()
    }
}

/// What the kinds capw installs and labels are, for the check that nothing is left.
const INSTALLED_KINDS: &str = "namespaces,serviceaccounts,clusterroles,clusterrolebindings,roles,rolebindings,deployments,services,validatingwebhookconfigurations";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn capw_installed_from_its_image_runs_the_quickstart_and_uninstalls_without_a_trace() {
    capw_test_support::init_tracing();
    let work = tempfile::tempdir().unwrap();
    let image = publish(work.path());
    let table = work.path().join("images.json");
    std::fs::write(&table, image_table(&image).to_string()).unwrap();
    let env = KubeEnv::start_with_images(Workloads::Run, &table);
    let client = env.client().await;
    let store: Arc<dyn ObjectStore> = Arc::new(KubeStore::new(client));
    let (sim, machines) = sim(Boot::Real, work.path(), FaultConfig::default()).await;
    let mut s = Scenario {
        mode: "deployed",
        namespace: "default".into(),
        store,
        sim,
        config: engine_config(
            &work.path().join("state"),
            SecretSource::Store {
                default_namespace: "capw-system".into(),
            },
            Boot::Real,
            ClusterCacheConfig::default(),
        ),
        driver: Some(Driver::Pod),
        machines,
        kube_env: Some(env),
        _tmp: tempfile::tempdir().unwrap(),
    };

    // Install by digest, as docs/kubernetes-mode.md says.
    let overlay = image.overlay.to_str().unwrap();
    s.operator_ok(&["apply", "--server-side", "-k", overlay]);
    let path = format!(
        "{}:{}",
        s.env().dir().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    succeeded(
        "deploy/webhook-cert.sh",
        Command::new(repository_root().join("deploy/webhook-cert.sh"))
            .env("KUBECONFIG", s.env().kubeconfig())
            .env("PATH", path)
            .output()
            .unwrap(),
    );
    s.operator_ok(&[
        "-n",
        "capw-system",
        "rollout",
        "status",
        "deployment/capw-controller",
        "--timeout=240s",
    ]);
    let pod: Value = serde_json::from_str(&s.operator_ok(&[
        "-n",
        "capw-system",
        "get",
        "pods",
        "-l",
        "app.kubernetes.io/component=controller",
        "-o",
        "json",
    ]))
    .unwrap();
    let pods = pod["items"].as_array().unwrap();
    assert_eq!(pods.len(), 1, "one controller Pod: {pod:#}");
    assert_eq!(
        pods[0]["spec"]["containers"][0]["image"],
        format!("{}@{}", image.repository, image.digest)
    );

    // The image's binary runs, from the image's root file system (its CA bundle, not this
    // machine's), as the image's user, with no credentials but its service account's.
    let pids = controller_processes();
    assert_eq!(pids.len(), 1, "one process of the image's capw: {pids:?}");
    let pid = pids[0];
    assert_eq!(ids(pid, "Uid:"), vec![UID; 4], "the controller's user ids");
    assert_eq!(ids(pid, "Gid:"), vec![UID; 4], "the controller's group ids");
    let root = PathBuf::from(format!("/proc/{pid}/root"));
    for file in [BINARY, CA_BUNDLE] {
        let relative = file.trim_start_matches('/');
        assert!(
            same_file(&root.join(relative), &image.rootfs.join(relative)),
            "the controller's {file} is not the image's"
        );
    }
    assert!(
        !same_file(&root.join(&CA_BUNDLE[1..]), Path::new(CA_BUNDLE)),
        "the controller reads this machine's CA bundle"
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        !environ.split('\0').any(|v| v.starts_with("KUBECONFIG=")),
        "the controller was given a kubeconfig"
    );
    assert!(
        root.join("var/run/secrets/kubernetes.io/serviceaccount/token")
            .exists(),
        "no service account token in the controller's file system"
    );

    // Providers dropped into ConfigMaps, gzipped, as docs/kubernetes-controller.md says; the
    // token sim-infra is granted, as a Secret beside them.
    s.operator_ok(&[
        "-n",
        "capw-system",
        "create",
        "secret",
        "generic",
        "simcloud",
        &format!("--from-literal=token={TOKEN}"),
    ]);
    let plugins = capw_test_support::plugin_dir();
    let mut quickstart = capw_test_support::example("quickstart")
        .replace("http://127.0.0.1:7480", &s.sim.base_url());
    for (name, file) in PROVIDERS {
        let gz = work.path().join(format!("{name}.wasm.gz"));
        let zipped = Command::new("gzip")
            .arg("-9")
            .arg("-c")
            .arg(plugins.join(file))
            .stdout(std::fs::File::create(&gz).unwrap())
            .status()
            .unwrap();
        assert!(zipped.success(), "gzip {file}: {zipped}");
        s.operator_ok(&[
            "-n",
            "capw-system",
            "create",
            "configmap",
            name,
            &format!("--from-file=component.wasm={}", gz.display()),
        ]);
        let file_source = format!("file:\n      path: {file}");
        assert!(
            quickstart.contains(&file_source),
            "{file} in the quickstart"
        );
        quickstart = quickstart.replace(
            &file_source,
            &format!("configMap: {{namespace: capw-system, name: {name}, key: component.wasm}}"),
        );
    }
    let manifests = work.path().join("quickstart.yaml");
    std::fs::write(&manifests, &quickstart).unwrap();

    // A bad object is refused by the webhook, behind its Service, and nothing is stored.
    let bad = work.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: capw.dev/v1alpha1\nkind: Cluster\nmetadata: {name: bad, namespace: default}\n\
         spec:\n  topology:\n    classRef: {name: sim-kubeadm}\n    version: v1.34.4\n    \
         controlPlane: {replicas: 1}\n    variables:\n      - {name: keyAlgorithm, value: dsa-1024}\n",
    )
    .unwrap();
    s.operator_ok(&["apply", "-f", manifests.to_str().unwrap()]);
    let refused = s
        .operator(&["apply", "-f", bad.to_str().unwrap()])
        .expect_err("the webhook let a Cluster with a variable its class refuses in");
    assert!(
        refused.contains("admission webhook") && refused.contains("variable \"keyAlgorithm\""),
        "refused, but not by capw's webhook naming the field: {refused}"
    );
    assert!(s.store.get(&s.key("bad")).await.unwrap().is_none());

    // The quickstart's clusters, Provisioned, with their kubeconfig Secrets and nodeRefs.
    let version = "v1.34.4";
    let started = Instant::now();
    s.settle(&[
        (
            "alpha",
            Expect::Ready {
                control_plane: 1,
                workers: 2,
                version,
            },
        ),
        (
            "beta",
            Expect::Ready {
                control_plane: 3,
                workers: 2,
                version,
            },
        ),
    ])
    .await;
    eprintln!(
        "deployed: the quickstart's clusters Ready {:?} after they were applied",
        started.elapsed()
    );
    for cluster in ["alpha", "beta"] {
        let c = s.store.get(&s.key(cluster)).await.unwrap().unwrap();
        assert_eq!(c["status"]["phase"], "Provisioned", "{cluster}: {c:#}");
        s.assert_nodes_follow(cluster).await;
        for m in s.machines(cluster).await {
            assert!(
                m["status"]["nodeRef"]["name"].is_string(),
                "{cluster}: a machine without a nodeRef: {m:#}"
            );
        }
    }
    s.assert_cloud_matches(&["alpha", "beta"]).await;

    // Delete the clusters, then uninstall: nothing of capw is left.
    s.operator_ok(&[
        "delete",
        "clusters.capw.dev",
        "--all",
        "-n",
        "default",
        "--wait=false",
    ]);
    s.settle(&[("alpha", Expect::Gone), ("beta", Expect::Gone)])
        .await;
    s.assert_cloud_empty().await;
    let installed = s.labelled_capw(INSTALLED_KINDS);
    for kind in [
        "namespace/",
        "clusterrole.",
        "clusterrolebinding.",
        "rolebinding.",
        "deployment.",
        "service/",
        "validatingwebhookconfiguration.",
    ] {
        assert!(
            installed.iter().any(|o| o.starts_with(kind)),
            "no {kind} labelled app.kubernetes.io/name=capw while installed: {installed:?}"
        );
    }
    s.operator_ok(&["delete", "-k", overlay, "--wait=true", "--timeout=240s"]);
    let left = s.labelled_capw(INSTALLED_KINDS);
    assert!(left.is_empty(), "left after uninstalling: {left:?}");
    let crds = s.operator_ok(&["get", "crds", "-o", "name"]);
    assert!(
        !crds.contains("capw.dev"),
        "CRDs left after uninstalling: {crds}"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !controller_processes().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the controller's process outlived its uninstall"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    s.stop().await;
}
