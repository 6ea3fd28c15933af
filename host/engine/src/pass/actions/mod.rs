//! The pass's actions, one file per family. Each is given the [`Env`](super::env::Env) and the
//! cluster's [`Snapshot`](super::snapshot::Snapshot) and answers with an
//! [`ActionNote`](super::note::ActionNote). An action imports only the base (the crate's
//! `store`, `objects`, `config`, `error`, the `providers` wing, and the pass's `env`, `note`,
//! `snapshot` and `convert`), never another action: what two actions share goes into the
//! base (`tests/layout.rs` checks it).

pub(crate) mod control_plane;
pub(crate) mod drain;
pub(crate) mod etcd;
pub(crate) mod finalizer;
pub(crate) mod health;
pub(crate) mod hooks;
pub(crate) mod hosted;
pub(crate) mod infrastructure;
pub(crate) mod join_token;
pub(crate) mod kubeconfig;
pub(crate) mod machines;
pub(crate) mod nodes;
pub(crate) mod secrets;
pub(crate) mod up_to_date;
