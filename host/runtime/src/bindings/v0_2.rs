//! The bindings of `capw:provider@0.2.x`: the generated types of `wit/`, how each contract
//! function lowers the model's input into them and lifts its answer back, and the host
//! interfaces of this version. Nothing generated leaves this module.
//!
//! What differs from 0.1 for the host:
//! - the call context is a resource the host holds for the call (`borrow<call-context>`):
//!   the model's context is kept in the call's state, and the provider copies out only the
//!   fields it asks for;
//! - `plan` answers a `control-plane-status` and may ask for `remove-etcd-member`.

use wasmtime::Store;
use wasmtime::component::{
    ComponentExportIndex, ComponentNamedList, Instance, Lift, Lower, Resource, TypedFunc,
};

use super::{
    ClusterSecrets, ContractFn, Conv, DeleteCluster, DeleteMachine, Describe, DescribeAsWritten,
    Generate, Handle, Kubeconfig, ListMachines, Plan, ReconcileCluster, ReconcileMachine,
    ValidateConfig,
};
use crate::answer::AsWritten;
use crate::model;
use crate::sandbox::{CallState, LogLevel, SecretLookupError};

mod generated {
    wasmtime::component::bindgen!({
        world: "provider",
        path: "../../wit",
        exports: { default: async },
        // The call context's getters trap on a handle that is not the call's.
        imports: { default: trappable },
    });
}

use generated::capw::provider::{host_log, host_secrets, types};
use generated::exports::capw::provider::{
    bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata,
};

/// The representation of the one `call-context` a call lends its provider. The context
/// itself lives in the call's state ([`CallState::call_context`]), set before each call.
const CALL_CONTEXT_REP: u32 = 0;

/// How one contract function is called at this version.
pub(crate) trait Binding: ContractFn {
    /// The function's parameters as this version's generated types.
    type Params<'a>: ComponentNamedList + Lower + Send + Sync;
    /// Its results as this version's generated types.
    type Results: ComponentNamedList + Lift + Send + Sync + 'static;
    /// The parameters, and the call context put where the provider's getters find it.
    fn lower<'a>(state: &mut CallState, input: Self::Input<'a>) -> Self::Params<'a>;
    fn lift(results: Self::Results) -> Result<Self::Output, model::types::ProviderError>;
}

/// Checks that the export at `index` has `F`'s type at this version.
pub(super) fn check<F: Binding>(
    store: &mut Store<CallState>,
    instance: &Instance,
    index: ComponentExportIndex,
) -> wasmtime::Result<()> {
    let func = instance
        .get_func(&mut *store, index)
        .ok_or_else(|| wasmtime::format_err!("the instance has no export {}", F::OPERATION))?;
    func.typed::<F::Params<'_>, F::Results>(&*store)?;
    Ok(())
}

/// Calls `F` at `index`, an export [`check`]ed for the component `instance` comes from.
pub(super) async fn call<F: Binding>(
    store: &mut Store<CallState>,
    instance: &Instance,
    index: ComponentExportIndex,
    input: F::Input<'_>,
) -> wasmtime::Result<Result<F::Output, model::types::ProviderError>> {
    let func = instance
        .get_func(&mut *store, index)
        .ok_or_else(|| wasmtime::format_err!("the instance has no export {}", F::OPERATION))?;
    // SAFETY: `check::<F>` checked `F::Params<'_>` and `F::Results` against this export's type
    // with `Func::typed` at load. Every instance the provider calls comes from the same
    // `InstancePre`, so from the same component and the same types; lifetimes play no part in
    // the check.
    let typed = unsafe { TypedFunc::<F::Params<'_>, F::Results>::new_unchecked(func) };
    let params = F::lower(store.data_mut(), input);
    let results = typed.call_async(&mut *store, params).await;
    store.data_mut().call_context = None;
    Ok(F::lift(results?))
}

/// The call context lent to the provider for one call.
fn lend(state: &mut CallState, ctx: &model::types::CallContext) -> Resource<types::CallContext> {
    state.call_context = Some(ctx.clone());
    Resource::new_borrow(CALL_CONTEXT_REP)
}

/// The answer of an extension-point function, lifted.
fn lift_result<T: Conv<U>, U>(
    r: Result<T, types::ProviderError>,
) -> Result<U, model::types::ProviderError> {
    r.map(Conv::conv).map_err(Conv::conv)
}

/// Binds the functions whose first parameter is the call context and whose other parameters
/// are passed by value, converted from the model.
macro_rules! bind_extension_points {
    ($( $marker:ident ($($arg:ident: $gen:ty),*) -> $out:ty; )*) => {
        $(
            impl Binding for $marker {
                type Params<'a> = (Resource<types::CallContext>, $($gen,)*);
                type Results = (Result<$out, types::ProviderError>,);
                fn lower<'a>(state: &mut CallState, input: Self::Input<'a>) -> Self::Params<'a> {
                    let (ctx, $($arg,)*) = bind_extension_points!(@split input $($arg)*);
                    (lend(state, ctx), $($arg.to_owned().conv(),)*)
                }
                fn lift((r,): Self::Results) -> Result<Self::Output, model::types::ProviderError> {
                    lift_result(r)
                }
            }
        )*
    };
    (@split $input:ident) => { ($input,) };
    (@split $input:ident $($arg:ident)+) => { $input };
}

