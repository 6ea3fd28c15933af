//! Routes for whoever runs the sim: health, inventory, and the fault controls.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};

use super::ApiError;
use super::extract::{ApiJson, ApiQuery};
use crate::config::{ConfigError, FaultConfig};
use crate::model::{FaultsView, InstanceFaults, Inventory, KubeletState};
use crate::server::{Access, App, lock};

/// `GET /healthz`: `{"status": "ok"}`, without authentication.
pub async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// `GET /v1/inventory?cluster=`: everything alive, by cluster. Never faulted.
pub async fn inventory(
    State(app): State<Arc<App>>,
    query: ApiQuery,
) -> Result<Json<Inventory>, ApiError> {
    query.only(&["cluster"])?;
    let cluster = query.get("cluster").map(str::to_owned);
    app.run(Access::Read, |s, _, settings| {
        Ok(s.inventory(cluster.as_deref(), settings))
    })
    .await
    .map(Json)
}

/// `GET /v1/admin/faults`: the faults in force and what they did so far.
pub async fn get_faults(State(app): State<Arc<App>>) -> Json<FaultsView> {
    let injector = lock(&app.faults);
    Json(FaultsView {
        faults: injector.config().clone(),
        stats: injector.stats(),
    })
}

/// `PUT /v1/admin/faults`: replaces the faults (fields left out are zero), restarting the
/// sequence from the new seed.
pub async fn set_faults(
    State(app): State<Arc<App>>,
    ApiJson(faults): ApiJson<FaultConfig>,
) -> Result<Json<FaultsView>, ApiError> {
    faults.validate().map_err(|e| {
        let field = match &e {
            ConfigError::BadRate { field, .. } => Some((*field).to_owned()),
            _ => None,
        };
        ApiError::bad_request(field, e.to_string())
    })?;
    let mut injector = lock(&app.faults);
    injector.reconfigure(faults);
    Ok(Json(FaultsView {
        faults: injector.config().clone(),
        stats: injector.stats(),
    }))
}

/// `PUT /v1/admin/instances/{id}/faults`: stops or resumes the kubelet of a real-boot
/// instance. 404 for an unknown instance; 409 `failed_precondition` in a cloud that boots
/// nothing for real (no kubelet runs there).
pub async fn set_instance_faults(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    ApiJson(faults): ApiJson<InstanceFaults>,
) -> Result<Json<InstanceFaults>, ApiError> {
    let instance = app.run(Access::Read, |s, _, _| s.instance(&id)).await?;
    let Some(machines) = &app.machines else {
        return Err(ApiError::failed_precondition(format!(
            "instance {} is simulated: no kubelet runs in a cloud that boots nothing for real",
            instance.id
        )));
    };
    machines
        .set_kubelet_stopped(&instance.id, faults.kubelet == KubeletState::Stopped)
        .map_err(|e| ApiError::internal(format!("fault of {}: {e}", instance.id)))?;
    Ok(Json(faults))
}
