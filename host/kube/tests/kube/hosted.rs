//! Hosted control planes through the controller, against the real API server: the objects a
//! hosted plan names are applied beside the Cluster, owned by it and managed by capw, with
//! certificate Secrets the host minted; their readiness reaches the plan; an object a later
//! plan drops is pruned; a plan naming an object outside the hosted shape's bounds is refused
//! whole, with nothing of it applied; the Cluster's deletion deletes them all.
//!
//! The plans come from `scripted-hosted` (tests/plugins/scripted-hosted), which answers the
//! objects its class's config lists, and from the real `hosted-control-plane` provider
//! (plugins/hosted-control-plane), which is also scaled and upgraded here. The test API server runs no kube-controller-manager, so
//! no Deployment ever gets a status of its own: where the test needs one rolled out, it
//! writes the status a Deployment controller would (`roll_out`), standing in for it.

use super::*;
use capw_engine::store::management::{HOSTED_CLUSTER_LABEL, HOSTED_FIELD_MANAGER};

/// The providers and a class `name` whose control plane is `scripted-hosted` answering
/// `config`.
fn class(w: &World, name: &str, config: &Value) -> Vec<Value> {
    class_of(
        w,
        name,
        "scripted-hosted",
        "capw_scripted_hosted_provider.wasm",
        config,
    )
}

/// The providers and a class `name` whose control plane is `provider` (component `file`)
/// with `config`.
fn class_of(w: &World, name: &str, provider: &str, file: &str, config: &Value) -> Vec<Value> {
    let ns = &w.namespace;
    vec![
        json!({
            "apiVersion": capw_api::API_VERSION, "kind": "WasmProvider",
            "metadata": {"name": format!("{ns}-sim-infra")},
            "spec": {
                "source": {"file": {"path": "capw_sim_infra.wasm"}},
                "grants": {
                    "http": [w.sim.base_url()],
                    "secrets": [{"name": "simcloud-token", "secretRef": {"name": "simcloud", "key": "token"}}],
                },
            },
        }),
        json!({
            "apiVersion": capw_api::API_VERSION, "kind": "WasmProvider",
            "metadata": {"name": format!("{ns}-{provider}")},
            "spec": {"source": {"file": {"path": file}}},
        }),
        json!({
            "apiVersion": capw_api::API_VERSION, "kind": "ClusterClass",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "infrastructure": {
                    "provider": format!("{ns}-sim-infra"),
                    "config": {"controlPlaneEndpoint": "none", "endpoint": w.sim.base_url()},
                },
                "controlPlane": {"provider": format!("{ns}-{provider}"), "config": config},
            },
        }),
    ]
}

fn cluster(w: &World, name: &str, class: &str) -> Value {
    json!({
        "apiVersion": capw_api::API_VERSION, "kind": "Cluster",
        "metadata": {"name": name, "namespace": w.namespace},
        "spec": {"topology": {"classRef": {"name": class}, "version": "v1.34.4"}},
    })
}

fn deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 2\n  \
         selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: \
         {{app: {name}}}\n    spec:\n      containers:\n        - {{name: apiserver, image: \
         registry.k8s.io/kube-apiserver:v1.34.4}}\n"
    )
}

fn config_map(name: &str, namespace: Option<&str>) -> String {
    let ns = namespace.map_or(String::new(), |ns| format!("  namespace: {ns}\n"));
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{ns}data:\n  a: b\n")
}

/// Applies `objects` with kubectl, as an admin would.
fn apply(w: &World, objects: &[Value]) {
    static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = w.tmp.path().join(format!("hosted-{n}.json"));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&path, list.to_string()).unwrap();
    w.kubectl(&["apply", "-f", path.to_str().unwrap()]);
}

