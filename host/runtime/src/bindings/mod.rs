//! The contract's functions, once, and the bindings of each contract version.
//!
//! [`ContractFn`] describes one function of the contract in the host's own terms: its name,
//! the extension point it belongs to and its input and output as [`crate::model`] types. Each
//! contract version has a module (`v0_1`) whose `Binding` impls say how that version lowers
//! the model's input into its generated types and lifts its answer back; the generated types
//! never leave that module. [`Exports::call`] is the one typed call: it picks the version's
//! binding for the component at hand. Adding a contract version adds a module here and a case
//! to [`ContractVersion`]; callers of the runtime do not change.

use wasmtime::Store;
use wasmtime::component::{Component, ComponentExportIndex, Instance};

use crate::answer::Answer;
use crate::contract::{CONTRACT_PACKAGE, ContractInfo, ExtensionPoint};
use crate::model::types::ProviderError;
use crate::sandbox::CallState;

/// Converts a record both ways between a version's generated type `$gen::$t` and the model's
/// type of the same name, field by field; used by each version's module.
macro_rules! record {
    ($($gen:ident :: $t:ident { $($f:ident),* $(,)? })*) => {
        $(
            impl Conv<model::$gen::$t> for $gen::$t {
                fn conv(self) -> model::$gen::$t {
                    model::$gen::$t { $($f: self.$f.conv()),* }
                }
            }
            impl Conv<$gen::$t> for model::$gen::$t {
                fn conv(self) -> $gen::$t {
                    $gen::$t { $($f: self.$f.conv()),* }
                }
            }
        )*
    };
}

/// Converts an enum or a variant both ways between `$gen` and the model's type of the same
/// name, case by case.
macro_rules! cases {
    ($($gen:ident :: $t:ident { $($case:ident $(($x:ident))?),* $(,)? })*) => {
        $(
            impl Conv<model::$gen::$t> for $gen::$t {
                fn conv(self) -> model::$gen::$t {
                    match self {
                        $($gen::$t::$case $(($x))? => model::$gen::$t::$case $(($x.conv()))?,)*
                    }
                }
            }
            impl Conv<$gen::$t> for model::$gen::$t {
                fn conv(self) -> $gen::$t {
                    match self {
                        $(model::$gen::$t::$case $(($x))? => $gen::$t::$case $(($x.conv()))?,)*
                    }
                }
            }
        )*
    };
}

pub(crate) mod v0_1;
pub(crate) mod v0_2;

/// A contract version this host has bindings for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContractVersion {
    /// `capw:provider@0.1.x`.
    V0_1,
    /// `capw:provider@0.2.x`.
    V0_2,
}

impl ContractVersion {
    /// The bindings that serve `version` (a semver string read from a component's exports).
    pub(crate) fn serving(version: &semver::Version) -> Option<Self> {
        match (version.major, version.minor) {
            (0, 1) => Some(ContractVersion::V0_1),
            (0, 2) => Some(ContractVersion::V0_2),
            _ => None,
        }
    }
}

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
    /// What the host passes, borrowed from the caller.
    type Input<'a>: Send + Sync;
    /// What the provider answers on success, checked before the host keeps it.
    type Output: Answer + Send + 'static;
}

/// A contract function every version this host serves has bindings for.
pub(crate) trait Callable: ContractFn + v0_1::Binding + v0_2::Binding {}

impl<F: ContractFn + v0_1::Binding + v0_2::Binding> Callable for F {}

/// Declares a marker type per contract function, with its [`ContractFn`], and the list of
/// every exported function that [`Exports::find`] and [`Exports::check`] walk.
macro_rules! contract_functions {
    ($(
        $marker:ident = $slot:literal $iface:literal . $name:literal $(in $point:ident)?
            <$lt:lifetime> ($input:ty) -> $output:ty;
    )*) => {
        $(
            pub(crate) enum $marker {}

            impl ContractFn for $marker {
                const INTERFACE: &'static str = $iface;
                const NAME: &'static str = $name;
                const OPERATION: &'static str = concat!($iface, ".", $name);
                const POINT: Option<ExtensionPoint> = contract_functions!(@point $($point)?);
                const SLOT: usize = $slot;
                type Input<$lt> = $input;
                type Output = $output;
            }
        )*
    };
    (@point) => { None };
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
}

/// How many export slots a provider has: one per function of the contract.
const SLOTS: usize = 12;

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
            let exported = F::POINT.is_none_or(|p| contract.exported.contains(&p));
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
                    ContractVersion::V0_1 => v0_1::check::<F>(store, instance, index),
                    ContractVersion::V0_2 => v0_2::check::<F>(store, instance, index),
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
            ContractVersion::V0_1 => v0_1::call::<F>(store, instance, index, input).await,
            ContractVersion::V0_2 => v0_2::call::<F>(store, instance, index, input).await,
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
