//! [`KubeManagement`], the management cluster of hosted control planes, against the real API
//! server: what it applies is owned, labelled and managed by capw; it lists only its owner's
//! objects; it deletes them; and it never quotes a Secret's data in an error. The test API
//! server runs no kube-controller-manager: Deployments get no status, and nothing is
//! garbage-collected.

use capw_engine::store::management::{
    HOSTED_CLUSTER_LABEL, HOSTED_FIELD_MANAGER, ManagementCluster, ObjectRef, Owner,
};
use capw_kube::KubeManagement;

use super::*;

/// A Cluster `name` in the world's namespace (no controller runs: it stays as created), as
/// the owner of a hosted control plane.
async fn cluster(w: &World, name: &str) -> Owner {
    let created = w
        .store
        .create(json!({
            "apiVersion": capw_api::API_VERSION, "kind": "Cluster",
            "metadata": {"name": name, "namespace": w.namespace},
            "spec": {"topology": {
                "classRef": {"name": "hosted"},
                "version": "v1.34.4",
                "controlPlane": {"replicas": 1},
            }},
        }))
        .await
        .unwrap();
    Owner {
        api_version: capw_api::API_VERSION.into(),
        kind: "Cluster".into(),
        namespace: w.namespace.clone(),
        name: name.into(),
        uid: created["metadata"]["uid"].as_str().unwrap().into(),
    }
}

fn deployment(name: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "apiserver", "image": "registry.k8s.io/kube-apiserver:v1.34.4"}]},
            },
        },
    })
}

fn service(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 6443}]},
    })
}

fn secret(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name},
        "stringData": {"tls.key": "hosted-key-material"},
    })
}

fn config_map(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"kubeadm.yaml": "apiVersion: kubeadm.k8s.io/v1beta4"},
    })
}

fn refs(objects: &[Value]) -> Vec<ObjectRef> {
    objects.iter().map(|o| ObjectRef::of(o).unwrap()).collect()
}

