//! The contract's functions, once, and the bindings of each contract version.
//!
//! [`ContractFn`] describes one function of the contract in the host's own terms: its name,
//! the extension point it belongs to and its input and output as [`crate::model`] types. Each
//! contract version has a module (`v0_1`) whose [`Binding`] impls say how that version lowers
//! the model's input into its generated types and lifts its answer back; the generated types
//! never leave that module. What the versions bind alike is written once, in `shared`'s
//! macros, and expanded in each version's module. [`Exports::call`] is the one typed call: it picks the version's
//! binding for the component at hand. Adding a contract version adds a module here and a case
//! to [`ContractVersion`]; callers of the runtime do not change.

use wasmtime::Store;
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, Instance, Lift, Lower, TypedFunc,
};

use crate::answer::Answer;
use crate::contract::{CONTRACT_PACKAGE, ContractInfo, ContractVersion, ExtensionPoint};
use crate::model::types::ProviderError;
use crate::sandbox::CallState;

#[macro_use]
mod shared;
pub(crate) mod v0_1;
pub(crate) mod v0_2;
pub(crate) mod v0_3;

/// One function of the contract, version-neutral.
pub(crate) trait ContractFn {
    /// The interface, e.g. `lifecycle-hooks`.
    const INTERFACE: &'static str;
    /// The function's name in the interface, e.g. `handle`.
    const NAME: &'static str;
    /// `interface.name`: how logs, errors and metrics name the call.
    const OPERATION: &'static str;
    /// The extension point it belongs to; `None` for `metadata`, which every provider exports.
    const POINT: Option<ExtensionPoint>;
    /// Its place in [`Exports`]; functions that share an export share the slot.
    const SLOT: usize;
    /// The first contract version that has it: a component of an earlier version does not
    /// export it, and a call of it there answers `unsupported` without entering the component.
    const SINCE: ContractVersion;
    /// What the host passes, borrowed from the caller.
    type Input<'a>: Send + Sync;
    /// What the provider answers on success, checked before the host keeps it.
    type Output: Answer + Send + 'static;
}

/// How one contract function is called at the contract version whose bindings' marker type is
/// `V` ([`v0_1::Version`], [`v0_2::Version`], [`v0_3::Version`]).
pub(crate) trait Binding<V>: ContractFn {
    /// The function's parameters as this version's generated types.
    type Params<'a>: ComponentNamedList + Lower + Send + Sync;
    /// Its results as this version's generated types.
    type Results: ComponentNamedList + Lift + Send + Sync + 'static;
    /// The parameters; what the provider reads through the host instead (0.2's call context)
    /// is put in `state` for the call.
    fn lower<'a>(state: &mut CallState, input: Self::Input<'a>) -> Self::Params<'a>;
    /// The answer, in the model.
    fn lift(results: Self::Results) -> Result<Self::Output, ProviderError>;
}

/// A contract function every version this host serves has bindings for.
pub(crate) trait Callable:
    ContractFn + Binding<v0_1::Version> + Binding<v0_2::Version> + Binding<v0_3::Version>
{
}

impl<F> Callable for F where
    F: ContractFn + Binding<v0_1::Version> + Binding<v0_2::Version> + Binding<v0_3::Version>
{
}

/// The representation of the one `call-context` a call lends its provider (0.2 on). The
/// context itself lives in the call's state ([`CallState::call_context`]), set before each
/// call.
const CALL_CONTEXT_REP: u32 = 0;

/// The call context lent to the provider for one call, as the resource type `T` of the
/// version's bindings.
fn lend<T: 'static>(
    state: &mut CallState,
    ctx: &crate::model::types::CallContext,
) -> wasmtime::component::Resource<T> {
    state.call_context = Some(ctx.clone());
    wasmtime::component::Resource::new_borrow(CALL_CONTEXT_REP)
}

