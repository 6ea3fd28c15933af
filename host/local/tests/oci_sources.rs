//! `oci` WasmProvider sources in the local mode, against a real registry (Debian's
//! `docker-registry` on loopback) and real components built by `make plugins`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use capw_engine::ProviderRegistry;
use capw_engine::store::ObjectKey;
use capw_local::LocalConfig;
use capw_oci::{ClientSettings, Credentials, RetryPolicy, push};
use capw_store::Store;
use capw_test_support::registry::TestRegistry;
use serde_json::{Value, json};

fn settings(registry: &TestRegistry) -> ClientSettings {
    ClientSettings {
        insecure_registries: vec![registry.host()],
        retry: RetryPolicy {
            retries: 0,
            ..RetryPolicy::default()
        },
        ..ClientSettings::default()
    }
}

fn example() -> Bytes {
    Bytes::from(capw_test_support::component("capw_example_provider"))
}

async fn publish(
    registry: &TestRegistry,
    reference: &str,
    component: Bytes,
    creds: &Credentials,
) -> String {
    push(
        &settings(registry),
        reference,
        component,
        BTreeMap::new(),
        creds,
        None,
    )
    .await
    .unwrap()
    .digest
}

fn provider(name: &str, oci: Value) -> Value {
    json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "WasmProvider",
        "metadata": {"name": name},
        "spec": {"source": {"oci": oci}}
    })
}

/// A state directory with a store holding `providers`; the compile and content caches in
/// `cache`.
fn state(dir: &Path, cache: &Path, providers: &[Value]) -> (LocalConfig, Store) {
    let mut config = LocalConfig::new(dir.join(".capw"));
    config.engine.cache_dir = Some(cache.to_path_buf());
    std::fs::create_dir_all(&config.state_dir).unwrap();
    let store = Store::open(&config.state_file()).unwrap();
    for p in providers {
        store.apply(p.clone()).unwrap();
    }
    (config, store)
}

fn status(store: &Store, name: &str) -> Value {
    store
        .get(&ObjectKey::cluster_scoped("WasmProvider", name))
        .unwrap()
        .unwrap()["status"]
        .clone()
}

fn loaded(store: &Store, name: &str) -> Value {
    let status = status(store, name);
    status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Loaded")
        .cloned()
        .unwrap_or_else(|| panic!("no Loaded condition: {status:#}"))
}

fn assert_loaded(store: &Store, name: &str) {
    let c = loaded(store, name);
    assert_eq!(c["status"], "True", "{name}: {c:#}");
}

fn assert_refused(store: &Store, name: &str, reason: &str) -> String {
    let c = loaded(store, name);
    assert_eq!(c["status"], "False", "{name}: {c:#}");
    assert_eq!(c["reason"], reason, "{name}: {c:#}");
    c["message"].as_str().unwrap().to_owned()
}

