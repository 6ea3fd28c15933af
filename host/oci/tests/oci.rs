//! capw-oci against a real registry: Debian's `docker-registry` on loopback (started and
//! stopped by each test), with real components built by `make plugins`.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use capw_api::PullPolicy;
use capw_oci::{
    ANNOTATION_PROVIDER_NAME, ClientSettings, ContentCache, Credentials, FetchRequest, Fetched,
    Fetcher, OciError, Origin, PushOutcome, RetryPolicy, SizeLimits, WASM_CONFIG_MEDIA_TYPE,
    WASM_LAYER_MEDIA_TYPE, pull, push,
};
use capw_test_support::registry::TestRegistry;

fn settings(registry: &TestRegistry) -> ClientSettings {
    ClientSettings {
        insecure_registries: vec![registry.host()],
        retry: RetryPolicy {
            retries: 1,
            first_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(20),
        },
        ..ClientSettings::default()
    }
}

fn example() -> Bytes {
    Bytes::from(capw_test_support::component("capw_example_provider"))
}

/// A second, different component: the example grown by a custom section.
fn example_v2() -> Bytes {
    let v1 = example();
    Bytes::from(capw_test_support::big::with_padding(
        &v1,
        "capw-test-v2",
        v1.len() + 1024,
    ))
}

fn request(reference: &str, digest: Option<&str>, policy: PullPolicy) -> FetchRequest {
    FetchRequest {
        reference: reference.into(),
        digest: digest.map(Into::into),
        pull_policy: policy,
        insecure: true,
        credentials: Credentials::Anonymous,
    }
}

fn annotations() -> BTreeMap<String, String> {
    BTreeMap::from([(ANNOTATION_PROVIDER_NAME.to_owned(), "example".to_owned())])
}

/// Pushes `component` anonymously with the example's annotations.
async fn publish(s: &ClientSettings, reference: &str, component: Bytes) -> PushOutcome {
    push(
        s,
        reference,
        component,
        annotations(),
        &Credentials::Anonymous,
        None,
    )
    .await
    .unwrap()
}

async fn fetch(
    fetcher: &Fetcher,
    reference: &str,
    digest: Option<&str>,
    policy: PullPolicy,
) -> Result<Fetched, OciError> {
    fetcher
        .fetch(&request(reference, digest, policy), None)
        .await
}