impl CallState {
    /// The context of the call under way, lent as the resource `rep`; a trap when there is
    /// none, which only a provider that kept a borrow past its call could cause (the
    /// component model forbids it).
    fn lent_context(&self, rep: u32) -> wasmtime::Result<&crate::model::types::CallContext> {
        match (&self.call_context, rep) {
            (Some(ctx), CALL_CONTEXT_REP) => Ok(ctx),
            _ => Err(wasmtime::format_err!(
                "no call context is lent to this call"
            )),
        }
    }
}

/// Checks that the export at `index` has `F`'s type at version `V`.
fn check<V, F: Binding<V>>(
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

/// Calls `F` at `index` with version `V`'s bindings, an export [`check`]ed for the component
/// `instance` comes from.
#[allow(unsafe_code)] // `TypedFunc::new_unchecked`; the SAFETY comment below says why it holds.
async fn call<V, F: Binding<V>>(
    store: &mut Store<CallState>,
    instance: &Instance,
    index: ComponentExportIndex,
    input: F::Input<'_>,
) -> wasmtime::Result<Result<F::Output, ProviderError>> {
    let func = instance
        .get_func(&mut *store, index)
        .ok_or_else(|| wasmtime::format_err!("the instance has no export {}", F::OPERATION))?;
    // SAFETY: `check::<V, F>` checked `F::Params<'_>` and `F::Results` against this export's
    // type with `Func::typed` at load. Every instance the provider calls comes from the same
    // `InstancePre`, so from the same component and the same types; lifetimes play no part in
    // the check.
    let typed = unsafe { TypedFunc::<F::Params<'_>, F::Results>::new_unchecked(func) };
    let params = F::lower(store.data_mut(), input);
    let results = typed.call_async(&mut *store, params).await;
    // What the lowering lent the call ends with it.
    store.data_mut().call_context = None;
    Ok(F::lift(results?))
}

/// Declares a marker type per contract function, with its [`ContractFn`], and the list of
/// every exported function that [`Exports::find`] and [`Exports::check`] walk.
macro_rules! contract_functions {
    ($(
        $marker:ident = $slot:literal $iface:literal . $name:literal $(in $point:ident)?
            $(since $since:ident)? <$lt:lifetime> ($input:ty) -> $output:ty;
    )*) => {
        $(
            pub(crate) enum $marker {}

            impl ContractFn for $marker {
                const INTERFACE: &'static str = $iface;
                const NAME: &'static str = $name;
                const OPERATION: &'static str = concat!($iface, ".", $name);
                const POINT: Option<ExtensionPoint> = contract_functions!(@point $($point)?);
                const SLOT: usize = $slot;
                const SINCE: ContractVersion = contract_functions!(@since $($since)?);
                type Input<$lt> = $input;
                type Output = $output;
            }
        )*
    };
    (@point) => { None };
    (@since) => { ContractVersion::V0_1 };
    (@since $since:ident) => { ContractVersion::$since };
    (@point $point:ident) => { Some(ExtensionPoint::$point) };
}

use crate::answer::AsWritten;
use crate::model::types::{CallContext, Deletion, Endpoint, MachineRef};
use crate::model::{bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata};

contract_functions! {
    Describe = 0 "metadata"."describe" <'a> (()) -> metadata::ProviderMetadata;
    DescribeAsWritten = 0 "metadata"."describe" <'a> (())
        -> AsWritten<metadata::ProviderMetadata>;
    ValidateConfig = 1 "metadata"."validate-config" <'a> (&'a str)
        -> Result<(), Vec<metadata::FieldError>>;
    ReconcileCluster = 2 "infrastructure"."reconcile-cluster" in Infrastructure
        <'a> (&'a CallContext) -> infrastructure::ClusterState;
    DeleteCluster = 3 "infrastructure"."delete-cluster" in Infrastructure
        <'a> (&'a CallContext) -> Deletion;
    ReconcileMachine = 4 "infrastructure"."reconcile-machine" in Infrastructure
        <'a> ((&'a CallContext, &'a infrastructure::MachineSpec)) -> infrastructure::MachineStatus;
    DeleteMachine = 5 "infrastructure"."delete-machine" in Infrastructure
        <'a> ((&'a CallContext, &'a MachineRef)) -> Deletion;
    ListMachines = 6 "infrastructure"."list-machines" in Infrastructure
        <'a> (&'a CallContext) -> Vec<infrastructure::ListedMachine>;
    ClusterSecrets = 7 "bootstrap"."cluster-secrets" in Bootstrap
        <'a> (&'a CallContext) -> bootstrap::SecretsState;
    Generate = 8 "bootstrap"."generate" in Bootstrap
        <'a> ((&'a CallContext, &'a bootstrap::BootstrapRequest)) -> bootstrap::BootstrapData;
    Kubeconfig = 9 "bootstrap"."kubeconfig" in Bootstrap
        <'a> ((&'a CallContext, &'a Endpoint, &'a [bootstrap::SecretItem])) -> String;
    Plan = 10 "control-plane"."plan" in ControlPlane
        <'a> ((&'a CallContext, &'a control_plane::PlanInput)) -> control_plane::PlanOutput;
    Handle = 11 "lifecycle-hooks"."handle" in LifecycleHooks
        <'a> ((&'a CallContext, &'a lifecycle_hooks::HookRequest))
        -> lifecycle_hooks::HookResponse;
    CurrentJoinToken = 12 "bootstrap"."current-join-token" in Bootstrap since V0_3
        <'a> ((&'a CallContext, &'a [bootstrap::SecretItem])) -> Option<bootstrap::JoinToken>;
    RenewJoinToken = 13 "bootstrap"."renew-join-token" in Bootstrap since V0_3
        <'a> ((&'a CallContext, &'a [bootstrap::SecretItem])) -> bootstrap::JoinToken;
    ReconcileControlPlane = 14 "control-plane"."reconcile-control-plane" in ControlPlane
        since V0_3 <'a> ((&'a CallContext, &'a control_plane::PlanInput))
        -> control_plane::ReconcileOutput;
    DeleteControlPlane = 15 "control-plane"."delete-control-plane" in ControlPlane since V0_3
        <'a> (&'a CallContext) -> Deletion;
}

