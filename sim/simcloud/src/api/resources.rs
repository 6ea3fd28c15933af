//! Handlers of the resource routes: thin translations between HTTP and [`CloudState`].
//!
//! Creates answer 201 with a `Location` when they made something, 200 when the client token
//! named an earlier create. Deletes answer 204 whether or not the resource existed.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::ApiError;
use super::extract::{ApiJson, ApiQuery};
use crate::credentials::ServiceCredentials;
use crate::machines::driver;
use crate::model::{
    BootstrapRegistration, CreateInstance, CreateLoadBalancer, CreateManagedControlPlane,
    CreateNetwork, Instance, InstanceList, LoadBalancer, LoadBalancerList, ManagedControlPlane,
    ManagedControlPlaneCredentials, ManagedControlPlaneList, Network, NetworkList,
    RegisterBootstrap, UpdateManagedControlPlane, ZoneList,
};
use crate::server::{Access, App};
use crate::state::{CloudState, InstanceFilter, Kind, Outcome};

type Shared = State<Arc<App>>;

fn created<T: Serialize>(outcome: Outcome, location: String, body: T) -> Response {
    match outcome {
        Outcome::Existing => (StatusCode::OK, Json(body)).into_response(),
        Outcome::Created => {
            let mut response = (StatusCode::CREATED, Json(body)).into_response();
            if let Ok(location) = HeaderValue::from_str(&location) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            response
        }
    }
}

/// The `cluster` filter, the only query parameter of most lists.
fn cluster_filter(query: &ApiQuery) -> Result<Option<String>, ApiError> {
    query.only(&["cluster"])?;
    Ok(query.get("cluster").map(str::to_owned))
}

/// `GET /v1/zones`.
pub async fn zones(State(app): Shared) -> Json<ZoneList> {
    Json(ZoneList {
        zones: app.settings.zones.clone(),
    })
}

/// `POST /v1/networks`.
pub async fn create_network(
    State(app): Shared,
    ApiJson(req): ApiJson<CreateNetwork>,
) -> Result<Response, ApiError> {
    let (network, outcome) = app
        .run(Access::Write, |s, now, _| s.create_network(req, now))
        .await?;
    let location = format!("/v1/networks/{}", network.id);
    Ok(created(outcome, location, network))
}

/// `GET /v1/networks?cluster=`.
pub async fn list_networks(
    State(app): Shared,
    query: ApiQuery,
) -> Result<Json<NetworkList>, ApiError> {
    let cluster = cluster_filter(&query)?;
    let networks = app
        .run(Access::Read, |s, _, _| Ok(s.networks(cluster.as_deref())))
        .await?;
    Ok(Json(NetworkList { networks }))
}

