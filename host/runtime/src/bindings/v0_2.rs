//! The bindings of `capw:provider@0.2.x`: the generated types of `wit/0.2/`, how each contract
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

resource_context_version!("../../wit/0.2");
member_and_capabilities_before_0_3!();
absent_in_version!(
    Version: CurrentJoinToken, RenewJoinToken, ReconcileControlPlane, DeleteControlPlane
);

/// A 0.2 plan's status does not say how many failures the control plane tolerates.
fn failures_tolerated(_: &control_plane::ControlPlaneStatus) -> Option<u32> {
    None
}

/// A 0.2 plan has no shared datastore.
fn shared_datastore(
    _: &control_plane::PlanOutput,
) -> Option<model::control_plane::SharedDatastore> {
    None
}

/// A 0.2 plan mints no certificates.
fn certificates(_: &control_plane::PlanOutput) -> Vec<model::control_plane::CertificateSecret> {
    Vec::new()
}
