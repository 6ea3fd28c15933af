//! What a workload cluster needs before a machine can join it with a bootstrap token, when no
//! machine initialised it: a hosted control plane, whose API servers run as Pods of the
//! management cluster and where no `kubeadm init` ran.
//!
//! These are the objects `kubeadm init` leaves for joins (its `bootstrap-token` phase), under
//! kubeadm's own names, so a `kubeadm join`, kubeadm's upgrade checks and a reader who knows
//! kubeadm find what they expect. They are Kubernetes' TLS bootstrapping, not kubeadm's
//! invention: the `cluster-info` ConfigMap that the bootstrap signer signs with each token for
//! discovery, anonymous read of it, and the bindings that let a bootstrap token post a node
//! client certificate request and have it approved, and a node renew its own.
//!
//! What this does not write: kubeadm's `kube-system/kubeadm-config` and `kubelet-config`
//! ConfigMaps, which a real `kubeadm join` reads and the machine agent of capw's tests does not
//! (docs/workload-clusters.md says so).

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams};

use crate::error::ClusterCacheError;

/// The group kubeadm's default join tokens authenticate as (`auth-extra-groups`), which the
/// bindings below name; a token the host issues for joins carries it.
pub const JOIN_TOKEN_GROUP: &str = "system:bootstrappers:kubeadm:default-node-token";

/// The field manager of what the host applies in a workload cluster.
const FIELD_MANAGER: &str = "capw";

/// The kubeconfig `cluster-info` holds: the cluster's CA and its API server's URL, no user.
/// The bootstrap signer signs exactly this text with each token for discovery.
fn cluster_info_kubeconfig(ca_certificate_pem: &str, server: &str) -> String {
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_certificate_pem);
    // JSON is YAML: client-go's kubeconfig loader reads it as kubeadm's own output.
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "name": "",
            "cluster": {"certificate-authority-data": ca, "server": server},
        }],
        "contexts": [],
        "users": [],
        "current-context": "",
        "preferences": {},
    });
    config.to_string()
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some([("app.kubernetes.io/managed-by".to_owned(), "capw".to_owned())].into()),
        ..ObjectMeta::default()
    }
}

fn group(name: &str) -> Subject {
    Subject {
        kind: "Group".into(),
        api_group: Some("rbac.authorization.k8s.io".into()),
        name: name.into(),
        namespace: None,
    }
}

fn binding(name: &str, cluster_role: &str, subject: Subject) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(name, None),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: cluster_role.into(),
        },
        subjects: Some(vec![subject]),
    }
}

fn rule(resource: &str, names: Option<&str>) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec![resource.into()]),
        resource_names: names.map(|n| vec![n.into()]),
        verbs: vec!["get".into()],
        non_resource_urls: None,
    }
}

/// The objects joins need, for a cluster whose API server is reached at `server` and whose
/// certificate chains to `ca_certificate_pem`.
pub struct JoinAccess {
    pub(crate) cluster_info: ConfigMap,
    pub(crate) roles: Vec<Role>,
    pub(crate) role_bindings: Vec<RoleBinding>,
    pub(crate) cluster_roles: Vec<ClusterRole>,
    pub(crate) cluster_role_bindings: Vec<ClusterRoleBinding>,
}

impl JoinAccess {
    /// What `kubeadm init` would leave for joins to the cluster at `server`.
    pub fn new(ca_certificate_pem: &str, server: &str) -> JoinAccess {
        let cluster_info = ConfigMap {
            metadata: meta("cluster-info", Some("kube-public")),
            data: Some(
                [(
                    "kubeconfig".to_owned(),
                    cluster_info_kubeconfig(ca_certificate_pem, server),
                )]
                .into(),
            ),
            ..ConfigMap::default()
        };
        let reader = "kubeadm:bootstrap-signer-clusterinfo";
        let anonymous = Subject {
            kind: "User".into(),
            api_group: Some("rbac.authorization.k8s.io".into()),
            name: "system:anonymous".into(),
            namespace: None,
        };
        JoinAccess {
            cluster_info,
            roles: vec![Role {
                metadata: meta(reader, Some("kube-public")),
                rules: Some(vec![rule("configmaps", Some("cluster-info"))]),
            }],
            role_bindings: vec![RoleBinding {
                metadata: meta(reader, Some("kube-public")),
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "Role".into(),
                    name: reader.into(),
                },
                subjects: Some(vec![anonymous]),
            }],
            cluster_roles: vec![ClusterRole {
                metadata: meta("kubeadm:get-nodes", None),
                rules: Some(vec![rule("nodes", None)]),
                aggregation_rule: None,
            }],
            cluster_role_bindings: vec![
                binding(
                    "kubeadm:get-nodes",
                    "kubeadm:get-nodes",
                    group(JOIN_TOKEN_GROUP),
                ),
                binding(
                    "kubeadm:kubelet-bootstrap",
                    "system:node-bootstrapper",
                    group(JOIN_TOKEN_GROUP),
                ),
                binding(
                    "kubeadm:node-autoapprove-bootstrap",
                    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
                    group(JOIN_TOKEN_GROUP),
                ),
                binding(
                    "kubeadm:node-autoapprove-certificate-rotation",
                    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
                    group("system:nodes"),
                ),
            ],
        }
    }

    /// The kubeconfig `cluster-info` holds (the text the bootstrap signer signs).
    pub fn cluster_info(&self) -> &str {
        (self.cluster_info.data.as_ref())
            .and_then(|d| d.get("kubeconfig"))
            .map_or("", String::as_str)
    }

    /// Each object as `Kind namespace/name`, in the order they are applied.
    pub fn names(&self) -> Vec<String> {
        let named = |kind: &str, m: &ObjectMeta| match &m.namespace {
            Some(ns) => format!("{kind} {ns}/{}", m.name.as_deref().unwrap_or_default()),
            None => format!("{kind} {}", m.name.as_deref().unwrap_or_default()),
        };
        let mut out = vec![named("ConfigMap", &self.cluster_info.metadata)];
        out.extend(self.roles.iter().map(|o| named("Role", &o.metadata)));
        out.extend(
            self.role_bindings
                .iter()
                .map(|o| named("RoleBinding", &o.metadata)),
        );
        out.extend(
            self.cluster_roles
                .iter()
                .map(|o| named("ClusterRole", &o.metadata)),
        );
        out.extend(
            (self.cluster_role_bindings.iter()).map(|o| named("ClusterRoleBinding", &o.metadata)),
        );
        out
    }
}

