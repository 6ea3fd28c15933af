//! Routes for whoever runs the sim: health, inventory, and the fault controls.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};

use super::ApiError;
use super::extract::{ApiJson, ApiQuery};
use crate::config::{ConfigError, FaultConfig};
use crate::machines::fault;
use crate::model::{
    AutoUpgrade, ClusterFaults, ComponentState, FailService, FaultsView, InstanceFaults, Inventory,
    LoadBalancerTraffic, ManagedControlPlane, NodeRegistration, Role,
};
use crate::server::{Access, App, lock};
use crate::state::StateError;

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

/// `PUT /v1/admin/managed-control-planes/{id}/auto-upgrade`: the service upgrades a `ready`
/// managed control plane on its own, as a client's `PATCH` with the version would; 409
/// `failed_precondition` when it is not `ready`.
pub async fn auto_upgrade(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AutoUpgrade>,
) -> Result<Json<ManagedControlPlane>, ApiError> {
    let version = req.version.clone();
    let cp = app
        .run(Access::Write, |s, now, settings| {
            s.auto_upgrade_control_plane(&id, req, now, settings)
        })
        .await?;
    tracing::info!(control_plane = %cp.id, %version, "auto-upgrade started");
    Ok(Json(cp))
}

/// `PUT /v1/admin/managed-control-planes/{id}/fail`: the service of a `creating` or `updating`
/// managed control plane fails for `reason`, as a real-boot service does when its agent
/// cannot start or upgrade it: it turns `failed`. Failing a `failed` one again answers it
/// unchanged, with its first reason. 404 for an unknown one; 400 for a blank reason; 409
/// `failed_precondition` when it is `ready`, and in a real-boot cloud, where a service fails
/// when its agent does (the state would say failed while its processes still serve).
pub async fn fail_control_plane(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<FailService>,
) -> Result<Json<ManagedControlPlane>, ApiError> {
    if app.machines.is_some() {
        let cp = app
            .run(Access::Read, |s, _, settings| {
                s.control_plane(&id, settings)
            })
            .await?;
        return Err(ApiError::failed_precondition(format!(
            "managed control plane {} runs for real: its service fails when its agent does, \
             not on request",
            cp.id
        )));
    }
    let (cp, changed) = app
        .run(Access::Write, |s, now, settings| {
            let changed = s.fail_control_plane(&id, &req.reason, now)?;
            Ok((s.control_plane(&id, settings)?, changed))
        })
        .await?;
    if changed {
        let reason = cp.failure_reason.as_deref().unwrap_or_default();
        tracing::info!(control_plane = %cp.id, %reason, "managed control plane failed on request");
    }
    Ok(Json(cp))
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

/// `PUT /v1/admin/instances/{id}/faults`: sets the faults given (the kubelet's heartbeats,
/// the kube-apiserver or etcd process, the Node's registration) of a real-boot instance, each
/// a file its agent watches ([`crate::machines`]), and answers what it applied. 404 for an
/// unknown instance; 409 `failed_precondition` in a cloud that boots nothing for real (nothing
/// runs there), and for `apiServer` or `etcd` on a worker (it runs neither).
pub async fn set_instance_faults(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    ApiJson(faults): ApiJson<InstanceFaults>,
) -> Result<Json<InstanceFaults>, ApiError> {
    let instance = app.run(Access::Read, |s, _, _| s.instance(&id)).await?;
    let Some(machines) = &app.machines else {
        return Err(ApiError::failed_precondition(format!(
            "instance {} is simulated: no kubelet, kube-apiserver or etcd runs in a cloud that \
             boots nothing for real",
            instance.id
        )));
    };
    let control_plane_only = [("apiServer", faults.api_server), ("etcd", faults.etcd)];
    if instance.role != Role::ControlPlane
        && let Some((field, _)) = control_plane_only.iter().find(|(_, f)| f.is_some())
    {
        return Err(ApiError::failed_precondition(format!(
            "{field}: instance {} is a {} machine, which runs no kube-apiserver or etcd",
            instance.id, instance.role
        )));
    }
    let stopped = |state: Option<ComponentState>| state.map(|s| s == ComponentState::Stopped);
    let files = [
        (fault::KUBELET_STOPPED, stopped(faults.kubelet)),
        (fault::API_SERVER_STOPPED, stopped(faults.api_server)),
        (fault::ETCD_STOPPED, stopped(faults.etcd)),
        (
            fault::NODE_UNREGISTERED,
            faults.node.map(|n| n == NodeRegistration::Unregistered),
        ),
    ];
    for (file, on) in files {
        let Some(on) = on else { continue };
        machines
            .set_instance_fault(&instance.id, file, on)
            .map_err(|e| ApiError::internal(format!("fault {file} of {}: {e}", instance.id)))?;
        tracing::info!(instance = %instance.id, fault = file, on, "instance fault set");
    }
    Ok(Json(faults))
}

/// `PUT /v1/admin/clusters/{cluster}/faults`: sets the faults given of a real-boot cluster
/// (its load balancers' traffic), each a file a process watches ([`crate::machines`]), and
/// answers what it applied. 404 for a cluster with nothing alive; 409 `failed_precondition` in
/// a cloud that boots nothing for real, and for `loadBalancer` in a cluster without one.
pub async fn set_cluster_faults(
    State(app): State<Arc<App>>,
    Path(cluster): Path<String>,
    ApiJson(faults): ApiJson<ClusterFaults>,
) -> Result<Json<ClusterFaults>, ApiError> {
    let load_balancers: Vec<String> = app
        .run(Access::Read, |s, _, settings| {
            let inventory = s.inventory(Some(&cluster), settings);
            let found = inventory
                .clusters
                .get(&cluster)
                .ok_or(StateError::NotFound {
                    kind: "cluster",
                    id: cluster.clone(),
                })?;
            Ok(found
                .load_balancers
                .iter()
                .map(|lb| lb.id.clone())
                .collect())
        })
        .await?;
    let Some(machines) = &app.machines else {
        return Err(ApiError::failed_precondition(format!(
            "cluster {cluster} is simulated: no load balancer forwards connections in a cloud \
             that boots nothing for real"
        )));
    };
    if let Some(traffic) = faults.load_balancer {
        if load_balancers.is_empty() {
            return Err(ApiError::failed_precondition(format!(
                "loadBalancer: cluster {cluster} has no load balancer"
            )));
        }
        let silent = traffic == LoadBalancerTraffic::Silent;
        for id in &load_balancers {
            machines
                .set_load_balancer_silent(id, silent)
                .map_err(|e| ApiError::internal(format!("fault of load balancer {id}: {e}")))?;
            tracing::info!(%cluster, load_balancer = %id, silent, "load balancer fault set");
        }
    }
    Ok(Json(faults))
}
