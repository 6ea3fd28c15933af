//! The bindings of `capw:provider@0.1.x`: the generated types of `wit/`, how each contract
//! function lowers the model's input into them and lifts its answer back, and the host
//! interfaces of this version. Nothing generated leaves this module.

use super::Conv;
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

/// The marker of this version's bindings: `Binding<Version>` calls a function at 0.1.
pub(crate) enum Version {}

// The call context is a record, passed by value.
bind_version!(Version, context: types::CallContext = |_state, ctx| ctx.clone().conv());

record! {
    types::CallContext { cluster, config, idempotency_key, deadline_ms }
}

member_and_capabilities_before_0_3!();
absent_in_version!(Version: CurrentJoinToken, RenewJoinToken, ReconcileControlPlane, DeleteControlPlane);

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
            failures_tolerated: None,
            certificates: Vec::new(),
            shared_datastore: None,
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
