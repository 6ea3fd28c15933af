//! The planner on whole inputs: what it applies, what it mints, what it says of the control
//! plane, and what it refuses.

use capw_sdk::control_plane::{CertificateSecret, HostedObject, Plan, PlanInput, Step};
use capw_sdk::testing::{cluster, version};
use capw_sdk::types::{
    ClusterRef, ConditionStatus, Endpoint, ErrorCode, KubernetesVersion, ProviderError,
};
use serde_json::Value;

use super::*;

/// The kinds the host applies, as (apiVersion, kind).
const ALLOWED: [(&str, &str); 5] = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
];

fn c1() -> ClusterRef {
    cluster("team-a", "c1")
}

fn input(minor: u32, replicas: u32) -> PlanInput {
    PlanInput {
        version: version(minor),
        replicas,
        members: Vec::new(),
        failure_domains: Vec::new(),
        endpoint: Some(Endpoint {
            host: "cp.c1.example.test".into(),
            port: 6443,
        }),
        failures_tolerated: None,
        objects: Vec::new(),
    }
}

fn planned(config: &HostedControlPlaneConfig, input: &PlanInput) -> Plan {
    match plan(&c1(), config, input) {
        Ok(p) => p,
        Err(e) => panic!("refused: {e}"),
    }
}

fn refused(config: &HostedControlPlaneConfig, input: &PlanInput) -> PlanError {
    match plan(&c1(), config, input) {
        Ok(p) => panic!("answered {:?}", p.step),
        Err(e) => e,
    }
}

