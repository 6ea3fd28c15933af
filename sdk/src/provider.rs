//! Who a provider is: the part of `metadata` every provider answers.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::metadata::{Capabilities, FieldError, RequestedGrants};

/// Who a provider is and what config it takes. Every provider implements it, together with the
/// four extension-point traits ([`Infrastructure`](crate::Infrastructure),
/// [`Bootstrap`](crate::Bootstrap), [`ControlPlane`](crate::ControlPlane),
/// [`LifecycleHooks`](crate::LifecycleHooks)); [`export_provider!`](crate::export_provider)
/// writes empty ones for the points the provider does not serve.
///
/// Providers are stateless: the host calls each function in a fresh instance, so the trait has
/// no `self` and nothing kept between calls survives.
pub trait Provider {
    /// The provider's config. The SDK parses each call's config JSON into it, and publishes
    /// `schemars::schema_for!(Config)` as the config schema the host checks configs against,
    /// so serde and schemars attributes (`rename_all`, `default`, `deny_unknown_fields`) must
    /// agree with what the provider accepts.
    type Config: DeserializeOwned + JsonSchema;

    /// Short, lowercase name, e.g. `sim-infra`.
    const NAME: &'static str;

    /// The provider's own semantic version; usually `env!("CARGO_PKG_VERSION")`.
    const VERSION: &'static str;

    /// One line for humans.
    const DESCRIPTION: &'static str;

    /// What the provider can do. The host refuses a topology the provider cannot serve before
    /// it calls anything. `control_plane_shape` must be set when the provider implements
    /// [`ControlPlane`](crate::ControlPlane).
    fn capabilities() -> Capabilities;

    /// What the provider asks the operator to grant: outbound HTTP hosts and secret names. The
    /// operator decides; the host enforces the grants, never this list. The default asks for
    /// nothing.
    fn requested_grants() -> RequestedGrants {
        RequestedGrants {
            http_hosts: Vec::new(),
            secrets: Vec::new(),
        }
    }

    /// Rules the schema cannot say (a value's format, uniqueness across a list, combinations of
    /// fields), checked after the config parsed.
    ///
    /// Must be pure and deterministic, and report every problem, each with the JSON Pointer of
    /// its field (see [`config::json_pointer`](crate::config::json_pointer)), not just the
    /// first. The default accepts every config that parses.
    ///
    /// # Errors
    ///
    /// One [`FieldError`] per problem found; never an empty list.
    fn validate(config: &Self::Config) -> Result<(), Vec<FieldError>> {
        let _ = config;
        Ok(())
    }
}
