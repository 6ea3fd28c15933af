//! What every contract version binds alike, written once as macros that each version's module
//! expands over its own generated types: the conversions of records and cases field by field
//! (`record!`, `cases!`) and everything two versions have in common (`bind_version!`). A
//! version's module keeps only what differs.

/// Converts a record both ways between a version's generated type `$gen::$t` and the model's
/// type of the same name, field by field; used by each version's module. Fields the model has
/// and the version lacks follow `+ { field: value }`: lifted as that value, dropped when lowered.
macro_rules! record {
    ($($gen:ident :: $t:ident { $($f:ident),* $(,)? } $(+ { $($extra:ident: $value:expr),* $(,)? })?)*) => {
        $(
            impl Conv<model::$gen::$t> for $gen::$t {
                fn conv(self) -> model::$gen::$t {
                    model::$gen::$t { $($f: self.$f.conv(),)* $($($extra: $value,)*)? }
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

/// Binds the functions whose first parameter is the call context and whose other parameters
/// are passed by value, converted from the model. The version passes the context as `$ctx_ty`,
/// made by `$lend` from the call's state `$state` and the model's context `$ctx`.
macro_rules! bind_extension_points {
    (
        $version:ty, context: $ctx_ty:ty = |$state:ident, $ctx:ident| $lend:expr;
        $( $marker:ident ($($arg:ident: $gen:ty),*) -> $out:ty; )*
    ) => {
        $(
            impl $crate::bindings::Binding<$version> for $crate::bindings::$marker {
                type Params<'a> = ($ctx_ty, $($gen,)*);
                type Results = (Result<$out, types::ProviderError>,);
                fn lower<'a>(
                    $state: &mut $crate::sandbox::CallState,
                    input: Self::Input<'a>,
                ) -> Self::Params<'a> {
                    let ($ctx, $($arg,)*) = bind_extension_points!(@split input $($arg)*);
                    ($lend, $($arg.to_owned().conv(),)*)
                }
                fn lift(
                    (r,): Self::Results,
                ) -> Result<Self::Output, $crate::model::types::ProviderError> {
                    r.map(Conv::conv).map_err(Conv::conv)
                }
            }
        )*
    };
    (@split $input:ident) => { ($input,) };
    (@split $input:ident $($arg:ident)+) => { $input };
}

/// What every contract version binds alike, written once and expanded in each version's
/// module, where `types`, `metadata`, `infrastructure`... name that version's generated
/// interfaces and `Conv` is in scope: every function's `Binding` for the version's marker
/// type `$version`, and the conversions of the records and cases no version changed. The
/// versions differ in how the call context is passed (`context:`, see
/// `bind_extension_points!`); what else differs stays in the version's module.
macro_rules! bind_version {
    ($version:ty, context: $ctx_ty:ty = |$state:ident, $ctx:ident| $lend:expr) => {
        bind_extension_points! {
            $version, context: $ctx_ty = |$state, $ctx| $lend;
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

        impl $crate::bindings::Binding<$version> for $crate::bindings::Describe {
            type Params<'a> = ();
            type Results = (metadata::ProviderMetadata,);
            fn lower<'a>(_: &mut $crate::sandbox::CallState, (): Self::Input<'a>) -> Self::Params<'a> {}
            fn lift((m,): Self::Results) -> Result<Self::Output, $crate::model::types::ProviderError> {
                Ok(m.conv())
            }
        }

        impl $crate::bindings::Binding<$version> for $crate::bindings::DescribeAsWritten {
            type Params<'a> = ();
            type Results = (metadata::ProviderMetadata,);
            fn lower<'a>(_: &mut $crate::sandbox::CallState, (): Self::Input<'a>) -> Self::Params<'a> {}
            fn lift((m,): Self::Results) -> Result<Self::Output, $crate::model::types::ProviderError> {
                Ok($crate::answer::AsWritten(m.conv()))
            }
        }

        impl $crate::bindings::Binding<$version> for $crate::bindings::ValidateConfig {
            type Params<'a> = (&'a str,);
            type Results = (Result<(), Vec<metadata::FieldError>>,);
            fn lower<'a>(_: &mut $crate::sandbox::CallState, config: Self::Input<'a>) -> Self::Params<'a> {
                (config,)
            }
            fn lift((r,): Self::Results) -> Result<Self::Output, $crate::model::types::ProviderError> {
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
            bootstrap::BootstrapData { format, data }
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
    };
}

/// The host interfaces of the versions whose call context is a resource (0.2 on): the
/// context's getters, the log and the secrets, for the version's generated `types`,
/// `host_log` and `host_secrets`.
macro_rules! bind_host_interfaces {
    () => {
        impl types::Host for CallState {}

        impl types::HostCallContext for CallState {
            fn cluster(
                &mut self,
                handle: Resource<types::CallContext>,
            ) -> wasmtime::Result<types::ClusterRef> {
                Ok(self.lent_context(handle.rep())?.cluster.clone().conv())
            }

            fn config(&mut self, handle: Resource<types::CallContext>) -> wasmtime::Result<String> {
                Ok(self.lent_context(handle.rep())?.config.clone())
            }

            fn idempotency_key(
                &mut self,
                handle: Resource<types::CallContext>,
            ) -> wasmtime::Result<String> {
                Ok(self.lent_context(handle.rep())?.idempotency_key.clone())
            }

            fn remaining_ms(
                &mut self,
                handle: Resource<types::CallContext>,
            ) -> wasmtime::Result<u32> {
                self.lent_context(handle.rep())?;
                let left = self
                    .deadline()
                    .saturating_duration_since(std::time::Instant::now());
                Ok(u32::try_from(left.as_millis()).unwrap_or(u32::MAX))
            }

            fn drop(&mut self, _handle: Resource<types::CallContext>) -> wasmtime::Result<()> {
                // Only borrows are ever lent: the host owns the context and clears it after
                // the call.
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

        /// Adds this version's host interfaces to `linker`.
        pub(crate) fn add_to_linker(
            linker: &mut wasmtime::component::Linker<CallState>,
        ) -> wasmtime::Result<()> {
            use wasmtime::component::HasSelf;
            types::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
            host_log::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
            host_secrets::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)
        }
    };
}

/// Functions a version does not have: bindings that are never called (a component of the
/// version does not export them, so [`crate::bindings::Exports`] has no slot for them and a
/// call stops before the component), there only so that every function is callable at every
/// version.
macro_rules! absent_in_version {
    ($version:ty: $($marker:ident),* $(,)?) => {
        $(
            impl $crate::bindings::Binding<$version> for $crate::bindings::$marker {
                type Params<'a> = ();
                type Results = ();
                fn lower<'a>(_: &mut $crate::sandbox::CallState, _: Self::Input<'a>) -> Self::Params<'a> {}
                fn lift((): Self::Results) -> Result<Self::Output, $crate::model::types::ProviderError> {
                    Err($crate::model::types::ProviderError {
                        code: $crate::model::types::ErrorCode::Unsupported,
                        message: format!(
                            "{} is not in this contract version",
                            <$crate::bindings::$marker as $crate::bindings::ContractFn>::OPERATION
                        ),
                        retryable: false,
                        retry_after_ms: None,
                    })
                }
            }
        )*
    };
}

/// A member and capabilities in a version before 0.3: a member has no `etcd`, `out-of-date`
/// or `unhealthy` yet (lifted as `unknown`, up to date and healthy), capabilities no
/// `chains-upgrades` (lifted as `false`), a plan's input no `failures-tolerated` and a
/// bootstrap request no `join` (both dropped when lowered).
macro_rules! member_and_capabilities_before_0_3 {
    () => {
        /// Before 0.3 the infrastructure's endpoint is not optional: an empty host said it
        /// makes none (a service's control plane reports its own).
        impl Conv<Option<model::types::Endpoint>> for types::Endpoint {
            fn conv(self) -> Option<model::types::Endpoint> {
                (!self.host.is_empty()).then(|| self.conv())
            }
        }
        impl Conv<types::Endpoint> for Option<model::types::Endpoint> {
            fn conv(self) -> types::Endpoint {
                self.map_or_else(
                    || types::Endpoint {
                        host: String::new(),
                        port: 0,
                    },
                    Conv::conv,
                )
            }
        }

        record! {
            bootstrap::BootstrapRequest {
                machine, role, version, endpoint, secrets, control_plane_members,
            } + { join: None }
            control_plane::PlanInput {
                version, replicas, members, failure_domains, endpoint,
            } + { failures_tolerated: None, objects: Vec::new() }
            control_plane::Member {
                machine, version, failure_domain, ready, created_at, deleting,
            } + {
                etcd: model::control_plane::EtcdMembership::Unknown,
                out_of_date: Vec::new(),
                unhealthy: Vec::new(),
            }
            metadata::Capabilities {
                control_plane_shape, control_plane_scalable, version_upgrades,
            } + { chains_upgrades: false }
        }
    };
}

/// The plan's answer from 0.2 on: its steps, with `remove-etcd-member`, and the control
/// plane's status as one record, which the model keeps in 0.1's places beside what 0.1 lacks.
/// The version's module says what its status tolerates (`fn failures_tolerated`).
macro_rules! bind_plan_output_0_2_on {
    () => {
        cases! {
            control_plane::Step {
                None, CreateMachine(m), DeleteMachine(m), RemoveEtcdMember(m), ApplyManifests(m),
                Wait(p),
            }
        }

        impl Conv<model::control_plane::PlanOutput> for control_plane::PlanOutput {
            fn conv(self) -> model::control_plane::PlanOutput {
                let certificates = certificates(&self);
                let shared_datastore = shared_datastore(&self);
                let status = self.status;
                let failures_tolerated = failures_tolerated(&status);
                model::control_plane::PlanOutput {
                    step: self.step.conv(),
                    initialized: status.initialized,
                    replicas: self.replicas,
                    ready_replicas: self.ready_replicas,
                    up_to_date_replicas: self.up_to_date_replicas,
                    endpoint: status.endpoint.conv(),
                    conditions: status.conditions.conv(),
                    ready: Some(status.ready),
                    failures_tolerated,
                    certificates,
                    shared_datastore,
                    version: status.version.conv(),
                }
            }
        }
    };
}

/// A version whose call context is a resource the provider borrows for the call (0.2 on):
/// its generated bindings from the WIT at `$path`, its marker type `Version`, every function's
/// binding, the plan's answer and the host interfaces. The version's module adds what is its
/// own (how a member and the capabilities convert).
macro_rules! resource_context_version {
    ($path:literal) => {
        mod generated {
            wasmtime::component::bindgen!({
                world: "provider",
                path: $path,
                exports: { default: async },
                // The call context's getters trap on a handle that is not the call's.
                imports: { default: trappable },
            });
        }

        use generated::capw::provider::{host_log, host_secrets, types};
        use generated::exports::capw::provider::{
            bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata,
        };

        /// The marker of this version's bindings: `Binding<Version>` calls a function at
        /// this version.
        pub(crate) enum Version {}

        bind_version!(
            Version,
            context: Resource<types::CallContext> = |state, ctx| super::lend(state, ctx)
        );
        bind_plan_output_0_2_on!();
        bind_host_interfaces!();
    };
}
