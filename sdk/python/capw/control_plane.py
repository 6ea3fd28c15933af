"""The `control-plane` extension point: the next safe step toward the desired control plane.

The host owns the machines and applies one step at a time; the provider decides which step
is safe. A machine-based provider answers create and delete steps, and `RemoveEtcdMember`
for a member etcd lists (`Member.etcd` is `EtcdMembership.MEMBER`: the host takes it out of
etcd, from another member, before it deletes the machine; `removal` picks the step); a hosted
one `ApplyManifests`; a managed one drives its cloud API and answers `Wait` until it is done.
Every plan carries the control plane's `ControlPlaneStatus`.

The managed shape also overrides `ControlPlane.reconcile_control_plane`, which moves the
service toward the input and hands out its `ControlPlaneAccess`, and
`ControlPlane.delete_control_plane`: `plan` stays pure and answers, for it, what a reconcile
would do. The host calls neither for the `machines` and `hosted` shapes, which keep their
defaults (`unsupported`).

The hosted shape answers every `plan` with `ApplyManifests`, the full set of objects the
control plane consists of now (YAML, one object each), beside `Plan.certificates`, the Secrets
the host mints from the cluster's CAs (`CertificateSecret`), and, for an etcd shared with
other control planes, `Plan.shared_datastore`. The host tells each applied object back in the
next `PlanInput.objects` (`HostedObject`), with its readiness and, for a Deployment or
StatefulSet, the images it runs. docs/contract.md says the rules the host applies them by.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from .context import Context
from .metadata import ControlPlaneShape
from .types import (
    Condition,
    Deletion,
    Endpoint,
    InProgress,
    JoinToken,
    KubernetesVersion,
    MachineRef,
    ProviderError,
)

C = TypeVar("C")


class EtcdMembership(enum.Enum):
    """A member's place in the cluster's etcd, as the host observed it in this pass. Since
    0.3."""

    #: The host does not observe etcd for this cluster (the class says nothing of how to reach
    #: it, the host does not reach workload clusters, or etcd did not answer). Plan as a 0.2
    #: provider would: the host still takes a member out of etcd before it deletes its machine
    #: wherever it can see etcd.
    UNKNOWN = "unknown"
    #: etcd lists a member on this machine: it leaves through `RemoveEtcdMember`, never
    #: `DeleteMachine`.
    MEMBER = "member"
    #: etcd lists no member on this machine: it has not joined yet, or it has left.
    NOT_MEMBER = "not-member"


@dataclass(frozen=True)
class Member:
    """An existing control-plane member as the host observes it."""

    machine: MachineRef
    version: KubernetesVersion
    failure_domain: str | None
    #: Its Node is Ready (the workload cluster's Node, where the host reaches it; the
    #: machine's running phase otherwise).
    ready: bool
    #: Creation time, seconds since the Unix epoch; orders members oldest first.
    created_at: int
    #: Being deleted already.
    deleting: bool = False
    #: Its place in etcd (0.3).
    etcd: EtcdMembership = EtcdMembership.UNKNOWN
    #: Why it is out of date, one entry per input that differs from what is desired now:
    #: `version`, or the name of a machine-shaping input as the host records it
    #: (`infrastructure.config/instanceType`, `bootstrap.provider`, `failureDomain`). Empty
    #: when up to date (0.3).
    out_of_date: tuple[str, ...] = ()
    #: Why the host's health checks judge it unhealthy and it may be replaced now; empty when
    #: healthy, not judged, or not to be replaced now. Replace such a member when etcd keeps
    #: its quorum without it: take it out (`removal`), then create its replacement; otherwise
    #: `Wait` saying why (0.3).
    unhealthy: tuple[str, ...] = ()

    @property
    def in_etcd(self) -> bool:
        """Whether the host says etcd lists it: then it leaves through `RemoveEtcdMember`."""
        return self.etcd is EtcdMembership.MEMBER


@dataclass(frozen=True)
class HostedObject:
    """An object the host applied to the management cluster for a hosted control plane, as
    it stands now. Since 0.3."""

    #: `apps/v1` or `v1`.
    api_version: str
    #: `Deployment`, `StatefulSet`, `Service`, `Secret` or `ConfigMap`.
    kind: str
    name: str
    #: A Deployment or StatefulSet: its controller observed the applied generation and every
    #: desired replica is updated and ready. A Service of type LoadBalancer: its load balancer
    #: has an address. Any other Service, a Secret or a ConfigMap: it exists.
    ready: bool
    #: Why it is not ready, when the host can say.
    message: str | None = None
    #: A Deployment or StatefulSet: the images of its Pod template's containers (init
    #: containers first), as applied; what it runs once `ready`. Empty for other kinds.
    images: tuple[str, ...] = ()
    #: A Service of type LoadBalancer: the addresses its load balancer was given, in the order
    #: given. Empty for other kinds and while none is given.
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanInput:
    """The desired control plane and what exists."""

    version: KubernetesVersion
    #: The members the Cluster asks for; 0 when it asks none (a shape without machines whose
    #: service decides, or a topology that leaves it unset) or asks `failures_tolerated`
    #: instead.
    replicas: int
    members: tuple[Member, ...]
    #: Failure domains that may hold control-plane machines.
    failure_domains: tuple[str, ...] = ()
    #: The endpoint from the infrastructure, when known.
    endpoint: Endpoint | None = None
    #: The Cluster's ask in capabilities rather than counts: the control plane is to keep
    #: serving with this many members failed (`spec.topology.controlPlane.failuresTolerated`,
    #: never given beside `replicas`). Say what it means for the shape (for stacked etcd, 2N+1
    #: members) or refuse it (`invalid-input`, naming the field). Since 0.3.
    failures_tolerated: int | None = None
    #: Hosted shape: every object the host applied for this control plane, with its
    #: readiness. Empty for other shapes. Since 0.3.
    objects: tuple[HostedObject, ...] = ()


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
    """Take this member out of etcd, then delete its machine: for a member etcd lists
    (`Member.in_etcd`). A host that cannot change etcd membership refuses the step and deletes
    nothing."""

    machine: MachineRef


@dataclass(frozen=True)
class ApplyManifests:
    """Hosted shape: these manifests (YAML, one object each) are every object the control
    plane consists of now; the host applies them, prunes what an earlier answer held and this
    one does not, and tells each back in the next `PlanInput.objects`. Answer it on every plan
    while the control plane exists: `Nothing` and `Wait` leave what is applied as it is."""

    manifests: tuple[str, ...]


@dataclass(frozen=True)
class Wait:
    """Something is under way; plan again after the hint."""

    progress: InProgress


Step = Nothing | CreateMachine | DeleteMachine | RemoveEtcdMember | ApplyManifests | Wait
"""The single next step."""


def removal(member: Member) -> RemoveEtcdMember | DeleteMachine:
    """The step that takes `member` out of the control plane: `RemoveEtcdMember` when the host
    says etcd lists it, `DeleteMachine` otherwise (etcd not observed, or the member not in it).
    Answering it for every removal keeps the contract's rule that a member etcd lists never
    leaves through `DeleteMachine`."""
    if member.in_etcd:
        return RemoveEtcdMember(member.machine)
    return DeleteMachine(member.machine)


class CertificateAuthority(enum.Enum):
    """The authority a certificate the host mints for a hosted control plane chains to: one
    of the cluster's CAs, which the host made and keeps. Since 0.3."""

    #: The cluster CA: API servers, kubelets' clients, admins.
    CLUSTER = "cluster"
    #: The front-proxy CA: the API server's aggregation client.
    FRONT_PROXY = "front-proxy"
    #: The etcd CA: etcd's serving and peer certificates, its clients.
    ETCD = "etcd"


