//! Who a provider is: the part of `metadata` every provider answers.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::metadata::{FieldError, RequestedGrants};

/// Who a provider is and what config it takes. Every provider implements it, together with the
/// four extension-point traits ([`Infrastructure`](crate::Infrastructure),
/// [`Bootstrap`](crate::Bootstrap), [`ControlPlane`](crate::ControlPlane),
/// [`LifecycleHooks`](crate::LifecycleHooks)); [`export_provider!`](crate::export_provider)
/// writes empty ones for the points the provider does not serve.
///
/// Providers are stateless: the host calls each function in a fresh instance, so the trait has
/// no `self` and nothing kept between calls survives.
///
/// What `describe` answers besides is derived, not written: the version from the provider
/// crate's `Cargo.toml` (by [`export_provider!`](crate::export_provider)), the extension
/// points from the traits' `SUPPORTED`, the capabilities from
/// [`ControlPlane`](crate::ControlPlane)'s constants, the config schema from `Config`.
pub trait Provider {
    /// The provider's config. The SDK parses each call's config JSON into it, and publishes
    /// `schemars::schema_for!(Config)` as the config schema the host checks configs against,
    /// so serde and schemars attributes (`rename_all`, `default`, `deny_unknown_fields`) must
    /// agree with what the provider accepts. Its [`Validate`] implementation holds the rules a
    /// schema cannot say.
    type Config: DeserializeOwned + JsonSchema + Validate;

    /// Short, lowercase name, e.g. `sim-infra`.
    const NAME: &'static str;

    /// One line for humans.
    const DESCRIPTION: &'static str;

    /// What the provider asks the operator to grant: outbound HTTP hosts and secret names. The
    /// operator decides; the host enforces the grants, never this list. The default asks for
    /// nothing.
    fn requested_grants() -> RequestedGrants {
        RequestedGrants {
            http_hosts: Vec::new(),
            secrets: Vec::new(),
        }
    }
}

/// The rules of a config type that its schema cannot say (a value's format, uniqueness across
/// a list, combinations of fields), checked by `validate-config` after the config parsed.
///
/// Every [`Provider::Config`] implements it; a config with no such rules says so with an
/// empty implementation, which accepts every config that parses:
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Config {
///     port: u16,
/// }
///
/// impl capw_sdk::Validate for Config {}
/// ```
pub trait Validate {
    /// Must be pure and deterministic, and report every problem, each with the JSON Pointer of
    /// its field (see [`config::json_pointer`](crate::config::json_pointer)), not just the
    /// first. The default accepts the config.
    ///
    /// # Errors
    ///
    /// One [`FieldError`] per problem found; never an empty list.
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

/// A provider without config.
impl Validate for () {}

/// The provider's own version, written by [`export_provider!`](crate::export_provider) from
/// the provider crate's `Cargo.toml` (`CARGO_PKG_VERSION` where the macro is invoked).
#[doc(hidden)]
pub trait Version {
    const VERSION: &'static str;
}
