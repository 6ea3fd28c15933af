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
//!
//! # Floor plan
//!
//! Imports run one way, downwards; `tests/layout.rs` reads every path in these files (`use`
//! lines and inline `crate::`/`super::`/`self::` paths) and fails on one that runs up or
//! sideways.
//!
//! | Layer | Modules | May import |
//! |---|---|---|
//! | top | `executor`, `admission`, `requeue`, this file | anything |
//! | the pass | `pass` (its `mod.rs`), `pass::{validate, workload, status}` | everything below |
//! | actions | `pass::actions::*`, one file per family | the pass's base and below, never another action |
//! | the pass's base | `pass::{env, note, snapshot, convert}` | each other, `providers`, the base |
//! | providers wing | `providers` and its files (registry, sources, secrets, OCI) | itself and the base; nothing under `pass` |
//! | base | `store`, `objects`, `config`, `error` | the base only |
//!
//! A new action goes into `pass/actions/` (a new family, a new file); what two actions share
//! goes into the pass's base (a helper on [`Env`](pass::env::Env), a conversion in
//! `pass::convert`). A test's own module may import what its file may.

#![warn(missing_docs)]

mod admission;
mod config;
mod error;
mod executor;
mod objects;
mod pass;
mod providers;
mod requeue;
pub mod store;

pub use admission::Refusal;
pub use capw_text::error_chain;
pub use capw_workload::{ClusterCache, ClusterCacheConfig};
pub use config::{EngineConfig, RequeueBounds, SecretSource, WorkloadClusterAccess};
pub use error::EngineError;
pub use executor::Executor;
pub use objects::kubeconfig::{
    KUBECONFIG_KEY, KUBECONFIG_SECRET_TYPE, kubeconfig_secret_name, kubeconfig_value,
};
pub use objects::{
    CLUSTER_FINALIZER, CONTROL_PLANE_PROVIDER_PREFIX, MACHINE_FINALIZER, SECRET_KIND, SecretItems,
    cluster_secret_name, stored_secret_items,
};
pub use pass::PassOutcome;
pub use providers::secrets::FileSecrets;
pub use providers::sources::{
    ConfigMapSourceError, MAX_CONFIG_MAP_COMPONENT, StoreSecretError, StoreSecrets,
    config_map_component,
};
pub use providers::{LoadedProvider, ProviderRegistry};
pub use requeue::Requeue;
