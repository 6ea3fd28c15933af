//! The hosted shape of the control-plane extension point (contract 0.3): a control plane made
//! of objects the host applies to the management cluster from `plan`'s `apply-manifests`, and
//! of Secrets it mints from `plan-output.certificates`.
//!
//! An answer is judged as the host judges it before applying anything (the kinds, the
//! Cluster's namespace, names with the Cluster's name and a dash first), and the plan is driven
//! as the host drives it: each round, every object of the last answer applied and ready, told
//! with the images of its Pod template as the host tells them, until the plan answers no object
//! it was not told of so; then its status must say the control plane is ready.

use std::collections::BTreeSet;

use capw_runtime::control_plane::{CertificateUsage, HostedObject, PlanInput, PlanOutput, Step};
use capw_runtime::types::{CallContext, ClusterRef};
use serde_json::Value;

use crate::calls::{Subject, check_hint};

/// The kinds a hosted plan may apply, as (apiVersion, kind): what the contract allows
/// (`step.apply-manifests`).
const HOSTED_KINDS: [(&str, &str); 5] = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
];

/// Rounds of "every object applied and ready" a hosted plan gets to settle: a provider may
/// add objects in stages (a datastore first, the API server once it is ready).
const MAX_ROUNDS: usize = 4;

/// What names one object of a hosted plan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Named {
    api_version: String,
    kind: String,
    name: String,
}

impl Named {
    fn secret(name: &str) -> Self {
        Self {
            api_version: "v1".into(),
            kind: "Secret".into(),
            name: name.into(),
        }
    }
}

/// One object of an answer as the host tells it once applied: its name, for a Deployment or
/// StatefulSet the images of its Pod template, for a LoadBalancer Service the address its load
/// balancer gives it ([`LOAD_BALANCER_ADDRESS`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Answered {
    named: Named,
    images: Vec<String>,
    addresses: Vec<String>,
}

/// The address the suite's management cluster gives every LoadBalancer Service (a
/// documentation address, RFC 5737).
const LOAD_BALANCER_ADDRESS: &str = "203.0.113.80";

impl Answered {
    fn secret(name: &str) -> Self {
        Self {
            named: Named::secret(name),
            images: Vec::new(),
            addresses: Vec::new(),
        }
    }

    /// The object as the host tells it back once applied, ready.
    fn applied(&self) -> HostedObject {
        HostedObject {
            api_version: self.named.api_version.clone(),
            kind: self.named.kind.clone(),
            name: self.named.name.clone(),
            ready: true,
            message: None,
            images: self.images.clone(),
            addresses: self.addresses.clone(),
        }
    }

    fn told(object: &HostedObject) -> Self {
        Self {
            named: Named {
                api_version: object.api_version.clone(),
                kind: object.kind.clone(),
                name: object.name.clone(),
            },
            images: object.images.clone(),
            addresses: object.addresses.clone(),
        }
    }
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.api_version, self.kind, self.name)
    }
}

/// The objects an `apply-manifests` answer asks the host to apply and mint for `cluster`:
/// every manifest and every certificate Secret.
///
/// # Errors
///
/// Every reason the host would refuse the answer, one each: a manifest that is not one YAML
/// object, of a kind the contract does not allow, in another namespace than the Cluster's,
/// or not named with the Cluster's name and a dash first; an object named twice; a
/// certificate Secret or the shared datastore's Secret not so named, or certificates that
/// break their rules.
fn objects(
    cluster: &ClusterRef,
    manifests: &[String],
    out: &PlanOutput,
) -> Result<Vec<Answered>, Vec<String>> {
    let prefix = format!("{}-", cluster.name);
    let mut problems = Vec::new();
    let mut named = Vec::new();
    for (i, text) in manifests.iter().enumerate() {
        match manifest(cluster, &prefix, text) {
            Ok(n) => named.push(n),
            Err(problem) => problems.push(format!("manifest {i}: {problem}")),
        }
    }
    for secret in &out.certificates {
        if !named_for(&prefix, &secret.name) {
            problems.push(format!(
                "certificate Secret {:?} is not named {prefix:?} and more",
                secret.name
            ));
        }
        problems.extend(certificate_problems(&secret.name, secret));
        named.push(Answered::secret(&secret.name));
    }
    if let Some(datastore) = &out.shared_datastore {
        if !named_for(&prefix, &datastore.secret) {
            problems.push(format!(
                "the shared datastore's Secret {:?} is not named {prefix:?} and more",
                datastore.secret
            ));
        }
        named.push(Answered::secret(&datastore.secret));
    }
    let mut seen = BTreeSet::new();
    for n in &named {
        if !seen.insert(&n.named) {
            problems.push(format!("{} is named twice", n.named));
        }
    }
    if problems.is_empty() {
        Ok(named)
    } else {
        Err(problems)
    }
}

