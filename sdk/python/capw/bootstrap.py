"""The `bootstrap` extension point: cluster secrets and the data that turns a machine into a
node."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

from .context import Context
from .types import Endpoint, InProgress, KubernetesVersion, MachineRef, MachineRole, ProviderError

C = TypeVar("C")


@dataclass(frozen=True)
class SecretItem:
    """One named piece of secret material, e.g. `ca.crt`. The host stores these in a Secret
    and never logs them."""

    name: str
    data: bytes


@dataclass(frozen=True)
class SecretsReady:
    """`cluster-secrets`' answer: the material, stored by the host."""

    items: tuple[SecretItem, ...]


@dataclass(frozen=True)
class SecretsInProgress:
    """`cluster-secrets`' answer while key generation goes on."""

    progress: InProgress


SecretsState = SecretsReady | SecretsInProgress


@dataclass(frozen=True)
class ControlPlaneMember:
    """A member of the control plane, for joins that need the membership (etcd)."""

    name: str
    address: str


@dataclass(frozen=True)
class BootstrapRequest:
    """What the host knows when it asks for a machine's bootstrap data."""

    machine: MachineRef
    role: MachineRole
    version: KubernetesVersion
    endpoint: Endpoint
    secrets: tuple[SecretItem, ...]
    #: Current control-plane members; empty for `init`.
    control_plane_members: tuple[ControlPlaneMember, ...] = ()


class BootstrapFormat(enum.Enum):
    """Format of bootstrap data."""

    CLOUD_CONFIG = "cloud-config"
    IGNITION = "ignition"
    RAW = "raw"


@dataclass(frozen=True)
class BootstrapData:
    """Bootstrap data for one machine. Secret: never log it."""

    format: BootstrapFormat
    data: bytes


class Bootstrap(Generic[C]):
    """The bootstrap extension point. Subclass it to declare the point; every method not
    overridden answers `unsupported`."""

    def cluster_secrets(self, ctx: Context[C]) -> SecretsState:
        """Create the cluster's secret material; called until the first ready answer."""
        raise ProviderError.unsupported("bootstrap.cluster-secrets")

    def generate(self, ctx: Context[C], request: BootstrapRequest) -> BootstrapData:
        """Bootstrap data for one machine; the same request gives data that joins the same way."""
        raise ProviderError.unsupported("bootstrap.generate")

    def kubeconfig(
        self, ctx: Context[C], endpoint: Endpoint, secrets: tuple[SecretItem, ...]
    ) -> str:
        """An admin kubeconfig (YAML) for the cluster. Secret: never log it."""
        raise ProviderError.unsupported("bootstrap.kubeconfig")
