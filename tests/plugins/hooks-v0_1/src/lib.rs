//! A lifecycle-hooks provider written against the frozen WIT of `capw:provider@0.1.0`
//! (`wit/0.1/`), with wit-bindgen directly: the 0.1 component of the host's tests that load
//! both contract versions into one host, and the 0.1 side of the benchmark of `handle`
//! (host/runtime/benches/calls.rs). Its twin, `tests/plugins/hooks-v0_2`, does the same work
//! at 0.2.
//!
//! `handle` reads the config from the call context record, parses its two fields (`region`,
//! `zones`) and answers `proceed`;
//! a config whose region is `hold` answers `hold` with the cluster's name in the message, so a
//! test sees the context's other fields arrive; a config that is not JSON answers
//! `invalid-input`.

#![cfg(target_arch = "wasm32")]
// The exports `wit_bindgen::generate!` writes into this crate (`export!`) are unsafe code of
// its own making, so the workspace lint `unsafe_code` is lifted for this crate.
#![allow(unsafe_code)]

wit_bindgen::generate!({
    world: "lifecycle-hooks-provider",
    path: "../../../wit/0.1",
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

struct HooksV01;

impl metadata::Guest for HooksV01 {
    fn describe() -> ProviderMetadata {
        ProviderMetadata {
            name: "hooks-v0-1".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Lifecycle hooks at contract 0.1, for the host's tests.".into(),
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

impl lifecycle_hooks::Guest for HooksV01 {
    fn handle(ctx: CallContext, _request: HookRequest) -> Result<HookResponse, ProviderError> {
        let config = parse(&ctx.config).map_err(|message| ProviderError {
            code: ErrorCode::InvalidInput,
            message,
            retryable: false,
            retry_after_ms: None,
        })?;
        if config.region != "hold" {
            return Ok(HookResponse::Proceed);
        }
        let cluster = ctx.cluster;
        Ok(HookResponse::Hold(InProgress {
            reason: "Holding".into(),
            message: format!(
                "holding {}/{} ({} zones, key {}, {} ms left)",
                cluster.namespace,
                cluster.name,
                config.zones.len(),
                ctx.idempotency_key,
                ctx.deadline_ms.min(1) // 0 or 1, as at 0.2
            ),
            requeue_after_ms: 1000,
            conditions: Vec::new(),
        }))
    }
}

export!(HooksV01);