fn named_for(prefix: &str, name: &str) -> bool {
    name.len() > prefix.len() && name.starts_with(prefix)
}

/// What names one manifest and the images the host would tell of it, or why the host refuses
/// it.
fn manifest(cluster: &ClusterRef, prefix: &str, text: &str) -> Result<Answered, String> {
    let object =
        capw_api::parse_document(text).map_err(|e| format!("not one YAML document: {e}"))?;
    let field = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let (Some(api_version), Some(kind)) = (field("/apiVersion"), field("/kind")) else {
        return Err("not an object with an apiVersion and a kind".into());
    };
    if !HOSTED_KINDS.contains(&(api_version, kind)) {
        return Err(format!(
            "a {api_version} {kind}; a hosted plan applies apps/v1 Deployments and \
             StatefulSets, v1 Services, Secrets and ConfigMaps only"
        ));
    }
    let Some(name) = field("/metadata/name") else {
        return Err(format!("a {api_version} {kind} without metadata.name"));
    };
    if !named_for(prefix, name) {
        return Err(format!(
            "{api_version} {kind} {name:?} is not named {prefix:?} and more"
        ));
    }
    match object.pointer("/metadata/namespace") {
        None | Some(Value::Null) => {}
        Some(Value::String(ns)) if *ns == cluster.namespace => {}
        Some(other) => {
            return Err(format!(
                "{api_version} {kind} {name} is in namespace {other}, not the Cluster's {:?}",
                cluster.namespace
            ));
        }
    }
    Ok(Answered {
        named: Named {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
        },
        images: if matches!(kind, "Deployment" | "StatefulSet") {
            capw_api::pod_template_images(&object)
        } else {
            Vec::new()
        },
        addresses: if kind == "Service"
            && object.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer")
        {
            vec![LOAD_BALANCER_ADDRESS.to_owned()]
        } else {
            Vec::new()
        },
    })
}

/// What is wrong with the certificates of one Secret: a key twice or empty, a serving
/// certificate without a name to serve, a kubeconfig beside a certificate that is no client's
/// or for a server that is not an `https` URL.
fn certificate_problems(
    secret: &str,
    s: &capw_runtime::control_plane::CertificateSecret,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut keys = BTreeSet::new();
    for c in &s.certificates {
        let at = format!("certificate {:?} of Secret {secret:?}", c.key);
        if c.key.is_empty() || !keys.insert(c.key.as_str()) {
            problems.push(format!("{at}: its key is empty or given twice"));
        }
        if matches!(c.usage, CertificateUsage::Server | CertificateUsage::Peer) && c.sans.is_empty()
        {
            problems.push(format!(
                "{at}: a {:?} certificate without a SAN serves no name",
                c.usage
            ));
        }
        if let Some(server) = &c.kubeconfig_server {
            if c.usage != CertificateUsage::Client {
                problems.push(format!(
                    "{at}: a kubeconfig authenticates with a client certificate, not a {:?} one",
                    c.usage
                ));
            }
            if !server.starts_with("https://") {
                problems.push(format!(
                    "{at}: kubeconfig-server {server:?} is not an https URL"
                ));
            }
        }
    }
    problems
}

/// What is wrong with `out` as a hosted plan for `input`: a machine step, `none` while nothing
/// is applied, a `wait` without a hint, or objects the host would refuse.
pub(crate) fn step_problem(
    cluster: &ClusterRef,
    input: &PlanInput,
    out: &PlanOutput,
) -> Option<String> {
    match &out.step {
        Step::ApplyManifests(manifests) => objects(cluster, manifests, out)
            .err()
            .map(|problems| problems.join("; ")),
        Step::Wait(p) => check_hint(p.requeue_after_ms, &p.reason).err(),
        Step::None if input.objects.is_empty() => Some(
            "answered none with no object applied: a hosted plan answers apply-manifests with \
             every object of the control plane"
                .into(),
        ),
        Step::None => None,
        other => Some(format!(
            "the step {other:?} is a machine step; a hosted control plane has no machines"
        )),
    }
}