fn compile_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-oci-compiled")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_load_by_tag_and_digest_and_from_the_cache_when_the_registry_is_down() {
    capw_test_support::init_tracing();
    let mut registry = TestRegistry::start();
    let host = registry.host();
    let tag = format!("{host}/capw/example:0.1.0");
    let digest = publish(&registry, &tag, example(), &Credentials::Anonymous).await;
    let other = publish(
        &registry,
        &format!("{host}/capw/example:other"),
        Bytes::from(capw_test_support::big::with_padding(
            &example(),
            "other",
            example().len() + 64,
        )),
        &Credentials::Anonymous,
    )
    .await;
    let big = Bytes::from(capw_test_support::big::with_padding(
        &example(),
        "capw-test-python-sized",
        20 << 20,
    ));
    let big_ref = format!("{host}/capw/big:20mb");
    let big_digest = publish(&registry, &big_ref, big, &Credentials::Anonymous).await;

    let providers = [
        provider("by-tag", json!({"reference": tag, "insecure": true})),
        provider(
            "by-digest",
            json!({"reference": tag, "digest": digest, "insecure": true}),
        ),
        provider(
            "mismatch",
            json!({"reference": tag, "digest": other, "insecure": true}),
        ),
        provider("big", json!({"reference": big_ref, "insecure": true})),
        provider(
            "absent",
            json!({"reference": format!("{host}/capw/absent:1"), "insecure": true}),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let (config, store) = state(dir.path(), &cache, &providers);
    let loaded_registry = ProviderRegistry::load_all(&store, &config.engine)
        .await
        .unwrap();
    assert_loaded(&store, "by-tag");
    assert_loaded(&store, "by-digest");
    assert_loaded(&store, "big");
    assert_eq!(status(&store, "by-tag")["digest"], digest.as_str());
    assert_eq!(status(&store, "by-digest")["digest"], digest.as_str());
    assert_eq!(status(&store, "big")["digest"], big_digest.as_str());
    assert_eq!(status(&store, "by-tag")["providerName"], "example");
    let message = assert_refused(&store, "mismatch", "DigestMismatch");
    assert!(
        message.contains(&other) && message.contains(&digest),
        "{message}"
    );
    assert_refused(&store, "absent", "NotFound");
    let p = loaded_registry.get("by-digest").unwrap();
    assert!(p.provider.validate_config("{}").await.is_ok());
    drop(loaded_registry);

    // A restart with the registry down: what is cached (by digest, or the tag's last digest)
    // loads; nothing is pulled or compiled again.
    registry.stop();
    let restarted = ProviderRegistry::load_all(&store, &config.engine)
        .await
        .unwrap();
    assert_loaded(&store, "by-tag");
    assert_loaded(&store, "by-digest");
    assert_loaded(&store, "big");
    assert!(restarted.get("by-digest").is_some());
    let compiled = restarted
        .get("by-digest")
        .unwrap()
        .provider
        .info()
        .load
        .cache
        .clone();
    assert_eq!(format!("{compiled:?}"), "Hit");
    assert_refused(&store, "absent", "RegistryUnavailable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_credentials_come_from_a_local_secret() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start_with_user("capw", "registry-pass");
    let host = registry.host();
    let reference = format!("{host}/capw/private:1");
    let good = Credentials::Basic {
        username: "capw".into(),
        password: "registry-pass".into(),
    };
    publish(&registry, &reference, example(), &good).await;

    let source = |secret: Option<&str>| {
        let mut oci = json!({"reference": reference, "insecure": true, "pullPolicy": "Always"});
        if let Some(name) = secret {
            oci["credentialsSecretRef"] = json!({"name": name});
        }
        oci
    };
    let providers = [
        provider("good", source(Some("registry"))),
        provider("wrong", source(Some("wrong-registry"))),
        provider("none", source(None)),
        provider("empty-secret", source(Some("missing"))),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (config, store) = state(dir.path(), &compile_cache(), &providers);
    let secrets = config.secrets_dir();
    for (name, password) in [("registry", "registry-pass"), ("wrong-registry", "not-it")] {
        std::fs::create_dir_all(secrets.join(name)).unwrap();
        std::fs::write(secrets.join(name).join("username"), "capw\n").unwrap();
        std::fs::write(secrets.join(name).join("password"), format!("{password}\n")).unwrap();
    }
    let _registry = ProviderRegistry::load_all(&store, &config.engine)
        .await
        .unwrap();
    assert_loaded(&store, "good");
    for name in ["wrong", "none"] {
        let message = assert_refused(&store, name, "Unauthorized");
        assert!(message.contains("check the credentials"), "{message}");
        assert!(!message.contains("not-it"), "{message}");
    }
    let message = assert_refused(&store, "empty-secret", "InvalidCredentials");
    assert!(message.contains("\"missing\""), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_tag_is_swapped_in_while_holders_keep_the_old_component() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start();
    let reference = format!("{}/capw/example:stable", registry.host());
    let v1 = publish(&registry, &reference, example(), &Credentials::Anonymous).await;
    let providers = [
        provider(
            "moving",
            json!({"reference": reference, "insecure": true, "pullPolicy": "Always", "refreshIntervalSeconds": 0}),
        ),
        provider("pinned", json!({"reference": reference, "insecure": true})),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (config, store) = state(dir.path(), &compile_cache(), &providers);
    let providers = ProviderRegistry::load_all(&store, &config.engine)
        .await
        .unwrap();
    assert!(providers.refreshable(&store).await.unwrap());
    let before = providers.get("moving").unwrap();
    assert_eq!(before.digest, v1);
    assert!(
        providers.refresh(&store).await.unwrap().is_empty(),
        "nothing moved yet"
    );

    // The tag moves to another provider altogether, so that which one answers shows which
    // component a holder calls.
    let v2_bytes = Bytes::from(capw_test_support::component("capw_hostile_provider"));
    let v2 = publish(&registry, &reference, v2_bytes, &Credentials::Anonymous).await;
    assert_eq!(
        providers.refresh(&store).await.unwrap(),
        vec!["moving".to_owned()]
    );
    let after = providers.get("moving").unwrap();
    assert_eq!(after.digest, v2);
    assert_eq!(status(&store, "moving")["digest"], v2.as_str());
    assert_ne!(after.provider.name(), before.provider.name());
    // IfNotPresent is not refreshed.
    let pinned = providers.get("pinned").unwrap();
    assert_eq!(pinned.digest, v1);
    assert_eq!(pinned.provider.name(), before.provider.name());
    // A holder of the old component (a call in flight) still calls it: the example provider
    // takes this config, the new one refuses it (it wants a `behaviour`).
    assert_eq!(before.digest, v1);
    let config = r#"{"region": "eu-1"}"#;
    let accepted = |verdict: Result<Result<(), _>, _>| verdict.expect("the call answers").is_ok();
    assert!(accepted(before.provider.validate_config(config).await));
    assert!(!accepted(after.provider.validate_config(config).await));
    let now = providers.get("moving").unwrap();
    assert!(!accepted(now.provider.validate_config(config).await));
}
