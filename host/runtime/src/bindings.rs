//! Host bindings of the `capw:provider@0.1.0` contract, fenced in here: the rest of the crate
//! and its users see the re-exported types only.

mod generated {
    wasmtime::component::bindgen!({
        world: "provider",
        path: "../../wit",
        exports: { default: async },
        additional_derives: [PartialEq, serde::Serialize, serde::Deserialize],
    });
}

pub use generated::capw::provider::types;
pub(crate) use generated::capw::provider::{host_log, host_secrets};

/// The `metadata` interface every provider exports.
pub mod metadata {
    pub use super::generated::exports::capw::provider::metadata::{
        Capabilities, ControlPlaneShape, ExtensionPoint, FieldError, ProviderMetadata,
        RequestedGrants,
    };
}

/// The `infrastructure` extension point.
pub mod infrastructure {
    pub use super::generated::exports::capw::provider::infrastructure::{
        ClusterInfrastructure, ClusterState, FailureDomain, ListedMachine, MachinePhase,
        MachineSpec, MachineStatus,
    };
}

/// The `bootstrap` extension point.
pub mod bootstrap {
    pub use super::generated::exports::capw::provider::bootstrap::{
        BootstrapData, BootstrapFormat, BootstrapRequest, ControlPlaneMember, SecretItem,
        SecretsState,
    };
}

/// The `control-plane` extension point.
pub mod control_plane {
    pub use super::generated::exports::capw::provider::control_plane::{
        MachineToCreate, Member, PlanInput, PlanOutput, Step,
    };
}

/// The optional `lifecycle-hooks` extension point.
pub mod lifecycle_hooks {
    pub use super::generated::exports::capw::provider::lifecycle_hooks::{
        Hook, HookRequest, HookResponse,
    };
}
