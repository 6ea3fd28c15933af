//! The contract of capw's [`ObjectStore`]: what the engine relies on from every store, checked
//! the same way on each. capw-store's tests run it on a redb file and on redb in memory,
//! capw-kube's on the Kubernetes store (plain and cached) against a real API server.
//!
//! [`check`] runs every check on Machines in one namespace, each on objects of its own (named
//! after the check), and panics naming every check that failed and why.
//!
//! What is checked, as the API server does it:
//! - `create` gives `resourceVersion`, `uid`, `creationTimestamp` and `generation` 1, and
//!   refuses an object that exists;
//! - a write naming a stale `resourceVersion` conflicts and changes nothing;
//! - `generation` moves when the spec changes, and only then;
//! - a change that changes nothing writes nothing (the `resourceVersion` stays);
//! - `delete` marks an object with finalizers (`deletionTimestamp`), and the update that
//!   removes its last finalizer removes it; without finalizers it goes at once;
//! - `apply` answers created, unchanged and configured;
//! - labelled lists hold exactly the objects whose label has the value, ordered by name, and
//!   follow a relabel and a delete; plain lists are ordered by name;
//! - a write to a missing object is `NotFound`.

use capw_api::{API_VERSION, CLUSTER_LABEL};
use capw_engine::store::{Applied, Deleted, ObjectKey, ObjectStore, StoreError};
use serde_json::{Value, json};

/// What a check found: nothing wrong, or what was.
type Outcome = Result<(), String>;

/// Runs every check of the contract on `store` in `namespace` (which should hold no Machines
/// yet), each on Machines of its own.
///
/// # Panics
///
/// When any check fails: the message names each failed check and what it found.
pub async fn check(store: &dyn ObjectStore, namespace: &str) {
    // Each check's name is its function's.
    macro_rules! run {
        ($($check:ident),* $(,)?) => {
            [$((stringify!($check), $check(store, namespace).await)),*]
        };
    }
    let outcomes = run!(
        create_gives_metadata,
        create_of_an_existing_object_is_refused,
        a_stale_resource_version_conflicts,
        generation_moves_only_with_the_spec,
        a_change_that_changes_nothing_writes_nothing,
        finalizers_mark_instead_of_delete,
        without_finalizers_delete_removes,
        apply_creates_keeps_and_configures,
        labelled_lists_filter_and_follow_changes,
        lists_are_ordered_by_name,
        writes_to_a_missing_object_are_not_found,
    );
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|(name, outcome)| outcome.as_ref().err().map(|why| format!("{name}: {why}")))
        .collect();
    assert!(
        failed.is_empty(),
        "the store broke {} of {} checks of the contract:\n{}",
        failed.len(),
        outcomes.len(),
        failed.join("\n")
    );
}

/// A Machine named `name` of cluster `cluster`, labelled with it.
fn machine(namespace: &str, name: &str, cluster: &str) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": "Machine",
        "metadata": {"name": name, "namespace": namespace, "labels": {CLUSTER_LABEL: cluster}},
        "spec": {
            "clusterName": cluster,
            "role": "Worker",
            "pool": "md-0",
            "version": "v1.34.4",
            "idempotencyKey": format!("{cluster}/{name}"),
        },
    })
}

fn key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::namespaced("Machine", namespace, name)
}

fn meta<'a>(object: &'a Value, field: &str) -> Option<&'a Value> {
    object.get("metadata")?.get(field)
}