/// What is wrong with the status of a hosted plan beside the rules of every shape: ready
/// while no object is applied.
pub(crate) fn status_problem(input: &PlanInput, out: &PlanOutput) -> Option<String> {
    (input.objects.is_empty() && out.ready == Some(true))
        .then(|| "the status is ready with no object applied".into())
}

/// `input` told that every object of `out` is applied and ready, as the host tells it once
/// it applied them and they rolled out; `None` when `out` is no `apply-manifests` the host
/// would apply.
pub(crate) fn all_applied(
    cluster: &ClusterRef,
    input: &PlanInput,
    out: &PlanOutput,
) -> Option<PlanInput> {
    let Step::ApplyManifests(manifests) = &out.step else {
        return None;
    };
    let named = objects(cluster, manifests, out).ok()?;
    Some(PlanInput {
        objects: named.iter().map(Answered::applied).collect(),
        ..input.clone()
    })
}

/// Drives `plan` from `first` as the host would: each round, every object of the last answer
/// applied and ready, with its images. It settles when it answers `apply-manifests` with no
/// object it was not told of with the same images; then its status must be ready and
/// initialised.
///
/// # Errors
///
/// Why it did not settle or what its settled answer lacks.
pub(crate) async fn converges(
    s: &Subject<'_>,
    ctx: &CallContext,
    cluster: &ClusterRef,
    first: &PlanInput,
) -> Result<(), String> {
    let mut input = first.clone();
    for round in 1..=MAX_ROUNDS {
        let out = (s.record(s.provider.plan(ctx, &input).await))
            .map_err(|e| format!("round {round}: plan failed: {e}"))?;
        let Step::ApplyManifests(manifests) = &out.step else {
            return Err(format!(
                "round {round}, {} objects applied and ready: answered {:?}; a hosted plan \
                 answers apply-manifests with every object of the control plane, every time",
                input.objects.len(),
                out.step
            ));
        };
        let named = objects(cluster, manifests, &out)
            .map_err(|problems| format!("round {round}: {}", problems.join("; ")))?;
        if named.is_empty() {
            return Err(format!(
                "round {round}: answered apply-manifests with no object: the host would apply \
                 nothing (and prune everything)"
            ));
        }
        let told: BTreeSet<Answered> = input.objects.iter().map(Answered::told).collect();
        if !input.objects.is_empty() && named.iter().all(|n| told.contains(n)) {
            return if out.initialized && out.ready == Some(true) {
                Ok(())
            } else {
                Err(format!(
                    "round {round}: every object it answers is applied and ready, yet its \
                     status says initialized {} and ready {:?}",
                    out.initialized, out.ready
                ))
            };
        }
        input.objects = named.iter().map(Answered::applied).collect();
    }
    Err(format!(
        "not settled after {MAX_ROUNDS} rounds: each answer held objects it had not been told \
         of as applied"
    ))
}

#[cfg(test)]
mod tests {
    use capw_runtime::control_plane::{
        CertificateAuthority, CertificateRequest, CertificateSecret,
    };

    use super::*;

    fn cluster() -> ClusterRef {
        ClusterRef {
            namespace: "team-a".into(),
            name: "c1".into(),
            uid: "uid-c1".into(),
        }
    }

    fn input() -> PlanInput {
        PlanInput {
            version: capw_runtime::types::KubernetesVersion {
                major: 1,
                minor: 35,
                patch: 0,
            },
            replicas: 1,
            members: Vec::new(),
            failure_domains: Vec::new(),
            endpoint: None,
            failures_tolerated: None,
            objects: Vec::new(),
        }
    }

