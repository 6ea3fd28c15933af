"""What the host sees: the provider's description, its config and `control-plane.plan`. The
functions of the shapes without machines (`reconcile-control-plane`, `delete-control-plane`)
keep the SDK's answer, a permanent `unsupported`."""

from __future__ import annotations

from collections.abc import Iterable

from capw import ControlPlane, ControlPlaneShape, FieldError, Provider
from capw.context import Context
from capw.control_plane import Plan, PlanInput

from . import config
from .plan import plan as next_step


class KubeadmControlPlane(
    Provider[config.KubeadmControlPlaneConfig], ControlPlane[config.KubeadmControlPlaneConfig]
):
    """The kubeadm control-plane provider. Stateless: everything it knows comes with the call."""

    NAME = "py-control-plane"
    VERSION = "0.1.0"
    DESCRIPTION = (
        "kubeadm-style control plane on the cluster's own machines, in Python: odd replica "
        "counts, one safe step at a time, surge upgrades one minor version at a time."
    )
    CONFIG = config.KubeadmControlPlaneConfig
    CONFIG_SCHEMA = config.SCHEMA

    SHAPE = ControlPlaneShape.MACHINES
    SCALABLE = True
    VERSION_UPGRADES = True
    # One minor version per change of the spec, as kubeadm-control-plane: a skipped minor is
    # refused at admission rather than chained.
    CHAINS_UPGRADES = False

    def validate(self, parsed: config.KubeadmControlPlaneConfig) -> Iterable[FieldError]:
        """The rules of `config.rule_errors`."""
        return config.rule_errors(parsed)

    def plan(self, ctx: Context[config.KubeadmControlPlaneConfig], input: PlanInput) -> Plan:
        """`py_control_plane.plan.plan`; its refusals are raised as permanent `invalid-input`
        errors."""
        return next_step(ctx.config, input)
