//! simcloud's JSON API for managed control planes, as the serde types simcloud itself serves
//! (`capw-sim-api`), and the error codes this provider tells apart.

pub use capw_sim_api::{
    ControlPlaneState, CreateManagedControlPlane, Endpoint, ManagedControlPlane,
    ManagedControlPlaneCredentials, ManagedControlPlaneList, UpdateManagedControlPlane,
};

/// simcloud's error codes this provider tells apart.
pub mod codes {
    /// A cluster's second managed control plane; an update while one is under way.
    pub const CONFLICT: &str = "conflict";
    /// Credentials asked of a control plane still `creating`.
    pub const FAILED_PRECONDITION: &str = "failed_precondition";
}

/// The collection's path.
pub const MANAGED_CONTROL_PLANES: &str = "/v1/managed-control-planes";

/// The path of managed control plane `id`.
pub fn managed_control_plane(id: &str) -> String {
    format!("{MANAGED_CONTROL_PLANES}/{id}")
}

/// The path of the credentials of managed control plane `id`.
pub fn credentials(id: &str) -> String {
    format!("{MANAGED_CONTROL_PLANES}/{id}/credentials")
}
