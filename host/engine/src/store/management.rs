//! The management cluster's own workloads: where a hosted control plane's objects go.
//!
//! A hosted plan (contract 0.3, `apply-manifests`) names Deployments, StatefulSets, Services,
//! Secrets and ConfigMaps for the host to apply beside the Cluster. They are not capw's kinds
//! and do not go through the [`ObjectStore`](super::ObjectStore): the Kubernetes mode reaches
//! them through discovery and dynamic objects (capw-kube). The local mode has no management
//! cluster and no implementation: it refuses hosted control planes.
//!
//! The engine checks every object before it calls [`ManagementCluster::apply`]: an allowed
//! kind ([`HOSTED_KINDS`]), the owner's namespace, a name with the owner's name and a dash
//! first. The implementation applies what it is given and lists what carries the owner's
//! label; it decides nothing.

use async_trait::async_trait;
use serde_json::Value;

use super::StoreError;

/// The kinds a hosted plan may apply, as (apiVersion, kind).
pub const HOSTED_KINDS: [(&str, &str); 5] = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
];

/// The field manager of every server-side apply of a hosted plan's objects.
pub const HOSTED_FIELD_MANAGER: &str = "capw-hosted-control-plane";

/// The label every applied object carries: the owning Cluster's name.
pub const HOSTED_CLUSTER_LABEL: &str = "capw.io/hosted-control-plane";

/// The Cluster that owns a hosted control plane's objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The Cluster's apiVersion (`capw.io/v1alpha1`).
    pub api_version: String,
    /// `Cluster`.
    pub kind: String,
    /// Its namespace, which every object shares.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid: the objects' owner reference.
    pub uid: String,
}

/// One applied object, by what names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    /// `apps/v1` or `v1`.
    pub api_version: String,
    /// Its kind.
    pub kind: String,
    /// Its name (in the owner's namespace).
    pub name: String,
}

impl ObjectRef {
    /// What names `object`; `None` when it lacks any of the three.
    pub fn of(object: &Value) -> Option<ObjectRef> {
        Some(ObjectRef {
            api_version: object.get("apiVersion")?.as_str()?.to_owned(),
            kind: object.get("kind")?.as_str()?.to_owned(),
            name: object.pointer("/metadata/name")?.as_str()?.to_owned(),
        })
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.api_version, self.kind, self.name)
    }
}

/// The management cluster's workloads, as far as hosted control planes need them.
///
/// # Guarantees every implementation gives
///
/// - [`apply`](ManagementCluster::apply) is server-side apply as [`HOSTED_FIELD_MANAGER`],
///   forcing conflicts, of each object as given plus the label [`HOSTED_CLUSTER_LABEL`] and
///   an owner reference to `owner`; an object is applied whole or not at all.
/// - [`list`](ManagementCluster::list) answers every object of the [`HOSTED_KINDS`] in the
///   owner's namespace with the owner's label and its uid among the owner references, with
///   its status as stored.
/// - [`delete`](ManagementCluster::delete) of an object already gone succeeds.
#[async_trait]
pub trait ManagementCluster: Send + Sync + std::fmt::Debug {
    /// Applies `objects`, all in `owner`'s namespace, owned by it.
    async fn apply(&self, owner: &Owner, objects: &[Value]) -> Result<(), StoreError>;

    /// Every object applied for `owner`.
    async fn list(&self, owner: &Owner) -> Result<Vec<Value>, StoreError>;

    /// Deletes `objects` from `owner`'s namespace.
    async fn delete(&self, owner: &Owner, objects: &[ObjectRef]) -> Result<(), StoreError>;
}
