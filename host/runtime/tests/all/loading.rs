//! Loading: what is refused, and how clearly.

use std::sync::Arc;

use capw_runtime::{ExtensionPoint, Grants, LoadError};

use crate::support::{component, fixture, runtime};

async fn load_err(name: &str, bytes: Arc<[u8]>) -> LoadError {
    runtime()
        .load(name, bytes, Grants::default())
        .await
        .expect_err("load should fail")
}

/// The detail of a contract mismatch; any other error fails the test.
fn mismatch_detail(err: &LoadError) -> &str {
    let LoadError::ContractMismatch { detail, .. } = err else {
        panic!("expected a contract mismatch, got {err:?}");
    };
    detail
}

#[tokio::test]
async fn a_core_module_is_refused_as_not_a_component() {
    let err = load_err("core.wasm", fixture("core-module.wat")).await;
    assert!(matches!(err, LoadError::NotAComponent { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.starts_with("core.wasm:"), "{msg}");
    assert!(msg.contains("not a component"), "{msg}");
}

#[tokio::test]
async fn bytes_that_are_not_wasm_are_refused() {
    let err = load_err("notes.txt", Arc::from(&b"hello, world"[..])).await;
    assert!(matches!(err, LoadError::NotWasm { .. }), "{err:?}");
}

#[tokio::test]
async fn a_component_of_another_world_is_refused_naming_its_exports() {
    let err = load_err("other.wasm", fixture("other-world.wat")).await;
    let detail = mismatch_detail(&err);
    assert!(
        detail.contains("exports no capw:provider interface"),
        "{detail}"
    );
    assert!(detail.contains("example:other/greeter@1.0.0"), "{detail}");
}

#[tokio::test]
async fn a_component_of_contract_9_is_refused_naming_both_versions() {
    let err = load_err("nine.wasm", fixture("contract-9.wat")).await;
    let detail = mismatch_detail(&err);
    assert!(detail.contains("capw:provider@9.0.0"), "{detail}");
    assert!(detail.contains("serves capw:provider@0.1.x"), "{detail}");
}

#[tokio::test]
async fn a_function_of_the_wrong_type_is_refused_at_load_naming_it() {
    let err = load_err("wrong.wasm", fixture("wrong-signature.wat")).await;
    let detail = mismatch_detail(&err);
    assert!(
        detail.contains("capw:provider/metadata.describe does not match the contract"),
        "{detail}"
    );
    assert!(err.to_string().starts_with("wrong.wasm:"), "{err}");
}

#[tokio::test]
async fn a_truncated_component_is_refused_as_invalid() {
    let bytes = component("capw_example_provider");
    let err = load_err("cut.wasm", Arc::from(&bytes[..bytes.len() / 2])).await;
    assert!(matches!(err, LoadError::Compile { .. }), "{err:?}");
}

#[tokio::test]
async fn the_example_loads_with_its_contract_and_schema() {
    let rt = runtime();
    let p = rt
        .load(
            "example.wasm",
            component("capw_example_provider"),
            Grants::default(),
        )
        .await
        .unwrap();
    let info = p.info();
    assert_eq!(p.name(), "example");
    assert_eq!(info.contract.version, "0.3.0");
    assert_eq!(info.contract.exported, ExtensionPoint::ALL.to_vec());
    assert_eq!(info.extension_points(), ExtensionPoint::ALL.to_vec());
    assert_eq!(info.digest.len(), 64);
    let props = &info.config_schema["properties"];
    for field in [
        "region",
        "zones",
        "port",
        "hosted",
        "existingMachines",
        "foreignMachines",
        "simulate",
    ] {
        assert!(props.get(field).is_some(), "schema lacks {field}: {props}");
    }
}
