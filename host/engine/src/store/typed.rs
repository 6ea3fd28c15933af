//! capw's kinds over any [`ObjectStore`], typed: read as the `capw-api` types, written from
//! them, keyed by the kind their `kube::Resource` derive gives.
//!
//! ```ignore
//! use capw_engine::store::TypedObjects;
//! let cluster: Option<capw_api::Cluster> = store.get_as("default", "alpha").await?;
//! let providers: Vec<capw_api::WasmProvider> = store.list_as(None).await?;
//! ```

use std::future::Future;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Applied, ObjectKey, ObjectStore, StoreError};

/// A kind the store holds as a typed object: one of `capw-api`'s kinds (WasmProvider,
/// ClusterClass, Cluster, Machine, ClusterInfrastructure) or a Kubernetes type.
pub trait Kind: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync {}

impl<K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync> Kind for K {}

/// The key of the object of kind `K` named `name` in `namespace`.
pub fn key_of<K: Kind>(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::namespaced(&K::kind(&()), namespace, name)
}

/// The key of the cluster-scoped object of kind `K` named `name` (a `WasmProvider`).
pub fn cluster_key_of<K: Kind>(name: &str) -> ObjectKey {
    ObjectKey::cluster_scoped(&K::kind(&()), name)
}

/// A stored object as its kind's type.
///
/// # Errors
///
/// [`StoreError::Malformed`] naming the object when its shape is not its kind's.
pub fn decode<K: Kind>(object: Value) -> Result<K, StoreError> {
    let what = ObjectKey::of(&object).map_or_else(|_| K::kind(&()).into_owned(), |k| k.to_string());
    serde_json::from_value(object).map_err(|source| StoreError::Malformed { what, source })
}

/// Typed reads and writes over an [`ObjectStore`]; every store has them.
pub trait TypedObjects: ObjectStore {
    /// The object of kind `K` named `name` in `namespace`, if there is one.
    fn get_as<K: Kind>(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<K>, StoreError>> + Send {
        let key = key_of::<K>(namespace, name);
        async move { self.get(&key).await?.map(decode).transpose() }
    }

    /// Every object of kind `K`, in `namespace` or everywhere.
    fn list_as<K: Kind>(
        &self,
        namespace: Option<&str>,
    ) -> impl Future<Output = Result<Vec<K>, StoreError>> + Send {
        async move {
            let kind = K::kind(&());
            let objects = self.list(&kind, namespace).await?;
            objects.into_iter().map(decode).collect()
        }
    }

    /// The objects of kind `K` in `namespace` whose label `label` is `value`.
    fn list_labelled_as<K: Kind>(
        &self,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> impl Future<Output = Result<Vec<K>, StoreError>> + Send {
        async move {
            let kind = K::kind(&());
            let objects = self.list_labelled(&kind, namespace, label, value).await?;
            objects.into_iter().map(decode).collect()
        }
    }

    /// Creates or updates `object` (its `spec` and metadata; `status` is written by
    /// [`ObjectStore::update_status`]), and returns it as stored.
    fn apply_as<K: Kind>(
        &self,
        object: &K,
    ) -> impl Future<Output = Result<(K, Applied), StoreError>> + Send {
        let json = serde_json::to_value(object);
        async move {
            let json = json.map_err(|source| StoreError::Malformed {
                what: K::kind(&()).into_owned(),
                source,
            })?;
            let (stored, applied) = self.apply(json).await?;
            Ok((decode(stored)?, applied))
        }
    }
}

impl<S: ObjectStore + ?Sized> TypedObjects for S {}
