//! [`KubeManagement`]: the engine's [`ManagementCluster`] over the Kubernetes API server, where
//! hosted control planes run beside their Clusters.
//!
//! The kinds a hosted plan may apply ([`HOSTED_KINDS`]) are not capw's and are not served by
//! [`KubeStore`](crate::KubeStore): they are resolved once through API discovery and reached
//! as dynamic objects, so the API server, not a compiled-in table, says what their resources
//! are. Objects are written by server-side apply as [`HOSTED_FIELD_MANAGER`], so what a plan
//! no longer names in an object is removed from it, and fields others own (a person, an
//! autoscaler) are kept unless the plan names them too.
//!
//! # Secrets
//!
//! The API server's answer to a request about a Secret may quote the Secret's data (a field
//! it could not decode, a value it refused). Errors about Secrets therefore carry only the
//! object's name, the answer's code and reason and the fields it named, never its message.

use std::fmt;

use async_trait::async_trait;
use capw_engine::store::StoreError;
use capw_engine::store::management::{
    HOSTED_CLUSTER_LABEL, HOSTED_FIELD_MANAGER, HOSTED_KINDS, ManagementCluster, ObjectRef, Owner,
};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::Discovery;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

/// The management cluster of the Kubernetes mode: the API server of `client`.
///
/// # Guarantees
///
/// Those of [`ManagementCluster`], and:
/// - the hosted kinds are discovered once, at the first request; a failed discovery is tried
///   again by the next request.
/// - an object is deleted with background propagation: a Deployment's ReplicaSets and Pods go
///   with it, without capw waiting for them.
/// - no error about a Secret holds the API server's message (the module docs say why).
///
/// # Caveats
///
/// [`delete`](ManagementCluster::delete) deletes the objects it is named, owned or not: name
/// only what [`list`](ManagementCluster::list) answered for the owner.
pub struct KubeManagement {
    client: Client,
    resources: OnceCell<Vec<HostedResource>>,
}

impl fmt::Debug for KubeManagement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeManagement").finish_non_exhaustive()
    }
}

/// One of [`HOSTED_KINDS`] as the API server serves it.
#[derive(Clone, Debug)]
struct HostedResource {
    /// The apiVersion as [`HOSTED_KINDS`] names it (`apps/v1`).
    api_version: &'static str,
    kind: &'static str,
    resource: ApiResource,
}

/// A failure to reach the management cluster's objects, inside a [`StoreError::Backend`].
#[derive(Debug, thiserror::Error)]
pub enum ManagementError {
    /// API discovery of the hosted kinds failed.
    #[error("discovering the kinds of hosted control planes")]
    Discovery(#[source] kube::Error),
    /// The API server does not serve one of [`HOSTED_KINDS`].
    #[error("the API server does not serve {api_version} {kind}")]
    NotServed {
        /// Its apiVersion.
        api_version: &'static str,
        /// Its kind.
        kind: &'static str,
    },
    /// A request about `object` failed.
    #[error("{verb} {object}")]
    Request {
        /// What was asked.
        verb: Verb,
        /// `apiVersion kind namespace/name` (or the kind and namespace of a list).
        object: String,
        #[source]
        source: kube::Error,
    },
    /// A request about a Secret failed; what the API server said is withheld, as it may quote
    /// the Secret's data.
    #[error("{verb} {object}: {answer}")]
    Secret {
        /// What was asked.
        verb: Verb,
        /// `v1 Secret namespace/name`.
        object: String,
        /// The answer, without the API server's message.
        answer: String,
    },
}

/// What a request asked of the API server, for its error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// Server-side apply.
    Apply,
    /// A labelled list.
    List,
    /// A deletion.
    Delete,
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verb::Apply => "applying",
            Verb::List => "listing",
            Verb::Delete => "deleting",
        })
    }
}

/// One object of a request, for its error: `apps/v1 Deployment ns/name`.
struct Target<'a> {
    resource: &'a HostedResource,
    namespace: &'a str,
    /// `None` for a list of the kind.
    name: Option<&'a str>,
}

