//! The API's request and response shapes, as JSON: the shared wire types of `capw-sim-api`,
//! and the admin API's view of the faults, which only simcloud knows.

pub use capw_sim_api::*;

use serde::{Deserialize, Serialize};

/// `GET` and `PUT /v1/admin/faults` answer this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultsView {
    /// The faults in force.
    pub faults: crate::config::FaultConfig,
    /// What they did since they were set.
    pub stats: crate::faults::FaultStats,
}
