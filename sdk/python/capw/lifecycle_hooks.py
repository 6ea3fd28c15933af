"""The `lifecycle-hooks` extension point: hooks at the points of a cluster's life."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

from .context import Context
from .types import InProgress, KubernetesVersion, ProviderError

C = TypeVar("C")


class Hook(enum.Enum):
    """A point of a cluster's life, after Cluster API's Runtime SDK."""

    BEFORE_CLUSTER_CREATE = "before-cluster-create"
    AFTER_CONTROL_PLANE_INITIALIZED = "after-control-plane-initialized"
    BEFORE_CLUSTER_UPGRADE = "before-cluster-upgrade"
    AFTER_CONTROL_PLANE_UPGRADE = "after-control-plane-upgrade"
    AFTER_CLUSTER_UPGRADE = "after-cluster-upgrade"
    BEFORE_CLUSTER_DELETE = "before-cluster-delete"


@dataclass(frozen=True)
class HookRequest:
    """One hook point reached."""

    hook: Hook
    #: The version before an upgrade; None outside upgrades.
    from_version: KubernetesVersion | None
    #: The version the cluster has, or goes to.
    to_version: KubernetesVersion


@dataclass(frozen=True)
class Proceed:
    """Go on."""


@dataclass(frozen=True)
class Hold:
    """Hold this transition (only this one) and call again after the hint."""

    progress: InProgress


HookResponse = Proceed | Hold


class LifecycleHooks(Generic[C]):
    """The lifecycle-hooks extension point. Subclass it to declare the point."""

    def handle(self, ctx: Context[C], request: HookRequest) -> HookResponse:
        """Called at each hook point until it answers `Proceed()`; must be idempotent."""
        raise ProviderError.unsupported("lifecycle-hooks.handle")
