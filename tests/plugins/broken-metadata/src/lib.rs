//! A provider written against the bare WIT (no SDK to keep it honest) that breaks, all at once,
//! rules the SDK would not let a provider break: the conformance suite's fixture.
//!
//! - `describe` answers a version that is not semantic, a description of two lines that
//!   changes on every call, `control-plane` declared twice and no control-plane shape;
//! - its config schema is not a valid JSON Schema, and `validate-config` accepts anything,
//!   even text that is not JSON;
//! - `infrastructure` is exported but not declared, and answers anyway;
//! - `plan` answers a config that is not JSON with a retryable `invalid-input` error.
//!
//! Never install it anywhere but a test.

#![cfg(target_arch = "wasm32")]
// The exports `wit_bindgen::generate!` writes into this crate (`export!`) are unsafe code of
// its own making, so the workspace lint `unsafe_code` is lifted for this crate.
#![allow(unsafe_code)]

use std::time::{SystemTime, UNIX_EPOCH};

wit_bindgen::generate!({
    world: "provider",
    path: "../../../wit/0.1",
});

use capw::provider::types::{
    CallContext, Deletion, Endpoint, ErrorCode, MachineRef, ProviderError,
};
use exports::capw::provider::bootstrap::{
    self, BootstrapData, BootstrapRequest, SecretItem, SecretsState,
};
use exports::capw::provider::control_plane::{self, PlanInput, PlanOutput, Step};
use exports::capw::provider::infrastructure::{
    self, ClusterInfrastructure, ClusterState, ListedMachine, MachinePhase, MachineSpec,
    MachineStatus,
};
use exports::capw::provider::lifecycle_hooks::{self, HookRequest, HookResponse};
use exports::capw::provider::metadata::{
    self, Capabilities, ExtensionPoint, FieldError, ProviderMetadata, RequestedGrants,
};

struct BrokenMetadata;

fn unsupported(what: &str) -> ProviderError {
    ProviderError {
        code: ErrorCode::Unsupported,
        message: format!("{what} is not supported"),
        retryable: false,
        retry_after_ms: None,
    }
}

impl metadata::Guest for BrokenMetadata {
    fn describe() -> ProviderMetadata {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        ProviderMetadata {
            name: "broken-metadata".into(),
            version: "one point oh".into(),
            description: format!("Breaks metadata rules on purpose.\nDescribed at {nanos}."),
            extension_points: vec![ExtensionPoint::ControlPlane, ExtensionPoint::ControlPlane],
            config_schema: r#"{"type": "strung"}"#.into(),
            capabilities: Capabilities {
                control_plane_shape: None,
                control_plane_scalable: false,
                version_upgrades: false,
            },
            requested_grants: RequestedGrants {
                http_hosts: Vec::new(),
                secrets: Vec::new(),
            },
        }
    }

    fn validate_config(_config: String) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

impl infrastructure::Guest for BrokenMetadata {
    fn reconcile_cluster(ctx: CallContext) -> Result<ClusterState, ProviderError> {
        Ok(ClusterState::Ready(ClusterInfrastructure {
            control_plane_endpoint: Endpoint {
                host: format!("{}.broken.test", ctx.cluster.name),
                port: 6443,
            },
            failure_domains: Vec::new(),
            conditions: Vec::new(),
        }))
    }

    fn delete_cluster(_ctx: CallContext) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }

    fn reconcile_machine(
        _ctx: CallContext,
        _spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        Ok(MachineStatus {
            provider_id: None,
            phase: MachinePhase::Running,
            addresses: Vec::new(),
            failure_domain: None,
            message: String::new(),
            requeue_after_ms: None,
            conditions: Vec::new(),
        })
    }

    fn delete_machine(_ctx: CallContext, _machine: MachineRef) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }

    fn list_machines(_ctx: CallContext) -> Result<Vec<ListedMachine>, ProviderError> {
        Ok(Vec::new())
    }
}

impl bootstrap::Guest for BrokenMetadata {
    fn cluster_secrets(_ctx: CallContext) -> Result<SecretsState, ProviderError> {
        Err(unsupported("bootstrap"))
    }

    fn generate(
        _ctx: CallContext,
        _request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        Err(unsupported("bootstrap"))
    }

    fn kubeconfig(
        _ctx: CallContext,
        _endpoint: Endpoint,
        _secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        Err(unsupported("bootstrap"))
    }
}

impl control_plane::Guest for BrokenMetadata {
    fn plan(ctx: CallContext, input: PlanInput) -> Result<PlanOutput, ProviderError> {
        let config = ctx.config.trim();
        if !(config.starts_with('{') && config.ends_with('}')) {
            return Err(ProviderError {
                code: ErrorCode::InvalidInput,
                message: "the config is not JSON; retry, as configured".into(),
                retryable: true,
                retry_after_ms: None,
            });
        }
        Ok(PlanOutput {
            step: Step::None,
            initialized: !input.members.is_empty(),
            replicas: input.replicas,
            ready_replicas: input.replicas,
            up_to_date_replicas: input.replicas,
            endpoint: input.endpoint,
            conditions: Vec::new(),
        })
    }
}

impl lifecycle_hooks::Guest for BrokenMetadata {
    fn handle(_ctx: CallContext, _request: HookRequest) -> Result<HookResponse, ProviderError> {
        Err(unsupported("lifecycle-hooks"))
    }
}

export!(BrokenMetadata);
