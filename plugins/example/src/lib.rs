//! A minimal capw provider written with `capw-sdk`: every extension point, deterministic
//! answers, no backend.
//!
//! It is the reference the host's tests call: every function, every record and variant of the
//! contract, and a `simulate` knob that turns every call into its in-progress form or an error.
//! Nothing here talks to a cloud; answers are derived from the call's input alone, so the same
//! input always gives the same answer.
//!
//! Where to look: [`config`] for the config and its rules, [`infrastructure`],
//! [`bootstrap`] and [`control_plane`] for the extension points, [`simulate`] for the knob.

#![warn(missing_docs)]

pub mod bootstrap;
pub mod config;
pub mod control_plane;
pub mod infrastructure;
pub mod simulate;

use capw_sdk::lifecycle_hooks::{HookRequest, HookResponse};
use capw_sdk::metadata::FieldError;
use capw_sdk::types::ProviderError;
use capw_sdk::{Context, LifecycleHooks, Provider, Validate};

pub use config::{ExampleConfig, Simulate};

/// The example provider. Stateless, like every provider: all it knows comes with the call.
pub struct ExampleProvider;

impl Provider for ExampleProvider {
    type Config = ExampleConfig;
    const NAME: &'static str = "example";
    const DESCRIPTION: &'static str =
        "Deterministic reference provider implementing every extension point, for tests.";
}

impl Validate for ExampleConfig {
    /// The rules of [`ExampleConfig::validate`].
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        ExampleConfig::validate(self)
    }
}

impl LifecycleHooks for ExampleProvider {
    /// Lets every transition go on, unless `simulate` says otherwise.
    fn handle(
        ctx: &Context<ExampleConfig>,
        _request: HookRequest,
    ) -> Result<HookResponse, ProviderError> {
        if let Some(progress) = simulate::outcome(&ctx.config)? {
            return Ok(HookResponse::Hold(progress));
        }
        Ok(HookResponse::Proceed)
    }
}

capw_sdk::export_provider!(ExampleProvider);

#[cfg(test)]
mod tests {
    use capw_sdk::lifecycle_hooks::Hook;
    use capw_sdk::metadata::{self, ControlPlaneShape, ExtensionPoint};
    use capw_sdk::testing::{self, context, version};

    use super::*;

    #[test]
    fn describe_lists_every_point() {
        let m = metadata::describe::<ExampleProvider>();
        assert_eq!(m.name, "example");
        assert_eq!(m.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(
            m.extension_points,
            vec![
                ExtensionPoint::Infrastructure,
                ExtensionPoint::Bootstrap,
                ExtensionPoint::ControlPlane,
                ExtensionPoint::LifecycleHooks,
            ]
        );
        assert_eq!(
            m.capabilities.control_plane_shape,
            Some(ControlPlaneShape::Machines)
        );
        let schema = testing::config_schema::<ExampleProvider>();
        assert!(
            schema["properties"]["existingMachines"].is_object(),
            "{schema}"
        );
    }

    #[test]
    fn hooks_proceed_or_hold() {
        let request = HookRequest {
            hook: Hook::BeforeClusterUpgrade,
            from_version: Some(version(34)),
            to_version: version(35),
        };
        let c = context(r#"{"region": "eu-1"}"#);
        assert_eq!(
            ExampleProvider::handle(&c, request),
            Ok(HookResponse::Proceed)
        );
        let c = context(r#"{"region": "eu-1", "simulate": "in-progress"}"#);
        assert!(matches!(
            ExampleProvider::handle(&c, request),
            Ok(HookResponse::Hold(_))
        ));
    }
}