/// `GET /v1/networks/{id}`.
pub async fn get_network(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<Network>, ApiError> {
    app.run(Access::Read, |s, _, _| s.network(&id))
        .await
        .map(Json)
}

/// `DELETE /v1/networks/{id}`: 409 while instances are in it.
pub async fn delete_network(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    app.run(Access::Write, |s, _, _| s.delete_network(&id))
        .await
        .map(|_| StatusCode::NO_CONTENT)
}

/// `POST /v1/load-balancers`.
pub async fn create_load_balancer(
    State(app): Shared,
    ApiJson(req): ApiJson<CreateLoadBalancer>,
) -> Result<Response, ApiError> {
    let (lb, outcome) = app
        .run(Access::Write, |s, now, settings| {
            s.create_load_balancer(req, now, settings)
        })
        .await?;
    let location = format!("/v1/load-balancers/{}", lb.id);
    Ok(created(outcome, location, lb))
}

/// `GET /v1/load-balancers?cluster=`.
pub async fn list_load_balancers(
    State(app): Shared,
    query: ApiQuery,
) -> Result<Json<LoadBalancerList>, ApiError> {
    let cluster = cluster_filter(&query)?;
    let load_balancers = app
        .run(Access::Read, |s, _, settings| {
            Ok(s.load_balancers(cluster.as_deref(), settings))
        })
        .await?;
    Ok(Json(LoadBalancerList { load_balancers }))
}

/// `GET /v1/load-balancers/{id}`.
pub async fn get_load_balancer(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<LoadBalancer>, ApiError> {
    app.run(Access::Read, |s, _, settings| {
        s.load_balancer(&id, settings)
    })
    .await
    .map(Json)
}

/// `DELETE /v1/load-balancers/{id}`; in a real-boot cloud, answers once its process is gone.
pub async fn delete_load_balancer(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    app.run(Access::Write, |s, _, _| Ok(s.delete_load_balancer(&id)))
        .await?;
    if let Some(machines) = &app.machines {
        driver::destroy(machines, Kind::LoadBalancer, &id).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/instances`.
pub async fn create_instance(
    State(app): Shared,
    ApiJson(req): ApiJson<CreateInstance>,
) -> Result<Response, ApiError> {
    let (instance, outcome) = app
        .run(Access::Write, |s, now, settings| {
            s.create_instance(req, now, settings)
        })
        .await?;
    let location = format!("/v1/instances/{}", instance.id);
    Ok(created(outcome, location, instance))
}

/// `GET /v1/instances?cluster=&client_token=&tag=key=value` (`tag` repeatable; all must
/// match).
pub async fn list_instances(
    State(app): Shared,
    query: ApiQuery,
) -> Result<Json<InstanceList>, ApiError> {
    query.only(&["cluster", "client_token", "tag"])?;
    let tags = query
        .all("tag")
        .map(|tag| {
            tag.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| {
                    ApiError::bad_request(
                        Some("tag".into()),
                        format!("tag filter `{tag}` is not key=value"),
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let filter = InstanceFilter {
        cluster: query.get("cluster").map(str::to_owned),
        client_token: query.get("client_token").map(str::to_owned),
        tags,
    };
    let instances = app
        .run(Access::Read, |s, _, _| Ok(s.instances(&filter)))
        .await?;
    Ok(Json(InstanceList { instances }))
}

/// `GET /v1/instances/{id}`.
pub async fn get_instance(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<Instance>, ApiError> {
    app.run(Access::Read, |s, _, _| s.instance(&id))
        .await
        .map(Json)
}

/// `DELETE /v1/instances/{id}`: 204 also when it is already gone. In a real-boot cloud, it
/// answers once the machine is destroyed (seconds: it leaves etcd, then stops); the instance
/// stays listed until then, so a client that gave up waiting and looks again sees it still
/// there, and a repeated delete finishes a destroy an earlier one left.
pub async fn delete_instance(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if let Some(machines) = &app.machines {
        app.run(Access::Write, |s, _, _| Ok(s.begin_delete_instance(&id)))
            .await?;
        driver::destroy(machines, Kind::Instance, &id).await?;
    }
    app.run(Access::Write, |s, _, _| Ok(s.delete_instance(&id)))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/managed-control-planes`. The service's credentials are minted before the state
/// is locked (and dropped when the client token names an earlier create).
pub async fn create_control_plane(
    State(app): Shared,
    ApiJson(req): ApiJson<CreateManagedControlPlane>,
) -> Result<Response, ApiError> {
    let cluster = req.cluster.clone();
    let credentials = tokio::task::spawn_blocking(move || {
        ServiceCredentials::mint(&cluster, std::time::SystemTime::now())
    })
    .await
    .map_err(|e| ApiError::internal(format!("mint credentials: {e}")))?
    .map_err(|e| ApiError::internal(format!("mint credentials: {}", crate::error_chain(&e))))?;
    let (cp, outcome) = app
        .run(Access::Write, |s, now, settings| {
            s.create_control_plane(req, credentials, now, settings)
        })
        .await?;
    let location = format!("/v1/managed-control-planes/{}", cp.id);
    Ok(created(outcome, location, cp))
}

/// `GET /v1/managed-control-planes?cluster=`.
pub async fn list_control_planes(
    State(app): Shared,
    query: ApiQuery,
) -> Result<Json<ManagedControlPlaneList>, ApiError> {
    let cluster = cluster_filter(&query)?;
    let managed_control_planes = app
        .run(Access::Read, |s, _, settings| {
            Ok(s.control_planes(cluster.as_deref(), settings))
        })
        .await?;
    Ok(Json(ManagedControlPlaneList {
        managed_control_planes,
    }))
}

/// `GET /v1/managed-control-planes/{id}`.
pub async fn get_control_plane(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<ManagedControlPlane>, ApiError> {
    app.run(Access::Read, |s, _, settings| {
        s.control_plane(&id, settings)
    })
    .await
    .map(Json)
}

/// `PATCH /v1/managed-control-planes/{id}`: 409 `failed_precondition` for a version once it
/// is `failed`, naming why and saying to delete it.
pub async fn update_control_plane(
    State(app): Shared,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<UpdateManagedControlPlane>,
) -> Result<Json<ManagedControlPlane>, ApiError> {
    app.run(Access::Write, |s: &mut CloudState, now, settings| {
        s.update_control_plane(&id, req, now, settings)
    })
    .await
    .map(Json)
}

/// `GET /v1/managed-control-planes/{id}/credentials`: 409 `failed_precondition` while it is
/// `creating`, and once `failed` if it never served. The answer holds secrets: it is never
/// logged.
pub async fn get_control_plane_credentials(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<ManagedControlPlaneCredentials>, ApiError> {
    app.run(Access::Read, |s, _, settings| {
        s.control_plane_credentials(&id, settings)
    })
    .await
    .map(Json)
}

/// `DELETE /v1/managed-control-planes/{id}`, whatever its state (`failed` included): also
/// forgets the cluster's bootstrap registration the service made. In a real-boot cloud,
/// answers once its service's processes are gone and its directory is removed.
pub async fn delete_control_plane(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    app.run(Access::Write, |s, _, _| Ok(s.delete_control_plane(&id)))
        .await?;
    if let Some(machines) = &app.machines {
        driver::destroy(machines, Kind::ControlPlane, &id).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /v1/clusters/{cluster}/bootstrap`.
pub async fn register_bootstrap(
    State(app): Shared,
    Path(cluster): Path<String>,
    ApiJson(req): ApiJson<RegisterBootstrap>,
) -> Result<Json<BootstrapRegistration>, ApiError> {
    app.run(Access::Write, |s, _, _| s.register_bootstrap(&cluster, req))
        .await
        .map(Json)
}

/// `GET /v1/clusters/{cluster}/bootstrap`.
pub async fn get_bootstrap(
    State(app): Shared,
    Path(cluster): Path<String>,
) -> Result<Json<BootstrapRegistration>, ApiError> {
    app.run(Access::Read, |s, _, _| s.bootstrap(&cluster))
        .await
        .map(Json)
}

/// `DELETE /v1/clusters/{cluster}/bootstrap`.
pub async fn delete_bootstrap(
    State(app): Shared,
    Path(cluster): Path<String>,
) -> Result<StatusCode, ApiError> {
    app.run(Access::Write, |s, _, _| Ok(s.delete_bootstrap(&cluster)))
        .await
        .map(|_| StatusCode::NO_CONTENT)
}
