//! Shared fixtures: the built components, a runtime, a simcloud, call contexts.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use capw_runtime::types::{CallContext, ClusterRef};
use capw_runtime::{Grants, HttpGrant, Provider, Runtime, RuntimeConfig, Secret};
use capw_simcloud::{FaultConfig, SimCloud, SimCloudConfig, SimCloudHandle, Timings};

/// The token simcloud is started with, and the value of the secret granted to sim-infra.
pub const SIM_TOKEN: &str = "sim-token-7c1f3a9e";

/// The grant name sim-infra reads its simcloud token from (its config's default).
pub const TOKEN_SECRET: &str = "simcloud-token";

/// The bytes of a built component, e.g. `capw_sim_infra`.
pub fn component(name: &str) -> Arc<[u8]> {
    Arc::from(capw_test_support::component(name))
}

pub use capw_test_support::init_tracing;

/// A runtime without a compile cache.
pub fn runtime() -> Arc<Runtime> {
    init_tracing();
    Runtime::new(RuntimeConfig::default()).unwrap()
}

/// A simcloud with short delays (`delay` for every transition) and the given faults.
pub async fn simcloud(delay: Duration, faults: FaultConfig) -> SimCloudHandle {
    SimCloud::start(
        SimCloudConfig::new(SIM_TOKEN)
            .with_timings(Timings::uniform(delay))
            .with_faults(faults),
    )
    .await
    .expect("simcloud starts")
}

/// What sim-infra needs granted to reach `sim`: its authority and the token secret.
pub fn sim_infra_grants(sim: &SimCloudHandle) -> Grants {
    let mut grants = Grants::default();
    grants
        .http
        .push(sim.addr().to_string().parse::<HttpGrant>().unwrap());
    grants
        .secrets
        .insert(TOKEN_SECRET.into(), Some(Secret::new(SIM_TOKEN)));
    grants
}

pub async fn sim_infra(runtime: &Arc<Runtime>, sim: &SimCloudHandle) -> Provider {
    runtime
        .load(
            "sim-infra",
            component("capw_sim_infra"),
            sim_infra_grants(sim),
        )
        .await
        .unwrap()
}

/// How long the bootstrap provider may take per call. RSA-2048 key generation (its default)
/// runs four to five times slower in wasm than natively: a few seconds per `cluster-secrets`
/// on an idle machine, more on a shared one, so the tests give it the headroom an operator
/// would grant it (`callTimeoutSeconds`).
pub const BOOTSTRAP_CALL_TIMEOUT: Duration = Duration::from_secs(45);

pub async fn kubeadm_bootstrap(runtime: &Arc<Runtime>) -> Provider {
    let mut grants = Grants::default();
    grants.limits.call_timeout = BOOTSTRAP_CALL_TIMEOUT;
    runtime
        .load(
            "kubeadm-bootstrap",
            component("capw_kubeadm_bootstrap"),
            grants,
        )
        .await
        .unwrap()
}

pub async fn kubeadm_control_plane(runtime: &Arc<Runtime>) -> Provider {
    runtime
        .load(
            "kubeadm-control-plane",
            component("capw_kubeadm_control_plane"),
            Grants::default(),
        )
        .await
        .unwrap()
}

/// A call context for cluster `name` with `config` (JSON) and idempotency key `key`.
pub fn ctx(name: &str, config: &serde_json::Value, key: &str) -> CallContext {
    CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
        },
        config: config.to_string(),
        idempotency_key: key.into(),
        deadline_ms: 10_000,
    }
}
