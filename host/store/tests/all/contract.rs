//! The store contract of `capw-store-contract`, on a state file and in memory.

use capw_store::Store;

#[tokio::test]
async fn a_state_file_keeps_the_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.redb")).unwrap();
    capw_store_contract::check(&store, "default").await;
}

#[tokio::test]
async fn the_in_memory_store_keeps_the_store_contract() {
    let store = Store::in_memory().unwrap();
    capw_store_contract::check(&store, "default").await;
}

/// Memory is the file's semantics without the file: what one holds, another never sees.
#[tokio::test]
async fn in_memory_stores_share_nothing() {
    use capw_engine::store::{ObjectKey, ObjectStore};
    let (a, b) = (Store::in_memory().unwrap(), Store::in_memory().unwrap());
    ObjectStore::create(
        &a,
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "only-in-a", "namespace": "default"}}),
    )
    .await
    .unwrap();
    let key = ObjectKey::namespaced("ConfigMap", "default", "only-in-a");
    assert!(ObjectStore::get(&a, &key).await.unwrap().is_some());
    assert!(ObjectStore::get(&b, &key).await.unwrap().is_none());
}
