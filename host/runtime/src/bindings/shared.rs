//! What every contract version binds alike, written once as macros that each version's module
//! expands over its own generated types: the conversions of records and cases field by field
//! (`record!`, `cases!`) and everything two versions have in common (`bind_version!`). A
//! version's module keeps only what differs.

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
    };
}
