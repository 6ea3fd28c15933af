//! capw's engine: what both modes share.
//!
//! The local mode (capw-local) runs it over its redb state file, the Kubernetes mode
//! (capw-kube) over the API server; each decides only when a cluster is passed over.
//!
//! - [`store`]: the [`ObjectStore`](store::ObjectStore) API the engine reads and writes
//!   objects through, its keys and errors, and an [`Overlay`](store::Overlay) for dry runs.
//! - [`ProviderRegistry`]: every `WasmProvider` loaded (from a file, a ConfigMap or an OCI
//!   registry), its status written, its grants resolved through [`SecretSource`].
//! - [`Executor`]: one reconcile pass over one Cluster (observe, decide with the pure core
//!   `capw-reconcile`, act through the providers, write the status), and
//!   [`Executor::admit`], the same checks as an admission decision.
//! - [`Requeue`]: when a cluster whose work is under way is passed over again, one policy for
//!   both modes.
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
//! Every provider call runs under its provider's deadline.

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
pub mod store;
mod validate;
mod view;
mod workload;

pub use admission::Refusal;
pub use capw_text::error_chain;
pub use capw_workload::{ClusterCache, ClusterCacheConfig};
pub use config::{EngineConfig, SecretSource};
pub use error::EngineError;
pub use executor::Executor;
pub use kubeconfig::{
    KUBECONFIG_KEY, KUBECONFIG_SECRET_TYPE, kubeconfig_secret_name, kubeconfig_value,
};
pub use objects::{
    CLUSTER_FINALIZER, INFRASTRUCTURE_KIND, MACHINE_FINALIZER, SECRET_KIND, SecretItems,
    cluster_secret_name, stored_secret_items,
};
pub use pass::PassOutcome;
pub use registry::{LoadedProvider, ProviderRegistry};
pub use requeue::{Requeue, RequeueBounds};
pub use secrets::FileSecrets;
pub use sources::{
    ConfigMapSourceError, MAX_CONFIG_MAP_COMPONENT, StoreSecretError, StoreSecrets,
    config_map_component,
};
pub use workload::WorkloadClusterAccess;
