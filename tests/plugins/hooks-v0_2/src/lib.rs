//! A lifecycle-hooks provider written against the bare WIT of `capw:provider@0.2.0`, with
//! wit-bindgen directly: the host's tests of its 0.2 call path, and the 0.2 side of the
//! benchmark of `handle` (host/runtime/benches/calls.rs).
//!
//! `handle` does the work the example provider's does: it reads the config through the
//! borrowed call context, parses its two fields (`region`, `zones`) and answers `proceed`;
//! a config whose region is `hold` answers `hold` with the cluster's name in the message, so a
//! test sees the context's other fields arrive; a config that is not JSON answers
//! `invalid-input`.

#![cfg(target_arch = "wasm32")]
// The exports `wit_bindgen::generate!` writes into this crate (`export!`) are unsafe code of
// its own making, so the workspace lint `unsafe_code` is lifted for this crate.
#![allow(unsafe_code)]

wit_bindgen::generate!({
    world: "lifecycle-hooks-provider",
    path: "../../../wit/0.2",
});

use capw::provider::types::{CallContext, ErrorCode, InProgress, ProviderError};
use exports::capw::provider::lifecycle_hooks::{self, HookRequest, HookResponse};
use exports::capw::provider::metadata::{
    self, Capabilities, ExtensionPoint, FieldError, ProviderMetadata, RequestedGrants,
};

/// The config: the example provider's first two fields.
#[derive(serde::Deserialize)]
struct Config {
    region: String,
    #[serde(default)]
    zones: Vec<String>,
}

fn parse(config: &str) -> Result<Config, String> {
    serde_json::from_str(config).map_err(|e| e.to_string())
}

struct HooksV02;

impl metadata::Guest for HooksV02 {
    fn describe() -> ProviderMetadata {
        ProviderMetadata {
            name: "hooks-v0-2".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Lifecycle hooks at contract 0.2, for the host's tests.".into(),
            extension_points: vec![ExtensionPoint::LifecycleHooks],
            config_schema: r#"{"type":"object","required":["region"]}"#.into(),
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

    fn validate_config(config: String) -> Result<(), Vec<FieldError>> {
        parse(&config).map(drop).map_err(|message| {
            vec![FieldError {
                path: String::new(),
                message,
            }]
        })
    }
}

impl lifecycle_hooks::Guest for HooksV02 {
    fn handle(ctx: &CallContext, _request: HookRequest) -> Result<HookResponse, ProviderError> {
        let config = parse(&ctx.config()).map_err(|message| ProviderError {
            code: ErrorCode::InvalidInput,
            message,
            retryable: false,
            retry_after_ms: None,
        })?;
        if config.region != "hold" {
            return Ok(HookResponse::Proceed);
        }
        let cluster = ctx.cluster();
        Ok(HookResponse::Hold(InProgress {
            reason: "Holding".into(),
            message: format!(
                "holding {}/{} ({} zones, key {}, {} ms left)",
                cluster.namespace,
                cluster.name,
                config.zones.len(),
                ctx.idempotency_key(),
                ctx.remaining_ms().min(1) // 0 or 1: the exact figure varies
            ),
            requeue_after_ms: 1000,
            conditions: Vec::new(),
        }))
    }
}

export!(HooksV02);
