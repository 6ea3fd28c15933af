//! The contract's functions among a component's exports: found by name once at load, their
//! types checked once against the host's signatures, then called in every fresh instance of
//! that component without looking up or checking again.
//!
//! wasmtime's generated `load` type-checks every function of an interface each time it is
//! called on an instance: for a fresh instance per call, that check cost more than the call's
//! own lowering of its arguments.

use std::marker::PhantomData;

use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, Func, Instance, Lift, Lower, TypedFunc,
};
use wasmtime::{AsContextMut, Store};

use crate::bindings::{bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata};
use crate::contract::{CONTRACT_PACKAGE, CONTRACT_VERSION, ContractInfo, ExtensionPoint};
use crate::sandbox::CallState;
use crate::types::{CallContext, Deletion, Endpoint, MachineRef, ProviderError};

/// The host's view of one contract function: its interface, its name and its Rust types.
pub(crate) trait Signature {
    /// The interface in the contract, e.g. `lifecycle-hooks`.
    const INTERFACE: &'static str;
    /// The function's name in the interface, e.g. `handle`.
    const NAME: &'static str;
    type Params<'a>: ComponentNamedList + Lower + Send + Sync;
    type Results: ComponentNamedList + Lift + Send + Sync + 'static;
}

/// Declares a marker type per contract function with its [`Signature`].
macro_rules! signatures {
    ($( $marker:ident = $iface:literal . $name:literal <$lt:lifetime> ($($param:ty),*) -> $result:ty; )*) => {
        $(
            pub(crate) enum $marker {}

            impl Signature for $marker {
                const INTERFACE: &'static str = $iface;
                const NAME: &'static str = $name;
                type Params<$lt> = ($($param,)*);
                type Results = ($result,);
            }
        )*
    };
}

signatures! {
    Describe = "metadata"."describe" <'a> () -> metadata::ProviderMetadata;
    ValidateConfig = "metadata"."validate-config" <'a> (&'a str)
        -> Result<(), Vec<metadata::FieldError>>;
    ReconcileCluster = "infrastructure"."reconcile-cluster" <'a> (&'a CallContext)
        -> Result<infrastructure::ClusterState, ProviderError>;
    DeleteCluster = "infrastructure"."delete-cluster" <'a> (&'a CallContext)
        -> Result<Deletion, ProviderError>;
    ReconcileMachine = "infrastructure"."reconcile-machine"
        <'a> (&'a CallContext, &'a infrastructure::MachineSpec)
        -> Result<infrastructure::MachineStatus, ProviderError>;
    DeleteMachine = "infrastructure"."delete-machine" <'a> (&'a CallContext, &'a MachineRef)
        -> Result<Deletion, ProviderError>;
    ListMachines = "infrastructure"."list-machines" <'a> (&'a CallContext)
        -> Result<Vec<infrastructure::ListedMachine>, ProviderError>;
    ClusterSecrets = "bootstrap"."cluster-secrets" <'a> (&'a CallContext)
        -> Result<bootstrap::SecretsState, ProviderError>;
    Generate = "bootstrap"."generate" <'a> (&'a CallContext, &'a bootstrap::BootstrapRequest)
        -> Result<bootstrap::BootstrapData, ProviderError>;
    Kubeconfig = "bootstrap"."kubeconfig"
        <'a> (&'a CallContext, &'a Endpoint, &'a [bootstrap::SecretItem])
        -> Result<String, ProviderError>;
    Plan = "control-plane"."plan" <'a> (&'a CallContext, &'a control_plane::PlanInput)
        -> Result<control_plane::PlanOutput, ProviderError>;
    Handle = "lifecycle-hooks"."handle" <'a> (&'a CallContext, lifecycle_hooks::HookRequest)
        -> Result<lifecycle_hooks::HookResponse, ProviderError>;
}

/// Where one contract function sits among a component's exports. Made only by
/// [`FoundExports::check`], so holding one means its types were checked for this component.
pub(crate) struct ExportFn<S> {
    index: ComponentExportIndex,
    signature: PhantomData<S>,
}

impl<S: Signature> ExportFn<S> {
    /// Calls the function in an instance of the component it was checked for, and returns its
    /// answer.
    ///
    /// # Errors
    /// When the call traps or fails in the host, or `instance` lacks the export (which only
    /// an instance of another component can).
    pub(crate) async fn call<'a, R>(
        &self,
        store: &mut Store<CallState>,
        instance: &Instance,
        params: S::Params<'a>,
    ) -> wasmtime::Result<R>
    where
        S: Signature<Results = (R,)>,
        R: Lift + Send + Sync + 'static,
    {
        let func = lookup::<S>(&mut *store, instance, self.index)?;
        // SAFETY: `FoundExports::check` checked `S::Params<'_>` and `S::Results` against
        // this export's type with `Func::typed`. Every instance the provider calls comes from
        // the same `InstancePre`, so from the same component and the same types; lifetimes
        // play no part in the check.
        let typed = unsafe { TypedFunc::<S::Params<'a>, S::Results>::new_unchecked(func) };
        let (answer,) = typed.call_async(store, params).await?;
        Ok(answer)
    }
}

