//! Two hosted control planes on one shared etcd (Kamaji's way): an etcd the operator runs (here a
//! real etcd process of the test, TLS with client certificates, auth on, a root user with a
//! password), described to capw by a Secret of type `capw.dev/datastore`. The host gives each
//! cluster an etcd user whose role reads and writes its own prefix alone and writes the
//! cluster's access into a Secret its API servers mount; etcd's own client (`etcdctl`), with
//! each cluster's certificate, reads that cluster's keys and is refused the other's. The
//! certificates the host minted for the clusters (their Secrets', the datastore client's, the
//! admin kubeconfigs') are renewed two thirds into their validity, made short here, and the
//! API servers roll onto them. Deleting a cluster removes its keys, user and role and leaves the
//! other's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_api::parse_manifests;
use capw_test_support::real_boot::{KUBE_VERSIONS, kube_binaries};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use super::{Expect, Scenario};

/// The root user's password of the test's shared etcd.
const ROOT_PASSWORD: &str = "shared-etcd-root-password";

/// The datastore's Secret.
const DATASTORE: &str = "shared-etcd";

/// How long the host's certificates for the test's clusters are valid: renewed after 100 s,
/// which leaves the rollout onto the new ones 50 s before the old ones expire.
pub(super) const CERTIFICATE_VALIDITY: Duration = Duration::from_secs(150);