/// The object of `kind` (`deployments`, `configmaps`, …) `name` in the world's namespace.
fn get(w: &World, kind: &str, name: &str) -> Option<Value> {
    let out = output_within(
        w.env.kubectl().args([
            "get",
            kind,
            name,
            "-n",
            &w.namespace,
            "-o",
            "json",
            "--show-managed-fields",
        ]),
        KUBECTL_LIMIT,
    );
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// Every object of the hosted kinds labelled for `cluster`, as `Kind/name`.
fn labelled(w: &World, cluster: &str) -> Vec<String> {
    let out = w.kubectl(&[
        "get",
        "deployments,statefulsets,services,secrets,configmaps",
        "-n",
        &w.namespace,
        "-l",
        &format!("{HOSTED_CLUSTER_LABEL}={cluster}"),
        "-o",
        "json",
    ]);
    let list: Value = serde_json::from_str(&out).unwrap();
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    names.sort();
    names
}

/// Writes the status a Deployment or StatefulSet controller would once every replica is
/// updated and available: the stand-in for the kube-controller-manager the test API server
/// lacks.
async fn roll_out_kind(w: &World, kind: &str, name: &str) {
    let (plural, group) = match kind {
        "Deployment" => ("deployments", "apps"),
        _ => ("statefulsets", "apps"),
    };
    let o = get(w, plural, name).unwrap_or_else(|| panic!("no {kind} {name}"));
    let replicas = o["spec"]["replicas"].as_i64().unwrap_or(1);
    let mut status = json!({
        "observedGeneration": o["metadata"]["generation"],
        "replicas": replicas, "updatedReplicas": replicas,
        "readyReplicas": replicas, "availableReplicas": replicas,
    });
    if kind == "StatefulSet" {
        status["currentReplicas"] = json!(replicas);
    }
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        w.client.clone(),
        &w.namespace,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(group, "v1", kind)),
    );
    api.patch_status(
        name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"status": status})),
    )
    .await
    .unwrap();
}

/// Gives the LoadBalancer Service `name` the address `ip`, as the management cluster's load
/// balancer would: the stand-in for the controller the test API server lacks.
async fn load_balance(w: &World, name: &str, ip: &str) {
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        w.client.clone(),
        &w.namespace,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk("", "v1", "Service")),
    );
    api.patch_status(
        name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"status": {"loadBalancer": {"ingress": [{"ip": ip}]}}})),
    )
    .await
    .unwrap();
}

async fn roll_out(w: &World, name: &str) {
    roll_out_kind(w, "Deployment", name).await;
}

