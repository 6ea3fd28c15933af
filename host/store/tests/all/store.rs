//! The store's Kubernetes-style semantics, on a real state file.

use capw_engine::store::{Applied, Deleted, ObjectKey, StoreError, WatchEventKind};
use capw_store::Store;
use serde_json::{Value, json};

fn cluster(name: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"topology": {"controlPlane": {"replicas": replicas}}},
    })
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced("Cluster", "default", name)
}

fn meta<'a>(object: &'a Value, field: &str) -> &'a Value {
    &object["metadata"][field]
}

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.redb")).unwrap();
    (dir, store)
}

#[test]
fn create_fills_metadata_and_refuses_duplicates() {
    let (_dir, store) = open();
    let created = store.create(cluster("a", 1)).unwrap();
    assert_eq!(meta(&created, "generation"), 1);
    assert_eq!(meta(&created, "resourceVersion"), "1");
    assert_eq!(meta(&created, "uid").as_str().unwrap().len(), 36);
    assert!(
        meta(&created, "creationTimestamp")
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert!(matches!(
        store.create(cluster("a", 3)),
        Err(StoreError::AlreadyExists(k)) if k == key("a")
    ));
    assert_eq!(store.get(&key("a")).unwrap(), Some(created));
}

#[test]
fn apply_bumps_generation_only_when_the_spec_changes_and_keeps_status() {
    let (_dir, store) = open();
    let (first, outcome) = store.apply(cluster("a", 1)).unwrap();
    assert_eq!(outcome, Applied::Created);
    store
        .update_status(&key("a"), json!({"phase": "Provisioning"}), None)
        .unwrap();
    let (same, outcome) = store.apply(cluster("a", 1)).unwrap();
    assert_eq!(outcome, Applied::Unchanged);
    assert_eq!(meta(&same, "generation"), 1);
    let (scaled, outcome) = store.apply(cluster("a", 3)).unwrap();
    assert_eq!(outcome, Applied::Configured);
    assert_eq!(meta(&scaled, "generation"), 2);
    assert_eq!(meta(&scaled, "uid"), meta(&first, "uid"));
    assert_eq!(scaled["status"]["phase"], "Provisioning");
    let mut labelled = cluster("a", 3);
    labelled["metadata"]["labels"] = json!({"env": "dev"});
    let (labelled, outcome) = store.apply(labelled).unwrap();
    assert_eq!(outcome, Applied::Configured);
    assert_eq!(meta(&labelled, "generation"), 2, "labels are not spec");
}

#[test]
fn status_writes_with_a_stale_version_conflict() {
    let (_dir, store) = open();
    let created = store.create(cluster("a", 1)).unwrap();
    let read_version = meta(&created, "resourceVersion")
        .as_str()
        .unwrap()
        .to_owned();
    store
        .update_status(&key("a"), json!({"phase": "Pending"}), Some(&read_version))
        .unwrap();
    let err = store
        .update_status(&key("a"), json!({"phase": "Failed"}), Some(&read_version))
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert_eq!(
        store.get(&key("a")).unwrap().unwrap()["status"]["phase"],
        "Pending"
    );
}

#[test]
fn deletion_waits_for_finalizers() {
    let (_dir, store) = open();
    let mut object = cluster("a", 1);
    object["metadata"]["finalizers"] = json!(["capw.dev/cluster"]);
    store.create(object).unwrap();
    assert_eq!(store.delete(&key("a")).unwrap(), Deleted::Marked);
    let marked = store.get(&key("a")).unwrap().unwrap();
    let stamp = meta(&marked, "deletionTimestamp").clone();
    assert!(stamp.is_string());
    // Deleting again changes nothing, the timestamp included.
    assert_eq!(store.delete(&key("a")).unwrap(), Deleted::Marked);
    assert_eq!(
        meta(&store.get(&key("a")).unwrap().unwrap(), "deletionTimestamp"),
        &stamp
    );
    let gone = store
        .update(&key("a"), |o| {
            o["metadata"]["finalizers"] = json!([]);
            Ok(())
        })
        .unwrap();
    assert_eq!(gone, None);
    assert_eq!(store.get(&key("a")).unwrap(), None);
    assert!(matches!(
        store.delete(&key("a")),
        Err(StoreError::NotFound(_))
    ));

    store.create(cluster("b", 1)).unwrap();
    assert_eq!(store.delete(&key("b")).unwrap(), Deleted::Removed);
    assert_eq!(store.get(&key("b")).unwrap(), None);
}

#[test]
fn update_cannot_rename_or_touch_identity() {
    let (_dir, store) = open();
    let created = store.create(cluster("a", 1)).unwrap();
    let err = store
        .update(&key("a"), |o| {
            o["metadata"]["name"] = json!("b");
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    let updated = store
        .update(&key("a"), |o| {
            o["metadata"]["uid"] = json!("forged");
            o["spec"]["paused"] = json!(true);
            Ok(())
        })
        .unwrap()
        .unwrap();
    assert_eq!(meta(&updated, "uid"), meta(&created, "uid"));
    assert_eq!(meta(&updated, "generation"), 2);
}

#[test]
fn list_is_by_kind_and_namespace_in_order() {
    let (_dir, store) = open();
    for (ns, name) in [("b", "x"), ("a", "y"), ("a", "x")] {
        let mut object = cluster(name, 1);
        object["metadata"]["namespace"] = json!(ns);
        store.create(object).unwrap();
    }
    store
        .create(json!({"kind": "WasmProvider", "metadata": {"name": "infra"}}))
        .unwrap();
    let names = |list: Vec<Value>| -> Vec<String> {
        list.iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    meta(o, "namespace").as_str().unwrap(),
                    meta(o, "name").as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        names(store.list("Cluster", None).unwrap()),
        ["a/x", "a/y", "b/x"]
    );
    assert_eq!(
        names(store.list("Cluster", Some("a")).unwrap()),
        ["a/x", "a/y"]
    );
    assert_eq!(store.list("WasmProvider", None).unwrap().len(), 1);
    assert!(store.list("Machine", None).unwrap().is_empty());
}

#[test]
fn state_survives_reopening_and_a_second_opener_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.redb");
    {
        let store = Store::open(&path).unwrap();
        store.create(cluster("a", 1)).unwrap();
        store.create(cluster("b", 1)).unwrap();
        assert!(matches!(Store::open(&path), Err(StoreError::Locked { .. })));
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list("Cluster", None).unwrap().len(), 2);
    assert_eq!(store.resource_version().unwrap(), 2);
    let next = store.create(cluster("c", 1)).unwrap();
    assert_eq!(meta(&next, "resourceVersion"), "3", "versions never repeat");
}

#[tokio::test]
async fn watchers_see_every_change_after_it_committed() {
    let (_dir, store) = open();
    let mut events = store.watch();
    store.create(cluster("a", 1)).unwrap();
    store.apply(cluster("a", 1)).unwrap(); // unchanged: no event
    store.apply(cluster("a", 2)).unwrap();
    store.delete(&key("a")).unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let event = events.recv().await.unwrap();
        assert!(store.resource_version().unwrap() >= event.resource_version);
        seen.push((event.kind, event.resource_version));
    }
    assert_eq!(
        seen,
        [
            (WatchEventKind::Added, 1),
            (WatchEventKind::Modified, 2),
            (WatchEventKind::Deleted, 3),
        ]
    );
    assert!(events.try_recv().is_err());
}

fn machine(name: &str, namespace: &str, cluster: &str) -> Value {
    json!({
        "apiVersion": "capw.dev/v1alpha1",
        "kind": "Machine",
        "metadata": {"name": name, "namespace": namespace, "labels": {"capw.dev/cluster": cluster}},
        "spec": {"clusterName": cluster},
    })
}

fn names(objects: &[Value]) -> Vec<&str> {
    objects
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect()
}

#[test]
fn list_labelled_follows_every_write_and_nothing_else() {
    let (_dir, store) = open();
    for (name, ns, cluster) in [
        ("a-1", "default", "a"),
        ("a-2", "default", "a"),
        ("b-1", "default", "b"),
        ("a-1", "other", "a"),
    ] {
        store.create(machine(name, ns, cluster)).unwrap();
    }
    // Same label on another kind, and a value that is a prefix of another ("a" of "ab").
    store
        .create(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "a-s", "namespace": "default", "labels": {"capw.dev/cluster": "a"}}}))
        .unwrap();
    store.create(machine("ab-1", "default", "ab")).unwrap();
    let list = |ns: &str, cluster: &str| {
        store
            .list_labelled("Machine", ns, "capw.dev/cluster", cluster)
            .unwrap()
    };
    assert_eq!(names(&list("default", "a")), ["a-1", "a-2"]);
    assert_eq!(names(&list("other", "a")), ["a-1"]);
    assert_eq!(names(&list("default", "ab")), ["ab-1"]);

    // Relabelled: found under the new value only.
    let a2 = ObjectKey::namespaced("Machine", "default", "a-2");
    store
        .update(&a2, |o| {
            o["metadata"]["labels"]["capw.dev/cluster"] = "b".into();
            Ok(())
        })
        .unwrap();
    assert_eq!(names(&list("default", "a")), ["a-1"]);
    assert_eq!(names(&list("default", "b")), ["a-2", "b-1"]);

    // Deleted, and marked-then-released: gone from the index with the object.
    store
        .delete(&ObjectKey::namespaced("Machine", "default", "b-1"))
        .unwrap();
    store
        .update(&a2, |o| {
            o["metadata"]["finalizers"] = json!(["capw.dev/machine"]);
            Ok(())
        })
        .unwrap();
    assert_eq!(store.delete(&a2).unwrap(), Deleted::Marked);
    assert_eq!(names(&list("default", "b")), ["a-2"]);
    store
        .update(&a2, |o| {
            o["metadata"]["finalizers"] = json!([]);
            Ok(())
        })
        .unwrap();
    assert!(list("default", "b").is_empty());
    assert_eq!(store.list("Machine", None).unwrap().len(), 3);
}

#[test]
fn the_label_index_survives_a_reopen_and_is_built_for_files_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.redb");
    {
        let store = Store::open(&path).unwrap();
        store.create(machine("a-1", "default", "a")).unwrap();
        store.create(machine("b-1", "default", "b")).unwrap();
    }
    // A state file from before the index: the same objects, no index, no index version.
    {
        let db = redb::Database::create(&path).unwrap();
        let tx = db.begin_write().unwrap();
        tx.delete_table(redb::TableDefinition::<&str, ()>::new("labels"))
            .unwrap();
        {
            let mut counters = tx
                .open_table(redb::TableDefinition::<&str, u64>::new("counters"))
                .unwrap();
            counters.remove("labelIndexVersion").unwrap();
        }
        tx.commit().unwrap();
    }
    let store = Store::open(&path).unwrap();
    let found = store
        .list_labelled("Machine", "default", "capw.dev/cluster", "b")
        .unwrap();
    assert_eq!(names(&found), ["b-1"]);
}
