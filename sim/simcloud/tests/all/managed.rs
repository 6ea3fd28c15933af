use std::time::Duration;

use capw_simcloud::Timings;
use capw_simcloud::model::{
    BootstrapRegistration, ControlPlaneState, Inventory, ManagedControlPlane,
    ManagedControlPlaneCredentials, ManagedControlPlaneList,
};
use capw_test_support::simcloud_fail_control_plane;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{API_TOKEN, Sim, body, error, fast_config};

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

/// A sim whose managed control planes take `create` to be ready and whose bootstrap tokens
/// live `ttl`.
async fn managed_sim(create: Duration, ttl: Duration) -> Sim {
    Sim::with(fast_config().with_timings(Timings {
        control_plane_create: create,
        join_token_ttl: ttl,
        ..Timings::uniform(Duration::from_millis(5))
    }))
    .await
}

async fn create_managed(sim: &Sim, version: &str) -> ManagedControlPlane {
    let create = json!({"client_token": "m1-cp", "cluster": "m1", "name": "cp", "version": version, "replicas": 3});
    let r = sim.post("/v1/managed-control-planes", create.clone()).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let cp: ManagedControlPlane = body(r).await;
    let again = sim.post("/v1/managed-control-planes", create).await;
    assert_eq!(again.status(), StatusCode::OK, "idempotent by client token");
    let again: ManagedControlPlane = body(again).await;
    assert_eq!(again.id, cp.id);
    cp
}

#[tokio::test]
async fn credentials_wait_for_ready_and_carry_the_services_registered_token_and_ca() {
    let sim = managed_sim(Duration::from_millis(400), Duration::from_secs(86400)).await;
    let cp = create_managed(&sim, "1.34.4").await;
    assert_eq!(cp.failures_tolerated, 1);
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let e = error(
        sim.get(&format!("{path}/credentials")).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");
    sim.wait_for(&path, |cp: &ManagedControlPlane| {
        cp.state == ControlPlaneState::Ready
    })
    .await;
    let r = sim.get(&format!("{path}/credentials")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let creds: ManagedControlPlaneCredentials = body(r).await;
    assert_eq!(creds.endpoint.to_string(), "mcp-1.sim:443");
    assert!(capw_simcloud::boot_check::is_bootstrap_token(
        &creds.join_token
    ));
    assert_eq!(creds.join_token_ttl_seconds, 86400);
    let hash = capw_simcloud::boot_check::ca_cert_hash(&creds.ca_certificate).unwrap();
    let registered: BootstrapRegistration = body(sim.get("/v1/clusters/m1/bootstrap").await).await;
    assert_eq!(registered.ca_cert_hash, hash);
    assert_eq!(registered.token_id, creds.join_token[..6]);
    let kubeconfig: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&creds.admin_kubeconfig).unwrap();
    assert_eq!(
        kubeconfig["clusters"][0]["cluster"]["server"].as_str(),
        Some("https://mcp-1.sim:443")
    );

    let inventory = sim.get("/v1/inventory").await.text().await.unwrap();
    let secret = creds.join_token.split_once('.').unwrap().1;
    assert!(
        !inventory.contains(secret),
        "no token secret in the inventory"
    );
    assert!(!inventory.contains("PRIVATE KEY") && !inventory.contains("client-key-data"));

    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        sim.get("/v1/clusters/m1/bootstrap").await.status(),
        StatusCode::NOT_FOUND,
        "the service's registration goes with it"
    );
}

#[tokio::test]
async fn the_join_token_is_renewed_with_a_new_id_past_half_its_life() {
    let sim = managed_sim(Duration::from_millis(5), Duration::from_secs(2)).await;
    let cp = create_managed(&sim, "1.34.4").await;
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    sim.wait_for(&path, |cp: &ManagedControlPlane| {
        cp.state == ControlPlaneState::Ready
    })
    .await;
    let first: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let renewed: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;
    assert_ne!(renewed.join_token[..6], first.join_token[..6]);
    assert!(renewed.join_token_issued_at > first.join_token_issued_at);
    let registered: BootstrapRegistration = body(sim.get("/v1/clusters/m1/bootstrap").await).await;
    assert_eq!(registered.token_id, renewed.join_token[..6]);
}