class CertificateUsage(enum.Enum):
    """What a minted certificate is for. Since 0.3."""

    #: TLS server authentication (its SANs are the names it serves).
    SERVER = "server"
    #: TLS client authentication (its common name and organizations are who it is).
    CLIENT = "client"
    #: Both: an etcd peer.
    PEER = "peer"


@dataclass(frozen=True)
class CertificateRequest:
    """One certificate (and its key) the host mints into a Secret. Since 0.3."""

    #: The Secret's data keys: `<key>.crt` and `<key>.key` (and `<key>.conf` with
    #: `kubeconfig_server`). A DNS label.
    key: str
    authority: CertificateAuthority
    usage: CertificateUsage
    common_name: str
    organizations: tuple[str, ...] = ()
    #: DNS names and IP addresses, for `SERVER` and `PEER`.
    sans: tuple[str, ...] = ()
    #: When given, the host also writes `<key>.conf`: a kubeconfig for this server URL that
    #: authenticates with this (client) certificate and trusts the cluster CA.
    kubeconfig_server: str | None = None


class SecretMaterial(enum.Enum):
    """Material of the cluster's CAs the host writes into a Secret it mints. Since 0.3."""

    #: `ca.crt`: the cluster CA's certificate.
    CLUSTER_CA_CERTIFICATE = "cluster-ca-certificate"
    #: `ca.crt` and `ca.key`: the cluster CA with its key, for kube-controller-manager's
    #: certificate signer. The key goes to the management cluster's Secret, never to a sandbox.
    CLUSTER_CA = "cluster-ca"
    #: `front-proxy-ca.crt`.
    FRONT_PROXY_CA_CERTIFICATE = "front-proxy-ca-certificate"
    #: `etcd-ca.crt`.
    ETCD_CA_CERTIFICATE = "etcd-ca-certificate"
    #: `sa.key` and `sa.pub`: the key pair service-account tokens are signed with.
    SERVICE_ACCOUNT_KEYS = "service-account-keys"


