//! The admission webhook registered with a real kube-apiserver (by URL on loopback): `kubectl
//! apply` of the corpus of tests/admission is refused naming each field, with the message
//! `capw apply` gives in the local mode; a server-side dry run of a managed Cluster creates
//! nothing in the cloud (admission asks only the pure `plan`); a rotated certificate is served
//! without a restart; with the webhook down, the CRDs' CEL rules still refuse what they can
//! say and every other write fails closed.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use capw_kube::webhook::WebhookConfig;
use capw_simcloud::{SimCloud, SimCloudConfig, Timings};
use capw_test_support::admission::{LocalState, admitted, refusal, refused, stored};
use capw_test_support::bounded::{Watchdog, output_within};
use capw_test_support::kube::KubeEnv;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};

use super::{
    CacheConfig, ControllerConfig, EngineConfig, KUBECTL_LIMIT, RequeuePolicy, SecretSource,
    TEST_LIMIT, capw_binary, free_address, wait,
};

/// Where the controller's providers, grants and certificate live.
const SYSTEM: &str = "capw-system";
const CERT_SECRET: &str = "capw-webhook-tls";

/// A CA and the webhook's serving certificate for 127.0.0.1, signed by it.
struct Pki {
    ca: String,
    cert: String,
    key: String,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, name);
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        (leaf.subject_alt_names).push(SanType::IpAddress([127, 0, 0, 1].into()));
        let cert = leaf.signed_by(&key, &Issuer::new(ca, ca_key)).unwrap();
        Pki {
            ca: ca_cert.pem(),
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

/// `kubectl ARGS`, then `-f input` when given: whether it succeeded, and what it printed.
fn kubectl(env: &KubeEnv, args: &[&str], input: Option<&Path>) -> (bool, String) {
    let mut command = env.kubectl();
    command.args(args);
    if let Some(path) = input {
        command.arg("-f").arg(path);
    }
    let out = output_within(&mut command, KUBECTL_LIMIT);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn kubectl_ok(env: &KubeEnv, args: &[&str], input: Option<&Path>) -> String {
    let (ok, text) = kubectl(env, args, input);
    assert!(ok, "kubectl {args:?}: {text}");
    text
}

/// The certificate Secret holding `pki`'s serving pair, created or replaced.
fn write_cert_secret(env: &KubeEnv, dir: &Path, pki: &Pki) {
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert, &pki.cert).unwrap();
    std::fs::write(&key, &pki.key).unwrap();
    let yaml = kubectl_ok(
        env,
        &[
            "create",
            "secret",
            "tls",
            CERT_SECRET,
            "-n",
            SYSTEM,
            &format!("--cert={}", cert.display()),
            &format!("--key={}", key.display()),
            "--dry-run=client",
            "-o",
            "yaml",
        ],
        None,
    );
    let manifest = dir.join("secret.yaml");
    std::fs::write(&manifest, yaml).unwrap();
    kubectl_ok(env, &["apply"], Some(&manifest));
}

/// Registers the webhook at `address`, trusting `ca`, as deploy/webhook.yaml does through a
/// Service.
fn register_webhook(env: &KubeEnv, dir: &Path, address: SocketAddr, ca: &str) {
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca);
    let yaml = format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: capw
webhooks:
  - name: validate.capw.dev
    clientConfig:
      url: https://{address}/validate
      caBundle: {bundle}
    rules:
      - apiGroups: [capw.dev]
        apiVersions: [v1alpha1]
        operations: [CREATE, UPDATE]
        resources: [clusters, clusterclasses, wasmproviders]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 10
"#
    );
    let path = dir.join("webhook.yaml");
    std::fs::write(&path, yaml).unwrap();
    kubectl_ok(env, &["apply"], Some(&path));
}

fn controller_config(dir: &Path, address: SocketAddr) -> ControllerConfig {
    let mut engine = EngineConfig::new(
        capw_test_support::plugin_dir(),
        dir.join("pulled"),
        SecretSource::Store {
            default_namespace: SYSTEM.into(),
        },
    );
    engine.cache_dir =
        Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"));
    ControllerConfig {
        engine,
        provider_namespace: SYSTEM.into(),
        watch_namespace: None,
        identity: "admission".into(),
        leader_election: None,
        sharding: None,
        metrics_address: None,
        health_address: None,
        requeue: RequeuePolicy::default(),
        concurrency: 0,
        cache: CacheConfig::default(),
        webhook: Some(WebhookConfig {
            address,
            cert_secret_namespace: SYSTEM.into(),
            cert_secret_name: CERT_SECRET.into(),
        }),
    }
}