impl fmt::Display for Target<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let HostedResource {
            api_version, kind, ..
        } = self.resource;
        match self.name {
            Some(name) => write!(f, "{api_version} {kind} {}/{name}", self.namespace),
            None => write!(f, "{api_version} {kind} in {}", self.namespace),
        }
    }
}

/// The hosted control planes' workloads to watch (in `namespace`, else everywhere): the
/// Deployments and StatefulSets capw applied, by their label. The controller reconciles a
/// workload's owning Cluster when it changes, so a rollout's progress reaches the Cluster's
/// plan as it happens rather than at the next poll.
pub(crate) fn watched_workloads(
    client: &Client,
    namespace: Option<&str>,
) -> Vec<(
    Api<DynamicObject>,
    ApiResource,
    kube::runtime::watcher::Config,
)> {
    [
        ("Deployment", "deployments"),
        ("StatefulSet", "statefulsets"),
    ]
    .into_iter()
    .map(|(kind, plural)| {
        let resource =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", kind), plural);
        let api = match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        let config = kube::runtime::watcher::Config::default().labels(HOSTED_CLUSTER_LABEL);
        (api, resource, config)
    })
    .collect()
}

impl KubeManagement {
    /// The management cluster of `client`'s API server. Asks nothing of it until the first
    /// request.
    pub fn new(client: Client) -> Self {
        KubeManagement {
            client,
            resources: OnceCell::new(),
        }
    }

    /// Every one of [`HOSTED_KINDS`], discovered at the first call.
    async fn resources(&self) -> Result<&[HostedResource], StoreError> {
        let resources = self
            .resources
            .get_or_try_init(|| discover(self.client.clone()))
            .await
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        Ok(resources)
    }

    /// The hosted resource of `api_version` and `kind`; an error naming `object` for a kind
    /// a hosted control plane may not have.
    async fn resource(
        &self,
        api_version: &str,
        kind: &str,
        object: impl FnOnce() -> String,
    ) -> Result<&HostedResource, StoreError> {
        let resources = self.resources().await?;
        (resources.iter())
            .find(|r| r.api_version == api_version && r.kind == kind)
            .ok_or_else(|| {
                StoreError::Invalid(format!(
                    "{}: not a kind of a hosted control plane",
                    object()
                ))
            })
    }

    fn api(&self, resource: &HostedResource, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), namespace, &resource.resource)
    }
}

/// Resolves every one of [`HOSTED_KINDS`] through API discovery of the core and `apps` groups.
async fn discover(client: Client) -> Result<Vec<HostedResource>, ManagementError> {
    let discovery = Discovery::new(client)
        .filter(&["", "apps"])
        .run()
        .await
        .map_err(ManagementError::Discovery)?;
    HOSTED_KINDS
        .iter()
        .map(|&(api_version, kind)| {
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let (resource, _) = discovery
                .resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
                .ok_or(ManagementError::NotServed { api_version, kind })?;
            Ok(HostedResource {
                api_version,
                kind,
                resource,
            })
        })
        .collect()
}

/// `object` as given, in `owner`'s namespace, with the owner's label and an owner reference
/// to it (the only one: an object of a hosted control plane has one owner).
fn owned(owner: &Owner, object: &Value, target: &Target<'_>) -> Result<Value, StoreError> {
    let mut object = object.clone();
    let invalid = |what: &str| StoreError::Invalid(format!("{target}: {what}"));
    let meta = (object.get_mut("metadata"))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| invalid("metadata is not an object"))?;
    meta.entry("namespace")
        .or_insert_with(|| owner.namespace.clone().into());
    meta.entry("labels")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| invalid("metadata.labels is not an object"))?
        .insert(HOSTED_CLUSTER_LABEL.into(), owner.name.clone().into());
    meta.insert(
        "ownerReferences".into(),
        json!([{
            "apiVersion": owner.api_version,
            "kind": owner.kind,
            "name": owner.name,
            "uid": owner.uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }]),
    );
    Ok(object)
}