bind_extension_points! {
    ReconcileCluster () -> infrastructure::ClusterState;
    DeleteCluster () -> types::Deletion;
    ReconcileMachine (spec: infrastructure::MachineSpec) -> infrastructure::MachineStatus;
    DeleteMachine (machine: types::MachineRef) -> types::Deletion;
    ListMachines () -> Vec<infrastructure::ListedMachine>;
    ClusterSecrets () -> bootstrap::SecretsState;
    Generate (request: bootstrap::BootstrapRequest) -> bootstrap::BootstrapData;
    Kubeconfig (endpoint: types::Endpoint, secrets: Vec<bootstrap::SecretItem>) -> String;
    Plan (input: control_plane::PlanInput) -> control_plane::PlanOutput;
    Handle (request: lifecycle_hooks::HookRequest) -> lifecycle_hooks::HookResponse;
}

impl Binding for Describe {
    type Params<'a> = ();
    type Results = (metadata::ProviderMetadata,);
    fn lower<'a>(_: &mut CallState, (): Self::Input<'a>) -> Self::Params<'a> {}
    fn lift((m,): Self::Results) -> Result<Self::Output, model::types::ProviderError> {
        Ok(m.conv())
    }
}

impl Binding for DescribeAsWritten {
    type Params<'a> = ();
    type Results = (metadata::ProviderMetadata,);
    fn lower<'a>(_: &mut CallState, (): Self::Input<'a>) -> Self::Params<'a> {}
    fn lift((m,): Self::Results) -> Result<Self::Output, model::types::ProviderError> {
        Ok(AsWritten(m.conv()))
    }
}

impl Binding for ValidateConfig {
    type Params<'a> = (&'a str,);
    type Results = (Result<(), Vec<metadata::FieldError>>,);
    fn lower<'a>(_: &mut CallState, config: Self::Input<'a>) -> Self::Params<'a> {
        (config,)
    }
    fn lift((r,): Self::Results) -> Result<Self::Output, model::types::ProviderError> {
        Ok(r.map_err(Conv::conv))
    }
}

record! {
    types::ClusterRef { namespace, name, uid }
    types::MachineRef { name, uid }
    types::KubernetesVersion { major, minor, patch }
    types::Address { kind, address }
    types::Endpoint { host, port }
    types::Condition { type_, status, reason, message }
    types::InProgress { reason, message, requeue_after_ms, conditions }
    types::ProviderError { code, message, retryable, retry_after_ms }
    metadata::Capabilities { control_plane_shape, control_plane_scalable, version_upgrades }
    metadata::RequestedGrants { http_hosts, secrets }
    metadata::ProviderMetadata {
        name, version, description, extension_points, config_schema, capabilities,
        requested_grants,
    }
    metadata::FieldError { path, message }
    infrastructure::FailureDomain { name, control_plane }
    infrastructure::ClusterInfrastructure { control_plane_endpoint, failure_domains, conditions }
    infrastructure::MachineSpec { machine, role, pool, version, failure_domain, bootstrap_data }
    infrastructure::MachineStatus {
        provider_id, phase, addresses, failure_domain, message, requeue_after_ms, conditions,
    }
    infrastructure::ListedMachine { idempotency_key, provider_id, machine_name, phase }
    bootstrap::SecretItem { name, data }
    bootstrap::ControlPlaneMember { name, address }
    bootstrap::BootstrapRequest {
        machine, role, version, endpoint, secrets, control_plane_members,
    }
    bootstrap::BootstrapData { format, data }
    control_plane::Member { machine, version, failure_domain, ready, created_at, deleting }
    control_plane::PlanInput { version, replicas, members, failure_domains, endpoint }
    control_plane::MachineToCreate { init, version, failure_domain }
    lifecycle_hooks::HookRequest { hook, from_version, to_version }
}