/// The function at `index` in `instance`.
fn lookup<S: Signature>(
    store: impl AsContextMut,
    instance: &Instance,
    index: ComponentExportIndex,
) -> wasmtime::Result<Func> {
    instance.get_func(store, index).ok_or_else(|| {
        wasmtime::format_err!("the instance has no export {}.{}", S::INTERFACE, S::NAME)
    })
}

/// A function found by name, its type not yet checked.
struct Found<S> {
    index: ComponentExportIndex,
    signature: PhantomData<S>,
}

impl<S: Signature> Found<S> {
    fn find(component: &Component, interface: &ComponentExportIndex) -> Result<Self, String> {
        let index = component
            .get_export_index(Some(interface), S::NAME)
            .ok_or_else(|| {
                format!(
                    "export {CONTRACT_PACKAGE}/{} has no function `{}`",
                    S::INTERFACE,
                    S::NAME
                )
            })?;
        Ok(Found {
            index,
            signature: PhantomData,
        })
    }

    fn check(
        self,
        mut store: impl AsContextMut,
        instance: &Instance,
    ) -> Result<ExportFn<S>, String> {
        let func = lookup::<S>(&mut store, instance, self.index).map_err(|e| e.to_string())?;
        func.typed::<S::Params<'_>, S::Results>(&store)
            .map_err(|e| {
                format!(
                    "export {CONTRACT_PACKAGE}/{}.{} does not match the contract: {e:#}",
                    S::INTERFACE,
                    S::NAME
                )
            })?;
        Ok(ExportFn {
            index: self.index,
            signature: PhantomData,
        })
    }
}

/// Declares the set of contract functions a provider may export, in the two states: found by
/// name ([`FoundExports`]) and type-checked ([`Exports`]).
macro_rules! export_sets {
    (
        required { $($req:ident: $req_sig:ident,)* }
        $( $point:ident { $($opt:ident: $opt_sig:ident,)* } )*
    ) => {
        /// The contract functions of a component, found by name but not yet checked.
        pub(crate) struct FoundExports {
            $( $req: Found<$req_sig>, )*
            $( $( $opt: Option<Found<$opt_sig>>, )* )*
        }

        /// The contract functions of a component, checked: what a provider calls.
        pub(crate) struct Exports {
            $( pub(crate) $req: ExportFn<$req_sig>, )*
            $( $( pub(crate) $opt: Option<ExportFn<$opt_sig>>, )* )*
        }

        impl FoundExports {
            /// Finds every function of `metadata` and of the extension points `contract` says
            /// the component exports.
            pub(crate) fn find(component: &Component, contract: &ContractInfo) -> Result<Self, String> {
                let interface = |name: &str| {
                    let full = format!("{CONTRACT_PACKAGE}/{name}@{CONTRACT_VERSION}");
                    component
                        .get_export_index(None, &full)
                        .ok_or_else(|| format!("no exported instance named {full}"))
                };
                let metadata = interface("metadata")?;
                $( let $req = Found::find(component, &metadata)?; )*
                $(
                    let point = ExtensionPoint::$point;
                    let ix = if contract.exported.contains(&point) {
                        Some(interface(point.interface())?)
                    } else {
                        None
                    };
                    $(
                        let $opt = ix.as_ref().map(|ix| Found::find(component, ix)).transpose()?;
                    )*
                )*
                Ok(FoundExports { $($req,)* $($($opt,)*)* })
            }

            /// Checks every function's type in one instance of the component.
            pub(crate) fn check(self, mut store: impl AsContextMut, instance: &Instance) -> Result<Exports, String> {
                Ok(Exports {
                    $( $req: self.$req.check(&mut store, instance)?, )*
                    $( $(
                        $opt: self.$opt.map(|f| f.check(&mut store, instance)).transpose()?,
                    )* )*
                })
            }
        }
    };
}

export_sets! {
    required {
        describe: Describe,
        validate_config: ValidateConfig,
    }
    Infrastructure {
        reconcile_cluster: ReconcileCluster,
        delete_cluster: DeleteCluster,
        reconcile_machine: ReconcileMachine,
        delete_machine: DeleteMachine,
        list_machines: ListMachines,
    }
    Bootstrap {
        cluster_secrets: ClusterSecrets,
        generate: Generate,
        kubeconfig: Kubeconfig,
    }
    ControlPlane {
        plan: Plan,
    }
    LifecycleHooks {
        handle: Handle,
    }
}
