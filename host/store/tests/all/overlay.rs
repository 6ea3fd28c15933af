//! The overlay over the redb store: reads see its writes, the file never does.

use std::sync::Arc;

use capw_engine::store::{Applied, ObjectKey, ObjectStore, Overlay};
use capw_store::Store;
use serde_json::Value;
use serde_json::json;

fn object(kind: &str, name: &str, spec: Value) -> Value {
    json!({"kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": spec})
}

#[tokio::test]
async fn reads_see_the_overlay_and_writes_never_reach_the_base() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.redb")).unwrap();
    store
        .create(object("Cluster", "a", json!({"n": 1})))
        .unwrap();
    store
        .create(object("Cluster", "b", json!({"n": 1})))
        .unwrap();
    let overlay = Overlay::new(Arc::new(store.clone()));

    let (_, applied) = overlay
        .apply(object("Cluster", "a", json!({"n": 2})))
        .await
        .unwrap();
    assert_eq!(applied, Applied::Configured);
    overlay
        .apply(object("Cluster", "c", json!({"n": 3})))
        .await
        .unwrap();
    overlay
        .delete(&ObjectKey::namespaced("Cluster", "ns", "b"))
        .await
        .unwrap();
    let names: Vec<(String, i64)> = (overlay.list("Cluster", Some("ns")).await.unwrap())
        .iter()
        .map(|o| {
            let name = o["metadata"]["name"].as_str().unwrap().to_owned();
            (name, o["spec"]["n"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(names, [("a".into(), 2), ("c".into(), 3)]);
    // The uid the base gave `a` is kept, as the store keeps it on apply.
    let a = ObjectKey::namespaced("Cluster", "ns", "a");
    assert_eq!(
        overlay.get(&a).await.unwrap().unwrap()["metadata"]["uid"],
        store.get(&a).unwrap().unwrap()["metadata"]["uid"]
    );

    // The base is as it was.
    let base: Vec<i64> = (store.list("Cluster", Some("ns")).unwrap().iter())
        .map(|o| o["spec"]["n"].as_i64().unwrap())
        .collect();
    assert_eq!(base, [1, 1]);
}
