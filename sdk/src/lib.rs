//! Write capw providers in Rust.
//!
//! A capw provider is a WebAssembly component the capw host calls through the
//! `capw:provider@0.3.0` contract (`wit/0.3/` in the capw repository). This crate turns
//! that contract into ordinary Rust: one trait for who the provider is ([`Provider`]), one trait
//! per extension point ([`Infrastructure`], [`Bootstrap`], [`ControlPlane`],
//! [`LifecycleHooks`]) whose methods all have a default that answers `unsupported`, a typed,
//! already-parsed config in every call's [`Context`], and one macro, [`export_provider!`], that
//! exports the whole `provider` world.
//!
//! # Where to start
//!
//! 1. Declare a config type deriving `serde::Deserialize` and `schemars::JsonSchema`; the host
//!    shows its schema and rejects a bad config before any call. Implement [`Validate`] for
//!    it: empty, or with the rules a schema cannot say.
//! 2. Implement [`Provider`] for a unit struct: name, description and requested grants. The
//!    version comes from your `Cargo.toml`.
//! 3. Implement the extension points you serve; name the others in
//!    `export_provider!(MyProvider, unsupported: [...])`. A control plane declares its shape
//!    and capabilities as constants of [`ControlPlane`]: the compiler asks for the shape.
//! 4. Build with `cargo build --target wasm32-wasip2`: the `.wasm` file is the component.
//!
//! # A complete minimal provider
//!
//! ```no_run
//! use capw_sdk::infrastructure::{ClusterInfrastructure, ClusterState};
//! use capw_sdk::types::{Deletion, Endpoint, ProviderError};
//! use capw_sdk::{Context, Infrastructure, Provider, Validate};
//!
//! /// The provider's config, as the ClusterClass gives it.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase", deny_unknown_fields)]
//! pub struct Config {
//!     /// Port of the API server.
//!     port: u16,
//! }
//!
//! /// Any port parses; no rule beyond the schema.
//! impl Validate for Config {}
//!
//! pub struct Minimal;
//!
//! impl Provider for Minimal {
//!     type Config = Config;
//!     const NAME: &'static str = "minimal";
//!     const DESCRIPTION: &'static str = "Points every cluster at localhost.";
//! }
//!
//! impl Infrastructure for Minimal {
//!     fn reconcile_cluster(ctx: &Context<Config>) -> Result<ClusterState, ProviderError> {
//!         Ok(ClusterState::Ready(ClusterInfrastructure {
//!             control_plane_endpoint: Some(Endpoint { host: "127.0.0.1".into(), port: ctx.config.port }),
//!             failure_domains: vec![],
//!             conditions: vec![],
//!         }))
//!     }
//!
//!     fn delete_cluster(_ctx: &Context<Config>) -> Result<Deletion, ProviderError> {
//!         Ok(Deletion::Deleted)
//!     }
//!     // reconcile-machine, delete-machine and list-machines answer `unsupported`.
//! }
//!
//! capw_sdk::export_provider!(Minimal, unsupported: [Bootstrap, ControlPlane, LifecycleHooks]);
//! ```
//!
//! # What the SDK does for you
//!
//! - `metadata.describe` is built from [`Provider`], the crate's version, the `SUPPORTED`
//!   constant of each extension point trait, [`ControlPlane`]'s shape and capabilities, and
//!   `schemars::schema_for!(Config)`.
//! - `metadata.validate-config` parses the config and reports a type error at the JSON Pointer
//!   of the field that caused it (see [`config`]), then runs the config's [`Validate`].
//! - Every other call parses the call context's config into `Config` and answers
//!   `invalid-input` when it does not parse; an extension point whose `SUPPORTED` is `false`
//!   answers `unsupported` without parsing anything. The context's other fields
//!   ([`Context::cluster`], [`Context::idempotency_key`]) are asked of the host only when read.
//!
//! # Contract versions
//!
//! This SDK builds components of `capw:provider@0.3.0`: what it adds
//! (a control-plane member's [`etcd`](control_plane::Member::etcd) and
//! [`out_of_date`](control_plane::Member::out_of_date), the
//! [`CHAINS_UPGRADES`](ControlPlane::CHAINS_UPGRADES) capability, the service-run control
//! plane's [`reconcile_control_plane`](ControlPlane::reconcile_control_plane) and
//! [`delete_control_plane`](ControlPlane::delete_control_plane), a worker's
//! [`join`](bootstrap::BootstrapRequest::join) credentials, a hosted control plane's applied
//! [`objects`](control_plane::PlanInput::objects), minted
//! [`certificates`](control_plane::Plan::certificates) and
//! [`shared_datastore`](control_plane::Plan::shared_datastore)) is released and frozen: a
//! component built now keeps loading in every later host. A host serves 0.1, 0.2 and
//! 0.3 components side by side, so a component built with an earlier SDK keeps working
//! unchanged. From 0.1, rebuilding needs the changes in [`Context`]'s migration note and, for
//! a control plane, the plan's [`ControlPlaneStatus`](control_plane::ControlPlaneStatus) (the
//! fields `initialized`, `endpoint` and `conditions` of the 0.1 plan moved into `status`);
//! from 0.2, a control plane's members carry the new fields, its plan input `objects` and
//! its plan `certificates` (both empty outside the hosted shape).
//!
//! # Host capabilities
//!
//! [`log`] writes to the host's logs, [`secrets`] reads granted secrets, and [`http`] makes
//! outbound requests to granted hosts. Outside a wasm32 component (a native unit test) there is
//! no host: logs go to stderr, secrets are never granted and HTTP requests fail.
//!
//! # Unit tests
//!
//! [`testing`] builds call contexts and checks the config schema and `validate-config`'s field
//! errors, in a provider's native unit tests.