/// How many export slots a provider has: one per function of the contract.
const SLOTS: usize = 16;

/// Runs `$body` once for each exported function of the contract, with `$f` naming its marker
/// type (one marker per slot).
macro_rules! for_each_export {
    ($f:ident => $body:block) => {{
        {
            type $f = Describe;
            $body
        }
        {
            type $f = ValidateConfig;
            $body
        }
        {
            type $f = ReconcileCluster;
            $body
        }
        {
            type $f = DeleteCluster;
            $body
        }
        {
            type $f = ReconcileMachine;
            $body
        }
        {
            type $f = DeleteMachine;
            $body
        }
        {
            type $f = ListMachines;
            $body
        }
        {
            type $f = ClusterSecrets;
            $body
        }
        {
            type $f = Generate;
            $body
        }
        {
            type $f = Kubeconfig;
            $body
        }
        {
            type $f = Plan;
            $body
        }
        {
            type $f = Handle;
            $body
        }
        {
            type $f = CurrentJoinToken;
            $body
        }
        {
            type $f = RenewJoinToken;
            $body
        }
        {
            type $f = ReconcileControlPlane;
            $body
        }
        {
            type $f = DeleteControlPlane;
            $body
        }
    }};
}

/// The contract functions among one component's exports, found by name at load and, once
/// [`Exports::check`] passed, with their types checked against the version's bindings.
pub(crate) struct Exports {
    version: ContractVersion,
    slots: [Option<ComponentExportIndex>; SLOTS],
}

