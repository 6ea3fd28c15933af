//! What capw's simcloud providers (sim-infra, sim-managed-control-plane) share: the simcloud
//! client over the host's wasi:http, what its failures mean to the host, the config rules for
//! reaching simcloud, and the simcloud name of a cluster.
//!
//! A plain library, not a component: it exports nothing, so each provider links it into its
//! own component without the other's exports.
//!
//! Where to start: [`Client`] for requests, [`ClientError`] for what their failures mean,
//! [`SimcloudConfig`] for what a provider's config must tell the client, and [`config`] for
//! the rules of those fields.

#![warn(missing_docs)]

pub mod client;
pub mod config;
pub mod error;
pub mod naming;

pub use client::{Client, query};
pub use config::SimcloudConfig;
pub use error::ClientError;
