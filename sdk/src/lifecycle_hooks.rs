//! The optional `lifecycle-hooks` extension point, after Cluster API's Runtime SDK.

use crate::__bindings::exports::capw::provider::lifecycle_hooks::Guest;
use crate::context::enter;
use crate::types::{CallContext, ProviderError};
use crate::{Context, Provider};

pub use crate::__bindings::exports::capw::provider::lifecycle_hooks::{
    Hook, HookRequest, HookResponse,
};

/// The lifecycle-hooks extension point. Its method defaults to `unsupported`.
///
/// Set `SUPPORTED = false` (or name `LifecycleHooks` in `export_provider!`'s `unsupported`
/// list) when the provider does not serve this point: `describe` then leaves it out and every
/// call answers `unsupported` without running a method.
pub trait LifecycleHooks: Provider {
    /// Whether the provider implements this extension point.
    const SUPPORTED: bool = true;

    /// Called at each hook point until it answers `proceed`; `hold` blocks only this transition
    /// until the next call. Must be idempotent: the host may call the same hook more than once.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn handle(
        _ctx: &Context<Self::Config>,
        _request: HookRequest,
    ) -> Result<HookResponse, ProviderError> {
        Err(ProviderError::unsupported("lifecycle-hooks.handle"))
    }
}

impl<T: LifecycleHooks> Guest for T {
    fn handle(ctx: &CallContext, request: HookRequest) -> Result<HookResponse, ProviderError> {
        let ctx = enter(T::SUPPORTED, "lifecycle-hooks.handle", ctx)?;
        <T as LifecycleHooks>::handle(&ctx, request)
    }
}
