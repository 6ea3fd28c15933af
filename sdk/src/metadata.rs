//! The `metadata` interface every provider exports: `describe` and `validate-config`.
//!
//! The SDK implements both from [`Provider`]; [`describe`] and [`validate_config`] are public
//! so that a provider's unit tests can check what the host will see.

use schemars::JsonSchema;

use crate::__bindings::exports::capw::provider::metadata::Guest;
use crate::provider::Version;
use crate::{Bootstrap, ControlPlane, Infrastructure, LifecycleHooks, Provider, Validate, config};

pub use crate::__bindings::exports::capw::provider::metadata::{
    Capabilities, ControlPlaneShape, ExtensionPoint, FieldError, ProviderMetadata, RequestedGrants,
};

impl FieldError {
    /// A problem with one field: `path` is its JSON Pointer (RFC 6901, e.g. `/zones/2`, `""`
    /// for the whole document; see [`config::json_pointer`]), `message` says what is wrong.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// What `metadata.describe` answers for `P`.
///
/// # Guarantees
///
/// - `extension-points` lists, in contract order, the points whose trait has
///   `SUPPORTED = true`; the others answer `unsupported`.
/// - `config-schema` is `schemars::schema_for!(P::Config)` as JSON (draft 2020-12).
/// - `version` is the provider crate's, as [`export_provider!`](crate::export_provider) wrote
///   it.
/// - `capabilities` come from [`ControlPlane`]'s constants when the provider serves that
///   point, and are all off otherwise: a control-plane shape is declared exactly when
///   `control-plane` is.
pub fn describe<P>() -> ProviderMetadata
where
    P: Provider + Version + Infrastructure + Bootstrap + ControlPlane + LifecycleHooks,
{
    let supported = [
        (
            <P as Infrastructure>::SUPPORTED,
            ExtensionPoint::Infrastructure,
        ),
        (<P as Bootstrap>::SUPPORTED, ExtensionPoint::Bootstrap),
        (<P as ControlPlane>::SUPPORTED, ExtensionPoint::ControlPlane),
        (
            <P as LifecycleHooks>::SUPPORTED,
            ExtensionPoint::LifecycleHooks,
        ),
    ];
    ProviderMetadata {
        name: P::NAME.to_owned(),
        version: <P as Version>::VERSION.to_owned(),
        description: P::DESCRIPTION.to_owned(),
        extension_points: supported
            .into_iter()
            .filter_map(|(yes, point)| yes.then_some(point))
            .collect(),
        config_schema: config_schema::<P::Config>(),
        capabilities: capabilities::<P>(),
        requested_grants: P::requested_grants(),
    }
}

/// The capabilities `describe` declares for `P`.
fn capabilities<P: ControlPlane>() -> Capabilities {
    if <P as ControlPlane>::SUPPORTED {
        Capabilities {
            control_plane_shape: Some(P::SHAPE),
            control_plane_scalable: P::SCALABLE,
            version_upgrades: P::VERSION_UPGRADES,
            chains_upgrades: P::CHAINS_UPGRADES,
        }
    } else {
        Capabilities {
            control_plane_shape: None,
            control_plane_scalable: false,
            version_upgrades: false,
            chains_upgrades: false,
        }
    }
}

/// What `metadata.validate-config` answers for `P`: parse `config`, then
/// [`Validate::validate`] on the parsed config.
///
/// # Errors
///
/// A config that does not parse gives one [`FieldError`] at the offending field (serde stops
/// at the first); a config that parses gives every error its [`Validate`] finds. Never an
/// empty list.
pub fn validate_config<P: Provider>(config: &str) -> Result<(), Vec<FieldError>> {
    let parsed: P::Config = config::parse(config).map_err(|e| vec![FieldError::from(e)])?;
    match parsed.validate() {
        Ok(()) => Ok(()),
        // The host reads an empty list as "no problem"; a rejection must say why.
        Err(errors) if errors.is_empty() => Err(vec![FieldError::new(
            "",
            "config rejected by the provider without a reason",
        )]),
        Err(errors) => Err(errors),
    }
}

/// The JSON Schema of `C` as a JSON document.
pub fn config_schema<C: JsonSchema>() -> String {
    let schema = schemars::schema_for!(C);
    // A schema is a JSON value with string keys, which always serialises; `true` (the schema
    // that accepts anything) is only a formal fallback.
    serde_json::to_string(&schema).unwrap_or_else(|_| String::from("true"))
}

impl<T> Guest for T
where
    T: Provider + Version + Infrastructure + Bootstrap + ControlPlane + LifecycleHooks,
{
    fn describe() -> ProviderMetadata {
        describe::<T>()
    }

    fn validate_config(config: String) -> Result<(), Vec<FieldError>> {
        validate_config::<T>(&config)
    }
}
