//! The `control-plane` extension point: the next safe step toward the desired control plane.
//!
//! The host owns the machines and applies one step at a time; the provider decides which step
//! is safe. Machine-based providers answer create and delete steps (and
//! [`Step::RemoveEtcdMember`] for a member etcd still lists: [`Member::etcd`] is
//! [`EtcdMembership::Member`]), hosted ones
//! `apply-manifests`, managed ones drive their cloud API and answer `wait` until it is done.
//! Every plan carries the control plane's [`ControlPlaneStatus`]: for the hosted and managed
//! shapes, where no machines exist, it is all the host knows.
//!
//! The managed shape also implements [`ControlPlane::reconcile_control_plane`], which moves
//! the service toward the input and hands out its [`ControlPlaneAccess`], and
//! [`ControlPlane::delete_control_plane`]: `plan` stays pure and answers, for it, what a
//! reconcile would do. The host calls neither for the hosted shape.
//!
//! # The hosted shape
//!
//! A hosted control plane runs as Pods in the management cluster, beside its Cluster, and the
//! host applies it; the provider only describes it. Every `plan` answers
//! [`Step::ApplyManifests`] with the full set of objects the control plane consists of now
//! (YAML, one object each), and [`Plan::certificates`] with the Secrets the host mints from the
//! cluster's CAs ([`CertificateSecret`]: [`CertificateRequest`]s signed by a
//! [`CertificateAuthority`] for a [`CertificateUsage`], and the CAs' [`SecretMaterial`]); the
//! CA keys never enter the sandbox. The host refuses the whole answer, applying nothing, when
//! an object is not an `apps/v1` Deployment or StatefulSet or a `v1` Service, Secret or
//! ConfigMap, names another namespace than the Cluster's, or is not named with the Cluster's
//! name and a dash first (the certificate Secrets too). Otherwise it applies every object
//! server-side, owned by the Cluster, deletes what it applied before that the answer no longer
//! holds, and tells each object in the next [`PlanInput::objects`] ([`HostedObject`]): its
//! readiness and, for a Deployment or StatefulSet, [`HostedObject::images`], its Pod template's
//! container images (init containers first) as applied, which it runs once ready. That is
//! where a provider reads the version a workload runs (the tag of
//! `registry.k8s.io/kube-apiserver:v1.35.0`, say): the host tells no more of what a Deployment
//! that is not ready rolls from. [`Step::None`] and [`Step::Wait`] leave what is applied as it
//! is, so a hosted plan answers the full set every time, also once everything is ready, and
//! reads its status from the objects' readiness and images; the status's `endpoint` is what
//! the host mints the cluster's admin kubeconfig for. The cluster's name and namespace come
//! from [`Context::cluster`](crate::Context::cluster).

use crate::__bindings::exports::capw::provider::control_plane::Guest;
use crate::context::enter;
use crate::metadata::ControlPlaneShape;
use crate::types::{CallContext, Deletion, KubernetesVersion, ProviderError};
use crate::{Context, Provider};

pub use crate::__bindings::exports::capw::provider::control_plane::{
    CertificateAuthority, CertificateRequest, CertificateSecret, CertificateUsage,
    ControlPlaneAccess, ControlPlaneStatus, EtcdMembership, HostedObject, MachineToCreate, Member,
    PlanInput, ReconcileOutput, SecretMaterial, SharedDatastore, Step,
};
/// The token workers join a service's control plane with ([`ControlPlaneAccess::join_token`]).
pub use crate::types::JoinToken;

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

/// The control-plane extension point. Every method defaults to `unsupported`.
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

    /// For the shapes without machines (`hosted`, `managed`): move the control plane toward
    /// `input` (create it, start one step of an update) and say where it stands, with how to
    /// reach and join it once it can be. It may call the provider's service, and must be
    /// idempotent by [`Context::idempotency_key`], which the host keeps for the cluster: a
    /// repeated call never creates a second control plane. The host calls it in its passes
    /// only, never at admission; the answer's step is [`Step::None`] or [`Step::Wait`].
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later. The `machines`
    /// shape keeps the default, `unsupported`, and so may the `hosted` shape, whose objects
    /// the host applies itself from `plan`'s [`Step::ApplyManifests`] without calling this.
    fn reconcile_control_plane(
        _ctx: &Context<Self::Config>,
        _input: PlanInput,
    ) -> Result<ReconcileOutput, ProviderError> {
        Err(ProviderError::unsupported(
            "control-plane.reconcile-control-plane",
        ))
    }

    /// For the shapes without machines: delete the control plane, answering
    /// [`Deletion::Deleted`] once nothing of it is left (also when there was nothing). The host
    /// calls it once the cluster's workers are gone, before it deletes the infrastructure. It
    /// does not call it for the `hosted` shape: it deletes the objects it applied itself.
    ///
    /// # Errors
    ///
    /// A [`ProviderError`]; retryable when the same call may succeed later. The `machines`
    /// shape keeps the default, `unsupported`.
    fn delete_control_plane(_ctx: &Context<Self::Config>) -> Result<Deletion, ProviderError> {
        Err(ProviderError::unsupported(
            "control-plane.delete-control-plane",
        ))
    }
}

impl<T: ControlPlane> Guest for T {
    fn plan(ctx: &CallContext, input: PlanInput) -> Result<Plan, ProviderError> {
        let ctx = enter(T::SUPPORTED, "control-plane.plan", ctx)?;
        <T as ControlPlane>::plan(&ctx, input)
    }

    fn reconcile_control_plane(
        ctx: &CallContext,
        input: PlanInput,
    ) -> Result<ReconcileOutput, ProviderError> {
        let ctx = enter(T::SUPPORTED, "control-plane.reconcile-control-plane", ctx)?;
        <T as ControlPlane>::reconcile_control_plane(&ctx, input)
    }

    fn delete_control_plane(ctx: &CallContext) -> Result<Deletion, ProviderError> {
        let ctx = enter(T::SUPPORTED, "control-plane.delete-control-plane", ctx)?;
        <T as ControlPlane>::delete_control_plane(&ctx)
    }
}
