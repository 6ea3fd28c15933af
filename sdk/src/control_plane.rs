//! The `control-plane` extension point: the next safe step toward the desired control plane.
//!
//! The host owns the machines and applies one step at a time; the provider decides which step
//! is safe. Machine-based providers answer create and delete steps, hosted ones
//! `apply-manifests`, managed ones drive their cloud API and answer `wait` until it is done.

use crate::__bindings::exports::capw::provider::control_plane::Guest;
use crate::context::enter;
use crate::types::{CallContext, ProviderError};
use crate::{Context, Provider};

pub use crate::__bindings::exports::capw::provider::control_plane::{
    MachineToCreate, Member, PlanInput, Step,
};

/// The plan and the counts the host shows in the Cluster's status: the answer of
/// `control-plane.plan`.
pub use crate::__bindings::exports::capw::provider::control_plane::PlanOutput as Plan;

/// The control-plane extension point. Its method defaults to `unsupported`.
///
/// Set `SUPPORTED = false` (or name `ControlPlane` in `export_provider!`'s `unsupported` list)
/// when the provider does not serve this point: `describe` then leaves it out and every call
/// answers `unsupported` without running a method.
pub trait ControlPlane: Provider {
    /// Whether the provider implements this extension point.
    const SUPPORTED: bool = true;

    /// The single next step toward `input`, and the counts. Pure and deterministic for the
    /// same input: the host may call it as often as it likes.
    ///
    /// # Errors
    ///
    /// `invalid-input` or `unsupported` for a desired state the provider cannot reach safely.
    fn plan(_ctx: &Context<Self::Config>, _input: PlanInput) -> Result<Plan, ProviderError> {
        Err(ProviderError::unsupported("control-plane.plan"))
    }
}

impl<T: ControlPlane> Guest for T {
    fn plan(ctx: CallContext, input: PlanInput) -> Result<Plan, ProviderError> {
        let ctx = enter(T::SUPPORTED, "control-plane.plan", ctx)?;
        <T as ControlPlane>::plan(&ctx, input)
    }
}