#![warn(missing_docs)]

pub mod bootstrap;
pub mod config;
mod context;
pub mod control_plane;
mod export;
pub mod http;
pub mod infrastructure;
pub mod lifecycle_hooks;
pub mod log;
pub mod metadata;
mod provider;
pub mod secrets;
pub mod testing;
pub mod types;

pub use bootstrap::Bootstrap;
pub use context::Context;
#[doc(hidden)]
pub use context::{CallSource, enter as __enter};
pub use control_plane::ControlPlane;
pub use infrastructure::Infrastructure;
pub use lifecycle_hooks::LifecycleHooks;
#[doc(hidden)]
pub use provider::Version as __Version;
pub use provider::{Provider, Validate};

/// The most used items, for `use capw_sdk::prelude::*;`.
pub mod prelude {
    pub use crate::bootstrap::{
        BootstrapData, BootstrapFormat, BootstrapRequest, ControlPlaneMember, JoinCredentials,
        SecretItem, SecretsState,
    };
    pub use crate::control_plane::{
        CertificateAuthority, CertificateRequest, CertificateSecret, CertificateUsage,
        ControlPlaneAccess, ControlPlaneStatus, EtcdMembership, HostedObject, MachineToCreate,
        Member, Plan, PlanInput, ReconcileOutput, SecretMaterial, Step,
    };
    pub use crate::infrastructure::{
        ClusterInfrastructure, ClusterState, FailureDomain, ListedMachine, MachinePhase,
        MachineSpec, MachineStatus,
    };
    pub use crate::lifecycle_hooks::{Hook, HookRequest, HookResponse};
    pub use crate::metadata::{Capabilities, ControlPlaneShape, FieldError, RequestedGrants};
    pub use crate::types::{
        Address, AddressKind, ClusterRef, Condition, ConditionStatus, Deletion, Endpoint,
        ErrorCode, InProgress, JoinToken, KubernetesVersion, MachineRef, MachineRole,
        ProviderError,
    };
    pub use crate::{
        Bootstrap, Context, ControlPlane, Infrastructure, LifecycleHooks, Provider, Validate,
        export_provider,
    };
}

/// Bindings generated from the contract. Not a public API: use the re-exports in the modules
/// above, which stay put when the generator changes its layout.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod __bindings {
    wit_bindgen::generate!({
        world: "provider",
        path: "../wit/0.3",
        pub_export_macro: true,
        export_macro_name: "__export_provider_world",
        default_bindings_module: "capw_sdk::__bindings",
        // Providers compare answers in their unit tests.
        additional_derives: [PartialEq, Eq],
    });
}