fn bin(name: &str) -> PathBuf {
    kube_binaries()
        .join(KUBE_VERSIONS[0])
        .join("bin")
        .join(name)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The shared etcd the operator runs: one member on loopback, serving TLS, trusting client
/// certificates of its CA, with auth on and a root user. Killed when dropped.
struct SharedEtcd {
    dir: tempfile::TempDir,
    endpoint: String,
    child: Child,
}

impl Drop for SharedEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SharedEtcd {
    fn openssl(dir: &Path, args: &str) {
        let args: Vec<&str> = args.split_whitespace().collect();
        capw_test_support::output_ok(
            Command::new("openssl").current_dir(dir).args(&args),
            &format!("openssl {args:?}"),
        );
    }

    /// A key and a certificate `<name>.crt` signed by the CA, for `subject`, with `ext`.
    fn issue(dir: &Path, name: &str, subject: &str, ext: &str) {
        std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
        Self::openssl(
            dir,
            &format!(
                "req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj {subject} \
                 -keyout {name}.key -out {name}.csr"
            ),
        );
        Self::openssl(
            dir,
            &format!(
                "x509 -req -in {name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
                 -extfile {name}.ext -out {name}.crt"
            ),
        );
    }

    fn start() -> SharedEtcd {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        Self::openssl(
            d,
            "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
             -subj /CN=shared-etcd-ca -keyout ca.key -out ca.crt",
        );
        Self::issue(
            d,
            "server",
            "/CN=shared-etcd",
            // Client auth too, as kubeadm's etcd serving certificates have it: etcd's JSON
            // gateway reaches its own gRPC server presenting this certificate.
            "subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth, clientAuth\n",
        );
        Self::issue(
            d,
            "root",
            "/CN=root",
            "keyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\n",
        );
        let (client, peer) = (free_port(), free_port());
        let endpoint = format!("https://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let log = std::fs::File::create(d.join("etcd.log")).unwrap();
        let child = Command::new(bin("etcd"))
            .current_dir(d)
            .args(["--name", "shared", "--data-dir", "data"])
            .arg(format!("--listen-client-urls={endpoint}"))
            .arg(format!("--advertise-client-urls={endpoint}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=shared={peer_url}"))
            .args(["--cert-file=server.crt", "--key-file=server.key"])
            .args(["--trusted-ca-file=ca.crt", "--client-cert-auth"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let etcd = SharedEtcd {
            dir,
            endpoint,
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !etcd.as_root(&["endpoint", "health"]).status.success() {
            assert!(
                Instant::now() < deadline,
                "the shared etcd never became healthy: {}",
                std::fs::read_to_string(etcd.dir.path().join("etcd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        for args in [
            vec![
                "user",
                "add",
                "root",
                &format!("--new-user-password={ROOT_PASSWORD}"),
            ],
            vec!["user", "grant-role", "root", "root"],
            vec!["auth", "enable"],
        ] {
            let out = etcd.as_root(&args);
            assert!(
                out.status.success(),
                "etcdctl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        etcd
    }

    fn file(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// etcdctl with the client certificate `cert` and key `key` (files).
    fn etcdctl(&self, cert: &str, key: &str, args: &[&str]) -> Output {
        Command::new(bin("etcdctl"))
            .arg(format!("--endpoints={}", self.endpoint))
            .arg(format!("--cacert={}", self.file("ca.crt")))
            .arg(format!("--cert={cert}"))
            .arg(format!("--key={key}"))
            .args(args)
            .output()
            .unwrap()
    }

    fn as_root(&self, args: &[&str]) -> Output {
        self.etcdctl(&self.file("root.crt"), &self.file("root.key"), args)
    }

    /// The keys under `prefix`, read as root.
    fn keys(&self, prefix: &str) -> Vec<String> {
        let out = self.as_root(&["get", "--prefix", prefix, "--keys-only"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The datastore's Secret, as an operator writes it: where it is, its CA (with the key the
    /// host signs the clusters' certificates with) and the root user's password.
    fn secret(&self, namespace: &str) -> Value {
        let read = |f: &str| std::fs::read_to_string(self.dir.path().join(f)).unwrap();
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": DATASTORE, "namespace": namespace},
            "type": "capw.dev/datastore",
            "stringData": {
                "endpoints": self.endpoint,
                "ca.crt": read("ca.crt"),
                "ca.key": read("ca.key"),
                "username": "root",
                "password": ROOT_PASSWORD,
            },
        })
    }
}

impl Scenario {
    /// The hosted example's providers and class, the class's datastore the shared one, and
    /// Clusters `names` of one API server and no workers.
    fn on_shared_datastore(&self, names: &[&str]) -> Vec<Value> {
        let providers = ["sim-infra", "kubeadm-bootstrap", "hosted-control-plane"];
        let text = crate::common::example_in("hosted", &self.namespace, &self.sim, &providers)
            .replace(
                "datastore: {type: dedicated}",
                &format!("datastore: {{type: shared, name: {DATASTORE}}}"),
            );
        let mut objects: Vec<Value> = parse_manifests(&text)
            .unwrap()
            .iter()
            .map(|o| o.to_json().unwrap())
            .filter(|o| o["kind"] != "Cluster")
            .collect();
        assert!(
            objects.iter().any(|o| o["kind"] == "ClusterClass"
                && o["spec"]["controlPlane"]["config"]["datastore"]["type"] == "shared"),
            "the class's datastore is not the shared one"
        );
        for name in names {
            objects.push(json!({
                "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
                "metadata": {"name": name, "namespace": self.namespace},
                "spec": {"topology": {
                    "classRef": {"name": "hosted"},
                    "version": KUBE_VERSIONS[0],
                    "controlPlane": {"replicas": 1},
                }},
            }));
        }
        objects
    }

    /// The files of `cluster`'s access to the shared datastore, from the Secret the host wrote:
    /// its client certificate and key.
    async fn datastore_client(&self, cluster: &str, dir: &Path) -> (String, String, String) {
        let key = capw_engine::store::ObjectKey::namespaced(
            "Secret",
            &self.namespace,
            &format!("{cluster}-datastore"),
        );
        let secret = self.store.get(&key).await.unwrap().unwrap();
        let item = |k: &str| {
            STANDARD
                .decode(secret["data"][k].as_str().unwrap_or_default())
                .unwrap()
        };
        let (cert, client_key) = (
            dir.join(format!("{cluster}.crt")),
            dir.join(format!("{cluster}.key")),
        );
        std::fs::write(&cert, item("client.crt")).unwrap();
        std::fs::write(&client_key, item("client.key")).unwrap();
        let prefix = String::from_utf8(item("prefix")).unwrap();
        (
            cert.display().to_string(),
            client_key.display().to_string(),
            prefix,
        )
    }
}

/// Creates `object` through a control plane that has just become ready. A new API server answers
/// before its bootstrap controller has made the `default` namespace (its readiness does not wait
/// for it), so a create at once can be told `namespaces "default" not found`, more so on a busy
/// machine; a client retries that, as here, for a bounded time. Any other error fails at once.
async fn create_once_served(api: &Api<ConfigMap>, object: &ConfigMap) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match api.create(&PostParams::default(), object).await {
            Ok(_) => return,
            Err(kube::Error::Api(e)) if e.code == 404 && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => panic!("creating {:?}: {e}", object.metadata.name),
        }
    }
}

/// The data of the Secrets of `cluster` whose certificates the host renews: its certificate
/// Secrets, its access to the datastore, its admin kubeconfig.
async fn renewable(s: &Scenario, cluster: &str) -> Vec<(String, Value)> {
    let mut data = Vec::new();
    for suffix in [
        "apiserver-certs",
        "controller-manager-certs",
        "datastore",
        "kubeconfig",
    ] {
        let name = format!("{cluster}-{suffix}");
        let key = capw_engine::store::ObjectKey::namespaced("Secret", &s.namespace, &name);
        let secret = s.store.get(&key).await.unwrap();
        let secret = secret.unwrap_or_else(|| panic!("no Secret {name}"));
        data.push((name, secret["data"].clone()));
    }
    data
}

/// The certificate the server at `endpoint` (`host:port`) presents, as PEM: what `openssl
/// s_client` receives, a client we did not write.
fn served_certificate(endpoint: &str) -> String {
    let out = capw_test_support::output_ok(
        Command::new("sh").args([
            "-c",
            &format!("openssl s_client -connect {endpoint} </dev/null 2>/dev/null | openssl x509"),
        ]),
        "openssl s_client",
    );
    String::from_utf8(out).unwrap()
}

/// Waits for every certificate of `cluster` to be renewed, then for its API servers to roll
/// onto them: the new serving certificate is the one served, the cluster is Ready through its
/// renewed admin kubeconfig, and the datastore's renewed client certificate reads its keys.
async fn renewed(s: &mut Scenario, etcd: &SharedEtcd, cluster: &str, prefix: &str) {
    let before = renewable(s, cluster).await;
    let deadline = Instant::now() + CERTIFICATE_VALIDITY + Duration::from_secs(60);
    loop {
        let now = renewable(s, cluster).await;
        let kept: Vec<&str> = (before.iter().zip(&now))
            .filter(|(b, n)| b.1 == n.1)
            .map(|(b, _)| b.0.as_str())
            .collect();
        if kept.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not renewed after {CERTIFICATE_VALIDITY:?} of validity and more: {kept:?}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    for deployment in ["kube-apiserver", "kube-controller-manager"] {
        s.management_kubectl(&[
            "rollout",
            "status",
            &format!("deployment/{cluster}-{deployment}"),
            "--timeout=120s",
        ]);
    }
    let ready = Expect::Ready {
        control_plane: 0,
        workers: 0,
        version: KUBE_VERSIONS[0],
    };
    s.settle(&[(cluster, ready)]).await;
    s.assert_service_at(cluster, KUBE_VERSIONS[0]).await;

    let c = s.store.get(&s.key(cluster)).await.unwrap().unwrap();
    let endpoint = &c["status"]["controlPlaneEndpoint"];
    let endpoint = format!(
        "{}:{}",
        endpoint["host"].as_str().unwrap(),
        endpoint["port"]
    );
    let (name, data) = &renewable(s, cluster).await[0];
    let renewed_serving = String::from_utf8(
        STANDARD
            .decode(data["apiserver.crt"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        served_certificate(&endpoint).trim(),
        renewed_serving.trim(),
        "{cluster}'s API server does not serve the renewed certificate of {name}"
    );

    let files = tempfile::tempdir().unwrap();
    let (cert, key, _) = s.datastore_client(cluster, files.path()).await;
    let mine = etcd.etcdctl(
        &cert,
        &key,
        &["get", "--prefix", &format!("{prefix}/"), "--keys-only"],
    );
    assert!(
        String::from_utf8_lossy(&mine.stdout)
            .contains(&format!("{prefix}/configmaps/default/{cluster}-marker")),
        "{cluster}'s renewed datastore certificate does not read its keys: {}",
        String::from_utf8_lossy(&mine.stderr)
    );
}

pub(super) async fn run(mut s: Scenario) {
    let etcd = SharedEtcd::start();
    s.store.create(etcd.secret(&s.namespace)).await.unwrap();
    s.apply(s.on_shared_datastore(&["epsilon", "zeta"])).await;
    let ready = Expect::Ready {
        control_plane: 0,
        workers: 0,
        version: KUBE_VERSIONS[0],
    };
    s.settle(&[("epsilon", ready), ("zeta", ready)]).await;
    for cluster in ["epsilon", "zeta"] {
        s.assert_service_at(cluster, KUBE_VERSIONS[0]).await;
        // Something of the cluster's own, written through its API server, lands in its prefix.
        let api: Api<ConfigMap> = Api::namespaced(s.workload(cluster, None).await, "default");
        let marker: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": format!("{cluster}-marker")},
            "data": {"cluster": cluster},
        }))
        .unwrap();
        create_once_served(&api, &marker).await;
    }

    let files = tempfile::tempdir().unwrap();
    let (e_cert, e_key, e_prefix) = s.datastore_client("epsilon", files.path()).await;
    let (z_cert, z_key, z_prefix) = s.datastore_client("zeta", files.path()).await;
    assert_eq!(e_prefix, format!("/capw/{}/epsilon", s.namespace));
    assert_eq!(z_prefix, format!("/capw/{}/zeta", s.namespace));
    for (cluster, cert, key, own, other) in [
        ("epsilon", &e_cert, &e_key, &e_prefix, &z_prefix),
        ("zeta", &z_cert, &z_key, &z_prefix, &e_prefix),
    ] {
        let mine = etcd.etcdctl(
            cert,
            key,
            &["get", "--prefix", &format!("{own}/"), "--keys-only"],
        );
        assert!(
            mine.status.success(),
            "{cluster} reading its own keys: {}",
            String::from_utf8_lossy(&mine.stderr)
        );
        let listed = String::from_utf8_lossy(&mine.stdout);
        assert!(
            listed.contains(&format!("{own}/configmaps/default/{cluster}-marker")),
            "{cluster}'s marker is not under its prefix: {listed}"
        );
        for args in [
            vec!["get", "--prefix", &format!("{other}/"), "--keys-only"],
            vec!["put", &format!("{other}/intruder"), "x"],
            vec!["get", "--prefix", "/", "--keys-only"],
        ] {
            let theirs = etcd.etcdctl(cert, key, &args);
            let said = String::from_utf8_lossy(&theirs.stderr);
            assert!(
                !theirs.status.success() && said.contains("permission denied"),
                "{cluster}'s credentials were not refused etcdctl {args:?}: {said} {}",
                String::from_utf8_lossy(&theirs.stdout)
            );
        }
    }

    renewed(&mut s, &etcd, "zeta", &z_prefix).await;

    // Deleting epsilon removes its keys, user and role; zeta keeps its own and keeps serving.
    s.store.delete(&s.key("epsilon")).await.unwrap();
    s.settle(&[("epsilon", Expect::Gone), ("zeta", ready)])
        .await;
    assert_eq!(etcd.keys(&format!("{e_prefix}/")), Vec::<String>::new());
    assert!(!etcd.keys(&format!("{z_prefix}/")).is_empty());
    let users = etcd.as_root(&["user", "list"]);
    let users = String::from_utf8_lossy(&users.stdout);
    let user = |c: &str| format!("capw:{}:{c}", s.namespace);
    assert!(!users.contains(&user("epsilon")), "{users}");
    assert!(users.contains(&user("zeta")), "{users}");
    let roles = String::from_utf8_lossy(&etcd.as_root(&["role", "list"]).stdout).into_owned();
    assert!(!roles.contains(&user("epsilon")), "{roles}");
    s.assert_service_at("zeta", KUBE_VERSIONS[0]).await;

    s.store.delete(&s.key("zeta")).await.unwrap();
    s.settle(&[("zeta", Expect::Gone)]).await;
    assert_eq!(etcd.keys("/capw/"), Vec::<String>::new());
    s.stop().await;
}
