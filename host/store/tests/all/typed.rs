//! capw's kinds read and written typed over the redb store.

use capw_api::{API_VERSION, CLUSTER_LABEL, Cluster, Machine};
use capw_engine::store::{Applied, StoreError, TypedObjects};
use capw_store::Store;
use serde_json::json;

fn cluster(name: &str) -> Cluster {
    serde_json::from_value(json!({
        "apiVersion": API_VERSION,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default", "labels": {CLUSTER_LABEL: name}},
        "spec": {"topology": {"classRef": {"name": "small"}, "version": "v1.34.1"}},
    }))
    .unwrap()
}

#[tokio::test]
async fn typed_reads_and_writes_go_by_the_kind_of_the_type() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("state.redb")).unwrap();

    let (stored, applied) = store.apply_as(&cluster("alpha")).await.unwrap();
    assert_eq!(applied, Applied::Created);
    assert!(
        stored.metadata.uid.is_some(),
        "the store's metadata comes back"
    );
    let (_, again) = store.apply_as(&cluster("alpha")).await.unwrap();
    assert_eq!(again, Applied::Unchanged);

    let got: Cluster = store.get_as("default", "alpha").await.unwrap().unwrap();
    assert_eq!(got.spec, cluster("alpha").spec);
    // The kind comes from the type: there is no Machine of that name.
    assert!((store.get_as::<Machine>("default", "alpha").await.unwrap()).is_none());
    store.apply_as(&cluster("beta")).await.unwrap();
    let all: Vec<Cluster> = store.list_as(Some("default")).await.unwrap();
    assert_eq!(all.len(), 2);
    let alpha: Vec<Cluster> = (store.list_labelled_as("default", CLUSTER_LABEL, "alpha"))
        .await
        .unwrap();
    assert_eq!(alpha.len(), 1);
    assert_eq!(alpha[0].metadata.name.as_deref(), Some("alpha"));
}

#[tokio::test]
async fn an_object_not_of_its_kinds_shape_is_named_when_read_typed() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("state.redb")).unwrap();
    store
        .create(json!({
            "apiVersion": API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": "broken", "namespace": "default"},
            "spec": {"topology": 5},
        }))
        .unwrap();
    let err = store
        .get_as::<Cluster>("default", "broken")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Malformed { .. }), "{err:?}");
    assert_eq!(err.to_string(), "Cluster default/broken is malformed");
    assert!(store.list_as::<Cluster>(None).await.is_err());
}
