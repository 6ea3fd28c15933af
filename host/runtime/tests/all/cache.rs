//! The compile cache: a second load compiles nothing; a damaged entry is rebuilt, never loaded.

use std::path::Path;
use std::sync::Arc;

use capw_runtime::{CacheOutcome, Grants, Runtime, RuntimeConfig};

use crate::support::{component, ctx, init_tracing};

fn cached_runtime(dir: &Path) -> Arc<Runtime> {
    init_tracing();
    Runtime::new(RuntimeConfig {
        cache_dir: Some(dir.to_path_buf()),
        ..RuntimeConfig::default()
    })
    .unwrap()
}

/// Load the example in a new runtime (as after a restart) and prove it works.
async fn load_fresh(dir: &Path) -> (CacheOutcome, u64, u64) {
    let rt = cached_runtime(dir);
    let p = rt
        .load(
            "example",
            component("capw_example_provider"),
            Grants::default(),
        )
        .await
        .unwrap();
    p.reconcile_cluster(&ctx("c1", serde_json::json!({"region": "local"})))
        .await
        .unwrap();
    let stats = rt.stats();
    (
        p.info().load.cache.clone(),
        stats.compiles,
        stats.cache_hits,
    )
}

fn artefact(dir: &Path) -> std::path::PathBuf {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert_eq!(found.len(), 1, "one compiled artefact expected: {found:?}");
    found.remove(0)
}

#[tokio::test]
async fn second_load_compiles_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load_fresh(dir.path()).await, (CacheOutcome::Miss, 1, 0));
    assert_eq!(load_fresh(dir.path()).await, (CacheOutcome::Hit, 0, 1));
}

#[tokio::test]
async fn a_corrupted_artefact_is_detected_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    load_fresh(dir.path()).await;
    let path = artefact(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();

    let (outcome, compiles, hits) = load_fresh(dir.path()).await;
    match outcome {
        CacheOutcome::Rebuilt(reason) => assert!(reason.contains("checksum"), "{reason}"),
        other => panic!("expected a rebuild, got {other:?}"),
    }
    assert_eq!((compiles, hits), (1, 0));
    // The rebuilt entry is sound again.
    assert_eq!(load_fresh(dir.path()).await, (CacheOutcome::Hit, 0, 1));
}

#[tokio::test]
async fn a_truncated_artefact_or_a_lost_checksum_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    load_fresh(dir.path()).await;
    let path = artefact(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    assert!(matches!(
        load_fresh(dir.path()).await.0,
        CacheOutcome::Rebuilt(_)
    ));

    std::fs::remove_file(path.with_extension("sha256")).unwrap();
    let (outcome, compiles, _) = load_fresh(dir.path()).await;
    assert!(matches!(outcome, CacheOutcome::Rebuilt(_)), "{outcome:?}");
    assert_eq!(compiles, 1);
}
