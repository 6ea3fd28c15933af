//! The `infrastructure` extension point: networks, the control-plane endpoint and machines.

use crate::__bindings::exports::capw::provider::infrastructure::Guest;
use crate::context::enter;
use crate::types::{CallContext, Deletion, MachineRef, ProviderError};
use crate::{Context, Provider};

pub use crate::__bindings::exports::capw::provider::infrastructure::{
    ClusterInfrastructure, ClusterState, FailureDomain, ListedMachine, MachinePhase, MachineSpec,
    MachineStatus,
};

/// The infrastructure extension point. Every method defaults to `unsupported`.
///
/// Set `SUPPORTED = false` (or name `Infrastructure` in `export_provider!`'s `unsupported`
/// list) when the provider does not serve this point: `describe` then leaves it out and every
/// call answers `unsupported` without running a method.
pub trait Infrastructure: Provider {
    /// Whether the provider implements this extension point.
    const SUPPORTED: bool = true;

    /// Create or update the cluster-wide infrastructure (network, load balancer, endpoint).
    /// Idempotent; answers `in-progress` until the control-plane endpoint is usable.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn reconcile_cluster(_ctx: &Context<Self::Config>) -> Result<ClusterState, ProviderError> {
        Err(ProviderError::unsupported(
            "infrastructure.reconcile-cluster",
        ))
    }

    /// Delete the cluster-wide infrastructure; called only after every machine is deleted.
    /// Deleting what is already gone answers `deleted`.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn delete_cluster(_ctx: &Context<Self::Config>) -> Result<Deletion, ProviderError> {
        Err(ProviderError::unsupported("infrastructure.delete-cluster"))
    }

    /// Create the machine if none exists for `ctx.idempotency_key()`, and report its status.
    /// Calling it again with the same key never creates a second machine.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn reconcile_machine(
        _ctx: &Context<Self::Config>,
        _spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        Err(ProviderError::unsupported(
            "infrastructure.reconcile-machine",
        ))
    }

    /// Delete the machine created with `ctx.idempotency_key()`. A machine already gone, or never
    /// created, answers `deleted`.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn delete_machine(
        _ctx: &Context<Self::Config>,
        _machine: MachineRef,
    ) -> Result<Deletion, ProviderError> {
        Err(ProviderError::unsupported("infrastructure.delete-machine"))
    }

    /// Every machine that exists for `ctx.cluster()`, whatever the host knows of it; the host
    /// deletes those it has no Machine for.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later.
    fn list_machines(_ctx: &Context<Self::Config>) -> Result<Vec<ListedMachine>, ProviderError> {
        Err(ProviderError::unsupported("infrastructure.list-machines"))
    }
}

impl<T: Infrastructure> Guest for T {
    fn reconcile_cluster(ctx: &CallContext) -> Result<ClusterState, ProviderError> {
        let ctx = enter(T::SUPPORTED, "infrastructure.reconcile-cluster", ctx)?;
        <T as Infrastructure>::reconcile_cluster(&ctx)
    }

    fn delete_cluster(ctx: &CallContext) -> Result<Deletion, ProviderError> {
        let ctx = enter(T::SUPPORTED, "infrastructure.delete-cluster", ctx)?;
        <T as Infrastructure>::delete_cluster(&ctx)
    }

    fn reconcile_machine(
        ctx: &CallContext,
        spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        let ctx = enter(T::SUPPORTED, "infrastructure.reconcile-machine", ctx)?;
        <T as Infrastructure>::reconcile_machine(&ctx, spec)
    }

    fn delete_machine(ctx: &CallContext, machine: MachineRef) -> Result<Deletion, ProviderError> {
        let ctx = enter(T::SUPPORTED, "infrastructure.delete-machine", ctx)?;
        <T as Infrastructure>::delete_machine(&ctx, machine)
    }

    fn list_machines(ctx: &CallContext) -> Result<Vec<ListedMachine>, ProviderError> {
        let ctx = enter(T::SUPPORTED, "infrastructure.list-machines", ctx)?;
        <T as Infrastructure>::list_machines(&ctx)
    }
}
