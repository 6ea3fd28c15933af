//! capw's managed control-plane provider for simcloud: a control plane the simulated cloud
//! runs as a service (its API servers and etcd are not the cluster's machines), as EKS, GKE
//! or AKS run theirs, over the host's wasi:http.
//!
//! The provider implements the `control-plane` extension point only, with the shape
//! `managed`:
//! - `plan` is pure and never calls simcloud; it refuses what no reconcile reaches and
//!   otherwise answers `wait` ([`plan`] says why);
//! - `reconcile-control-plane` creates the cluster's managed control plane (client token: the
//!   call's idempotency key), moves it one minor version at a time toward the desired one,
//!   and hands out its endpoint, CA, admin kubeconfig and join token once it serves
//!   ([`service`], [`assess`]); a service that failed (it could not start or upgrade) is
//!   answered as it is, not ready with `ServiceReady` False `ServiceFailed`, and asked for
//!   nothing more;
//! - `delete-control-plane` deletes it, failed or not.
//!
//! Its replica count is the service's (the config's `replicas`, fixed at creation), so the
//! provider is not scalable; it upgrades, and takes a skipped minor in one change of the spec,
//! carrying it out one service update at a time.
//!
//! Where to look: [`config`] for the config, [`assess`] for what the service's states mean
//! (pure), [`service`] for the calls, [`version`] for the version steps, [`access`] for the
//! credentials. Requests, what their failures mean, the rules of the fields that reach
//! simcloud and the cluster's simcloud name are shared with sim-infra in [`capw_sim_client`].

#![warn(missing_docs)]

pub mod access;
pub mod api;
pub mod assess;
pub mod config;
pub mod plan;
pub mod service;
pub mod version;

use capw_sdk::control_plane::{Plan, PlanInput, ReconcileOutput};
use capw_sdk::metadata::{ControlPlaneShape, FieldError, RequestedGrants};
use capw_sdk::types::{Deletion, ErrorCode, ProviderError};
use capw_sdk::{Context, ControlPlane, Provider, Validate};

pub use capw_sim_client::ClientError;
pub use config::ManagedControlPlaneConfig;
pub use service::ServiceError;

/// simcloud as one of this provider's calls sees it: the shared client with this config.
pub type Client<'c> = capw_sim_client::Client<'c, ManagedControlPlaneConfig>;

/// The simcloud managed control-plane provider. Stateless: everything it knows comes with the
/// call or from simcloud.
pub struct SimManagedControlPlane;

impl Provider for SimManagedControlPlane {
    type Config = ManagedControlPlaneConfig;
    const NAME: &'static str = "sim-managed-control-plane";
    const DESCRIPTION: &'static str = "Managed control planes on simcloud: the cloud runs the \
         API servers and etcd, upgraded one minor version at a time, over wasi:http.";

    /// The token secret under its default grant name. The HTTP authority is the config's
    /// `endpoint`, which differs per installation, so it is for the operator to grant.
    fn requested_grants() -> RequestedGrants {
        capw_sim_client::config::requested_grants()
    }
}

impl Validate for ManagedControlPlaneConfig {
    /// The rules of [`ManagedControlPlaneConfig::validate`].
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        ManagedControlPlaneConfig::validate(self)
    }
}

impl ControlPlane for SimManagedControlPlane {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Managed;
    const SCALABLE: bool = false;
    const VERSION_UPGRADES: bool = true;
    const CHAINS_UPGRADES: bool = true;

    /// [`plan::plan`]: pure, no call to simcloud; refusals are permanent `invalid-input`.
    fn plan(
        ctx: &Context<ManagedControlPlaneConfig>,
        input: PlanInput,
    ) -> Result<Plan, ProviderError> {
        plan::plan(&ctx.config, &input)
            .map_err(|e| ProviderError::permanent(ErrorCode::InvalidInput, e.to_string()))
    }

    /// [`service::reconcile`].
    fn reconcile_control_plane(
        ctx: &Context<ManagedControlPlaneConfig>,
        input: PlanInput,
    ) -> Result<ReconcileOutput, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(service::reconcile(&client, ctx, &input)?)
    }

    /// [`service::delete`].
    fn delete_control_plane(
        ctx: &Context<ManagedControlPlaneConfig>,
    ) -> Result<Deletion, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(service::delete(&client, ctx)?)
    }
}

capw_sdk::export_provider!(
    SimManagedControlPlane,
    unsupported: [Infrastructure, Bootstrap, LifecycleHooks]
);

#[cfg(test)]
mod tests {
    use capw_sdk::metadata::{self, Capabilities, ExtensionPoint};
    use capw_sdk::testing::{self, ContextBuilder, version};
    use capw_sdk::{Bootstrap, Infrastructure};

    use super::*;

    #[test]
    fn describe_says_managed_upgradable_chaining_and_asks_for_the_token() {
        let m = metadata::describe::<SimManagedControlPlane>();
        assert_eq!(m.name, "sim-managed-control-plane");
        assert_eq!(m.extension_points, vec![ExtensionPoint::ControlPlane]);
        assert_eq!(
            m.capabilities,
            Capabilities {
                control_plane_shape: Some(ControlPlaneShape::Managed),
                control_plane_scalable: false,
                version_upgrades: true,
                chains_upgrades: true,
            }
        );
        assert_eq!(m.requested_grants.secrets, ["simcloud-token"]);
        const { assert!(!<SimManagedControlPlane as Bootstrap>::SUPPORTED) };
        const { assert!(!<SimManagedControlPlane as Infrastructure>::SUPPORTED) };
    }

    #[test]
    fn schema_is_camel_case_with_defaults() {
        let schema = testing::config_schema::<SimManagedControlPlane>();
        assert_eq!(schema["additionalProperties"], false, "{schema}");
        assert_eq!(
            schema["required"],
            serde_json::json!(["endpoint"]),
            "{schema}"
        );
        let props = &schema["properties"];
        assert_eq!(
            props["tokenSecret"]["default"], "simcloud-token",
            "{schema}"
        );
        assert_eq!(props["replicas"]["default"], 3, "{schema}");
        assert_eq!(props["replicas"]["maximum"], 5, "{schema}");
        assert_eq!(props["requestTimeoutMs"]["default"], 5000, "{schema}");
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
    fn plan_needs_no_token_and_reconcile_says_it_has_none() {
        let ctx =
            ContextBuilder::new().config(ManagedControlPlaneConfig::new("http://127.0.0.1:1"));
        assert!(SimManagedControlPlane::plan(&ctx, input()).is_ok());
        let Err(e) = SimManagedControlPlane::reconcile_control_plane(&ctx, input()) else {
            panic!("answered without a token");
        };
        assert_eq!((e.code, e.retryable), (ErrorCode::NotGranted, false));
        assert!(
            e.message.contains("secret `simcloud-token`"),
            "{}",
            e.message
        );
        let Err(e) = SimManagedControlPlane::delete_control_plane(&ctx) else {
            panic!("deleted without a token");
        };
        assert_eq!(e.code, ErrorCode::NotGranted);
    }

    #[test]
    fn plan_refusals_are_permanent_invalid_input() {
        let ctx = ContextBuilder::new().config(ManagedControlPlaneConfig::new("http://sim"));
        let mut asked = input();
        asked.failures_tolerated = Some(2);
        let Err(e) = SimManagedControlPlane::plan(&ctx, asked) else {
            panic!("2 tolerated of 3 replicas accepted");
        };
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
        assert!(
            e.message
                .contains("spec.topology.controlPlane.failuresTolerated"),
            "{}",
            e.message
        );
    }
}
