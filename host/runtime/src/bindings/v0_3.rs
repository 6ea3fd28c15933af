//! The bindings of `capw:provider@0.3.x`, the draft in `wit/`: the generated types, how each
//! contract function lowers the model's input into them and lifts its answer back, and the
//! host interfaces of this version. Nothing generated leaves this module.
//!
//! What differs from 0.2 for the host (docs/contract.md, "The 0.3 draft"):
//! - a control-plane `member` says where it stands in etcd (`etcd`), why it is out of date
//!   (`out-of-date`) and why it is to be replaced as unhealthy (`unhealthy`);
//! - `capabilities` declare `chains-upgrades`;
//! - `bootstrap` has `current-join-token` and `renew-join-token`.

use wasmtime::component::Resource;

use super::Conv;
use crate::model;
use crate::sandbox::{CallState, LogLevel, SecretLookupError};

resource_context_version!("../../wit");

bind_extension_points! {
    Version, context: Resource<types::CallContext> = |state, ctx| super::lend(state, ctx);
    CurrentJoinToken (secrets: Vec<bootstrap::SecretItem>) -> Option<bootstrap::JoinToken>;
    RenewJoinToken (secrets: Vec<bootstrap::SecretItem>) -> bootstrap::JoinToken;
}

record! {
    control_plane::Member {
        machine, version, failure_domain, ready, created_at, deleting, etcd, out_of_date,
        unhealthy,
    }
    metadata::Capabilities {
        control_plane_shape, control_plane_scalable, version_upgrades, chains_upgrades,
    }
    bootstrap::JoinToken { item, id, secret, ttl_seconds, extra_groups }
}

cases! {
    control_plane::EtcdMembership { Unknown, Member, NotMember }
}