/// `curl -sS -f -L ARGS`: the response headers and body.
fn curl(args: &[&str]) -> (String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let headers = dir.path().join("headers");
    let mut command = std::process::Command::new("curl");
    command
        .args(["-sS", "-f", "-L", "-D"])
        .arg(&headers)
        .args(args);
    let body = capw_test_support::output_ok(&mut command, &format!("curl {args:?}"));
    (std::fs::read_to_string(headers).unwrap(), body)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn push_then_pull_by_tag_and_by_digest_in_the_wasm_artifact_layout() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start();
    let s = settings(&registry);
    let reference = format!("{}/capw/example:0.1.0", registry.host());
    let pushed = publish(&s, &reference, example()).await;

    // What the registry itself holds, read with curl: the manifest under the tag, the
    // digest the registry gives it, and the layer blob.
    let manifest_url = format!("http://{}/v2/capw/example/manifests/0.1.0", registry.host());
    let (headers, stored_manifest) = curl(&[
        "-H",
        "Accept: application/vnd.oci.image.manifest.v1+json",
        &manifest_url,
    ]);
    let registry_digest = headers
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("docker-content-digest")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no digest header in {headers}"));
    assert_eq!(registry_digest, pushed.digest, "the registry's digest");
    assert_eq!(
        format!("sha256:{}", sha256_hex(&stored_manifest)),
        pushed.digest,
        "the stored manifest hashes to the digest"
    );
    let stored: serde_json::Value = serde_json::from_slice(&stored_manifest).unwrap();
    // The layer's file name, for clients that unpack artifacts into files (oras).
    assert_eq!(
        stored["layers"][0]["annotations"]["org.opencontainers.image.title"],
        "example.wasm"
    );
    let layer = stored["layers"][0]["digest"].as_str().unwrap();
    let (_, blob) = curl(&[&format!(
        "http://{}/v2/capw/example/blobs/{layer}",
        registry.host()
    )]);
    assert_eq!(
        blob,
        example(),
        "the registry holds the component as the layer"
    );

    let by_tag = pull(&s, &reference, &Credentials::Anonymous, None, None)
        .await
        .unwrap();
    assert_eq!(by_tag.component, example());
    assert_eq!(by_tag.digest, pushed.digest);
    assert_eq!(by_tag.manifest, stored_manifest);
    assert_eq!(by_tag.annotations[ANNOTATION_PROVIDER_NAME], "example");
    let manifest: serde_json::Value = serde_json::from_slice(&by_tag.manifest).unwrap();
    assert_eq!(manifest["artifactType"], WASM_CONFIG_MEDIA_TYPE);
    assert_eq!(manifest["config"]["mediaType"], WASM_CONFIG_MEDIA_TYPE);
    assert_eq!(manifest["layers"][0]["mediaType"], WASM_LAYER_MEDIA_TYPE);

    let by_digest = pull(
        &s,
        &pushed.pinned_reference,
        &Credentials::Anonymous,
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(by_digest.component, example());

    // Pushing the same component again sends no blob and gives a new manifest (new `created`)
    // under the same tag; the component digest stays.
    let again = publish(&s, &reference, example()).await;
    assert_eq!(again.component_digest, pushed.component_digest);
}

#[tokio::test]
async fn the_cache_serves_pinned_and_resolved_digests_without_the_registry() {
    capw_test_support::init_tracing();
    let mut registry = TestRegistry::start();
    let s = settings(&registry);
    let cache_dir = tempfile::tempdir().unwrap();
    let reference = format!("{}/capw/example:cached", registry.host());
    let pushed = publish(&s, &reference, example()).await;

    let fetcher = Fetcher::new(s.clone(), ContentCache::open(cache_dir.path()).unwrap());
    let first = fetch(&fetcher, &reference, None, PullPolicy::IfNotPresent)
        .await
        .unwrap();
    assert_eq!(first.origin, Origin::Pulled);
    assert_eq!(first.digest, pushed.digest);
    let second = fetch(&fetcher, &reference, None, PullPolicy::Always)
        .await
        .unwrap();
    assert_eq!(
        second.origin,
        Origin::Resolved,
        "resolved by HEAD, nothing downloaded"
    );

    registry.stop();
    // A restart: a new fetcher on the same cache directory, the registry down.
    let fetcher = Fetcher::new(s.clone(), ContentCache::open(cache_dir.path()).unwrap());
    let pinned = fetch(
        &fetcher,
        &reference,
        Some(&pushed.digest),
        PullPolicy::IfNotPresent,
    )
    .await
    .unwrap();
    assert_eq!(pinned.origin, Origin::Cache);
    assert_eq!(pinned.component, example());
    let by_tag = fetch(&fetcher, &reference, None, PullPolicy::IfNotPresent)
        .await
        .unwrap();
    assert_eq!(by_tag.origin, Origin::Cache);
    let always = fetch(&fetcher, &reference, None, PullPolicy::Always)
        .await
        .unwrap();
    assert_eq!(always.origin, Origin::CacheFallback);

    // Nothing cached and the registry down: a clear error after the retries.
    let empty = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(s, ContentCache::open(empty.path()).unwrap());
    let err = fetch(&fetcher, &reference, None, PullPolicy::IfNotPresent)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OciError::Unavailable { attempts: 2, .. }),
        "{err:?}"
    );
    assert_eq!(err.reason(), "RegistryUnavailable");
}

