//! Manifest parsing, round trips and CRD generation, through the public API only.

use capw_api::{
    MachineRole, ManifestErrorReason, Object, ProviderSource, PullPolicy, crds, crds_yaml,
    parse_manifests, write_manifests,
};

const DEMO: &str = include_str!("fixtures/demo.yaml");

fn object_doc(kind: &str, body: &str) -> String {
    format!("apiVersion: capw.dev/v1alpha1\nkind: {kind}\nmetadata:\n  name: x\n{body}")
}

fn reason_of(yaml: &str) -> (usize, ManifestErrorReason) {
    let err = parse_manifests(yaml).expect_err("must be refused");
    (err.document, err.reason)
}

#[test]
fn parses_every_kind_in_file_order() {
    let objects = parse_manifests(DEMO).expect("demo parses");
    let kinds: Vec<_> = objects.iter().map(Object::kind).collect();
    assert_eq!(
        kinds,
        [
            "WasmProvider",
            "WasmProvider",
            "WasmProvider",
            "ClusterClass",
            "Cluster",
            "Machine"
        ]
    );
    let Object::WasmProvider(oci) = &objects[1] else {
        panic!("provider expected")
    };
    let ProviderSource::Oci(source) = &oci.spec.source else {
        panic!("oci expected")
    };
    assert_eq!(source.pull_policy, PullPolicy::Always);
    let Object::Machine(machine) = &objects[5] else {
        panic!("machine expected")
    };
    assert_eq!(machine.spec.role, MachineRole::Init);
    assert!(machine.status.as_ref().is_some_and(|s| s.ready));
    assert_eq!(objects[4].name(), "demo");
    assert_eq!(objects[4].namespace(), Some("default"));
}

#[test]
fn round_trips_through_json_and_yaml() {
    let objects = parse_manifests(DEMO).expect("demo parses");
    let yaml = write_manifests(&objects).expect("writes");
    assert_eq!(parse_manifests(&yaml).expect("re-parses"), objects);
    for object in &objects {
        let json = object.to_json().expect("json");
        assert_eq!(json["apiVersion"], "capw.dev/v1alpha1");
        let text = serde_json::to_string(&json).expect("text");
        assert_eq!(&parse_manifests(&text).expect("JSON is YAML")[0], object);
    }
}

#[test]
fn skips_empty_documents() {
    let yaml = format!(
        "---\n---\n{}",
        object_doc("WasmProvider", "spec:\n  source: {file: {path: a.wasm}}\n")
    );
    assert_eq!(parse_manifests(&yaml).expect("parses").len(), 1);
}

#[test]
fn refuses_unknown_spec_field_with_its_path() {
    let yaml = DEMO.replace("          replicas: 2\n", "          replicsa: 2\n");
    let err = parse_manifests(&yaml).expect_err("typo refused");
    assert_eq!(err.document, 5);
    assert_eq!(err.kind.as_deref(), Some("Cluster"));
    assert_eq!(err.name.as_deref(), Some("demo"));
    let ManifestErrorReason::Field { path, source } = &err.reason else {
        panic!("{err}")
    };
    assert_eq!(path, "spec.topology.workers.machineDeployments[0].replicsa");
    assert!(
        source.to_string().contains("unknown field `replicsa`"),
        "{source}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with("document 5 (Cluster \"demo\"): spec.topology"),
        "{text}"
    );
}

#[test]
fn refuses_unknown_top_level_and_metadata_fields() {
    let (_, reason) = reason_of(&object_doc("Machine", "specc: {}\n"));
    assert!(
        matches!(reason, ManifestErrorReason::Field { .. }),
        "{reason}"
    );
    let yaml = "apiVersion: capw.dev/v1alpha1\nkind: Cluster\nmetadata: {name: a, namspace: b}\n";
    let (_, reason) = reason_of(yaml);
    assert!(matches!(reason, ManifestErrorReason::UnknownMetadataField(f) if f == "namspace"));
}

