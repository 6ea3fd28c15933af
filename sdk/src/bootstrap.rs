//! The `bootstrap` extension point: cluster secrets and the data that turns a machine into a
//! node.

use crate::__bindings::exports::capw::provider::bootstrap::Guest;
use crate::context::enter;
use crate::types::{CallContext, Endpoint, ProviderError};
use crate::{Context, Provider};

pub use crate::__bindings::exports::capw::provider::bootstrap::{
    BootstrapData, BootstrapFormat, BootstrapRequest, ControlPlaneMember, JoinCredentials,
    SecretItem, SecretsState,
};
/// The bootstrap token a join carries, shared with the control plane's access since it moved
/// to the contract's `types`; re-exported here where it was first.
pub use crate::types::JoinToken;

/// The bootstrap extension point. Every method defaults to `unsupported`.
///
/// Set `SUPPORTED = false` (or name `Bootstrap` in `export_provider!`'s `unsupported` list)
/// when the provider does not serve this point: `describe` then leaves it out and every call
/// answers `unsupported` without running a method.
pub trait Bootstrap: Provider {
    /// Whether the provider implements this extension point.
    const SUPPORTED: bool = true;

    /// Create the cluster's secret material (CAs, service-account keys, bootstrap token). The
    /// host stores the first `ready` answer and calls again only while it is `in-progress`, so
    /// slow key generation belongs behind `in-progress`.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn cluster_secrets(_ctx: &Context<Self::Config>) -> Result<SecretsState, ProviderError> {
        Err(ProviderError::unsupported("bootstrap.cluster-secrets"))
    }

    /// Bootstrap data for one machine; pure given its input. The data is secret: never log it.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn generate(
        _ctx: &Context<Self::Config>,
        _request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        Err(ProviderError::unsupported("bootstrap.generate"))
    }

    /// An admin kubeconfig (YAML) for the cluster reached at `endpoint`, from the material
    /// `cluster_secrets` returned. Secret: never log it.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn kubeconfig(
        _ctx: &Context<Self::Config>,
        _endpoint: Endpoint,
        _secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        Err(ProviderError::unsupported("bootstrap.kubeconfig"))
    }

    /// The bootstrap token joins carry now, read from the material `cluster_secrets`
    /// returned; pure. The host keeps that token valid in the workload cluster, renewing it
    /// through [`Bootstrap::renew_join_token`] when it is missing there or past half its life.
    /// The default, `None`, says the provider's join data carries no token to keep.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn current_join_token(
        _ctx: &Context<Self::Config>,
        _secrets: Vec<SecretItem>,
    ) -> Result<Option<JoinToken>, ProviderError> {
        Ok(None)
    }

    /// A fresh bootstrap token, with a new id, in the item `current_join_token` names. The
    /// host writes it into the workload cluster and then stores it in the cluster's secrets,
    /// so `generate` reads it from there. Its secret part is secret: never log it.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn renew_join_token(
        _ctx: &Context<Self::Config>,
        _secrets: Vec<SecretItem>,
    ) -> Result<JoinToken, ProviderError> {
        Err(ProviderError::unsupported("bootstrap.renew-join-token"))
    }
}

impl<T: Bootstrap> Guest for T {
    fn cluster_secrets(ctx: &CallContext) -> Result<SecretsState, ProviderError> {
        let ctx = enter(T::SUPPORTED, "bootstrap.cluster-secrets", ctx)?;
        <T as Bootstrap>::cluster_secrets(&ctx)
    }

    fn generate(
        ctx: &CallContext,
        request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        let ctx = enter(T::SUPPORTED, "bootstrap.generate", ctx)?;
        <T as Bootstrap>::generate(&ctx, request)
    }

    fn kubeconfig(
        ctx: &CallContext,
        endpoint: Endpoint,
        secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        let ctx = enter(T::SUPPORTED, "bootstrap.kubeconfig", ctx)?;
        <T as Bootstrap>::kubeconfig(&ctx, endpoint, secrets)
    }

    fn current_join_token(
        ctx: &CallContext,
        secrets: Vec<SecretItem>,
    ) -> Result<Option<JoinToken>, ProviderError> {
        let ctx = enter(T::SUPPORTED, "bootstrap.current-join-token", ctx)?;
        <T as Bootstrap>::current_join_token(&ctx, secrets)
    }

    fn renew_join_token(
        ctx: &CallContext,
        secrets: Vec<SecretItem>,
    ) -> Result<JoinToken, ProviderError> {
        let ctx = enter(T::SUPPORTED, "bootstrap.renew-join-token", ctx)?;
        <T as Bootstrap>::renew_join_token(&ctx, secrets)
    }
}