impl Exports {
    /// Finds every function of `metadata` and of the extension points `contract` says the
    /// component exports.
    ///
    /// # Errors
    /// A description of the first interface or function that is missing.
    pub(crate) fn find(
        component: &Component,
        contract: &ContractInfo,
        version: ContractVersion,
    ) -> Result<Self, String> {
        let mut slots = [None; SLOTS];
        let interface = |name: &str| {
            let full = format!("{CONTRACT_PACKAGE}/{name}@{}", contract.version);
            component
                .get_export_index(None, &full)
                .ok_or_else(|| format!("no exported instance named {full}"))
        };
        let mut result = Ok(());
        for_each_export!(F => {
            let exported = F::POINT.is_none_or(|p| contract.exported.contains(&p))
                && F::SINCE <= version;
            if exported && result.is_ok() {
                result = interface(F::INTERFACE).and_then(|ix| {
                    component.get_export_index(Some(&ix), F::NAME).ok_or_else(|| {
                        format!(
                            "export {CONTRACT_PACKAGE}/{}@{} has no function `{}`",
                            F::INTERFACE,
                            contract.version,
                            F::NAME
                        )
                    })
                }).map(|index| slots[F::SLOT] = Some(index));
            }
        });
        result.map(|()| Exports { version, slots })
    }

    /// Checks the type of every function found, in one instance of the component, against
    /// the version's bindings; calls then skip that check.
    ///
    /// # Errors
    /// A description of the first function whose type does not match the contract.
    pub(crate) fn check(
        &self,
        store: &mut Store<CallState>,
        instance: &Instance,
    ) -> Result<(), String> {
        let mut result = Ok(());
        for_each_export!(F => {
            if let (Some(index), true) = (self.slots[F::SLOT], result.is_ok()) {
                result = match self.version {
                    ContractVersion::V0_1 => check::<v0_1::Version, F>(store, instance, index),
                    ContractVersion::V0_2 => check::<v0_2::Version, F>(store, instance, index),
                    ContractVersion::V0_3 => check::<v0_3::Version, F>(store, instance, index),
                }
                .map_err(|e| {
                    format!(
                        "export {CONTRACT_PACKAGE}/{}.{} does not match the contract: {e:#}",
                        F::INTERFACE,
                        F::NAME
                    )
                });
            }
        });
        result
    }

    /// Whether the component's contract version has `F` (it may still not export it, when
    /// `F` belongs to an extension point it does not implement).
    pub(crate) fn version_has<F: ContractFn>(&self) -> bool {
        F::SINCE <= self.version
    }

    /// Whether the component exports `F`.
    pub(crate) fn has<F: ContractFn>(&self) -> bool {
        self.slots[F::SLOT].is_some()
    }

    /// Calls `F` in `instance`, an instance of the component these exports were checked for:
    /// lowers the model input with the bindings of the component's version, and lifts the
    /// answer back into the model.
    ///
    /// # Errors
    /// When the call traps or fails in the host, or the component does not export `F`
    /// (callers check [`Exports::has`] first).
    pub(crate) async fn call<F: Callable>(
        &self,
        store: &mut Store<CallState>,
        instance: &Instance,
        input: F::Input<'_>,
    ) -> wasmtime::Result<Result<F::Output, ProviderError>> {
        let index = self.slots[F::SLOT].ok_or_else(|| {
            wasmtime::format_err!("the component does not export {}", F::OPERATION)
        })?;
        match self.version {
            ContractVersion::V0_1 => call::<v0_1::Version, F>(store, instance, index, input).await,
            ContractVersion::V0_2 => call::<v0_2::Version, F>(store, instance, index, input).await,
            ContractVersion::V0_3 => call::<v0_3::Version, F>(store, instance, index, input).await,
        }
    }
}

/// Converts a value of one side of the bindings into the other: model to generated for what
/// the host passes, generated to model for what a provider answers. `From` cannot be used: the
/// impls for `Vec` and `Option` below would overlap with the standard library's.
pub(crate) trait Conv<T> {
    fn conv(self) -> T;
}

impl<A: Conv<B>, B> Conv<Vec<B>> for Vec<A> {
    fn conv(self) -> Vec<B> {
        self.into_iter().map(Conv::conv).collect()
    }
}

impl<A: Conv<B>, B> Conv<Option<B>> for Option<A> {
    fn conv(self) -> Option<B> {
        self.map(Conv::conv)
    }
}

macro_rules! same {
    ($($t:ty),*) => {
        $(impl Conv<$t> for $t {
            fn conv(self) -> $t {
                self
            }
        })*
    };
}

same!(bool, u8, u16, u32, u64, String);
