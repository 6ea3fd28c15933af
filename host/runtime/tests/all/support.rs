//! Shared fixtures: where the built components are, and runtime builders.

use std::path::PathBuf;
use std::sync::Arc;

use capw_runtime::types::{CallContext, ClusterRef};
use capw_runtime::{Grants, Provider, Runtime, RuntimeConfig};

/// The bytes of a built component, e.g. `capw_example_provider`.
pub fn component(name: &str) -> Arc<[u8]> {
    Arc::from(capw_test_support::component(name))
}

/// The bytes of a `.wat` fixture, assembled.
pub fn fixture(name: &str) -> Arc<[u8]> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    Arc::from(wat::parse_file(&path).unwrap())
}

pub use capw_test_support::init_tracing;

/// A runtime without a compile cache.
pub fn runtime() -> Arc<Runtime> {
    init_tracing();
    Runtime::new(RuntimeConfig::default()).unwrap()
}

pub async fn example(runtime: &Arc<Runtime>) -> Provider {
    runtime
        .load(
            "example",
            component("capw_example_provider"),
            Grants::default(),
        )
        .await
        .unwrap()
}

pub async fn hostile(runtime: &Arc<Runtime>, grants: Grants) -> Provider {
    runtime
        .load("hostile", component("capw_hostile_provider"), grants)
        .await
        .unwrap()
}

/// A call context for cluster `name` with `config` (JSON).
pub fn ctx(name: &str, config: serde_json::Value) -> CallContext {
    CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
        },
        config: config.to_string(),
        idempotency_key: format!("{name}-key-1"),
        deadline_ms: 10_000,
    }
}