async fn control_plane_ready(w: &World, name: &str) -> Value {
    let c = w.get("Cluster", name).await.unwrap();
    condition(&c, "ControlPlaneReady").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hosted_plan_is_applied_owned_rolled_out_pruned_and_deleted() {
    let w = World::new("capw-hosted").await;
    let replica = w.start(w.config("solo", None));
    let config = json!({
        "manifests": [deployment("h1-apiserver"), config_map("h1-extra", None)],
        "certificateSecrets": [{"name": "h1-certs", "sans": ["h1-apiserver.example", "10.96.0.1"]}],
        "endpoint": "h1-apiserver.example:6443",
    });
    let mut objects = class(&w, "hosted", &config);
    objects.push(cluster(&w, "h1", "hosted"));
    apply(&w, &objects);

    let want = [
        "ConfigMap/h1-extra",
        "Deployment/h1-apiserver",
        "Secret/h1-certs",
    ];
    wait("the hosted objects applied", || async {
        (labelled(&w, "h1") == want).then_some(())
    })
    .await;
    let uid = w.get("Cluster", "h1").await.unwrap()["metadata"]["uid"].clone();
    for (kind, name) in [
        ("deployments", "h1-apiserver"),
        ("configmaps", "h1-extra"),
        ("secrets", "h1-certs"),
    ] {
        let o = get(&w, kind, name).unwrap();
        let owner = &o["metadata"]["ownerReferences"][0];
        assert_eq!(
            (&owner["kind"], &owner["name"], &owner["uid"]),
            (&json!("Cluster"), &json!("h1"), &uid),
            "{name}"
        );
        let managers: Vec<&str> = o["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["operation"] == "Apply")
            .filter_map(|f| f["manager"].as_str())
            .collect();
        assert_eq!(managers, [HOSTED_FIELD_MANAGER], "{name}");
    }
    // The minted Secret holds the serving certificate and the CA's certificate, not its key.
    let certs = get(&w, "secrets", "h1-certs").unwrap();
    let mut keys: Vec<&str> = certs["data"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["ca.crt", "tls.crt", "tls.key"]);

    // Not rolled out: the Cluster waits, naming the Deployment.
    let cond = wait("the control plane waiting for its Deployment", || async {
        let c = control_plane_ready(&w, "h1").await;
        (c["reason"] == "RollingOut" && c["message"].as_str()?.contains("Deployment h1-apiserver"))
            .then_some(c)
    })
    .await;
    assert_eq!(cond["status"], "False", "{cond}");
    // No Deployment controller runs here: the host says so rather than counting replicas.
    assert!(
        cond["message"]
            .as_str()
            .unwrap()
            .contains("its controller has not observed generation 1 yet"),
        "{cond}"
    );

    // Rolled out: the plan is told, and the Cluster is ready.
    roll_out(&w, "h1-apiserver").await;
    let c = w.wait_ready("h1").await;
    assert_eq!(condition(&c, "ControlPlaneReady")["status"], "True");

    // A plan without the ConfigMap: it is pruned, the rest stays as it was.
    let before =
        get(&w, "deployments", "h1-apiserver").unwrap()["metadata"]["resourceVersion"].clone();
    let dropped = json!({
        "manifests": [deployment("h1-apiserver")],
        "certificateSecrets": config["certificateSecrets"],
        "endpoint": config["endpoint"],
    });
    apply(&w, &class(&w, "hosted", &dropped)[2..]);
    wait("the dropped ConfigMap pruned", || async {
        (labelled(&w, "h1") == ["Deployment/h1-apiserver", "Secret/h1-certs"]).then_some(())
    })
    .await;
    let after =
        get(&w, "deployments", "h1-apiserver").unwrap()["metadata"]["resourceVersion"].clone();
    assert_eq!(before, after, "an unchanged object is not applied again");

    // Deleted with the Cluster, by capw (no garbage collector runs here).
    w.delete_cluster("h1").await;
    assert_eq!(labelled(&w, "h1"), Vec::<String>::new());
    replica.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hosted_plan_out_of_bounds_is_refused_whole() {
    let w = World::new("capw-hosted-bounds").await;
    let replica = w.start(w.config("solo", None));
    let role_binding = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  \
                        name: h2-admin\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: \
                        ClusterRole, name: cluster-admin}\nsubjects: []\n";
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: h2-tenant\n";
    let cases = [
        (
            role_binding.to_owned(),
            "rbac.authorization.k8s.io/v1 RoleBinding h2-admin): not a kind a hosted control plane may apply",
        ),
        (
            namespace.to_owned(),
            "(v1 Namespace h2-tenant): not a kind a hosted control plane may apply",
        ),
        (
            config_map("h2-elsewhere", Some("kube-system")),
            "(v1 ConfigMap h2-elsewhere): metadata.namespace is \"kube-system\"",
        ),
    ];
    let mut first = true;
    for (offender, want) in cases {
        // An allowed object first: the refusal must keep it from being applied too.
        let config = json!({"manifests": [config_map("h2-fine", None), offender]});
        let mut objects = class(&w, "bounds", &config);
        if first {
            objects.push(cluster(&w, "h2", "bounds"));
            first = false;
        }
        apply(&w, &objects);
        let cond = wait(&format!("the refusal naming {want}"), || async {
            let c = control_plane_ready(&w, "h2").await;
            (c["reason"] == "InvalidAnswer" && c["message"].as_str()?.contains(want)).then_some(c)
        })
        .await;
        assert!(
            cond["message"]
                .as_str()
                .unwrap()
                .contains("nothing of it applied"),
            "{cond}"
        );
        assert_eq!(labelled(&w, "h2"), Vec::<String>::new(), "{want}");
        assert!(get(&w, "configmaps", "h2-fine").is_none());
    }
    assert!(get(&w, "namespaces", "h2-tenant").is_none());
    let out = output_within(
        w.env
            .kubectl()
            .args(["get", "configmap", "h2-elsewhere", "-n", "kube-system"]),
        KUBECTL_LIMIT,
    );
    assert!(
        !out.status.success(),
        "the ConfigMap in kube-system was applied"
    );
    w.delete_cluster("h2").await;
    replica.stop().await;
}

/// The images of Deployment or StatefulSet `name`'s containers.
fn images_of(w: &World, plural: &str, name: &str) -> Vec<String> {
    let o = get(w, plural, name).unwrap();
    o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["image"].as_str().unwrap().to_owned())
        .collect()
}

/// Rolls out every workload of the hosted control plane of `cluster` (the stand-in for the
/// management cluster's controllers and kubelets).
async fn roll_out_all(w: &World, cluster: &str) {
    roll_out(w, &format!("{cluster}-kube-apiserver")).await;
    roll_out(w, &format!("{cluster}-kube-controller-manager")).await;
    roll_out_kind(w, "StatefulSet", &format!("{cluster}-etcd")).await;
}

/// plugins/hosted-control-plane through the controller: its objects applied with the
/// certificates it asks for, scaled by the Cluster's replicas, upgraded one minor by rolling
/// its Deployments' images, and deleted with the Cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_hosted_provider_is_applied_scaled_upgraded_and_deleted() {
    let w = World::new("capw-hosted-cp").await;
    let ns = w.namespace.clone();
    let replica = w.start(w.config("solo", None));
    let mut objects = class_of(
        &w,
        "hosted",
        "hosted-control-plane",
        "capw_hosted_control_plane.wasm",
        &json!({}),
    );
    let mut c = cluster(&w, "h3", "hosted");
    c["spec"]["topology"]["controlPlane"] = json!({"replicas": 2});
    objects.push(c);
    apply(&w, &objects);

    // Behind a load balancer (the default), the API servers wait for its address.
    wait("the API servers' Service", || async {
        get(&w, "services", "h3-apiserver")
    })
    .await;
    let service = get(&w, "services", "h3-apiserver").unwrap();
    assert_eq!(service["spec"]["type"], "LoadBalancer");
    wait(
        "the control plane waiting for its load balancer",
        || async {
            let c = w.get("Cluster", "h3").await?;
            condition(&c, "controlplane.capw.dev/ObjectsReady")["message"]
                .as_str()?
                .contains("wait for the address of Service h3-apiserver's load balancer")
                .then_some(())
        },
    )
    .await;
    assert!(get(&w, "deployments", "h3-kube-apiserver").is_none());
    // A loopback address nothing listens on: the host's connections are refused at once.
    load_balance(&w, "h3-apiserver", "127.0.0.98").await;
    wait("the hosted control plane's objects", || async {
        (labelled(&w, "h3") == crate::common::hosted_control_plane_objects("h3")).then_some(())
    })
    .await;
    let args = get(&w, "deployments", "h3-kube-apiserver").unwrap()["spec"]["template"]["spec"]
        ["containers"][0]["args"]
        .to_string();
    assert!(args.contains("--advertise-address=127.0.0.98"), "{args}");
    let api = get(&w, "deployments", "h3-kube-apiserver").unwrap();
    assert_eq!(api["spec"]["replicas"], 2);
    assert_eq!(
        images_of(&w, "deployments", "h3-kube-apiserver"),
        ["registry.k8s.io/kube-apiserver:v1.34.4"]
    );
    // The API servers' certificate names their Service, as the provider asked; the controller
    // manager holds the cluster CA's key for its signer; no other Secret does.
    let certs = get(&w, "secrets", "h3-apiserver-certs").unwrap();
    assert!(certs["data"].get("ca.key").is_none());
    assert!(certs["data"].get("sa.key").is_some());
    let signer = get(&w, "secrets", "h3-controller-manager-certs").unwrap();
    assert!(signer["data"].get("ca.key").is_some());

    roll_out_all(&w, "h3").await;
    let ready = w.wait_ready("h3").await;
    assert_eq!(
        ready["status"]["controlPlane"]["version"], "v1.34.4",
        "{ready}"
    );
    assert_eq!(
        ready["status"]["controlPlaneEndpoint"],
        json!({"host": "127.0.0.98", "port": 6443}),
        "{ready}"
    );

    // Scaled: the API servers' Deployment follows the Cluster's replicas.
    w.kubectl(&[
        "patch",
        "clusters.capw.dev",
        "h3",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"topology":{"controlPlane":{"replicas":3}}}}"#,
    ]);
    wait("three API servers", || async {
        (get(&w, "deployments", "h3-kube-apiserver")?["spec"]["replicas"] == 3).then_some(())
    })
    .await;
    roll_out_all(&w, "h3").await;

    // Upgraded one minor: the Deployments roll to the new images; the Cluster shows the new
    // version once they are rolled out.
    w.kubectl(&[
        "patch",
        "clusters.capw.dev",
        "h3",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"topology":{"version":"v1.35.4"}}}"#,
    ]);
    wait("the API servers' image at v1.35.4", || async {
        (images_of(&w, "deployments", "h3-kube-apiserver")
            == ["registry.k8s.io/kube-apiserver:v1.35.4"])
        .then_some(())
    })
    .await;
    assert_eq!(
        images_of(&w, "deployments", "h3-kube-controller-manager"),
        ["registry.k8s.io/kube-controller-manager:v1.35.4"]
    );
    roll_out_all(&w, "h3").await;
    wait("the Cluster at v1.35.4", || async {
        let c = w.get("Cluster", "h3").await?;
        (c["status"]["controlPlane"]["version"] == "v1.35.4"
            && condition(&c, "Ready")["status"] == "True")
            .then_some(())
    })
    .await;

    w.delete_cluster("h3").await;
    assert_eq!(labelled(&w, "h3"), Vec::<String>::new());
    replica.stop().await;
}