/// Whether `object` has `uid` among its owner references.
fn owned_by(object: &DynamicObject, uid: &str) -> bool {
    (object.metadata.owner_references.iter())
        .flatten()
        .any(|r| r.uid == uid)
}

/// `object` as the JSON the engine works with, with `apiVersion` and `kind` always set (list
/// responses leave them out of items).
fn to_value(object: DynamicObject, target: &Target<'_>) -> Result<Value, StoreError> {
    let mut value = serde_json::to_value(object).map_err(|source| StoreError::Malformed {
        what: target.to_string(),
        source,
    })?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), target.resource.api_version.into());
        map.insert("kind".into(), target.resource.kind.into());
    }
    Ok(value)
}

/// The API server's answer `e` to `verb` of `target` as a store error naming it. About a
/// Secret, the answer's message is left out (the module docs say why).
fn refused(verb: Verb, target: &Target<'_>, e: kube::Error) -> StoreError {
    let secret = target.resource.kind == "Secret";
    match e {
        kube::Error::Api(s) if is_invalid(&s) => {
            let why = if secret { withheld(&s) } else { s.message };
            StoreError::Invalid(format!("{verb} {target}: {why}"))
        }
        kube::Error::Api(s) if secret => StoreError::Backend(Box::new(ManagementError::Secret {
            verb,
            object: target.to_string(),
            answer: withheld(&s),
        })),
        // Either may hold the answer's body: its Display and Debug could quote the data.
        kube::Error::SerdeError(_) | kube::Error::FromUtf8(_) if secret => {
            StoreError::Backend(Box::new(ManagementError::Secret {
                verb,
                object: target.to_string(),
                answer: "the API server's answer could not be read".into(),
            }))
        }
        source => StoreError::Backend(Box::new(ManagementError::Request {
            verb,
            object: target.to_string(),
            source,
        })),
    }
}

/// Whether the API server refused an object for what it holds. Besides 422 and 400, a
/// server-side apply of an object without its kind's shape (a string where a map belongs,
/// data that is not base64) is answered 500, with one of two messages.
fn is_invalid(status: &kube::core::Status) -> bool {
    const MALFORMED: [&str; 2] = [
        "failed to create typed patch object",
        "failed to convert new object",
    ];
    status.code == 422
        || status.code == 400
        || (status.code == 500 && MALFORMED.iter().any(|m| status.message.starts_with(m)))
}

/// What may be said of a refusal about a Secret: its code, its reason and the fields it names.
fn withheld(status: &kube::core::Status) -> String {
    let fields: Vec<&str> = (status.details.iter())
        .flat_map(|d| &d.causes)
        .map(|c| c.field.as_str())
        .filter(|f| !f.is_empty())
        .collect();
    let mut answer = format!("the API server answered {}", status.code);
    if !status.reason.is_empty() {
        answer.push_str(&format!(" {}", status.reason));
    }
    if !fields.is_empty() {
        answer.push_str(&format!(" about {}", fields.join(", ")));
    }
    answer.push_str(" (its message is withheld: it may quote the Secret's data)");
    answer
}

#[async_trait]
impl ManagementCluster for KubeManagement {
    async fn apply(&self, owner: &Owner, objects: &[Value]) -> Result<(), StoreError> {
        let params = PatchParams::apply(HOSTED_FIELD_MANAGER).force();
        for object in objects {
            let named = ObjectRef::of(object).ok_or_else(|| {
                StoreError::Invalid(format!(
                    "an object of the hosted control plane of {}/{} lacks apiVersion, kind or \
                     metadata.name",
                    owner.namespace, owner.name
                ))
            })?;
            let resource = self
                .resource(&named.api_version, &named.kind, || {
                    format!(
                        "{} {} {}/{}",
                        named.api_version, named.kind, owner.namespace, named.name
                    )
                })
                .await?;
            let target = Target {
                resource,
                namespace: &owner.namespace,
                name: Some(&named.name),
            };
            let desired = owned(owner, object, &target)?;
            self.api(resource, &owner.namespace)
                .patch(&named.name, &params, &Patch::Apply(&desired))
                .await
                .map_err(|e| refused(Verb::Apply, &target, e))?;
        }
        Ok(())
    }