fn version(object: &Value) -> String {
    meta(object, "resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn generation(object: &Value) -> i64 {
    meta(object, "generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `Err(what)` unless `ok`.
fn expect(ok: bool, what: impl FnOnce() -> String) -> Outcome {
    if ok { Ok(()) } else { Err(what()) }
}

/// The stored object at `key`, or why there is none.
async fn stored(store: &dyn ObjectStore, key: &ObjectKey) -> Result<Value, String> {
    match store.get(key).await {
        Ok(Some(object)) => Ok(object),
        Ok(None) => Err(format!("{key} is gone")),
        Err(e) => Err(format!("get {key}: {e}")),
    }
}

fn failed(what: &str, e: &StoreError) -> String {
    format!("{what}: {}", capw_engine::error_chain(e))
}

/// Creates `name` (of cluster `c`), with `finalizers` when given.
async fn create(
    store: &dyn ObjectStore,
    ns: &str,
    name: &str,
    cluster: &str,
    finalizers: &[&str],
) -> Result<Value, String> {
    let mut object = machine(ns, name, cluster);
    if !finalizers.is_empty() {
        object["metadata"]["finalizers"] = json!(finalizers);
    }
    store
        .create(object)
        .await
        .map_err(|e| failed(&format!("create {name}"), &e))
}

/// `update` of `key` that sets the field at `pointer` (whose parent object must exist) to
/// `value`; the object must still be there after it.
async fn set(
    store: &dyn ObjectStore,
    key: &ObjectKey,
    what: &str,
    pointer: &str,
    value: Value,
) -> Result<Value, String> {
    store
        .update(key, &mut |o| {
            let (parent, field) = pointer.rsplit_once('/').unwrap_or(("", pointer));
            let parent = (o.pointer_mut(parent))
                .and_then(Value::as_object_mut)
                .ok_or_else(|| StoreError::Invalid(format!("no object at {parent}")))?;
            parent.insert(field.to_string(), value.clone());
            Ok(())
        })
        .await
        .map_err(|e| failed(what, &e))?
        .ok_or_else(|| format!("{what} removed it"))
}

async fn create_gives_metadata(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let created = create(store, ns, "create-gives-metadata", "a", &[]).await?;
    expect(!version(&created).is_empty(), || {
        format!("no resourceVersion: {created}")
    })?;
    expect(generation(&created) == 1, || {
        format!("generation {} after create", generation(&created))
    })?;
    for field in ["uid", "creationTimestamp"] {
        expect(
            meta(&created, field)
                .and_then(Value::as_str)
                .is_some_and(|v| !v.is_empty()),
            || format!("no {field}: {created}"),
        )?;
    }
    let read = stored(store, &key(ns, "create-gives-metadata")).await?;
    expect(version(&read) == version(&created), || {
        format!(
            "read resourceVersion {} after create gave {}",
            version(&read),
            version(&created)
        )
    })?;
    expect(read["spec"] == created["spec"], || {
        format!(
            "read {} after create gave {}",
            read["spec"], created["spec"]
        )
    })
}

async fn create_of_an_existing_object_is_refused(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let name = "create-twice";
    create(store, ns, name, "a", &[]).await?;
    match store.create(machine(ns, name, "b")).await {
        Err(StoreError::AlreadyExists(k)) if k == key(ns, name) => {}
        other => return Err(format!("second create: {other:?}")),
    }
    let read = stored(store, &key(ns, name)).await?;
    expect(read["spec"]["clusterName"] == "a", || {
        format!("the refused create changed it: {read}")
    })
}

async fn a_stale_resource_version_conflicts(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let name = "stale-version";
    let k = key(ns, name);
    let first = version(&create(store, ns, name, "a", &[]).await?);
    let written = store
        .update_status(&k, json!({"phase": "Provisioning"}), Some(&first))
        .await
        .map_err(|e| failed("status with the current resourceVersion", &e))?;
    expect(version(&written) != first, || {
        "a status write kept the resourceVersion".into()
    })?;
    match store
        .update_status(&k, json!({"phase": "Failed"}), Some(&first))
        .await
    {
        Err(StoreError::Conflict { .. }) => {}
        other => return Err(format!("status with a stale resourceVersion: {other:?}")),
    }
    let read = stored(store, &k).await?;
    expect(read["status"]["phase"] == "Provisioning", || {
        format!(
            "the conflicting write changed the status: {}",
            read["status"]
        )
    })
}

async fn generation_moves_only_with_the_spec(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let name = "generation";
    let k = key(ns, name);
    create(store, ns, name, "a", &[]).await?;
    let relabelled = set(
        store,
        &k,
        "annotate",
        "/metadata/annotations",
        json!({"capw.dev/note": "x"}),
    )
    .await?;
    expect(generation(&relabelled) == 1, || {
        format!("generation {} after an annotation", generation(&relabelled))
    })?;
    let with_status = store
        .update_status(&k, json!({"phase": "Running"}), None)
        .await
        .map_err(|e| failed("status", &e))?;
    expect(generation(&with_status) == 1, || {
        format!(
            "generation {} after a status write",
            generation(&with_status)
        )
    })?;
    let respecced = set(store, &k, "the spec change", "/spec/pool", json!("md-1")).await?;
    expect(generation(&respecced) == 2, || {
        format!("generation {} after a spec change", generation(&respecced))
    })?;
    expect(respecced["status"]["phase"] == "Running", || {
        format!("a spec change lost the status: {}", respecced["status"])
    })
}

async fn a_change_that_changes_nothing_writes_nothing(
    store: &dyn ObjectStore,
    ns: &str,
) -> Outcome {
    let name = "no-op";
    let before = version(&create(store, ns, name, "a", &[]).await?);
    let after = set(
        store,
        &key(ns, name),
        "a no-op update",
        "/spec/pool",
        json!("md-0"),
    )
    .await?;
    expect(version(&after) == before, || {
        format!(
            "a change that changed nothing moved resourceVersion {before} to {}",
            version(&after)
        )
    })
}

async fn finalizers_mark_instead_of_delete(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let name = "finalized";
    let k = key(ns, name);
    create(store, ns, name, "a", &["capw.dev/test"]).await?;
    match store.delete(&k).await {
        Ok(Deleted::Marked) => {}
        other => return Err(format!("delete with a finalizer: {other:?}")),
    }
    let marked = stored(store, &k).await?;
    expect(meta(&marked, "deletionTimestamp").is_some(), || {
        format!("marked without a deletionTimestamp: {marked}")
    })?;
    match store.delete(&k).await {
        Ok(Deleted::Marked) => {}
        other => return Err(format!("a second delete of a marked object: {other:?}")),
    }
    let removed = store
        .update(&k, &mut |o| {
            o["metadata"]["finalizers"] = json!([]);
            Ok(())
        })
        .await
        .map_err(|e| failed("removing the last finalizer", &e))?;
    expect(removed.is_none(), || {
        format!("removing the last finalizer kept it: {removed:?}")
    })?;
    match store.get(&k).await {
        Ok(None) => Ok(()),
        other => Err(format!("after its last finalizer: {other:?}")),
    }
}

async fn without_finalizers_delete_removes(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let name = "unfinalized";
    let k = key(ns, name);
    create(store, ns, name, "a", &[]).await?;
    match store.delete(&k).await {
        Ok(Deleted::Removed) => {}
        other => return Err(format!("delete without finalizers: {other:?}")),
    }
    match store.get(&k).await {
        Ok(None) => {}
        other => return Err(format!("get after delete: {other:?}")),
    }
    match store.delete(&k).await {
        Err(StoreError::NotFound(_)) => Ok(()),
        other => Err(format!("a second delete: {other:?}")),
    }
}

async fn apply_creates_keeps_and_configures(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let name = "applied";
    let object = machine(ns, name, "a");
    let answers = [
        store.apply(object.clone()).await,
        store.apply(object.clone()).await,
        store
            .apply({
                let mut changed = object.clone();
                changed["spec"]["pool"] = json!("md-1");
                changed
            })
            .await,
    ];
    let outcomes: Vec<String> = answers
        .iter()
        .map(|a| match a {
            Ok((_, applied)) => format!("{applied:?}"),
            Err(e) => format!("error {e}"),
        })
        .collect();
    expect(
        outcomes
            == [
                format!("{:?}", Applied::Created),
                format!("{:?}", Applied::Unchanged),
                format!("{:?}", Applied::Configured),
            ],
        || format!("applied the same, again, then changed: {outcomes:?}"),
    )?;
    let read = stored(store, &key(ns, name)).await?;
    expect(
        read["spec"]["pool"] == "md-1" && generation(&read) == 2,
        || format!("after the changed apply: {read}"),
    )
}

/// The names of the Machines labelled `cluster`, as the store lists them.
async fn labelled(store: &dyn ObjectStore, ns: &str, cluster: &str) -> Result<Vec<String>, String> {
    let listed = store
        .list_labelled("Machine", ns, CLUSTER_LABEL, cluster)
        .await
        .map_err(|e| failed(&format!("list labelled {cluster}"), &e))?;
    Ok(listed
        .iter()
        .filter_map(|o| meta(o, "name")?.as_str().map(String::from))
        .collect())
}

async fn labelled_lists_filter_and_follow_changes(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let (x, y) = ("label-x", "label-y");
    for (name, cluster) in [("label-c", x), ("label-b", y), ("label-a", x)] {
        create(store, ns, name, cluster, &[]).await?;
    }
    let want = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let got = labelled(store, ns, x).await?;
    expect(got == want(&["label-a", "label-c"]), || {
        format!("labelled {x}: {got:?}")
    })?;
    store
        .update(&key(ns, "label-c"), &mut |o| {
            o["metadata"]["labels"][CLUSTER_LABEL] = json!(y);
            Ok(())
        })
        .await
        .map_err(|e| failed("relabel", &e))?;
    let (got_x, got_y) = (labelled(store, ns, x).await?, labelled(store, ns, y).await?);
    expect(
        got_x == want(&["label-a"]) && got_y == want(&["label-b", "label-c"]),
        || format!("after relabelling label-c to {y}: {x} {got_x:?}, {y} {got_y:?}"),
    )?;
    store
        .delete(&key(ns, "label-a"))
        .await
        .map_err(|e| failed("delete", &e))?;
    let got = labelled(store, ns, x).await?;
    expect(got.is_empty(), || {
        format!("labelled {x} after deleting label-a: {got:?}")
    })
}

async fn lists_are_ordered_by_name(store: &dyn ObjectStore, ns: &str) -> Outcome {
    for name in ["order-z", "order-a", "order-m"] {
        create(store, ns, name, "order", &[]).await?;
    }
    let listed = store
        .list("Machine", Some(ns))
        .await
        .map_err(|e| failed("list", &e))?;
    let names: Vec<&str> = listed
        .iter()
        .filter_map(|o| meta(o, "name")?.as_str())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    expect(names == sorted, || {
        format!("listed out of order: {names:?}")
    })?;
    let ours: Vec<&str> = names
        .into_iter()
        .filter(|n| n.starts_with("order-"))
        .collect();
    expect(ours == ["order-a", "order-m", "order-z"], || {
        format!("listed {ours:?}")
    })
}

async fn writes_to_a_missing_object_are_not_found(store: &dyn ObjectStore, ns: &str) -> Outcome {
    let k = key(ns, "never-made");
    match store.update(&k, &mut |_| Ok(())).await {
        Err(StoreError::NotFound(_)) => {}
        other => return Err(format!("update: {other:?}")),
    }
    match store.update_status(&k, json!({}), None).await {
        Err(StoreError::NotFound(_)) => Ok(()),
        other => Err(format!("update_status: {other:?}")),
    }
}
