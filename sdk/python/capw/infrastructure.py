"""The `infrastructure` extension point: networks, the control-plane endpoint and machines."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

from .context import Context
from .types import (
    Address,
    Condition,
    Deletion,
    Endpoint,
    InProgress,
    KubernetesVersion,
    MachineRef,
    MachineRole,
    ProviderError,
)

C = TypeVar("C")


@dataclass(frozen=True)
class FailureDomain:
    """A place machines can be spread over (a zone)."""

    name: str
    #: Whether control-plane machines may be placed here.
    control_plane: bool = True


@dataclass(frozen=True)
class ClusterInfrastructure:
    """The cluster-wide infrastructure, once it exists."""

    #: Where the API server will be reached (e.g. a load balancer); None when the
    #: infrastructure makes no endpoint because the control plane is a service's, which
    #: reports its own (0.3). Required: say None outright.
    control_plane_endpoint: Endpoint | None
    failure_domains: tuple[FailureDomain, ...] = ()
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class ClusterReady:
    """`reconcile-cluster`'s answer once the endpoint is usable."""

    infrastructure: ClusterInfrastructure


@dataclass(frozen=True)
class ClusterInProgress:
    """`reconcile-cluster`'s answer while the infrastructure is being made."""

    progress: InProgress


ClusterState = ClusterReady | ClusterInProgress


@dataclass(frozen=True)
class MachineSpec:
    """What the host wants a machine to be."""

    machine: MachineRef
    role: MachineRole
    #: Worker pool name; `control-plane` for control-plane machines.
    pool: str
    version: KubernetesVersion
    #: Chosen by the host from the cluster's failure domains; None when there are none.
    failure_domain: str | None
    #: Bootstrap data to hand to the machine at creation. Secret: never log it.
    bootstrap_data: bytes


class MachinePhase(enum.Enum):
    """Lifecycle phase of a machine, as the infrastructure sees it."""

    PENDING = "pending"
    PROVISIONING = "provisioning"
    RUNNING = "running"
    #: Failed for good; the host deletes and replaces it.
    FAILED = "failed"
    DELETING = "deleting"


@dataclass(frozen=True)
class MachineStatus:
    """What the infrastructure knows of a machine."""

    phase: MachinePhase
    #: Cloud id, e.g. `sim://instances/i-123`; None until the cloud assigned one.
    provider_id: str | None = None
    addresses: tuple[Address, ...] = ()
    failure_domain: str | None = None
    message: str = ""
    #: When the phase is not running or failed: when to look again.
    requeue_after_ms: int | None = None
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class ListedMachine:
    """A machine found in the infrastructure for a cluster."""

    #: The idempotency key the machine was created with.
    idempotency_key: str
    provider_id: str
    #: The Machine name it was created for.
    machine_name: str
    phase: MachinePhase


class Infrastructure(Generic[C]):
    """The infrastructure extension point. Subclass it to declare the point; every method
    not overridden answers `unsupported`. Each raises `ProviderError` to fail."""

    def reconcile_cluster(self, ctx: Context[C]) -> ClusterState:
        """Create or update the cluster-wide infrastructure. Idempotent; in progress until the
        control-plane endpoint is usable."""
        raise ProviderError.unsupported("infrastructure.reconcile-cluster")

    def delete_cluster(self, ctx: Context[C]) -> Deletion:
        """Delete the cluster-wide infrastructure, after every machine. What is gone already
        answers `Deleted()`."""
        raise ProviderError.unsupported("infrastructure.delete-cluster")

    def reconcile_machine(self, ctx: Context[C], spec: MachineSpec) -> MachineStatus:
        """Create the machine unless one with `ctx.idempotency_key` exists, and report it."""
        raise ProviderError.unsupported("infrastructure.reconcile-machine")

    def delete_machine(self, ctx: Context[C], machine: MachineRef) -> Deletion:
        """Delete the machine created with `ctx.idempotency_key`; gone or never created
        answers `Deleted()`."""
        raise ProviderError.unsupported("infrastructure.delete-machine")

    def list_machines(self, ctx: Context[C]) -> list[ListedMachine]:
        """Every machine that exists for `ctx.cluster`; the host deletes orphans."""
        raise ProviderError.unsupported("infrastructure.list-machines")
