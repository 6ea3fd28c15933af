//! One host serves both contract versions at once: a 0.1 component
//! (`tests/plugins/hooks-v0_1`, built from the frozen 0.1 WIT) and 0.2 components (the
//! example provider, built with the SDK, and `tests/plugins/hooks-v0_2`, the 0.1 fixture's
//! twin at 0.2) are loaded into one runtime and called side by side, each through its own
//! bindings. A whole cluster brought up by providers of both versions is in the local mode's
//! tests (`host/local/tests/local/hooks.rs`).

use capw_runtime::lifecycle_hooks::{Hook, HookRequest, HookResponse};
use capw_runtime::types::{ErrorCode, KubernetesVersion};
use capw_runtime::{CallFailure, ExtensionPoint, Grants, Provider, Runtime};
use serde_json::json;

use crate::support::{component, ctx, example, runtime};

const REQUEST: HookRequest = HookRequest {
    hook: Hook::BeforeClusterCreate,
    from_version: None,
    to_version: KubernetesVersion {
        major: 1,
        minor: 35,
        patch: 0,
    },
};

/// The twin hook providers: `(0.1, 0.2)`.
async fn twins(runtime: &std::sync::Arc<Runtime>) -> (Provider, Provider) {
    let load = async |name: &str, file: &str| {
        runtime
            .load(name, component(file), Grants::default())
            .await
            .unwrap()
    };
    (
        load("hooks-v0-1", "capw_hooks_v0_1_provider").await,
        load("hooks-v0-2", "capw_hooks_v0_2_provider").await,
    )
}

#[tokio::test]
async fn providers_of_0_1_and_0_2_answer_in_one_host() {
    let runtime = runtime();
    let sdk = example(&runtime).await;
    let (v01, v02) = twins(&runtime).await;
    assert_eq!(sdk.info().contract.version, "0.3.0");
    assert_eq!(v01.info().contract.version, "0.1.0");
    assert_eq!(v02.info().contract.version, "0.2.0");
    assert_eq!(v02.name(), "hooks-v0-2");
    assert_eq!(
        v02.info().extension_points(),
        [ExtensionPoint::LifecycleHooks]
    );

    let config = json!({"region": "eu-1", "zones": ["a", "b"]});
    for p in [&sdk, &v01, &v02] {
        let answer = p.call_hook(&ctx("both", config.clone()), &REQUEST).await;
        assert_eq!(answer.unwrap(), HookResponse::Proceed, "{}", p.name());
        assert_eq!(
            p.validate_config(&config.to_string()).await.unwrap(),
            Ok(())
        );
    }
}

#[tokio::test]
async fn both_versions_see_the_same_call_context() {
    let runtime = runtime();
    let (v01, v02) = twins(&runtime).await;
    for p in [&v01, &v02] {
        sees_the_call_context(p).await;
    }
}

/// `p`, one of the twins, reads every field of the context: through the record at 0.1,
/// through the borrowed resource's getters at 0.2.
async fn sees_the_call_context(p: &Provider) {
    let config = json!({"region": "hold", "zones": ["a", "b", "c"]});
    let answer = p.call_hook(&ctx("c7", config), &REQUEST).await.unwrap();
    let HookResponse::Hold(hold) = answer else {
        panic!("expected hold, got {answer:?}");
    };
    assert_eq!(hold.reason, "Holding");
    assert_eq!(
        hold.message,
        "holding default/c7 (3 zones, key c7-key-1, 1 ms left)"
    );

    // The session reuses one instance; the context of each call is its own.
    let mut session = p.session().await.unwrap();
    for name in ["s1", "s2"] {
        let config = json!({"region": "hold"});
        let HookResponse::Hold(hold) = session
            .call_hook(&ctx(name, config), &REQUEST)
            .await
            .unwrap()
        else {
            panic!("expected hold");
        };
        assert!(
            hold.message
                .starts_with(&format!("holding default/{name} ")),
            "{}",
            hold.message
        );
    }

    let err = p
        .call_hook(&ctx("c8", json!("not an object")), &REQUEST)
        .await
        .unwrap_err();
    assert_eq!(
        err.provider_error().map(|e| e.code),
        Some(ErrorCode::InvalidInput)
    );
}

#[tokio::test]
async fn a_0_2_provider_without_an_extension_point_is_refused_that_call() {
    let runtime = runtime();
    let (_, p) = twins(&runtime).await;
    let err = p
        .reconcile_cluster(&ctx("c9", json!({"region": "x"})))
        .await
        .unwrap_err();
    assert!(
        matches!(err.failure, CallFailure::ContractMismatch { .. }),
        "{err:?}"
    );
}