#[tokio::test]
async fn auto_upgrade_moves_a_ready_control_plane_one_minor_up() {
    let sim = managed_sim(Duration::from_millis(300), Duration::from_secs(86400)).await;
    let cp = create_managed(&sim, "1.34.4").await;
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let upgrade = format!("/v1/admin/managed-control-planes/{}/auto-upgrade", cp.id);
    let e = error(
        sim.send(Method::PUT, &upgrade, Some(json!({"version": "1.35.4"})))
            .await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");
    sim.wait_for(&path, |cp: &ManagedControlPlane| {
        cp.state == ControlPlaneState::Ready
    })
    .await;
    let r = sim
        .send(Method::PUT, &upgrade, Some(json!({"version": "1.35.4"})))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let updating: ManagedControlPlane = body(r).await;
    assert_eq!(updating.state, ControlPlaneState::Updating);
    let done = sim
        .wait_for(&path, |cp: &ManagedControlPlane| {
            cp.state == ControlPlaneState::Ready
        })
        .await;
    assert_eq!(done.version, "1.35.4");
    let e = error(
        sim.send(Method::PUT, &upgrade, Some(json!({"version": "1.37.0"})))
            .await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("version"));
}

/// A sim whose managed control planes take `create` to be ready and `update` to update, and
/// whose bootstrap tokens outlive the test.
async fn slow_managed_sim(create: Duration, update: Duration) -> Sim {
    Sim::with(fast_config().with_timings(Timings {
        control_plane_create: create,
        control_plane_update: update,
        join_token_ttl: Duration::from_secs(86400),
        ..Timings::uniform(Duration::from_millis(5))
    }))
    .await
}

async fn put(sim: &Sim, path: &str, body: serde_json::Value) -> reqwest::Response {
    sim.send(Method::PUT, path, Some(body)).await
}

#[tokio::test]
async fn a_service_that_fails_while_creating_is_shown_failed_refuses_updates_and_deletes() {
    let sim = slow_managed_sim(Duration::from_secs(600), Duration::from_secs(600)).await;
    let cp = create_managed(&sim, "1.34.4").await;
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let fail = format!("/v1/admin/managed-control-planes/{}/fail", cp.id);

    let e = error(
        put(&sim, &fail, json!({"reason": " \n"})).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(e.error.field.as_deref(), Some("reason"));
    let e = error(
        put(&sim, &fail, json!({"reason": "x", "why": "y"})).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(e.error.message.contains("why"), "{}", e.error.message);
    let e = error(
        put(
            &sim,
            "/v1/admin/managed-control-planes/mcp-9/fail",
            json!({"reason": "x"}),
        )
        .await,
        StatusCode::NOT_FOUND,
    )
    .await;
    assert_eq!(e.error.code, "not_found");
    assert_eq!(
        sim.get(&path)
            .await
            .json::<ManagedControlPlane>()
            .await
            .unwrap()
            .state,
        ControlPlaneState::Creating,
        "refusals change nothing"
    );

    let reason = "etcd did not become healthy within 2m0s";
    let r = put(&sim, &fail, json!({ "reason": reason })).await;
    assert_eq!(r.status(), StatusCode::OK);
    let failed: ManagedControlPlane = body(r).await;
    assert_eq!(failed.state, ControlPlaneState::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some(reason));
    assert_eq!(failed.endpoint, None, "it never served");
    let raw: serde_json::Value = body(sim.get(&path).await).await;
    assert_eq!(
        (raw["state"].as_str(), raw["failure_reason"].as_str()),
        (Some("failed"), Some(reason))
    );

    // Again, with another reason: the first stands.
    let again: ManagedControlPlane = body(put(&sim, &fail, json!({"reason": "other"})).await).await;
    assert_eq!(again, failed);

    let patch = |body| sim.send(Method::PATCH, &path, Some(body));
    let e = error(
        patch(json!({"version": "1.35.0"})).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(
        e.error.message.contains(reason) && e.error.message.contains("delete it"),
        "{}",
        e.error.message
    );
    let e = error(
        sim.get(&format!("{path}/credentials")).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(e.error.message.contains("failed"), "{}", e.error.message);
    let upgrade = format!("/v1/admin/managed-control-planes/{}/auto-upgrade", cp.id);
    let e = error(
        put(&sim, &upgrade, json!({"version": "1.35.0"})).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");

    let inventory: Inventory = body(sim.get("/v1/inventory?cluster=m1").await).await;
    let listed = &inventory.clusters["m1"].managed_control_planes;
    assert_eq!(*listed, vec![failed.clone()]);
    let listed: ManagedControlPlaneList =
        body(sim.get("/v1/managed-control-planes?cluster=m1").await).await;
    assert_eq!(listed.managed_control_planes, [failed]);

    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(sim.get(&path).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        sim.get("/v1/clusters/m1/bootstrap").await.status(),
        StatusCode::NOT_FOUND,
        "its registration goes with it"
    );
    let inventory: Inventory = body(sim.get("/v1/inventory").await).await;
    assert!(
        inventory
            .clusters
            .get("m1")
            .is_none_or(|c| c.managed_control_planes.is_empty()),
        "{inventory:?}"
    );
}

#[tokio::test]
async fn a_service_that_fails_while_updating_keeps_its_endpoint_and_credentials() {
    let sim = slow_managed_sim(Duration::from_millis(5), Duration::from_secs(600)).await;
    let cp = create_managed(&sim, "1.34.4").await;
    let path = format!("/v1/managed-control-planes/{}", cp.id);
    let base = sim.handle.base_url().to_owned();
    sim.wait_for(&path, |cp: &ManagedControlPlane| {
        cp.state == ControlPlaneState::Ready
    })
    .await;
    let fail = format!("/v1/admin/managed-control-planes/{}/fail", cp.id);
    let e = error(
        sim.send(Method::PUT, &fail, Some(json!({"reason": "boom"})))
            .await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(e.error.code, "failed_precondition");
    assert!(e.error.message.contains("ready"), "{}", e.error.message);
    let served: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;

    let r = sim
        .send(Method::PATCH, &path, Some(json!({"version": "1.35.4"})))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let reason = "kube-apiserver v1.35.4 did not become ready";
    let failed = simcloud_fail_control_plane(&base, API_TOKEN, &cp.id, reason).await;
    let failed: ManagedControlPlane = serde_json::from_value(failed).unwrap();
    assert_eq!(failed.state, ControlPlaneState::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some(reason));
    assert_eq!(
        (failed.version.as_str(), failed.target_version.as_deref()),
        ("1.34.4", Some("1.35.4"))
    );
    assert_eq!(failed.endpoint.as_ref(), Some(&served.endpoint));
    let still: ManagedControlPlaneCredentials =
        body(sim.get(&format!("{path}/credentials")).await).await;
    assert_eq!(still, served, "what it answered before it failed");
    assert_eq!(sim.delete(&path).await.status(), StatusCode::NO_CONTENT);
}
