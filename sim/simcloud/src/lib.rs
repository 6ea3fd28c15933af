//! capw's simulated cloud: networks, load balancers, instances and managed control planes
//! behind a small JSON-over-HTTP API, for the reference infrastructure provider and the tests
//! that drive it.
//!
//! Start here: [`SimCloud::start`] with a [`SimCloudConfig`] serves the API in-process and
//! returns a [`SimCloudHandle`] (`addr`, `base_url`, `shutdown`); the `simcloud` binary does
//! the same from flags. The routes and their shapes are in the crate's `README.md` and in
//! [`model`].
//!
//! What makes it a useful test double rather than a stub:
//! - instances boot by reading their bootstrap data, and fail with a precise reason unless it
//!   is cloud-config that runs kubeadm against the cluster's endpoint with the cluster's
//!   registered token and CA hash ([`boot_check`]);
//! - creates are idempotent by client token;
//! - faults (latency, 500s, 429s, hung requests) are injected deterministically under a seed
//!   ([`FaultConfig`]);
//! - state survives a restart ([`SimCloudConfig::state_file`]);
//! - with [`BootMode::Real`], instances boot for real: their bootstrap data starts a real
//!   control plane or node as local processes on loopback addresses, and load balancers are
//!   real TCP proxies ([`machines`]).

mod api;
pub mod boot_check;
pub mod config;
pub mod credentials;
pub mod faults;
pub mod fixtures;
pub mod machines;
pub mod model;
mod server;
mod state;
mod store;

pub use config::{BootMode, ConfigError, FaultConfig, RealBoot, SimCloudConfig, Timings};
pub use server::{ServeError, SimCloud, SimCloudHandle, StartError};
pub use store::StoreError;

pub use capw_text::error_chain;