    fn answer(manifests: &[&str], certificates: Vec<CertificateSecret>) -> PlanOutput {
        PlanOutput {
            step: Step::ApplyManifests(manifests.iter().map(|m| (*m).to_owned()).collect()),
            initialized: false,
            replicas: 1,
            ready_replicas: 0,
            up_to_date_replicas: 0,
            endpoint: None,
            conditions: Vec::new(),
            ready: Some(false),
            version: None,
            failures_tolerated: None,
            certificates,
            shared_datastore: None,
        }
    }

    fn problems(out: &PlanOutput) -> Vec<String> {
        let Step::ApplyManifests(manifests) = &out.step else {
            panic!("no manifests");
        };
        objects(&cluster(), manifests, out)
            .err()
            .unwrap_or_default()
    }

    const SERVICE: &str =
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: c1-apiserver\n  namespace: team-a\n";

    #[test]
    fn objects_of_the_allowed_kinds_named_for_the_cluster_pass() {
        let secret = CertificateSecret {
            name: "c1-apiserver-certs".into(),
            certificates: vec![CertificateRequest {
                key: "apiserver".into(),
                authority: CertificateAuthority::Cluster,
                usage: CertificateUsage::Server,
                common_name: "kube-apiserver".into(),
                organizations: Vec::new(),
                sans: vec!["c1-apiserver".into()],
                kubeconfig_server: None,
            }],
            materials: Vec::new(),
        };
        let out = answer(
            &[
                SERVICE,
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: c1-x}\nspec:\n  \
                 template:\n    spec:\n      containers: [{name: x, image: x:v1}]\n      \
                 initContainers: [{name: i, image: i:v1}]\n",
            ],
            vec![secret],
        );
        assert_eq!(problems(&out), Vec::<String>::new());
        let input = all_applied(&cluster(), &input(), &out).unwrap();
        assert_eq!(input.objects.len(), 3);
        assert!(input.objects.iter().all(|o| o.ready));
        // Told with its images as the host tells them: init containers first; none for the
        // other kinds.
        let images: Vec<(&str, &[String])> = (input.objects.iter())
            .map(|o| (o.name.as_str(), o.images.as_slice()))
            .collect();
        assert_eq!(
            images,
            [
                ("c1-apiserver", &[][..]),
                ("c1-x", &["i:v1".to_owned(), "x:v1".to_owned()][..]),
                ("c1-apiserver-certs", &[][..]),
            ]
        );
    }

    #[test]
    fn what_the_host_refuses_is_named() {
        let out = answer(
            &[
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: c1-r}\n",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other-cm}\n",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1-cm, namespace: kube-system}\n",
                "a: [b",
                SERVICE,
                SERVICE,
            ],
            vec![CertificateSecret {
                name: "c1-".into(),
                certificates: vec![CertificateRequest {
                    key: "cm".into(),
                    authority: CertificateAuthority::Cluster,
                    usage: CertificateUsage::Server,
                    common_name: "x".into(),
                    organizations: Vec::new(),
                    sans: Vec::new(),
                    kubeconfig_server: Some("http://c1-apiserver:6443".into()),
                }],
                materials: Vec::new(),
            }],
        );
        let problems = problems(&out).join("\n");
        for expected in [
            "manifest 0: a rbac.authorization.k8s.io/v1 Role",
            "manifest 1: v1 ConfigMap \"other-cm\" is not named \"c1-\"",
            "manifest 2: v1 ConfigMap c1-cm is in namespace \"kube-system\"",
            "manifest 3: not one YAML document",
            "v1 Service c1-apiserver is named twice",
            "certificate Secret \"c1-\" is not named",
            "without a SAN serves no name",
            "a kubeconfig authenticates with a client certificate, not a Server one",
            "is not an https URL",
        ] {
            assert!(problems.contains(expected), "{expected}:\n{problems}");
        }
    }

    #[test]
    fn none_is_a_problem_only_while_nothing_is_applied() {
        let mut out = answer(&[], Vec::new());
        out.step = Step::None;
        let mut input = input();
        assert!(step_problem(&cluster(), &input, &out).is_some_and(|p| p.contains("no object")),);
        input.objects = vec![Answered::secret("c1-s").applied()];
        assert_eq!(step_problem(&cluster(), &input, &out), None);
        out.ready = Some(true);
        assert_eq!(status_problem(&input, &out), None);
        input.objects.clear();
        assert!(status_problem(&input, &out).is_some());
    }
}