/// Applies one object server-side as capw, within `timeout`.
async fn apply_one<K>(
    api: Api<K>,
    what: String,
    object: &K,
    timeout: Duration,
) -> Result<(), ClusterCacheError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    match tokio::time::timeout(timeout, api.patch(&name, &params, &Patch::Apply(object))).await {
        Err(_) => Err(ClusterCacheError::Timeout {
            what: format!("applying {what}"),
            after: timeout,
        }),
        Ok(Err(source)) => Err(ClusterCacheError::JoinAccess {
            object: what,
            source,
        }),
        Ok(Ok(_)) => Ok(()),
    }
}

/// Applies every object of `access`, each within `timeout`; the first failure stops it (the
/// next call applies them all again: each apply is idempotent).
pub(crate) async fn apply(
    client: &kube::Client,
    access: &JoinAccess,
    timeout: Duration,
) -> Result<(), ClusterCacheError> {
    let mut names = access.names().into_iter();
    let mut next = || names.next().unwrap_or_default();
    let c = || client.clone();
    apply_one(
        Api::<ConfigMap>::namespaced(c(), "kube-public"),
        next(),
        &access.cluster_info,
        timeout,
    )
    .await?;
    for o in &access.roles {
        apply_one(
            Api::<Role>::namespaced(c(), "kube-public"),
            next(),
            o,
            timeout,
        )
        .await?;
    }
    for o in &access.role_bindings {
        apply_one(
            Api::<RoleBinding>::namespaced(c(), "kube-public"),
            next(),
            o,
            timeout,
        )
        .await?;
    }
    for o in &access.cluster_roles {
        apply_one(Api::<ClusterRole>::all(c()), next(), o, timeout).await?;
    }
    for o in &access.cluster_role_bindings {
        apply_one(Api::<ClusterRoleBinding>::all(c()), next(), o, timeout).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_info_holds_the_ca_and_server_and_no_credentials() {
        let text =
            cluster_info_kubeconfig("-----BEGIN CERTIFICATE-----\nx\n", "https://10.0.0.1:6443");
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let cluster = &doc["clusters"][0]["cluster"];
        assert_eq!(cluster["server"], "https://10.0.0.1:6443");
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD
            .decode(cluster["certificate-authority-data"].as_str().unwrap())
            .unwrap();
        assert_eq!(ca, b"-----BEGIN CERTIFICATE-----\nx\n");
        assert_eq!(doc["users"], serde_json::json!([]));
    }

    #[test]
    fn bootstrap_tokens_may_post_and_have_approved_node_client_requests_only() {
        let access = JoinAccess::new("ca", "https://h:1");
        let bound: Vec<(String, String, String)> = access
            .cluster_role_bindings
            .iter()
            .map(|b| {
                let s = &b.subjects.as_ref().unwrap()[0];
                (b.role_ref.name.clone(), s.kind.clone(), s.name.clone())
            })
            .collect();
        for role in [
            "system:node-bootstrapper",
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
        ] {
            assert!(
                bound.contains(&(role.into(), "Group".into(), JOIN_TOKEN_GROUP.into())),
                "{role} is not bound to the join group: {bound:?}"
            );
        }
        // Renewal is bound to nodes, never to tokens; nothing is bound to all authenticated
        // users or to anonymous at cluster scope.
        assert!(bound.contains(&(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient".into(),
            "Group".into(),
            "system:nodes".into()
        )));
        assert!(
            bound
                .iter()
                .all(|(_, _, who)| who != "system:anonymous" && who != "system:authenticated"),
            "{bound:?}"
        );
        // Anonymous reads cluster-info, by name, and nothing else.
        let rule = &access.roles[0].rules.as_ref().unwrap()[0];
        assert_eq!(
            rule.resource_names.as_deref(),
            Some(&["cluster-info".to_owned()][..])
        );
        assert_eq!(rule.verbs, ["get"]);
        assert_eq!(access.names().len(), 8);
    }
}
