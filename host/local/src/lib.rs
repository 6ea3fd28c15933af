//! capw's embedded local mode: one process, the embedded store, real provider components.
//!
//! Start with [`LocalConfig`] (where the state lives and where provider components are read
//! from), then [`Executor::open`], which loads every `WasmProvider` in the store into a
//! [`ProviderRegistry`] (writing each one's status), and [`Executor::reconcile_until_settled`],
//! which drives every Cluster with the pure reconcile core (`capw-reconcile`) until each one
//! has converged, is gone, or is blocked on something only a person can fix.
//!
//! # State layout
//!
//! ```text
//! <state-dir>/            (default `.capw/`)
//!   state.redb            the object store (capw-store)
//!   simcloud.json         the in-process simcloud's state (written by `capw up`)
//!   secrets/<name>        value of a secret granted to a provider (secretRef without key)
//!   secrets/<name>/<key>  value of one key of it (secretRef with key)
//! ```
//!
//! # Objects the executor owns
//!
//! - `Machine` objects, named `<cluster>-<pool>-<5 hex>`, with idempotency key
//!   `<cluster uid>/<machine name>`; written before any provider call that may create.
//! - `Secret` `<cluster>-cluster-secrets`: the bootstrap provider's cluster secrets (base64,
//!   never logged).
//! - `Secret` `<cluster>-kubeconfig` (key `value`, type `cluster.x-k8s.io/secret`, owned by
//!   the Cluster): the admin kubeconfig, with workload cluster access on
//!   ([`WorkloadClusterAccess`]); rewritten when the endpoint changes.
//! - `ClusterInfrastructure` `<cluster>`: the infrastructure provider's last answer
//!   (endpoint, failure domains, deleted), which the Cluster's status schema has no room for.
//!
//! Every provider call runs under its provider's deadline, and every Cluster in its own tokio
//! task, so a hanging provider for one cluster never delays another.

mod actions;
mod admission;
mod calls;
mod config;
mod error;
mod executor;
mod kubeconfig;
mod machines;
mod objects;
mod oci_source;
mod pass;
mod registry;
mod requeue;
mod secrets;
mod sources;
mod status;
mod validate;
mod view;
mod workload;

pub use admission::Refusal;
pub use capw_workload::{ClusterCache, ClusterCacheConfig};
pub use config::{LocalConfig, STATE_FILE, SecretSource};
pub use error::LocalError;
pub use executor::{ClusterOutcome, Executor, Progress, SettleReport};
pub use kubeconfig::{
    KUBECONFIG_KEY, KUBECONFIG_SECRET_TYPE, kubeconfig_secret_name, kubeconfig_value,
};
pub use objects::{
    CLUSTER_FINALIZER, INFRASTRUCTURE_KIND, MACHINE_FINALIZER, SECRET_KIND, SecretItems,
    cluster_secret_name, stored_secret_items,
};
pub use pass::PassOutcome;
pub use registry::{LoadedProvider, ProviderRegistry};
pub use requeue::Requeue;
pub use secrets::LocalSecrets;
pub use sources::{
    ConfigMapSourceError, MAX_CONFIG_MAP_COMPONENT, StoreSecretError, StoreSecrets,
    config_map_component,
};
pub use workload::WorkloadClusterAccess;
