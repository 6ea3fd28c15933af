//! The `control-plane` extension point: the next safe step toward the desired control plane.
//!
//! The host owns the machines and applies one step at a time; the provider decides which step
//! is safe. Machine-based providers answer create and delete steps (and
//! [`Step::RemoveEtcdMember`] for a member etcd still lists: [`Member::etcd`] is
//! [`EtcdMembership::Member`]), hosted ones
//! `apply-manifests`, managed ones drive their cloud API and answer `wait` until it is done.
//! Every plan carries the control plane's [`ControlPlaneStatus`]: for the hosted and managed
//! shapes, where no machines exist, it is all the host knows.

use crate::__bindings::exports::capw::provider::control_plane::Guest;
use crate::context::enter;
use crate::metadata::ControlPlaneShape;
use crate::types::{CallContext, KubernetesVersion, ProviderError};
use crate::{Context, Provider};

pub use crate::__bindings::exports::capw::provider::control_plane::{
    ControlPlaneStatus, EtcdMembership, MachineToCreate, Member, PlanInput, Step,
};

/// The plan, the counts and the control plane's [`ControlPlaneStatus`] the host shows in the
/// Cluster's status: the answer of `control-plane.plan`.
pub use crate::__bindings::exports::capw::provider::control_plane::PlanOutput as Plan;

/// The oldest version `members` run: what a control plane can be said to run while a rollout
/// replaces its members, and so the `version` of its [`ControlPlaneStatus`]. `None` without
/// members. Pass the live ones (those not being deleted).
pub fn oldest_version<'a>(
    members: impl IntoIterator<Item = &'a Member>,
) -> Option<KubernetesVersion> {
    members
        .into_iter()
        .map(|m| m.version)
        .min_by_key(|v| (v.major, v.minor, v.patch))
}

/// The control-plane extension point. Its method defaults to `unsupported`.
///
/// The shape and the capabilities `describe` declares are this trait's constants, so a
/// provider cannot serve `control-plane` without declaring a shape: without `SHAPE` it does
/// not compile.
///
/// ```compile_fail,E0046
/// # use capw_sdk::{ControlPlane, Provider, Validate};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # struct Config {}
/// # impl Validate for Config {}
/// struct Hosted;
/// # impl Provider for Hosted {
/// #     type Config = Config;
/// #     const NAME: &'static str = "hosted";
/// #     const DESCRIPTION: &'static str = "No shape.";
/// # }
/// impl ControlPlane for Hosted {} // error[E0046]: not all trait items implemented: `SHAPE`
/// ```
///
/// Set `SUPPORTED = false` (or name `ControlPlane` in `export_provider!`'s `unsupported` list)
/// when the provider does not serve this point: `describe` then leaves it out and every call
/// answers `unsupported` without running a method.
pub trait ControlPlane: Provider {
    /// Whether the provider implements this extension point.
    const SUPPORTED: bool = true;

    /// The shape of the control planes it runs, declared in `describe`: the host refuses a
    /// ClusterClass whose topology the shape cannot serve before it calls anything.
    const SHAPE: ControlPlaneShape;

    /// Whether it can change the number of control-plane replicas after creation.
    const SCALABLE: bool = false;

    /// Whether it can move a control plane to another Kubernetes version.
    const VERSION_UPGRADES: bool = false;

    /// Whether it takes a change of more than one minor version in one step of the spec and
    /// carries it out one minor at a time (chained upgrades). Without it the host refuses a
    /// skipped minor at admission, naming this capability.
    const CHAINS_UPGRADES: bool = false;

    /// The single next step toward `input`, and the counts. Pure and deterministic for the
    /// same input: the host may call it as often as it likes.
    ///
    /// # Errors
    ///
    /// `invalid-input` or `unsupported` for a desired state the provider cannot reach safely.
    fn plan(_ctx: &Context<Self::Config>, _input: PlanInput) -> Result<Plan, ProviderError> {
        Err(ProviderError::unsupported("control-plane.plan"))
    }
}

impl<T: ControlPlane> Guest for T {
    fn plan(ctx: &CallContext, input: PlanInput) -> Result<Plan, ProviderError> {
        let ctx = enter(T::SUPPORTED, "control-plane.plan", ctx)?;
        <T as ControlPlane>::plan(&ctx, input)
    }
}
