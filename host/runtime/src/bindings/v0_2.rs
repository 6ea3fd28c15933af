//! The bindings of `capw:provider@0.2.x`: the generated types of `wit/`, how each contract
//! function lowers the model's input into them and lifts its answer back, and the host
//! interfaces of this version. Nothing generated leaves this module.
//!
//! What differs from 0.1 for the host:
//! - the call context is a resource the host holds for the call (`borrow<call-context>`):
//!   the model's context is kept in the call's state, and the provider copies out only the
//!   fields it asks for;
//! - `plan` answers a `control-plane-status` and may ask for `remove-etcd-member`.

use wasmtime::component::Resource;

use super::Conv;
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

/// The marker of this version's bindings: `Binding<Version>` calls a function at 0.2.
pub(crate) enum Version {}

// The call context is a resource the provider borrows for the call.
bind_version!(Version, context: Resource<types::CallContext> = |state, ctx| lend(state, ctx));

/// The call context lent to the provider for one call.
fn lend(state: &mut CallState, ctx: &model::types::CallContext) -> Resource<types::CallContext> {
    state.call_context = Some(ctx.clone());
    Resource::new_borrow(CALL_CONTEXT_REP)
}

cases! {
    control_plane::Step {
        None, CreateMachine(m), DeleteMachine(m), RemoveEtcdMember(m), ApplyManifests(m),
        Wait(p),
    }
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
