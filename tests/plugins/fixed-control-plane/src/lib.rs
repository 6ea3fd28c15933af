//! A control-plane provider that declares it can neither scale nor upgrade (capabilities
//! `control-plane-scalable` and `version-upgrades` both false): the host's tests of the
//! capabilities it honours at admission. Its plan makes the desired members one at a time and
//! then answers `none`.

use capw_sdk::control_plane::{ControlPlaneStatus, MachineToCreate, Plan, PlanInput, Step};
use capw_sdk::metadata::ControlPlaneShape;
use capw_sdk::types::ProviderError;
use capw_sdk::{Context, ControlPlane, Provider, Validate};
use serde::Deserialize;

/// No settings.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {}

impl Validate for Config {}

/// The provider.
pub struct FixedControlPlane;

impl Provider for FixedControlPlane {
    type Config = Config;
    const NAME: &'static str = "fixed-control-plane";
    const DESCRIPTION: &'static str =
        "A control plane of machines that can neither scale nor upgrade, for tests.";
}

impl ControlPlane for FixedControlPlane {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Machines;
    const SCALABLE: bool = false;
    const VERSION_UPGRADES: bool = false;

    fn plan(_ctx: &Context<Config>, input: PlanInput) -> Result<Plan, ProviderError> {
        let live: Vec<_> = input.members.iter().filter(|m| !m.deleting).collect();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let ready = live.iter().filter(|m| m.ready).count();
        let step = if live.len() < input.replicas as usize && ready == live.len() {
            Step::CreateMachine(MachineToCreate {
                init: live.is_empty(),
                version: input.version,
                failure_domain: input.failure_domains.first().cloned(),
            })
        } else {
            Step::None
        };
        Ok(Plan {
            step,
            status: ControlPlaneStatus {
                initialized: ready > 0,
                ready: ready > 0,
                version: Some(input.version),
                endpoint: input.endpoint.clone(),
                conditions: Vec::new(),
                failures_tolerated: None,
            },
            replicas: count(live.len()),
            ready_replicas: count(ready),
            up_to_date_replicas: count(live.len()),
            certificates: Vec::new(),
            shared_datastore: None,
        })
    }
}

capw_sdk::export_provider!(
    FixedControlPlane,
    unsupported: [Infrastructure, Bootstrap, LifecycleHooks]
);
