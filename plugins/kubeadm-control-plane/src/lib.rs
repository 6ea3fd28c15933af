//! A kubeadm-style control-plane provider for capw: control-plane machines in the cluster
//! itself, an odd number of them so that etcd keeps a majority, changed one safe step at a
//! time.
//!
//! The provider implements the `control-plane` extension point only. Its `plan` answers the
//! next step toward the desired replica count and Kubernetes version: create the init machine,
//! join one machine at a time, remove one at a time from the fullest failure domain, and roll
//! a new version through one machine at a time with a surge machine. It refuses what kubeadm
//! cannot do safely: even replica counts, skipping a minor version, downgrades.
//!
//! Where to look: [`config`] for the config and its rules, [`plan`] for the planner (pure, no
//! I/O; its module docs list the rules in order).

#![warn(missing_docs)]

pub mod config;
pub mod plan;

use capw_sdk::control_plane::{Plan, PlanInput};
use capw_sdk::metadata::{ControlPlaneShape, FieldError};
use capw_sdk::types::ProviderError;
use capw_sdk::{Context, ControlPlane, Provider, Validate};

pub use config::{KubeadmControlPlaneConfig, Rollout};
pub use plan::PlanError;

/// The kubeadm control-plane provider. Stateless: everything it knows comes with the call.
pub struct KubeadmControlPlane;

impl Provider for KubeadmControlPlane {
    type Config = KubeadmControlPlaneConfig;
    const NAME: &'static str = "kubeadm-control-plane";
    const DESCRIPTION: &'static str = "kubeadm-style control plane on the cluster's own machines: \
         odd replica counts, one safe step at a time, surge upgrades one minor version at a time.";
}

impl Validate for KubeadmControlPlaneConfig {
    /// The rules of [`KubeadmControlPlaneConfig::validate`].
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        KubeadmControlPlaneConfig::validate(self)
    }
}

impl ControlPlane for KubeadmControlPlane {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Machines;
    const SCALABLE: bool = true;
    const VERSION_UPGRADES: bool = true;

    /// [`plan::plan`], its refusals answered as permanent `invalid-input` errors.
    fn plan(
        ctx: &Context<KubeadmControlPlaneConfig>,
        input: PlanInput,
    ) -> Result<Plan, ProviderError> {
        plan::plan(&ctx.config, &input).map_err(ProviderError::from)
    }
}

capw_sdk::export_provider!(
    KubeadmControlPlane,
    unsupported: [Infrastructure, Bootstrap, LifecycleHooks]
);

#[cfg(test)]
mod tests {
    use capw_sdk::control_plane::Step;
    use capw_sdk::metadata::{self, Capabilities, ExtensionPoint};
    use capw_sdk::testing::{self, context, version};
    use capw_sdk::types::{Endpoint, ErrorCode};
    use capw_sdk::{Bootstrap, Infrastructure};

    use super::*;

    fn input(replicas: u32) -> PlanInput {
        PlanInput {
            version: version(35),
            replicas,
            members: Vec::new(),
            failure_domains: Vec::new(),
            endpoint: Some(Endpoint {
                host: "cp.c1.test".into(),
                port: 6443,
            }),
            failures_tolerated: None,
            objects: Vec::new(),
        }
    }

    #[test]
    fn describe_says_machines_scalable_upgradable() {
        let m = metadata::describe::<KubeadmControlPlane>();
        assert_eq!(m.name, "kubeadm-control-plane");
        assert_eq!(m.extension_points, vec![ExtensionPoint::ControlPlane]);
        assert_eq!(
            m.capabilities,
            Capabilities {
                control_plane_shape: Some(ControlPlaneShape::Machines),
                control_plane_scalable: true,
                version_upgrades: true,
                chains_upgrades: false,
            }
        );
        assert!(m.requested_grants.http_hosts.is_empty());
        assert!(m.requested_grants.secrets.is_empty());
    }

    #[test]
    fn schema_is_camel_case_and_closed() {
        let schema = testing::config_schema::<KubeadmControlPlane>();
        assert_eq!(schema["additionalProperties"], false, "{schema}");
        assert_eq!(schema["properties"]["maxSurge"]["maximum"], 1, "{schema}");
        assert_eq!(schema["properties"]["maxSurge"]["default"], 1, "{schema}");
        assert!(schema["properties"]["replicas"].is_object(), "{schema}");
        assert!(
            schema
                .get("required")
                .is_none_or(|r| r.as_array().is_some_and(|r| r.is_empty())),
            "{schema}"
        );
    }

    #[test]
    fn plan_through_the_trait_creates_the_init_machine() {
        let p = match KubeadmControlPlane::plan(&context("{}"), input(3)) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert!(matches!(p.step, Step::CreateMachine(ref m) if m.init));
    }

    #[test]
    fn refusals_are_permanent_invalid_input_naming_replicas() {
        let Err(e) = KubeadmControlPlane::plan(&context("{}"), input(4)) else {
            panic!("even replicas accepted");
        };
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(!e.retryable);
        assert_eq!(e.retry_after_ms, None);
        assert_eq!(
            e.message,
            "replicas must be odd so that etcd keeps a majority; 4 tolerates no more failures \
             than 3: use 3 or 5"
        );
    }

    #[test]
    fn replicas_zero_takes_the_config_default() {
        let p = match KubeadmControlPlane::plan(&context(r#"{"replicas": 3}"#), input(0)) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert!(matches!(p.step, Step::CreateMachine(_)));
        let Err(e) = KubeadmControlPlane::plan(&context("{}"), input(0)) else {
            panic!("no replicas accepted");
        };
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("replicas is 0"), "{}", e.message);
    }

    #[test]
    fn failures_tolerated_becomes_an_odd_membership_or_a_refusal_naming_the_field() {
        let mut asked = input(0);
        asked.failures_tolerated = Some(1);
        let p = match KubeadmControlPlane::plan(&context("{}"), asked.clone()) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert!(matches!(p.step, Step::CreateMachine(ref m) if m.init));
        asked.failures_tolerated = Some(4);
        let Err(e) = KubeadmControlPlane::plan(&context("{}"), asked) else {
            panic!("nine members accepted");
        };
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
        assert!(
            e.message
                .contains("spec.topology.controlPlane.failuresTolerated"),
            "{}",
            e.message
        );
    }

    #[test]
    fn the_service_functions_are_unsupported_for_machines() {
        let c = context("{}");
        let Err(e) = KubeadmControlPlane::reconcile_control_plane(&c, input(3)) else {
            panic!("reconcile-control-plane answered");
        };
        assert_eq!(e.code, ErrorCode::Unsupported);
        let Err(e) = KubeadmControlPlane::delete_control_plane(&c) else {
            panic!("delete-control-plane answered");
        };
        assert_eq!(e.code, ErrorCode::Unsupported);
    }

    #[test]
    fn other_points_are_unsupported() {
        let c = context("{}");
        let Err(e) = <KubeadmControlPlane as Infrastructure>::delete_cluster(&c) else {
            panic!("infrastructure answered");
        };
        assert_eq!(e.code, ErrorCode::Unsupported);
        const { assert!(!<KubeadmControlPlane as Bootstrap>::SUPPORTED) };
    }
}
