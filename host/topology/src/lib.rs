//! capw's topology: a Cluster and its ClusterClass in, the desired state out.
//!
//! Start with [`compute_desired_state`]. It resolves the Cluster's variables against the
//! class's declarations (OpenAPI v3 schemas, structural defaults, per-pool overrides),
//! applies the class's patches to every provider config, checks each config against its
//! provider's JSON Schema when known, and returns a [`DesiredState`]; or, when anything is
//! wrong, [`TopologyErrors`] listing every problem with the path of its culprit.
//!
//! Pure: plain data in, plain data out. This crate knows neither wasmtime nor Kubernetes
//! clients; calling providers' own `validate-config` is the executor's job, for which
//! [`DesiredState::provider_configs`] lists every config with its origin.

mod checks;
mod compute;
mod configs;
mod desired;
mod error;
mod health;
mod patches;
mod path;
mod rollout;
mod schema;
mod shape;
mod stamp;
pub mod value_from;
mod variables;

pub use checks::{MAX_CONTROL_PLANE_REPLICAS, MAX_POOL_REPLICAS};
pub use compute::{check_class, compute_desired_state};
pub use configs::ProviderSchemas;
pub use desired::{
    ConfigOrigin, DesiredControlPlane, DesiredPool, DesiredState, PoolHealthCheck, PoolRollout,
    ProviderConfig, UnhealthyCondition,
};
pub use error::{Subject, TopologyError, TopologyErrorKind, TopologyErrors};
pub use health::DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS;
pub use shape::SHAPES_MACHINE;
pub use variables::{BUILTIN, Variables};