#[test]
fn refuses_two_sources_at_once() {
    let body = "spec:\n  source: {file: {path: a}, oci: {reference: r}}\n";
    let (_, reason) = reason_of(&object_doc("WasmProvider", body));
    let ManifestErrorReason::Field { path, .. } = reason else {
        panic!("field error")
    };
    assert_eq!(path, "spec.source");
}

#[test]
fn refuses_wrong_type_with_path() {
    let yaml = DEMO.replace(
        "controlPlane: {replicas: 3}",
        "controlPlane: {replicas: three}",
    );
    let err = parse_manifests(&yaml).expect_err("bad type");
    let ManifestErrorReason::Field { path, .. } = &err.reason else {
        panic!("{err}")
    };
    assert_eq!(path, "spec.topology.controlPlane.replicas");
}

#[test]
fn refuses_unknown_kind_and_api_version() {
    let (doc, reason) = reason_of(&format!(
        "{}---\n{}",
        object_doc(
            "Machine",
            "spec: {clusterName: c, role: Worker, pool: p, version: v1.34.1, idempotencyKey: k}\n"
        ),
        object_doc("MachineSet", "spec: {}\n")
    ));
    assert_eq!(doc, 2);
    assert!(matches!(reason, ManifestErrorReason::UnknownKind(k) if k == "MachineSet"));
    let yaml = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: a}\n";
    let (_, reason) = reason_of(yaml);
    assert!(matches!(
        reason,
        ManifestErrorReason::UnsupportedApiVersion(_)
    ));
    let (_, reason) = reason_of("just: a map\n");
    assert!(matches!(reason, ManifestErrorReason::MissingTypeMeta));
}

#[test]
fn refuses_missing_name_and_bad_yaml() {
    let yaml = "apiVersion: capw.dev/v1alpha1\nkind: Cluster\nmetadata: {namespace: a}\n";
    assert!(matches!(
        reason_of(yaml).1,
        ManifestErrorReason::MissingName
    ));
    assert!(matches!(
        reason_of("a: [unclosed\n").1,
        ManifestErrorReason::Syntax(_)
    ));
}

#[test]
fn refuses_a_null_name_as_missing() {
    // Found by fuzzing: `name:` with nothing after it decoded to an object without a name,
    // which `write_manifests` then wrote as `metadata: {}`.
    for metadata in [
        "metadata:\n  name:\n",
        "metadata: {name: null}\n",
        "metadata: {name: ~}\n",
    ] {
        let yaml = format!("apiVersion: capw.dev/v1alpha1\nkind: Cluster\n{metadata}");
        assert!(
            matches!(reason_of(&yaml).1, ManifestErrorReason::MissingName),
            "{metadata}"
        );
    }
}

#[test]
fn crds_have_status_and_preserve_free_form_config() {
    let all = crds();
    assert_eq!(all.len(), 5);
    for crd in &all {
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(
            version
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some()
        );
    }
    let yaml = crds_yaml().expect("yaml");
    assert_eq!(yaml.matches("kind: CustomResourceDefinition").count(), 5);
    assert!(yaml.contains("wasmproviders.capw.dev"));
    assert!(yaml.contains("x-kubernetes-preserve-unknown-fields: true"));
    let cluster = serde_json::to_value(&all[2]).expect("json");
    let columns = &cluster["spec"]["versions"][0]["additionalPrinterColumns"];
    assert_eq!(columns.as_array().map(Vec::len), Some(7));
    assert_eq!(all[0].spec.scope, "Cluster");
    assert_eq!(all[2].spec.scope, "Namespaced");
}