/// The object `file` names as the API server holds it (its spec), or `None`.
fn stored_spec(env: &KubeEnv, file: &Path) -> Option<String> {
    let (ok, text) = kubectl(
        env,
        &["get", "-o", "jsonpath={.spec}", "--ignore-not-found"],
        Some(file),
    );
    (ok && !text.trim().is_empty()).then_some(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_refuses_the_corpus_as_capw_apply_does() {
    let _watchdog = Watchdog::start(TEST_LIMIT);
    capw_test_support::init_tracing();
    // An API server of its own: the webhook configuration is cluster-wide.
    let env = KubeEnv::start();
    env.apply_crds(capw_api::crds()).await;
    let tmp = tempfile::tempdir().unwrap();
    kubectl_ok(&env, &["create", "namespace", SYSTEM], None);
    let token = ["create", "secret", "generic", "simcloud", "-n", SYSTEM];
    kubectl_ok(
        &env,
        &[&token[..], &["--from-literal=token=t"]].concat(),
        None,
    );
    let first = Pki::new("capw webhook CA 1");
    write_cert_secret(&env, tmp.path(), &first);
    let address = free_address();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let client = env.client().await;
    let config = controller_config(tmp.path(), address);
    let controller = tokio::spawn(async move {
        capw_kube::run(client, config, async {
            let _ = stopped.await;
        })
        .await
    });
    register_webhook(&env, tmp.path(), address, &first.ca);
    // A class that is never stored: each dry run of it is a create the webhook must answer.
    let probe = tmp.path().join("probe.yaml");
    let class = admitted()
        .into_iter()
        .find(|c| c.name() == "class.yaml")
        .unwrap();
    let text = std::fs::read_to_string(&class.file).unwrap();
    std::fs::write(&probe, text.replace("sim-kubeadm-small", "probe")).unwrap();
    wait("the webhook answers", || async {
        let dry = ["apply", "--dry-run=server"];
        kubectl(&env, &dry, Some(&probe)).0.then_some(())
    })
    .await;

    // What the corpus is tried over, through the webhook; then its providers are loaded and
    // asked. The managed class's providers call a simcloud of this test (its token is the
    // Secret's), so that a side effect at admission would show in its inventory.
    let sim = SimCloud::start(
        SimCloudConfig::new("t").with_timings(Timings::uniform(Duration::from_millis(5))),
    )
    .await
    .unwrap();
    for (i, path) in stored().iter().enumerate() {
        let files = if path.is_dir() {
            capw_test_support::yaml_files(path)
        } else {
            vec![path.clone()]
        };
        let text: String = (files.iter())
            .map(|f| std::fs::read_to_string(f).unwrap() + "\n---\n")
            .collect();
        let text = if path.to_string_lossy().contains("managed") {
            text.replace("http://127.0.0.1:7480", &sim.base_url())
        } else {
            text
        };
        let file = tmp.path().join(format!("stored-{i}.yaml"));
        std::fs::write(&file, text).unwrap();
        // The webhook judges a Cluster against the ClusterClasses of its cache: one applied in
        // the same command as its class may come before the class reached the cache, and is
        // refused saying the class is not found. Applying again once it has is what a user
        // does.
        wait("the stored examples applied", || async {
            let (ok, text) = kubectl(&env, &["apply"], Some(&file));
            assert!(ok || text.contains("not found"), "kubectl apply: {text}");
            ok.then_some(())
        })
        .await;
    }
    let cases = refused();
    let even = cases
        .iter()
        .find(|c| c.name().contains("cluster-even-control-plane"));
    let even = even.expect("the even control plane case").file.clone();
    wait("the control-plane provider answers the webhook", || async {
        let (_, text) = kubectl(&env, &["apply", "--dry-run=server"], Some(&even));
        text.contains("replicas must be odd").then_some(())
    })
    .await;

    let local = LocalState::with_stored(&capw_binary());
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let (mut by_webhook, mut by_server) = (0, 0);
    for case in &cases {
        let (stored, _, err) = local.apply(&case.file);
        assert!(!stored, "{}: stored in the local mode", case.name());
        let local_why = refusal(&err).unwrap_or_else(|| panic!("{}: {err}", case.name()));

        let before = stored_spec(&env, &case.file);
        let (ok, text) = kubectl(&env, &["apply"], Some(&case.file));
        assert!(!ok, "{}: admitted by the API server: {text}", case.name());
        case.assert_refused_in(&text);
        if text.contains("denied the request") {
            by_webhook += 1;
            assert!(
                text.contains(&local_why),
                "{}: the webhook said {text:?}, capw apply {local_why:?}",
                case.name()
            );
        } else {
            by_server += 1;
            assert!(text.contains("is invalid"), "{}: {text}", case.name());
        }
        assert_eq!(stored_spec(&env, &case.file), before, "{}", case.name());
    }
    eprintln!(
        "{} refused: {by_webhook} by the webhook, {by_server} by the API server (its name rules and the CRDs' CEL rules)",
        cases.len()
    );
    assert!(
        by_webhook >= 30 && by_server >= 4,
        "{by_webhook} / {by_server}"
    );
    for case in admitted() {
        kubectl_ok(&env, &["apply"], Some(&case.file));
    }

    // A server-side dry run of a managed Cluster is admitted and creates nothing in the cloud,
    // while the stored managed Cluster (delta) is made there by the controller's passes.
    let managed = tmp.path().join("epsilon.yaml");
    let delta = std::fs::read_to_string(
        stored()
            .iter()
            .find(|p| p.ends_with("managed-cluster.yaml"))
            .unwrap(),
    )
    .unwrap();
    std::fs::write(&managed, delta.replace("name: delta", "name: epsilon")).unwrap();
    let text = kubectl_ok(&env, &["apply", "--dry-run=server"], Some(&managed));
    assert!(
        text.contains("epsilon") && text.contains("server dry run"),
        "{text}"
    );
    let inventory = || async {
        capw_test_support::simcloud_inventory::<capw_simcloud::model::Inventory>(
            &sim.base_url(),
            "t",
        )
        .await
    };
    wait(
        "the stored managed cluster's control plane is made",
        || async {
            let inv = inventory().await;
            (inv.clusters.get("delta")?.managed_control_planes.len() == 1).then_some(())
        },
    )
    .await;
    let inv = inventory().await;
    assert!(
        !inv.clusters.contains_key("epsilon"),
        "{:?}",
        inv.clusters.get("epsilon")
    );
    assert_eq!(
        inv.clusters.len(),
        1,
        "only delta is in the cloud: {:?}",
        inv.clusters.keys()
    );
    assert!(
        stored_spec(&env, &managed).is_none(),
        "the dry run stored epsilon"
    );

    // Rotation: a new CA and certificate; the API server trusts only the new CA, so its
    // writes pass again only once the webhook serves the new certificate, without a restart.
    let second = Pki::new("capw webhook CA 2");
    write_cert_secret(&env, tmp.path(), &second);
    register_webhook(&env, tmp.path(), address, &second.ca);
    wait("the rotated certificate is served", || async {
        let dry = ["apply", "--dry-run=server"];
        kubectl(&env, &dry, Some(&probe)).0.then_some(())
    })
    .await;
    assert!(
        !controller.is_finished(),
        "the controller restarted or stopped"
    );

    // The webhook down: CEL rules still refuse; everything else fails closed.
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(60), controller)
        .await
        .expect("the controller stops")
        .unwrap()
        .unwrap();
    let digest = cases
        .iter()
        .find(|c| c.name().contains("oci-digest"))
        .unwrap();
    let (ok, text) = kubectl(&env, &["apply"], Some(&digest.file));
    assert!(!ok && text.contains(&digest.says), "{text}");
    let (ok, text) = kubectl(&env, &["apply", "--dry-run=server"], Some(&probe));
    assert!(!ok && text.contains("failed calling webhook"), "{text}");
}
