//! capw's hosted control-plane provider: a Cluster's control plane as workloads in the
//! management cluster, beside the Cluster, as Kamaji or Cluster API's hosted control planes
//! run them. The cluster's machines are workers only.
//!
//! The provider implements the `control-plane` extension point only, with the shape
//! `hosted`, and describes the control plane; the host applies it:
//! - `plan` (pure) answers `apply-manifests` with every object, every time: a dedicated etcd
//!   (StatefulSet of one member and its headless Service), the API servers (Deployment and
//!   Service) and the controller manager (Deployment); beside them the certificate Secrets
//!   the host mints from the cluster's CAs. Its status comes from the readiness and the images
//!   of the objects the host tells of ([`plan`]);
//! - `reconcile-control-plane` answers `unsupported`: there is no service to drive, the host
//!   applies the plan's objects itself;
//! - `delete-control-plane` answers `deleted`: the host deletes the objects with the Cluster
//!   (and calls neither for the hosted shape), and the provider keeps nothing elsewhere.
//!
//! It scales (the API servers' replicas follow the Cluster's count) and upgrades one minor
//! version at a time: it reads the version applied from the API servers' image, moves the
//! images to the desired version once the last change rolled out, and refuses a skipped
//! minor ([`version`]).
//!
//! Where to look: [`config`] for the config, [`plan`] for the answer and the status,
//! [`manifests`] for the objects, [`certificates`] for the Secrets, [`version`] for upgrades,
//! [`names`] for the names everything shares.

#![warn(missing_docs)]

pub mod certificates;
pub mod config;
pub mod manifests;
pub mod names;
pub mod plan;
pub mod version;

use capw_sdk::control_plane::{Plan, PlanInput};
use capw_sdk::metadata::{ControlPlaneShape, FieldError};
use capw_sdk::types::{Deletion, ProviderError};
use capw_sdk::{Context, ControlPlane, Provider, Validate};

pub use config::{ApiServerService, Datastore, HostedControlPlaneConfig};
pub use plan::PlanError;

/// The hosted control-plane provider. Stateless: everything it knows comes with the call.
pub struct HostedControlPlane;

impl Provider for HostedControlPlane {
    type Config = HostedControlPlaneConfig;
    const NAME: &'static str = "hosted-control-plane";
    const DESCRIPTION: &'static str = "Hosted control planes: API servers, controller manager \
         and a dedicated etcd as workloads in the management cluster, which the host applies; \
         scaled with the Cluster, upgraded one minor version at a time.";
}

impl Validate for HostedControlPlaneConfig {
    /// The rules of [`HostedControlPlaneConfig::validate`].
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        HostedControlPlaneConfig::validate(self)
    }
}

impl ControlPlane for HostedControlPlane {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Hosted;
    const SCALABLE: bool = true;
    const VERSION_UPGRADES: bool = true;

    /// [`plan::plan`] for the call's Cluster; its refusals are permanent `invalid-input`.
    fn plan(
        ctx: &Context<HostedControlPlaneConfig>,
        input: PlanInput,
    ) -> Result<Plan, ProviderError> {
        plan::plan(ctx.cluster(), &ctx.config, &input).map_err(ProviderError::from)
    }

    /// The host applies the plan's objects itself: there is nothing to reconcile here.
    fn reconcile_control_plane(
        _ctx: &Context<HostedControlPlaneConfig>,
        _input: PlanInput,
    ) -> Result<capw_sdk::control_plane::ReconcileOutput, ProviderError> {
        Err(ProviderError::unsupported(
            "control-plane.reconcile-control-plane: a hosted control plane's objects are \
             applied by the host from plan",
        ))
    }

    /// Nothing of the control plane lives outside the objects the host applied, which it
    /// deletes with the Cluster.
    fn delete_control_plane(
        _ctx: &Context<HostedControlPlaneConfig>,
    ) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }
}

capw_sdk::export_provider!(
    HostedControlPlane,
    unsupported: [Infrastructure, Bootstrap, LifecycleHooks]
);

#[cfg(test)]
mod tests {
    use capw_sdk::control_plane::Step;
    use capw_sdk::metadata::{self, Capabilities, ExtensionPoint};
    use capw_sdk::testing::{self, ContextBuilder, version};
    use capw_sdk::types::ErrorCode;
    use capw_sdk::{Bootstrap, Infrastructure};

    use super::*;

    #[test]
    fn describe_says_hosted_scalable_upgradable_without_grants() {
        let m = metadata::describe::<HostedControlPlane>();
        assert_eq!(m.name, "hosted-control-plane");
        assert_eq!(m.extension_points, vec![ExtensionPoint::ControlPlane]);
        assert_eq!(
            m.capabilities,
            Capabilities {
                control_plane_shape: Some(ControlPlaneShape::Hosted),
                control_plane_scalable: true,
                version_upgrades: true,
                chains_upgrades: false,
            }
        );
        assert!(m.requested_grants.secrets.is_empty());
        assert!(m.requested_grants.http_hosts.is_empty());
        const { assert!(!<HostedControlPlane as Bootstrap>::SUPPORTED) };
        const { assert!(!<HostedControlPlane as Infrastructure>::SUPPORTED) };
    }

    fn input() -> PlanInput {
        PlanInput {
            version: version(35),
            replicas: 0,
            members: Vec::new(),
            failure_domains: Vec::new(),
            endpoint: None,
            failures_tolerated: None,
            objects: Vec::new(),
        }
    }

    #[test]
    fn plan_names_the_objects_for_the_calls_cluster() {
        let ctx = ContextBuilder::new()
            .cluster(testing::cluster("team-b", "prod"))
            .config(HostedControlPlaneConfig::default());
        let p = match HostedControlPlane::plan(&ctx, input()) {
            Ok(p) => p,
            Err(e) => panic!("{e:?}"),
        };
        let Step::ApplyManifests(manifests) = &p.step else {
            panic!("{:?}", p.step);
        };
        assert!(
            manifests
                .iter()
                .all(|m| m.contains("name: prod-") && m.contains("namespace: team-b")),
            "{manifests:#?}"
        );
        assert!(p.certificates.iter().all(|s| s.name.starts_with("prod-")));
    }

    #[test]
    fn reconcile_is_unsupported_and_delete_is_done() {
        let ctx = ContextBuilder::new().config(HostedControlPlaneConfig::default());
        let Err(e) = HostedControlPlane::reconcile_control_plane(&ctx, input()) else {
            panic!("reconciled");
        };
        assert_eq!((e.code, e.retryable), (ErrorCode::Unsupported, false));
        assert_eq!(
            HostedControlPlane::delete_control_plane(&ctx),
            Ok(Deletion::Deleted)
        );
    }

    #[test]
    fn plan_refusals_are_permanent_invalid_input() {
        let ctx = ContextBuilder::new().config(HostedControlPlaneConfig {
            api_server_replicas: Some(2),
            ..HostedControlPlaneConfig::default()
        });
        let mut asked = input();
        asked.replicas = 3;
        let Err(e) = HostedControlPlane::plan(&ctx, asked) else {
            panic!("3 asked beside 2 configured accepted");
        };
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
        assert!(e.message.contains("apiServerReplicas 2"), "{}", e.message);
    }
}