#[test]
fn cluster_status_counters_are_flat_and_summed() {
    use capw_api::{ClusterStatus, PoolStatus, ReplicaCounters};
    let pool = |name: &str, ready, desired| PoolStatus {
        name: name.into(),
        counters: ReplicaCounters {
            desired_replicas: desired,
            ready_replicas: ready,
            ..Default::default()
        },
    };
    let mut status = ClusterStatus::default();
    status.set_workers(vec![pool("a", 1, 2), pool("b", 3, 3)]);
    assert_eq!(
        (
            status.workers_ready_replicas,
            status.workers_desired_replicas
        ),
        (4, 5)
    );
    let json = serde_json::to_value(&status).expect("json");
    assert_eq!(
        json["workers"][1],
        serde_json::json!({"name": "b", "desiredReplicas": 3, "replicas": 0, "readyReplicas": 3, "upToDateReplicas": 0})
    );
    assert_eq!(
        serde_json::from_value::<ClusterStatus>(json).expect("back"),
        status
    );
}

#[test]
fn deep_flow_nesting_is_refused_before_parsing_with_its_position() {
    let deep = format!(
        "{}---\n{}",
        object_doc("Cluster", "spec: {}\n"),
        object_doc(
            "Cluster",
            &format!("spec: {}{}\n", "[".repeat(100_000), "]".repeat(100_000))
        )
    );
    let (document, reason) = reason_of(&deep);
    assert_eq!(document, 2);
    let ManifestErrorReason::TooDeep { line, column } = reason else {
        panic!("{reason:?}");
    };
    // `spec: ` then the 1,025th bracket, on the document's fifth line (the file's eleventh).
    assert_eq!((line, column), (11, 6 + capw_api::MAX_FLOW_DEPTH + 1));
    assert!(
        reason.to_string().contains("nested more than 1024"),
        "{reason}"
    );
}

#[test]
fn brackets_in_quotes_and_comments_are_not_nesting() {
    let many = "[".repeat(5_000);
    let yaml = object_doc(
        "Cluster",
        &format!(
            "# {many}\nspec:\n  topology:\n    classRef: {{name: \"{many}\"}}\n    version: '{many}'\n"
        ),
    );
    // Refused for what it is (no such class, or a bad version), never as too deep.
    if let Err(e) = parse_manifests(&yaml) {
        assert!(
            !matches!(e.reason, ManifestErrorReason::TooDeep { .. }),
            "{e}"
        );
    }
}

#[test]
fn refuses_names_kubernetes_would_refuse_naming_the_field() {
    let doc = |kind: &str, metadata: &str| {
        format!("apiVersion: capw.dev/v1alpha1\nkind: {kind}\nmetadata: {metadata}\nspec: {{}}\n")
    };
    for (yaml, field, says) in [
        (
            doc("Cluster", "{name: 'Gamma Cluster_1!'}"),
            "metadata.name",
            "\"Gamma Cluster_1!\" holds 'G'",
        ),
        (
            doc("ClusterClass", "{name: class_a}"),
            "metadata.name",
            "holds '_'",
        ),
        (
            doc("Cluster", &format!("{{name: {}}}", "c".repeat(64))),
            "metadata.name",
            "is 64 characters long, at most 63",
        ),
        (
            doc("Cluster", "{name: alpha, namespace: team.a}"),
            "metadata.namespace",
            "holds '.'",
        ),
        (
            doc("WasmProvider", "{name: '-sim'}"),
            "metadata.name",
            "must start and end",
        ),
    ] {
        let error = parse_manifests(&yaml).expect_err(&yaml);
        let message = error.to_string();
        assert!(
            matches!(&error.reason, ManifestErrorReason::InvalidName { field: f, .. } if *f == field),
            "{yaml}: {message}"
        );
        assert!(message.contains(&format!("{field}: ")), "{message}");
        assert!(message.contains(says), "{message}");
    }
    // A ClusterClass may have a longer name than a Cluster, as in Kubernetes.
    let long = doc("ClusterClass", &format!("{{name: {}}}", "c".repeat(64)));
    assert!(
        !matches!(
            parse_manifests(&long),
            Err(e) if matches!(e.reason, ManifestErrorReason::InvalidName { .. })
        ),
        "a 64-character class name is refused"
    );
}