/// The manifests of `plan`, parsed.
fn objects(plan: &Plan) -> Vec<Value> {
    let Step::ApplyManifests(manifests) = &plan.step else {
        panic!("expected apply-manifests, got {:?}", plan.step);
    };
    (manifests.iter())
        .map(|m| match serde_yaml_ng::from_str::<Value>(m) {
            Ok(v) => v,
            Err(e) => panic!("not YAML ({e}):\n{m}"),
        })
        .collect()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    (objects.iter())
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// Every object of `plan` (manifests and certificate Secrets) as the host tells it back once
/// it applied them, with their images, each ready or not as `ready` says of its name.
fn applied(plan: &Plan, ready: impl Fn(&str) -> bool) -> Vec<HostedObject> {
    let told = |api_version: &str, kind: &str, name: &str, images: Vec<String>| HostedObject {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
        ready: ready(name),
        message: (!ready(name)).then(|| "0 of 1 updated replicas available".into()),
        images,
        addresses: Vec::new(),
    };
    let mut out: Vec<HostedObject> = (objects(plan).iter())
        .map(|o| {
            told(
                o["apiVersion"].as_str().unwrap(),
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap(),
                manifests::images(o),
            )
        })
        .collect();
    out.extend(
        plan.certificates
            .iter()
            .map(|s| told("v1", "Secret", &s.name, Vec::new())),
    );
    out
}

/// `objects` with the one named `name` as `from` tells it.
fn replaced(
    mut objects: Vec<HostedObject>,
    from: &[HostedObject],
    name: &str,
) -> Vec<HostedObject> {
    let told = |objects: &[HostedObject]| objects.iter().position(|o| o.name == name).unwrap();
    let i = told(&objects);
    objects[i] = from[told(from)].clone();
    objects
}

fn condition_message(plan: &Plan) -> &str {
    let c = &plan.status.conditions[0];
    assert_eq!(c.type_, OBJECTS_READY);
    &c.message
}

fn image(objects: &[Value], deployment: &str) -> String {
    find(objects, "Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn every_manifest_is_one_yaml_object_of_an_allowed_kind() {
    let p = planned(&HostedControlPlaneConfig::default(), &input(35, 0));
    let Step::ApplyManifests(manifests) = &p.step else {
        panic!("{:?}", p.step);
    };
    for m in manifests {
        let documents = serde_yaml_ng::Deserializer::from_str(m).count();
        assert_eq!(documents, 1, "{m}");
    }
    let objects = objects(&p);
    let kinds: Vec<(String, String)> = (objects.iter())
        .map(|o| {
            let pair = (
                o["apiVersion"].as_str().unwrap(),
                o["kind"].as_str().unwrap(),
            );
            assert!(ALLOWED.contains(&pair), "{pair:?} is not allowed");
            (
                pair.1.to_owned(),
                o["metadata"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("Service", "c1-etcd"),
        ("StatefulSet", "c1-etcd"),
        ("Service", "c1-apiserver"),
        ("Deployment", "c1-kube-apiserver"),
        ("Deployment", "c1-kube-controller-manager"),
    ]
    .map(|(k, n)| (k.to_owned(), n.to_owned()));
    assert_eq!(kinds, expected);
}

#[test]
fn every_object_and_secret_is_named_for_the_cluster_in_its_namespace() {
    let p = planned(&HostedControlPlaneConfig::default(), &input(35, 3));
    for o in objects(&p) {
        let name = o["metadata"]["name"].as_str().unwrap();
        assert!(name.starts_with("c1-") && name.len() > 3, "{name}");
        assert_eq!(o["metadata"]["namespace"], "team-a", "{name}");
    }
    let secrets: Vec<&str> = p.certificates.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        secrets,
        [
            "c1-apiserver-certs",
            "c1-controller-manager-certs",
            "c1-etcd-certs"
        ]
    );
}

#[test]
fn the_api_servers_scale_with_the_cluster_the_config_or_the_default() {
    let replicas = |config: &HostedControlPlaneConfig, asked: u32| {
        let p = planned(config, &input(35, asked));
        let objects = objects(&p);
        let d = find(&objects, "Deployment", "c1-kube-apiserver");
        let n = d["spec"]["replicas"].as_u64().unwrap();
        assert_eq!(u64::from(p.replicas), n);
        n
    };
    let default = HostedControlPlaneConfig::default();
    assert_eq!(replicas(&default, 0), 2);
    assert_eq!(replicas(&default, 1), 1);
    assert_eq!(replicas(&default, 3), 3);
    assert_eq!(replicas(&default, 5), 5);
    let configured = HostedControlPlaneConfig {
        api_server_replicas: Some(3),
        ..HostedControlPlaneConfig::default()
    };
    assert_eq!(replicas(&configured, 0), 3);
    assert_eq!(replicas(&configured, 3), 3);
    // The controller manager and etcd do not scale with them.
    let objects = objects(&planned(&default, &input(35, 5)));
    assert_eq!(
        find(&objects, "Deployment", "c1-kube-controller-manager")["spec"]["replicas"],
        1
    );
    assert_eq!(
        find(&objects, "StatefulSet", "c1-etcd")["spec"]["replicas"],
        1
    );
}

#[test]
fn counts_the_cluster_and_the_config_disagree_on_are_refused() {
    let configured = HostedControlPlaneConfig {
        api_server_replicas: Some(3),
        ..HostedControlPlaneConfig::default()
    };
    let e = refused(&configured, &input(35, 5));
    assert!(
        matches!(
            e,
            PlanError::ReplicasConflict {
                asked: 5,
                configured: 3
            }
        ),
        "{e}"
    );
    let e = refused(&HostedControlPlaneConfig::default(), &input(35, 10));
    assert!(
        e.to_string().contains("replicas 10 is more than the 9"),
        "{e}"
    );
    let e = ProviderError::from(e);
    assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
}

#[test]
fn the_images_follow_the_desired_version() {
    for minor in [34, 35] {
        let objects = objects(&planned(
            &HostedControlPlaneConfig::default(),
            &input(minor, 0),
        ));
        assert_eq!(
            image(&objects, "c1-kube-apiserver"),
            format!("registry.k8s.io/kube-apiserver:v1.{minor}.0")
        );
        assert_eq!(
            image(&objects, "c1-kube-controller-manager"),
            format!("registry.k8s.io/kube-controller-manager:v1.{minor}.0")
        );
        let etcd = find(&objects, "StatefulSet", "c1-etcd");
        assert_eq!(
            etcd["spec"]["template"]["spec"]["containers"][0]["image"],
            "registry.k8s.io/etcd:3.6.5-0"
        );
    }
}

#[test]
fn nothing_applied_is_not_ready_and_claims_nothing() {
    let p = planned(&HostedControlPlaneConfig::default(), &input(35, 0));
    assert!(!p.status.initialized && !p.status.ready);
    assert_eq!(p.status.version, None);
    assert_eq!(p.status.failures_tolerated, None);
    assert_eq!(
        (p.replicas, p.ready_replicas, p.up_to_date_replicas),
        (2, 0, 0)
    );
    assert_eq!(p.status.endpoint, input(35, 0).endpoint);
    // Without the infrastructure's endpoint, behind a ClusterIP Service, its name.
    let mut without = input(35, 0);
    without.endpoint = None;
    let cluster_ip = HostedControlPlaneConfig {
        api_server_service: ApiServerService::ClusterIp,
        ..HostedControlPlaneConfig::default()
    };
    let p = planned(&cluster_ip, &without);
    assert_eq!(
        p.status.endpoint,
        Some(Endpoint {
            host: "c1-apiserver.team-a.svc".into(),
            port: 6443
        })
    );
    let c = &p.status.conditions[0];
    assert_eq!(
        (c.type_.as_str(), c.status),
        (OBJECTS_READY, ConditionStatus::False)
    );
    assert!(
        c.message.contains("Service c1-etcd: not applied yet"),
        "{}",
        c.message
    );
    assert!(c.message.ends_with("and 3 more"), "{}", c.message);
}

#[test]
fn readiness_is_read_from_the_objects() {
    let config = HostedControlPlaneConfig::default();
    let first = planned(&config, &input(35, 3));

    // Applied, the API servers ready, etcd not yet.
    let mut told = input(35, 3);
    told.objects = applied(&first, |name| name != "c1-etcd");
    let p = planned(&config, &told);
    assert!(p.status.initialized && !p.status.ready);
    assert_eq!((p.ready_replicas, p.up_to_date_replicas), (3, 0));
    // Both Deployments run 1.35: that is the version, ready or not.
    assert_eq!(p.status.version, Some(version(35)));
    let c = &p.status.conditions[0];
    assert_eq!(c.status, ConditionStatus::False);
    assert!(
        c.message
            .contains("StatefulSet c1-etcd: 0 of 1 updated replicas available"),
        "{}",
        c.message
    );

    // Every object ready: the same objects again, ready, at the desired version.
    told.objects = applied(&first, |_| true);
    let p = planned(&config, &told);
    assert!(p.status.initialized && p.status.ready);
    assert_eq!(
        (p.replicas, p.ready_replicas, p.up_to_date_replicas),
        (3, 3, 3)
    );
    assert_eq!(p.status.version, Some(version(35)));
    assert_eq!(p.status.failures_tolerated, Some(0));
    assert_eq!(p.status.conditions[0].status, ConditionStatus::True);
    assert_eq!(
        p.step, first.step,
        "a settled plan answers the same objects"
    );
    assert_eq!(p.certificates, first.certificates);

    // Deterministic.
    assert_eq!(planned(&config, &told), p);
}

#[test]
fn an_upgrade_moves_both_images_once_settled_and_tells_the_oldest_version_known() {
    let config = HostedControlPlaneConfig::default();
    let at_34 = planned(&config, &input(34, 0));
    let mut told = input(35, 0);
    told.objects = applied(&at_34, |_| true);

    // Settled at 1.34, 1.35 desired: the new images, while the control plane runs 1.34.
    let upgrading = planned(&config, &told);
    let objects = objects(&upgrading);
    assert_eq!(
        image(&objects, "c1-kube-apiserver"),
        "registry.k8s.io/kube-apiserver:v1.35.0"
    );
    assert_eq!(
        image(&objects, "c1-kube-controller-manager"),
        "registry.k8s.io/kube-controller-manager:v1.35.0"
    );
    assert!(upgrading.status.initialized && !upgrading.status.ready);
    assert_eq!(upgrading.status.version, Some(version(34)));
    assert_eq!(upgrading.up_to_date_replicas, 0);
    assert!(
        condition_message(&upgrading).contains(
            "Deployment c1-kube-apiserver: applied with registry.k8s.io/kube-apiserver:v1.34.0, \
             not yet with registry.k8s.io/kube-apiserver:v1.35.0"
        ),
        "{}",
        condition_message(&upgrading)
    );

    // Applied, both Deployments rolling: the same answer; nothing ready, no version.
    told.objects = applied(&upgrading, |name| !name.starts_with("c1-kube-"));
    let rolling = planned(&config, &told);
    assert_eq!(rolling.step, upgrading.step);
    assert!(!rolling.status.initialized);
    assert_eq!(rolling.status.version, None);

    // The API servers rolled out; the controller manager rolls from what the host does not
    // tell (1.34): no version.
    told.objects = applied(&upgrading, |name| name != "c1-kube-controller-manager");
    let p = planned(&config, &told);
    assert!(p.status.initialized && !p.status.ready);
    assert_eq!(p.status.version, None);

    // Rolled out: ready at 1.35, the same answer again.
    told.objects = applied(&upgrading, |_| true);
    let done = planned(&config, &told);
    assert!(done.status.ready);
    assert_eq!(done.status.version, Some(version(35)));
    assert_eq!(done.up_to_date_replicas, 2);
    assert_eq!(done.step, upgrading.step);
}

#[test]
fn a_change_waits_until_the_rollout_under_way_is_done() {
    let config = HostedControlPlaneConfig::default();
    let at_34 = planned(&config, &input(34, 0));
    let mut to_35 = input(35, 0);
    to_35.objects = applied(&at_34, |_| true);
    let at_35 = planned(&config, &to_35);

    // Rolling out 1.35 when 1.36 is asked: 1.35 still, saying why.
    let mut told = input(36, 0);
    told.objects = applied(&at_35, |name| name != "c1-kube-apiserver");
    let p = planned(&config, &told);
    assert_eq!(p.step, at_35.step);
    assert!(!p.status.ready);
    assert!(
        condition_message(&p)
            .starts_with("version v1.36.0 waits until the rollout of v1.35.0 is done; "),
        "{}",
        condition_message(&p)
    );
    // A patch of 1.35 waits too.
    told.version = KubernetesVersion {
        patch: 1,
        ..version(35)
    };
    assert_eq!(planned(&config, &told).step, at_35.step);
    told.version = version(36);

    // The controller manager not moved yet (applied before the API servers, say), every
    // Deployment ready: it runs 1.34, and it moves to 1.35 first.
    told.objects = replaced(
        applied(&at_35, |_| true),
        &to_35.objects,
        "c1-kube-controller-manager",
    );
    let p = planned(&config, &told);
    assert_eq!(p.step, at_35.step);
    assert_eq!(p.status.version, Some(version(34)));

    // 1.35 rolled out everywhere: now 1.36.
    told.objects = applied(&at_35, |_| true);
    let p = planned(&config, &told);
    assert_eq!(
        image(&objects(&p), "c1-kube-apiserver"),
        "registry.k8s.io/kube-apiserver:v1.36.0"
    );
    assert_eq!(p.status.version, Some(version(35)));
}

#[test]
fn a_deployment_whose_version_cannot_be_read_is_a_retryable_conflict() {
    let config = HostedControlPlaneConfig::default();
    let at_35 = planned(&config, &input(35, 0));
    let mut told = input(35, 0);
    told.objects = applied(&at_35, |_| true);
    let api_server = (told.objects.iter_mut())
        .find(|o| o.name == "c1-kube-apiserver")
        .unwrap();
    api_server.images = vec!["registry.k8s.io/kube-apiserver@sha256:0123abcd".into()];
    let e = ProviderError::from(refused(&config, &told));
    assert_eq!((e.code, e.retryable), (ErrorCode::Conflict, true));
    assert!(
        e.message.contains("the Deployment c1-kube-apiserver runs"),
        "{}",
        e.message
    );
}

#[test]
fn a_skipped_minor_a_downgrade_and_failures_tolerated_are_refused_as_invalid_input() {
    let config = HostedControlPlaneConfig::default();
    let at_33 = planned(&config, &input(33, 0));
    let mut told = input(35, 0);
    told.objects = applied(&at_33, |_| true);
    let e = ProviderError::from(refused(&config, &told));
    assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
    assert!(
        e.message
            .contains("version v1.35.0 would skip minor version 1.34"),
        "{}",
        e.message
    );

    told.version = KubernetesVersion {
        major: 1,
        minor: 32,
        patch: 0,
    };
    assert!(matches!(
        refused(&config, &told),
        PlanError::Version(VersionError::Downgrade { .. })
    ));

    let mut asked = input(35, 0);
    asked.failures_tolerated = Some(1);
    let e = refused(&config, &asked);
    assert!(
        e.to_string()
            .contains("spec.topology.controlPlane.failuresTolerated 1"),
        "{e}"
    );
    asked.failures_tolerated = Some(0);
    assert!(plan(&c1(), &config, &asked).is_ok());
}

#[test]
fn the_api_server_certificate_names_the_endpoint() {
    let p = planned(&HostedControlPlaneConfig::default(), &input(35, 0));
    let secret: &CertificateSecret = (p.certificates.iter())
        .find(|s| s.name == "c1-apiserver-certs")
        .unwrap();
    let serving = secret
        .certificates
        .iter()
        .find(|c| c.key == "apiserver")
        .unwrap();
    for san in [
        "c1-apiserver",
        "c1-apiserver.team-a",
        "c1-apiserver.team-a.svc",
        "c1-apiserver.team-a.svc.cluster.local",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "10.96.0.1",
        "cp.c1.example.test",
    ] {
        assert!(
            serving.sans.iter().any(|s| s == san),
            "{san} in {:?}",
            serving.sans
        );
    }
}

#[test]
fn a_cluster_name_the_objects_cannot_carry_is_refused() {
    let long = "c".repeat(48);
    let e = plan(
        &cluster("default", &long),
        &HostedControlPlaneConfig::default(),
        &input(35, 0),
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, PlanError::Name(NameError::TooLong { .. })),
        "{e}"
    );
    assert!(e.to_string().contains("metadata.name"), "{e}");
}

#[test]
fn behind_a_load_balancer_the_endpoint_is_its_address_once_told() {
    let config = HostedControlPlaneConfig::default();
    let mut asked = input(35, 0);
    asked.endpoint = None;
    let first = planned(&config, &asked);
    let kinds: Vec<String> = (objects(&first).iter())
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "Service/c1-etcd",
            "StatefulSet/c1-etcd",
            "Service/c1-apiserver"
        ]
    );
    assert_eq!(first.status.endpoint, None);
    assert!(!first.status.ready && !first.status.initialized);
    assert!(
        condition_message(&first).contains(
            "the API servers wait for the address of Service c1-apiserver's load balancer"
        ),
        "{}",
        condition_message(&first)
    );

    // The host applied them; the load balancer has no address yet: nothing changes.
    let mut told = asked.clone();
    told.objects = applied(&first, |_| true);
    let service = told
        .objects
        .iter()
        .position(|o| o.name == "c1-apiserver")
        .unwrap();
    told.objects[service].ready = false;
    assert_eq!(planned(&config, &told).step, first.step);

    // Its address is told: the API servers come, advertise it and serve it.
    told.objects[service].ready = true;
    told.objects[service].addresses = vec!["100.80.0.7".into(), "lb.example.test".into()];
    let p = planned(&config, &told);
    assert_eq!(
        p.status.endpoint,
        Some(Endpoint {
            host: "100.80.0.7".into(),
            port: 6443
        })
    );
    let all = objects(&p);
    assert_eq!(all.len(), 5);
    let args =
        find(&all, "Deployment", "c1-kube-apiserver")["spec"]["template"]["spec"]["containers"][0]
            ["args"]
            .to_string();
    assert!(args.contains("--advertise-address=100.80.0.7"), "{args}");
    let serving = (p.certificates.iter())
        .filter(|s| s.name == "c1-apiserver-certs")
        .flat_map(|s| &s.certificates)
        .find(|c| c.key == "apiserver")
        .unwrap();
    assert!(
        serving.sans.contains(&"100.80.0.7".to_owned()),
        "{:?}",
        serving.sans
    );

    // A ClusterIP Service: the endpoint is its name at once, and everything is answered.
    let cluster_ip = HostedControlPlaneConfig {
        api_server_service: ApiServerService::ClusterIp,
        ..HostedControlPlaneConfig::default()
    };
    let p = planned(&cluster_ip, &asked);
    assert_eq!(objects(&p).len(), 5);
    assert_eq!(
        p.status.endpoint,
        Some(Endpoint {
            host: "c1-apiserver.team-a.svc".into(),
            port: 6443
        })
    );
}
