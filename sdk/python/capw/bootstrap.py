"""The `bootstrap` extension point: cluster secrets and the data that turns a machine into a
node."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

from .context import Context
from .types import (
    Endpoint,
    InProgress,
    JoinToken,
    KubernetesVersion,
    MachineRef,
    MachineRole,
    ProviderError,
)

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
class JoinCredentials:
    """How to join a control plane that a service runs (the `hosted` and `managed` shapes).
    Since 0.3."""

    #: The certificate authority the control plane's API server certificate chains to (PEM):
    #: what a join pins (kubeadm's `caCertHashes`).
    ca_certificate: str
    #: The token a join authenticates with, issued and kept valid by the service; None when
    #: the service needs none.
    token: JoinToken | None = None


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
    #: How a worker joins a control plane a service runs, as the control-plane provider had
    #: it from the service; None for the `machines` shape, whose joins come from `secrets`.
    #: With it, `secrets` is empty: the host does not call `cluster_secrets` for a cluster
    #: whose CAs are the service's. Since 0.3.
    join: JoinCredentials | None = None


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
    overridden answers `unsupported`, but `current_join_token`, which answers None (no token
    for the host to keep valid)."""

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

    def current_join_token(
        self, ctx: Context[C], secrets: tuple[SecretItem, ...]
    ) -> JoinToken | None:
        """The bootstrap token joins carry now, read from the material `cluster_secrets`
        returned; pure. The host keeps that token valid in the workload cluster, renewing it
        through `renew_join_token` when it is missing there or past half its life. The
        default, None, says the provider's join data carries no token to keep."""
        return None

    def renew_join_token(self, ctx: Context[C], secrets: tuple[SecretItem, ...]) -> JoinToken:
        """A fresh bootstrap token, with a new id, in the item `current_join_token` names. The
        host writes it into the workload cluster and then stores it in the cluster's secrets
        (as `token.token`, `<id>.<secret>`), so `generate` reads it from there. Its secret
        part is secret: never log it. The default answers `unsupported`, which is right for a
        provider whose `current_join_token` answers None."""
        raise ProviderError.unsupported("bootstrap.renew-join-token")
