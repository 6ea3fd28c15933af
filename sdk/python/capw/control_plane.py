"""The `control-plane` extension point: the next safe step toward the desired control plane.

The host owns the machines and applies one step at a time; the provider decides which step
is safe. A machine-based provider answers create and delete steps, and `RemoveEtcdMember`
for a member that still belongs to etcd (the host takes it out of etcd, from another member,
before it deletes the machine; a host that cannot refuses the step and deletes nothing); a
hosted one `ApplyManifests`; a managed one drives its cloud API and answers `Wait` until it is
done. Every plan carries the control plane's `ControlPlaneStatus`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from .context import Context
from .metadata import ControlPlaneShape
from .types import Condition, Endpoint, InProgress, KubernetesVersion, MachineRef, ProviderError

C = TypeVar("C")


@dataclass(frozen=True)
class Member:
    """An existing control-plane member as the host observes it."""

    machine: MachineRef
    version: KubernetesVersion
    failure_domain: str | None
    #: Its node is ready.
    ready: bool
    #: Creation time, seconds since the Unix epoch; orders members oldest first.
    created_at: int
    #: Being deleted already.
    deleting: bool = False


@dataclass(frozen=True)
class PlanInput:
    """The desired control plane and what exists."""

    version: KubernetesVersion
    #: The desired count; 0 when the topology leaves it unset.
    replicas: int
    members: tuple[Member, ...]
    #: Failure domains that may hold control-plane machines.
    failure_domains: tuple[str, ...] = ()
    #: The endpoint from the infrastructure, when known.
    endpoint: Endpoint | None = None


@dataclass(frozen=True)
class MachineToCreate:
    """A machine the host is to create."""

    #: True for the first machine, which initialises the cluster.
    init: bool
    version: KubernetesVersion
    failure_domain: str | None = None


@dataclass(frozen=True)
class Nothing:
    """The control plane is as desired."""


@dataclass(frozen=True)
class CreateMachine:
    """Create this machine."""

    machine: MachineToCreate


@dataclass(frozen=True)
class DeleteMachine:
    """Delete this member's machine: for a member that is not (or not known to be) in etcd."""

    machine: MachineRef


@dataclass(frozen=True)
class RemoveEtcdMember:
    """Take this member out of etcd, then delete its machine."""

    machine: MachineRef


@dataclass(frozen=True)
class ApplyManifests:
    """Hosted shape: apply these manifests (YAML) to the management cluster."""

    manifests: tuple[str, ...]


@dataclass(frozen=True)
class Wait:
    """Something is under way; plan again after the hint."""

    progress: InProgress


Step = Nothing | CreateMachine | DeleteMachine | RemoveEtcdMember | ApplyManifests | Wait
"""The single next step."""


@dataclass(frozen=True)
class ControlPlaneStatus:
    """The control plane as the provider sees it."""

    #: Initialised: the API server answered once.
    initialized: bool
    #: Serves requests now.
    ready: bool
    #: The version it runs, when known; during an upgrade, the oldest one.
    version: KubernetesVersion | None = None
    endpoint: Endpoint | None = None
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The plan and the counts the host shows in the Cluster's status: `plan`'s answer."""

    step: Step
    status: ControlPlaneStatus
    replicas: int
    ready_replicas: int
    up_to_date_replicas: int


def oldest_version(members: Iterable[Member]) -> KubernetesVersion | None:
    """The oldest version `members` run (pass the live ones): what the control plane can be
    said to run during a rollout. None without members."""
    return min((m.version for m in members), default=None)


class ControlPlane(Generic[C]):
    """The control-plane extension point. Subclass it to declare the point, and set:

    - `SHAPE`: a `ControlPlaneShape`. Required: a class that subclasses `ControlPlane`
      without one cannot be defined.
    - `SCALABLE`: whether the replica count can change after creation (default False).
    - `VERSION_UPGRADES`: whether the Kubernetes version can change (default False).
    """

    SHAPE: ClassVar[ControlPlaneShape]
    SCALABLE: ClassVar[bool] = False
    VERSION_UPGRADES: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(getattr(cls, "SHAPE", None), ControlPlaneShape):
            raise TypeError(
                f"{cls.__name__} serves control-plane and must set SHAPE to a ControlPlaneShape"
            )

    def plan(self, ctx: Context[C], input: PlanInput) -> Plan:
        """The single next step toward `input`, and the counts. Pure and deterministic: the
        host may call it as often as it likes. Raise a permanent `invalid-input` (or
        `unsupported`) error for a desired state that cannot be reached safely."""
        raise ProviderError.unsupported("control-plane.plan")