    async fn list(&self, owner: &Owner) -> Result<Vec<Value>, StoreError> {
        let selector =
            ListParams::default().labels(&format!("{HOSTED_CLUSTER_LABEL}={}", owner.name));
        let mut answer = Vec::new();
        for resource in self.resources().await? {
            let target = Target {
                resource,
                namespace: &owner.namespace,
                name: None,
            };
            let list = self
                .api(resource, &owner.namespace)
                .list(&selector)
                .await
                .map_err(|e| refused(Verb::List, &target, e))?;
            let mut objects = (list.items.into_iter())
                .filter(|o| owned_by(o, &owner.uid))
                .map(|o| to_value(o, &target))
                .collect::<Result<Vec<_>, _>>()?;
            // Names are unique within a kind and namespace.
            objects.sort_by_cached_key(|o| {
                (o.pointer("/metadata/name").and_then(Value::as_str))
                    .unwrap_or_default()
                    .to_owned()
            });
            answer.extend(objects);
        }
        Ok(answer)
    }

    async fn delete(&self, owner: &Owner, objects: &[ObjectRef]) -> Result<(), StoreError> {
        for named in objects {
            let resource = self
                .resource(&named.api_version, &named.kind, || {
                    format!(
                        "{} {} {}/{}",
                        named.api_version, named.kind, owner.namespace, named.name
                    )
                })
                .await?;
            let target = Target {
                resource,
                namespace: &owner.namespace,
                name: Some(&named.name),
            };
            match self
                .api(resource, &owner.namespace)
                .delete(&named.name, &DeleteParams::background())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(refused(Verb::Delete, &target, e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret() -> HostedResource {
        HostedResource {
            api_version: "v1",
            kind: "Secret",
            resource: ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
        }
    }

    fn owner() -> Owner {
        Owner {
            api_version: "capw.dev/v1alpha1".into(),
            kind: "Cluster".into(),
            namespace: "ns".into(),
            name: "alpha".into(),
            uid: "u-1".into(),
        }
    }

    #[test]
    fn an_applied_object_gets_the_label_the_namespace_and_one_owner_reference() {
        let resource = secret();
        let target = Target {
            resource: &resource,
            namespace: "ns",
            name: Some("alpha-etcd"),
        };
        let object = json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "alpha-etcd", "labels": {"app": "etcd"},
                         "ownerReferences": [{"uid": "someone-else"}]},
        });
        let applied = owned(&owner(), &object, &target).unwrap();
        assert_eq!(applied["metadata"]["namespace"], "ns");
        assert_eq!(applied["metadata"]["labels"]["app"], "etcd");
        assert_eq!(applied["metadata"]["labels"][HOSTED_CLUSTER_LABEL], "alpha");
        assert_eq!(
            applied["metadata"]["ownerReferences"],
            json!([{"apiVersion": "capw.dev/v1alpha1", "kind": "Cluster", "name": "alpha",
                    "uid": "u-1", "controller": true, "blockOwnerDeletion": true}])
        );
    }

    #[test]
    fn a_refusal_about_a_secret_names_it_and_never_quotes_the_answer() {
        let resource = secret();
        let target = Target {
            resource: &resource,
            namespace: "ns",
            name: Some("alpha-etcd"),
        };
        let mut status = kube::core::Status::failure("data.key: got \"hunter2\"", "Invalid");
        status.code = 422;
        let e = refused(Verb::Apply, &target, kube::Error::Api(status.boxed()));
        let text = format!("{e} {e:?}");
        assert!(text.contains("applying v1 Secret ns/alpha-etcd"), "{text}");
        assert!(text.contains("422 Invalid"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");

        let mut status = kube::core::Status::failure("hunter2", "InternalError");
        status.code = 500;
        let e = refused(Verb::Delete, &target, kube::Error::Api(status.boxed()));
        let text = format!("{} {e:?}", capw_text::error_chain(&e));
        assert!(text.contains("deleting v1 Secret ns/alpha-etcd"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}
