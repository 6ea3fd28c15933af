use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{Sim, error};

#[tokio::test]
async fn bad_json_names_the_field() {
    let sim = Sim::start().await;
    let cases = [
        (
            json!({"cluster": "m1", "name": "cp", "version": "1.31.0", "replicas": "three"}),
            "replicas",
        ),
        (
            json!({"cluster": "m1", "name": "cp", "replicas": 3}),
            "version",
        ),
        (
            json!({"cluster": "m1", "name": "cp", "version": "1.31.0", "replicas": 3, "replica": 1}),
            "replica",
        ),
        (
            json!({"cluster": 7, "name": "cp", "version": "1.31.0", "replicas": 3}),
            "cluster",
        ),
    ];
    for (request, field) in cases {
        let e = error(
            sim.post("/v1/managed-control-planes", request).await,
            StatusCode::BAD_REQUEST,
        )
        .await;
        assert_eq!(e.error.code, "invalid_request");
        assert_eq!(e.error.field.as_deref(), Some(field), "{e:?}");
        assert!(e.error.message.contains(&format!("`{field}`")), "{e:?}");
    }
    let mut bad_role = crate::support::instance_body("a", "c1", "worker", "");
    bad_role["role"] = json!("boss");
    let e = error(
        sim.post("/v1/instances", bad_role).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("role"));
    let mut bad_tag = crate::support::instance_body("a", "c1", "worker", "");
    bad_tag["tags"] = json!({"k": 1});
    let e = error(
        sim.post("/v1/instances", bad_tag).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("tags.k"));
}

#[tokio::test]
async fn malformed_json_is_a_400_without_field() {
    let sim = Sim::start().await;
    let r = sim
        .request(Method::POST, "/v1/networks")
        .body("{\"cluster\": ")
        .send()
        .await
        .expect("send");
    let e = error(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(e.error.code, "invalid_request");
    assert_eq!(e.error.field, None);
    assert!(
        e.error
            .message
            .starts_with("request body is not valid JSON"),
        "{e:?}"
    );
}

#[tokio::test]
async fn unknown_routes_methods_and_parameters_answer_json() {
    let sim = Sim::start().await;
    let e = error(sim.get("/v1/nothing").await, StatusCode::NOT_FOUND).await;
    assert_eq!(e.error.code, "not_found");
    let e = error(
        sim.send(Method::PUT, "/v1/instances", Some(json!({})))
            .await,
        StatusCode::METHOD_NOT_ALLOWED,
    )
    .await;
    assert_eq!(e.error.code, "method_not_allowed");
    let e = error(
        sim.get("/v1/networks?clusterr=c1").await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("clusterr"));
}
