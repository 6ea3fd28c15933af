//! The bindings of `capw:provider@0.1.x`: the generated types of `wit/`, how each contract
//! function lowers the model's input into them and lifts its answer back, and the host
//! interfaces of this version. Nothing generated leaves this module.

use wasmtime::Store;
use wasmtime::component::{
    ComponentExportIndex, ComponentNamedList, Instance, Lift, Lower, TypedFunc,
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
        path: "../../wit/0.1",
        exports: { default: async },
    });
}

use generated::capw::provider::{host_log, host_secrets, types};
use generated::exports::capw::provider::{
    bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata,
};

/// How one contract function is called at this version.
pub(crate) trait Binding: ContractFn {
    /// The function's parameters as this version's generated types.
    type Params<'a>: ComponentNamedList + Lower + Send + Sync;
    /// Its results as this version's generated types.
    type Results: ComponentNamedList + Lift + Send + Sync + 'static;
    fn lower<'a>(input: Self::Input<'a>) -> Self::Params<'a>;
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
    let results = typed.call_async(store, F::lower(input)).await?;
    Ok(F::lift(results))
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
                type Params<'a> = (types::CallContext, $($gen,)*);
                type Results = (Result<$out, types::ProviderError>,);
                fn lower<'a>(input: Self::Input<'a>) -> Self::Params<'a> {
                    let (ctx, $($arg,)*) = bind_extension_points!(@split input $($arg)*);
                    (ctx.clone().conv(), $($arg.to_owned().conv(),)*)
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
    fn lower<'a>((): Self::Input<'a>) -> Self::Params<'a> {}
    fn lift((m,): Self::Results) -> Result<Self::Output, model::types::ProviderError> {
        Ok(m.conv())
    }
}

impl Binding for DescribeAsWritten {
    type Params<'a> = ();
    type Results = (metadata::ProviderMetadata,);
    fn lower<'a>((): Self::Input<'a>) -> Self::Params<'a> {}
    fn lift((m,): Self::Results) -> Result<Self::Output, model::types::ProviderError> {
        Ok(AsWritten(m.conv()))
    }
}

impl Binding for ValidateConfig {
    type Params<'a> = (&'a str,);
    type Results = (Result<(), Vec<metadata::FieldError>>,);
    fn lower<'a>(config: Self::Input<'a>) -> Self::Params<'a> {
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
    types::CallContext { cluster, config, idempotency_key, deadline_ms }
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
    lifecycle_hooks::Hook {
        BeforeClusterCreate, AfterControlPlaneInitialized, BeforeClusterUpgrade,
        AfterControlPlaneUpgrade, AfterClusterUpgrade, BeforeClusterDelete,
    }
    lifecycle_hooks::HookResponse { Proceed, Hold(p) }
}

/// 0.1 has no `remove-etcd-member` step: its steps lift one to one.
impl Conv<model::control_plane::Step> for control_plane::Step {
    fn conv(self) -> model::control_plane::Step {
        use model::control_plane::Step as M;
        match self {
            control_plane::Step::None => M::None,
            control_plane::Step::CreateMachine(m) => M::CreateMachine(m.conv()),
            control_plane::Step::DeleteMachine(m) => M::DeleteMachine(m.conv()),
            control_plane::Step::ApplyManifests(m) => M::ApplyManifests(m),
            control_plane::Step::Wait(p) => M::Wait(p.conv()),
        }
    }
}

/// A 0.1 plan says nothing of the control plane's readiness or version: `None` for both.
impl Conv<model::control_plane::PlanOutput> for control_plane::PlanOutput {
    fn conv(self) -> model::control_plane::PlanOutput {
        model::control_plane::PlanOutput {
            step: self.step.conv(),
            initialized: self.initialized,
            replicas: self.replicas,
            ready_replicas: self.ready_replicas,
            up_to_date_replicas: self.up_to_date_replicas,
            endpoint: self.endpoint.conv(),
            conditions: self.conditions.conv(),
            ready: None,
            version: None,
        }
    }
}

/// Adds this version's host interfaces to `linker`.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::component::Linker<CallState>,
) -> wasmtime::Result<()> {
    use wasmtime::component::HasSelf;
    host_log::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    host_secrets::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)
}

impl host_log::Host for CallState {
    fn log(&mut self, level: host_log::Level, message: String, fields: Vec<(String, String)>) {
        let level = match level {
            host_log::Level::Trace => LogLevel::Trace,
            host_log::Level::Debug => LogLevel::Debug,
            host_log::Level::Info => LogLevel::Info,
            host_log::Level::Warn => LogLevel::Warn,
            host_log::Level::Error => LogLevel::Error,
        };
        self.provider_log(level, message, fields);
    }
}

impl host_secrets::Host for CallState {
    fn get(&mut self, name: String) -> Result<Vec<u8>, host_secrets::SecretError> {
        self.granted_secret(name).map_err(|e| match e {
            SecretLookupError::NotGranted => host_secrets::SecretError::NotGranted,
            SecretLookupError::NotFound => host_secrets::SecretError::NotFound,
        })
    }
}