fn names(listed: &[Value]) -> Vec<String> {
    listed
        .iter()
        .map(|o| format!("{}/{}", o["kind"].as_str().unwrap(), o["metadata"]["name"]))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_objects_are_applied_owned_listed_updated_and_deleted() {
    let w = World::new("hosted").await;
    let alpha = cluster(&w, "alpha").await;
    let beta = cluster(&w, "beta").await;
    let management = KubeManagement::new(w.client.clone());
    let objects = [
        deployment("alpha-apiserver", 1),
        service("alpha-apiserver"),
        secret("alpha-certs"),
        config_map("alpha-config"),
    ];
    management.apply(&alpha, &objects).await.unwrap();

    let listed = management.list(&alpha).await.unwrap();
    assert_eq!(
        names(&listed),
        [
            r#"Deployment/"alpha-apiserver""#,
            r#"Service/"alpha-apiserver""#,
            r#"Secret/"alpha-certs""#,
            r#"ConfigMap/"alpha-config""#,
        ]
    );
    for object in &listed {
        let name = &object["metadata"]["name"];
        assert_eq!(object["metadata"]["namespace"], w.namespace.as_str());
        assert_eq!(
            object["metadata"]["labels"][HOSTED_CLUSTER_LABEL], "alpha",
            "{name}"
        );
        assert_eq!(
            object["metadata"]["ownerReferences"],
            json!([{
                "apiVersion": capw_api::API_VERSION, "kind": "Cluster", "name": "alpha",
                "uid": alpha.uid, "controller": true, "blockOwnerDeletion": true,
            }]),
            "{name}"
        );
        let managers = object["metadata"]["managedFields"].as_array().unwrap();
        assert!(
            managers
                .iter()
                .any(|m| m["manager"] == HOSTED_FIELD_MANAGER && m["operation"] == "Apply"),
            "{name} is not applied by {HOSTED_FIELD_MANAGER}: {managers:#?}"
        );
    }
    assert_eq!(listed[0]["spec"]["replicas"], 1);
    // The list holds objects as stored: a Secret's data, a Service's cluster IP.
    assert!(
        listed[1]["spec"]["clusterIP"].is_string(),
        "{:#}",
        listed[1]
    );
    assert!(
        listed[2]["data"]["tls.key"].is_string(),
        "the Secret's data"
    );

    // A changed object is updated in place; applying the same again changes nothing.
    management
        .apply(&alpha, &[deployment("alpha-apiserver", 2)])
        .await
        .unwrap();
    let updated = management.list(&alpha).await.unwrap();
    assert_eq!(updated[0]["spec"]["replicas"], 2);
    assert_eq!(updated[0]["metadata"]["generation"], 2);
    assert_eq!(updated[0]["metadata"]["uid"], listed[0]["metadata"]["uid"]);
    management
        .apply(&alpha, &[deployment("alpha-apiserver", 2)])
        .await
        .unwrap();
    let again = management.list(&alpha).await.unwrap();
    assert_eq!(
        again[0]["metadata"]["resourceVersion"],
        updated[0]["metadata"]["resourceVersion"]
    );

    // Another owner's object with alpha's label (a Cluster of that name deleted and made
    // again has another uid) is not alpha's.
    let stranger = Owner {
        name: "alpha".into(),
        ..beta.clone()
    };
    management
        .apply(&stranger, &[config_map("alpha-previous")])
        .await
        .unwrap();
    assert_eq!(management.list(&alpha).await.unwrap().len(), 4);
    assert_eq!(
        names(&management.list(&stranger).await.unwrap()),
        [r#"ConfigMap/"alpha-previous""#]
    );
    assert!(management.list(&beta).await.unwrap().is_empty());

    // Deleting removes them; deleting what is gone succeeds.
    management.delete(&alpha, &refs(&objects)).await.unwrap();
    assert!(management.list(&alpha).await.unwrap().is_empty());
    let secrets: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        w.client.clone(),
        &w.namespace,
        &kube::core::ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    assert!(secrets.get_opt("alpha-certs").await.unwrap().is_none());
    management.delete(&alpha, &refs(&objects)).await.unwrap();
    assert_eq!(management.list(&stranger).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_about_a_secret_never_quotes_its_data() {
    let w = World::new("hosted-secret").await;
    let alpha = cluster(&w, "alpha").await;
    let management = KubeManagement::new(w.client.clone());
    const DATA: &str = "hosted-s3cr3t-value";
    // Data that is no map: the API server's answer quotes it.
    let malformed = [
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "alpha-bad"},
               "stringData": DATA}),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "alpha-bad"},
               "stringData": {"key": [DATA]}}),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "alpha-bad"},
               "data": {"key": DATA}}),
    ];
    let secrets: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        w.client.clone(),
        &w.namespace,
        &kube::core::ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    let mut quoted = 0;
    for secret in malformed {
        // What the API server says of it to anyone who asks directly.
        let direct = secrets
            .patch(
                "alpha-bad",
                &kube::api::PatchParams::apply("test").force(),
                &kube::api::Patch::Apply(&secret),
            )
            .await
            .unwrap_err();
        quoted += usize::from(direct.to_string().contains(DATA));

        let e = management.apply(&alpha, &[secret]).await.unwrap_err();
        let text = format!("{} {e:?}", capw_kube::chain(&e));
        assert!(!text.contains(DATA), "the Secret's data in {text}");
        assert!(
            text.contains(&format!("v1 Secret {}/alpha-bad", w.namespace)),
            "{text}"
        );
        assert!(
            matches!(e, capw_engine::store::StoreError::Invalid(_)),
            "{text}"
        );
    }
    assert!(
        quoted > 0,
        "the API server quoted none of the data: this test shows nothing"
    );

    // Another kind's refusal keeps the API server's words.
    let mut bad = deployment("alpha-apiserver", 1);
    bad["spec"]["replicas"] = json!("two");
    let e = management.apply(&alpha, &[bad]).await.unwrap_err();
    let text = capw_kube::chain(&e);
    assert!(
        text.contains(&format!(
            "apps/v1 Deployment {}/alpha-apiserver",
            w.namespace
        )) && text.contains("spec.replicas"),
        "{text}"
    );
}