#[tokio::test]
async fn a_pinned_digest_refuses_whatever_else_the_tag_names() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start();
    let s = settings(&registry);
    let reference = format!("{}/capw/example:moving", registry.host());
    let v1 = publish(&s, &reference, example()).await;
    let v2 = publish(&s, &reference, example_v2()).await;
    assert_ne!(v1.digest, v2.digest);

    let cache_dir = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(s.clone(), ContentCache::open(cache_dir.path()).unwrap());
    let err = fetch(
        &fetcher,
        &reference,
        Some(&v1.digest),
        PullPolicy::IfNotPresent,
    )
    .await
    .unwrap_err();
    assert_eq!(err.reason(), "DigestMismatch");
    assert_eq!(
        err.to_string(),
        format!(
            "{reference} resolves to {}, but the digest pinned is {}",
            v2.digest, v1.digest
        )
    );
    let moved = fetch(
        &fetcher,
        &reference,
        Some(&v2.digest),
        PullPolicy::IfNotPresent,
    )
    .await
    .unwrap();
    assert_eq!(moved.component, example_v2());

    let bad = fetch(
        &fetcher,
        &reference,
        Some("sha256:nothex"),
        PullPolicy::IfNotPresent,
    )
    .await
    .unwrap_err();
    assert_eq!(bad.reason(), "InvalidSource");
}

#[tokio::test]
async fn credentials_are_required_and_never_shown() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start_with_user("alice", "s3cret-pass");
    let s = settings(&registry);
    let reference = format!("{}/capw/example:auth", registry.host());
    let good = Credentials::Basic {
        username: "alice".into(),
        password: "s3cret-pass".into(),
    };
    push(&s, &reference, example(), annotations(), &good, None)
        .await
        .unwrap();
    let pulled = pull(&s, &reference, &good, None, None).await.unwrap();
    assert_eq!(pulled.component, example());

    for creds in [
        Credentials::Anonymous,
        Credentials::Basic {
            username: "alice".into(),
            password: "wrong-pass".into(),
        },
    ] {
        let err = pull(&s, &reference, &creds, None, None).await.unwrap_err();
        assert_eq!(err.reason(), "Unauthorized", "{err:?}");
        let text = format!("{err} {err:?}");
        assert!(
            !text.contains("wrong-pass") && !text.contains("s3cret"),
            "{text}"
        );
    }
    let err = push(
        &s,
        &reference,
        example(),
        annotations(),
        &Credentials::Anonymous,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(err.reason(), "Unauthorized", "{err:?}");
}

#[tokio::test]
async fn size_limits_and_plain_http_only_when_insecure() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start();
    let s = settings(&registry);
    let reference = format!("{}/capw/example:limits", registry.host());
    publish(&s, &reference, example()).await;
    let small = ClientSettings {
        limits: SizeLimits {
            component: 1000,
            ..SizeLimits::default()
        },
        ..s.clone()
    };
    let err = pull(&small, &reference, &Credentials::Anonymous, None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            OciError::TooLarge {
                what: "component",
                ..
            }
        ),
        "{err:?}"
    );

    // Not listed as insecure: HTTPS is spoken, and the plain-HTTP registry cannot answer it.
    let strict = ClientSettings {
        insecure_registries: Vec::new(),
        ..s
    };
    let err = pull(&strict, &reference, &Credentials::Anonymous, None, None)
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::Unavailable { .. }), "{err:?}");
}

#[tokio::test]
async fn a_20_mb_component_pushes_and_pulls() {
    capw_test_support::init_tracing();
    let registry = TestRegistry::start();
    let s = settings(&registry);
    let big = Bytes::from(capw_test_support::big::with_padding(
        &example(),
        "capw-test-python-sized",
        20 << 20,
    ));
    assert!(big.len() >= 20 << 20);
    let reference = format!("{}/capw/big:20mb", registry.host());
    let pushed = publish(&s, &reference, big.clone()).await;
    let pulled = pull(
        &s,
        &reference,
        &Credentials::Anonymous,
        Some(&pushed.digest),
        None,
    )
    .await
    .unwrap();
    assert_eq!(pulled.component.len(), big.len());
    assert_eq!(pulled.component, big);
}