@dataclass(frozen=True)
class CertificateSecret:
    """A Secret the host mints from the cluster's CAs and writes to the management cluster
    for a hosted control plane: the provider names what goes in, the host holds the CA keys.
    Since 0.3."""

    #: The Secret's name: the Cluster's name and a dash first, as for every object of a
    #: hosted plan.
    name: str
    certificates: tuple[CertificateRequest, ...] = ()
    materials: tuple[SecretMaterial, ...] = ()


@dataclass(frozen=True)
class SharedDatastore:
    """A hosted control plane's place in an etcd shared by several control planes, which the
    management cluster's operator runs. The host makes the cluster's etcd user and role on its
    own key prefix and writes into Secret `secret` what the API servers need (`endpoints`,
    `prefix`, `ca.crt`, `client.crt`, `client.key`). Since 0.3."""

    #: The datastore: the Secret of that name and of type `capw.dev/datastore` in the host's
    #: provider namespace.
    name: str
    #: The Secret the host writes: one of the plan's objects (the Cluster's name and a dash
    #: first).
    secret: str


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
    #: How many members may fail with the control plane still serving, as it runs now (for a
    #: managed shape, what the service promises), when known. Since 0.3.
    failures_tolerated: int | None = None


@dataclass(frozen=True)
class Plan:
    """The plan and the counts the host shows in the Cluster's status: `plan`'s answer."""

    step: Step
    status: ControlPlaneStatus
    replicas: int
    ready_replicas: int
    #: Members with nothing out of date (`Member.out_of_date` empty and the desired version).
    up_to_date_replicas: int
    #: Hosted shape, beside `ApplyManifests`: the Secrets the host mints from the cluster's
    #: CAs. Since 0.3.
    certificates: tuple[CertificateSecret, ...] = ()
    #: Hosted shape: the etcd shared with other control planes this one keeps its state in,
    #: when it has no datastore of its own. Since 0.3.
    shared_datastore: SharedDatastore | None = None


@dataclass(frozen=True)
class ControlPlaneAccess:
    """How a control plane that a service runs is reached and joined, as the service hands it
    out. Since 0.3."""

    #: Where its API server is reached.
    endpoint: Endpoint
    #: The certificate authority its API server's certificate chains to (PEM): what
    #: kubeconfigs trust and joins pin.
    ca_certificate: str
    #: An admin kubeconfig (YAML), which the host stores in the cluster's kubeconfig Secret.
    #: Secret: never log it (left out of the repr).
    admin_kubeconfig: str = field(repr=False)
    #: The token workers join with, issued and kept valid by the service; None when joins
    #: need none. The host passes it to the bootstrap provider (`JoinCredentials`).
    join_token: JoinToken | None = None


@dataclass(frozen=True)
class ReconcileOutput:
    """The answer of `reconcile_control_plane`. Since 0.3."""

    #: Its step is `Nothing` once the control plane is as desired and `Wait` while the service
    #: works toward it; machine steps are invalid answers for these shapes.
    plan: Plan
    #: How to reach and join it, once it can be.
    access: ControlPlaneAccess | None = None


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
    - `CHAINS_UPGRADES`: whether it takes a change of more than one minor version in one step
      of the spec and carries it out one minor at a time (default False: the host refuses a
      skipped minor at admission, naming this capability). Since 0.3.

    Every method not overridden answers `unsupported`.
    """

    SHAPE: ClassVar[ControlPlaneShape]
    SCALABLE: ClassVar[bool] = False
    VERSION_UPGRADES: ClassVar[bool] = False
    CHAINS_UPGRADES: ClassVar[bool] = False

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

    def reconcile_control_plane(self, ctx: Context[C], input: PlanInput) -> ReconcileOutput:
        """For the managed shape: move the control plane toward `input` (create it, start one
        step of an update) and say where it stands, with how to reach and join it once it can
        be. It may call the provider's service, and must be idempotent by
        `ctx.idempotency_key`, which the host keeps for the cluster: a repeated call never
        creates a second control plane. The host calls it in its passes only, never at
        admission; the answer's step is `Nothing` or `Wait`. The `machines` shape keeps the
        default, `unsupported`, and so may the `hosted` shape, whose objects the host applies
        from `plan`'s `ApplyManifests`. Since 0.3."""
        raise ProviderError.unsupported("control-plane.reconcile-control-plane")

    def delete_control_plane(self, ctx: Context[C]) -> Deletion:
        """For the managed shape: delete the control plane, answering `Deleted()` once nothing
        of it is left (also when there was nothing). The host calls it once the cluster's
        workers are gone, before it deletes the infrastructure; it deletes a hosted plan's
        objects itself. The `machines` shape keeps the default, `unsupported`. Since 0.3."""
        raise ProviderError.unsupported("control-plane.delete-control-plane")