cases! {
    types::MachineRole { Init, JoinControlPlane, Worker }
    types::AddressKind { Hostname, InternalIp, ExternalIp, InternalDns, ExternalDns }
    types::ConditionStatus { True, False, Unknown }
    types::ErrorCode {
        InvalidInput, NotGranted, Unauthorized, QuotaExceeded, Unavailable, Conflict,
        Unsupported, Internal,
    }
    types::Deletion { Deleted, InProgress(p) }
    metadata::ExtensionPoint { Infrastructure, Bootstrap, ControlPlane, LifecycleHooks }
    metadata::ControlPlaneShape { Machines, Hosted, Managed }
    infrastructure::ClusterState { Ready(c), InProgress(p) }
    infrastructure::MachinePhase { Pending, Provisioning, Running, Failed, Deleting }
    bootstrap::SecretsState { Ready(s), InProgress(p) }
    bootstrap::BootstrapFormat { CloudConfig, Ignition, Raw }
    control_plane::Step {
        None, CreateMachine(m), DeleteMachine(m), RemoveEtcdMember(m), ApplyManifests(m),
        Wait(p),
    }
    lifecycle_hooks::Hook {
        BeforeClusterCreate, AfterControlPlaneInitialized, BeforeClusterUpgrade,
        AfterControlPlaneUpgrade, AfterClusterUpgrade, BeforeClusterDelete,
    }
    lifecycle_hooks::HookResponse { Proceed, Hold(p) }
}

/// 0.2's plan answers the control plane's status as one record; the model keeps 0.1's
/// fields where they were and adds what 0.1 lacks.
impl Conv<model::control_plane::PlanOutput> for control_plane::PlanOutput {
    fn conv(self) -> model::control_plane::PlanOutput {
        let status = self.status;
        model::control_plane::PlanOutput {
            step: self.step.conv(),
            initialized: status.initialized,
            replicas: self.replicas,
            ready_replicas: self.ready_replicas,
            up_to_date_replicas: self.up_to_date_replicas,
            endpoint: status.endpoint.conv(),
            conditions: status.conditions.conv(),
            ready: Some(status.ready),
            version: status.version.conv(),
        }
    }
}

/// Adds this version's host interfaces to `linker`.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::component::Linker<CallState>,
) -> wasmtime::Result<()> {
    use wasmtime::component::HasSelf;
    types::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    host_log::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    host_secrets::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)
}

impl CallState {
    /// The context of the call under way; a trap when there is none, which only a provider
    /// that kept a borrow past its call could cause (the component model forbids it).
    fn lent_context(
        &self,
        handle: &Resource<types::CallContext>,
    ) -> wasmtime::Result<&model::types::CallContext> {
        match (&self.call_context, handle.rep()) {
            (Some(ctx), CALL_CONTEXT_REP) => Ok(ctx),
            _ => Err(wasmtime::format_err!(
                "no call context is lent to this call"
            )),
        }
    }
}

impl types::Host for CallState {}

impl types::HostCallContext for CallState {
    fn cluster(
        &mut self,
        handle: Resource<types::CallContext>,
    ) -> wasmtime::Result<types::ClusterRef> {
        Ok(self.lent_context(&handle)?.cluster.clone().conv())
    }

    fn config(&mut self, handle: Resource<types::CallContext>) -> wasmtime::Result<String> {
        Ok(self.lent_context(&handle)?.config.clone())
    }

    fn idempotency_key(
        &mut self,
        handle: Resource<types::CallContext>,
    ) -> wasmtime::Result<String> {
        Ok(self.lent_context(&handle)?.idempotency_key.clone())
    }

    fn remaining_ms(&mut self, handle: Resource<types::CallContext>) -> wasmtime::Result<u32> {
        self.lent_context(&handle)?;
        let left = self
            .deadline()
            .saturating_duration_since(std::time::Instant::now());
        Ok(u32::try_from(left.as_millis()).unwrap_or(u32::MAX))
    }

    fn drop(&mut self, _handle: Resource<types::CallContext>) -> wasmtime::Result<()> {
        // Only borrows are ever lent: the host owns the context and clears it after the call.
        Ok(())
    }
}

impl host_log::Host for CallState {
    fn log(
        &mut self,
        level: host_log::Level,
        message: String,
        fields: Vec<(String, String)>,
    ) -> wasmtime::Result<()> {
        let level = match level {
            host_log::Level::Trace => LogLevel::Trace,
            host_log::Level::Debug => LogLevel::Debug,
            host_log::Level::Info => LogLevel::Info,
            host_log::Level::Warn => LogLevel::Warn,
            host_log::Level::Error => LogLevel::Error,
        };
        self.provider_log(level, message, fields);
        Ok(())
    }
}

impl host_secrets::Host for CallState {
    fn get(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Vec<u8>, host_secrets::SecretError>> {
        Ok(self.granted_secret(name).map_err(|e| match e {
            SecretLookupError::NotGranted => host_secrets::SecretError::NotGranted,
            SecretLookupError::NotFound => host_secrets::SecretError::NotFound,
        }))
    }
}
