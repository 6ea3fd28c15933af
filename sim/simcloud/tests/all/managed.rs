use capw_simcloud::model::{ControlPlaneState, ManagedControlPlane, ManagedControlPlaneList};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{Sim, body, error};

#[tokio::test]
async fn managed_control_plane_lifecycle() {
    let sim = Sim::start().await;
    let create = json!({"client_token": "m1-cp", "cluster": "m1", "name": "cp", "version": "1.31.2", "replicas": 3});
    let r = sim.post("/v1/managed-control-planes", create.clone()).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_eq!(
        r.headers().get("location").map(|v| v.as_bytes()),
        Some(&b"/v1/managed-control-planes/mcp-1"[..])
    );
    let cp: ManagedControlPlane = body(r).await;
    assert_eq!(cp.state, ControlPlaneState::Creating);
    assert_eq!(cp.endpoint, None);
    assert_eq!(
        sim.post("/v1/managed-control-planes", create)
            .await
            .status(),
        StatusCode::OK
    );
    let e = error(
        sim.post(
            "/v1/managed-control-planes",
            json!({"cluster": "m1", "name": "cp2", "version": "1.31.2", "replicas": 3}),
        )
        .await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "conflict");

    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let ready = sim
        .wait_for(&path, |cp: &ManagedControlPlane| {
            cp.state == ControlPlaneState::Ready
        })
        .await;
    assert_eq!(
        ready.endpoint.map(|e| e.to_string()).as_deref(),
        Some("mcp-1.sim:443")
    );

    let patch = |body| sim.send(Method::PATCH, &path, Some(body));
    let e = error(patch(json!({"replicas": 5})).await, StatusCode::CONFLICT).await;
    assert_eq!(e.error.code, "immutable_field");
    assert_eq!(e.error.field.as_deref(), Some("replicas"));
    assert_eq!(
        e.error.message,
        "replicas cannot change after creation (3 -> 5)"
    );
    let same = patch(json!({"replicas": 3})).await;
    assert_eq!(same.status(), StatusCode::OK);
    let e = error(
        patch(json!({"version": "1.30.0"})).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(
        e.error.message,
        "version: cannot downgrade from 1.31.2 to 1.30.0"
    );
    let e = error(
        patch(json!({"version": "1.33.0"})).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("version"));

    let updating: ManagedControlPlane = body(patch(json!({"version": "1.32.0"})).await).await;
    assert_eq!(updating.state, ControlPlaneState::Updating);
    assert_eq!(updating.version, "1.31.2");
    assert_eq!(updating.target_version.as_deref(), Some("1.32.0"));
    assert!(
        updating.endpoint.is_some(),
        "still serving while it updates"
    );
    let upgraded = sim
        .wait_for(&path, |cp: &ManagedControlPlane| {
            cp.state == ControlPlaneState::Ready
        })
        .await;
    assert_eq!(upgraded.version, "1.32.0");
    assert_eq!(upgraded.target_version, None);

    let list: ManagedControlPlaneList =
        body(sim.get("/v1/managed-control-planes?cluster=m1").await).await;
    assert_eq!(list.managed_control_planes.len(), 1);
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(sim.get(&path).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn managed_control_planes_validate_their_input() {
    let sim = Sim::start().await;
    let e = error(
        sim.post(
            "/v1/managed-control-planes",
            json!({"cluster": "m1", "name": "cp", "version": "latest", "replicas": 3}),
        )
        .await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("version"));
    let e = error(
        sim.post(
            "/v1/managed-control-planes",
            json!({"cluster": "m1", "name": "cp", "version": "1.31.0", "replicas": 0}),
        )
        .await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("replicas"));
}
