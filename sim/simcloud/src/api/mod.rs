//! The HTTP API: routes, handlers, extractors, middleware and error answers.
//!
//! Layering: `/healthz` is open; every `/v1` route needs the bearer token; faults are injected
//! into the resource routes only, so `/v1/admin/faults` and `/v1/inventory` stay reliable for
//! the tests that steer and observe the sim.

mod admin;
mod error;
mod extract;
mod middleware;
mod resources;

use std::sync::Arc;

use axum::Router;
use axum::http::Uri;
use axum::middleware::from_fn_with_state;
use axum::response::IntoResponse;
use axum::routing::{get, post, put};

pub use error::ApiError;

use crate::server::App;

/// Every route of the sim, bound to `app`.
pub(crate) fn router(app: Arc<App>) -> Router {
    let faulty = Router::new()
        .route("/v1/zones", get(resources::zones))
        .route(
            "/v1/networks",
            post(resources::create_network).get(resources::list_networks),
        )
        .route(
            "/v1/networks/{id}",
            get(resources::get_network).delete(resources::delete_network),
        )
        .route(
            "/v1/load-balancers",
            post(resources::create_load_balancer).get(resources::list_load_balancers),
        )
        .route(
            "/v1/load-balancers/{id}",
            get(resources::get_load_balancer).delete(resources::delete_load_balancer),
        )
        .route(
            "/v1/instances",
            post(resources::create_instance).get(resources::list_instances),
        )
        .route(
            "/v1/instances/{id}",
            get(resources::get_instance).delete(resources::delete_instance),
        )
        .route(
            "/v1/managed-control-planes",
            post(resources::create_control_plane).get(resources::list_control_planes),
        )
        .route(
            "/v1/managed-control-planes/{id}",
            get(resources::get_control_plane)
                .patch(resources::update_control_plane)
                .delete(resources::delete_control_plane),
        )
        .route(
            "/v1/managed-control-planes/{id}/credentials",
            get(resources::get_control_plane_credentials),
        )
        .route(
            "/v1/clusters/{cluster}/bootstrap",
            put(resources::register_bootstrap)
                .get(resources::get_bootstrap)
                .delete(resources::delete_bootstrap),
        )
        .route_layer(from_fn_with_state(app.clone(), middleware::inject_faults));
    let reliable = Router::new()
        .route("/v1/inventory", get(admin::inventory))
        .route(
            "/v1/admin/faults",
            get(admin::get_faults).put(admin::set_faults),
        )
        .route(
            "/v1/admin/instances/{id}/faults",
            put(admin::set_instance_faults),
        )
        .route(
            "/v1/admin/clusters/{cluster}/faults",
            put(admin::set_cluster_faults),
        )
        .route(
            "/v1/admin/managed-control-planes/{id}/auto-upgrade",
            put(admin::auto_upgrade),
        )
        .route(
            "/v1/admin/managed-control-planes/{id}/fail",
            put(admin::fail_control_plane),
        );
    let authenticated = faulty
        .merge(reliable)
        .route_layer(from_fn_with_state(app.clone(), middleware::require_bearer));
    Router::new()
        .route("/healthz", get(admin::healthz))
        .merge(authenticated)
        .fallback(|uri: Uri| async move { ApiError::no_route(uri.path()).into_response() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed().into_response() })
        .with_state(app)
}
