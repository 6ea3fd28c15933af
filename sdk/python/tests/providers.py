"""Small providers the SDK's tests drive."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from capw import (
    Bootstrap,
    Condition,
    ConditionStatus,
    ControlPlane,
    ControlPlaneShape,
    Deleted,
    Endpoint,
    ErrorCode,
    FieldError,
    Infrastructure,
    InProgress,
    Provider,
    ProviderError,
    RequestedGrants,
    log,
    secrets,
)
from capw.bootstrap import SecretItem
from capw.control_plane import (
    ApplyManifests,
    CertificateAuthority,
    CertificateRequest,
    CertificateSecret,
    CertificateUsage,
    ControlPlaneAccess,
    ControlPlaneStatus,
    Nothing,
    Plan,
    PlanInput,
    ReconcileOutput,
    SecretMaterial,
    SharedDatastore,
    Wait,
    oldest_version,
    removal,
)
from capw.infrastructure import ClusterInfrastructure, ClusterReady
from capw.types import DeletionInProgress, JoinToken


@dataclass(frozen=True)
class ZonesConfig:
    port: int = 6443
    zones: list[str] = field(default_factory=list)


class Zones(Provider[ZonesConfig], Infrastructure[ZonesConfig]):
    """An infrastructure provider with a config, a rule and a secret."""

    NAME = "zones"
    VERSION = "1.2.3"
    DESCRIPTION = "Points every cluster at localhost."
    CONFIG = ZonesConfig
    CONFIG_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 6443},
            "zones": {"type": "array", "items": {"type": "string"}, "default": []},
        },
    }

    def requested_grants(self) -> RequestedGrants:
        return RequestedGrants(secrets=("api-token",))

    def validate(self, config: ZonesConfig) -> Iterable[FieldError]:
        return [
            FieldError(f"/zones/{i}", "must not be empty")
            for i, z in enumerate(config.zones)
            if not z
        ]

    def reconcile_cluster(self, ctx):
        token = secrets.get("api-token")
        log.info("reconciling", cluster=ctx.cluster.name, token_bytes=len(token))
        return ClusterReady(ClusterInfrastructure(Endpoint("127.0.0.1", ctx.config.port)))

    def delete_cluster(self, ctx):
        return Deleted()

    def list_machines(self, ctx):
        raise ValueError("a bug")


class Both(Provider[None], Bootstrap[None], ControlPlane[None]):
    """Two points, no config, every method left out."""

    NAME = "both"
    VERSION = "0.0.1"
    DESCRIPTION = "Serves nothing it declares."
    SHAPE = ControlPlaneShape.HOSTED


class Busy(Provider[None], Infrastructure[None]):
    """Raises the errors a backend causes."""

    NAME = "busy"
    VERSION = "0.1.0"
    DESCRIPTION = "Always rate-limited."

    def reconcile_cluster(self, ctx):
        raise ProviderError.retryable(ErrorCode.UNAVAILABLE, "rate-limited").retry_after(30)


class Planner(Provider[None], ControlPlane[None]):
    """A control plane that removes its oldest member, once it knows the endpoint."""

    NAME = "planner"
    VERSION = "0.1.0"
    DESCRIPTION = "Removes the oldest member."
    SHAPE = ControlPlaneShape.MACHINES
    SCALABLE = True
    VERSION_UPGRADES = True
    CHAINS_UPGRADES = True

    def plan(self, ctx, input: PlanInput) -> Plan:
        if input.endpoint is None:
            step = Wait(InProgress("WaitingForEndpoint", "no endpoint yet").requeue_after(10))
        else:
            step = removal(min(input.members, key=lambda m: m.created_at))
        ready = sum(1 for m in input.members if m.ready)
        return Plan(
            step=step,
            status=ControlPlaneStatus(
                initialized=ready > 0,
                ready=ready > 0,
                version=oldest_version(input.members),
                endpoint=input.endpoint,
                conditions=(Condition("Available", ConditionStatus.TRUE, "QuorumReady", ""),),
            ),
            replicas=len(input.members),
            ready_replicas=ready,
            up_to_date_replicas=sum(
                1 for m in input.members if m.version == input.version and not m.out_of_date
            ),
        )


#: The item of the cluster's secrets `Tokens` keeps its join token in.
TOKEN_ITEM = "bootstrap-token"


class Tokens(Provider[None], Bootstrap[None]):
    """A bootstrap provider whose joins carry a token it keeps in the cluster's secrets; a
    renewed token's id counts up from the current one's."""

    NAME = "tokens"
    VERSION = "0.1.0"
    DESCRIPTION = "Keeps a join token."

    def current_join_token(self, ctx, secrets):
        item = next((i for i in secrets if i.name == TOKEN_ITEM), None)
        if item is None:
            return None
        id, secret = item.data.decode().split(".")
        return JoinToken(TOKEN_ITEM, id, secret, ttl_seconds=86_400, extra_groups=("nodes",))

    def renew_join_token(self, ctx, secrets):
        current = self.current_join_token(ctx, secrets)
        serial = 0 if current is None else int(current.id) + 1
        return JoinToken(TOKEN_ITEM, f"{serial:06d}", "s" * 16, ttl_seconds=86_400)


def token_secrets(id: str = "000001") -> tuple[SecretItem, ...]:
    """The cluster's secrets as `Tokens` keeps them, its token's id `id`."""
    return (SecretItem("ca.crt", b"pem"), SecretItem(TOKEN_ITEM, f"{id}.{'s' * 16}".encode()))


class Managed(Provider[None], ControlPlane[None]):
    """A managed control plane: ready on the second reconcile (the key's last character says
    which), deleted on the second call; its plan says what a reconcile would."""

    NAME = "managed"
    VERSION = "0.1.0"
    DESCRIPTION = "A service's control plane."
    SHAPE = ControlPlaneShape.MANAGED

    def plan(self, ctx, input: PlanInput) -> Plan:
        ready = ctx.idempotency_key.endswith("2")
        step = Nothing() if ready else Wait(InProgress("Creating", "the service is creating it"))
        return Plan(
            step=step,
            status=ControlPlaneStatus(
                initialized=ready,
                ready=ready,
                version=input.version if ready else None,
                endpoint=Endpoint("api.c1.test", 443) if ready else None,
                failures_tolerated=1 if ready else None,
            ),
            replicas=0,
            ready_replicas=0,
            up_to_date_replicas=0,
        )

    def reconcile_control_plane(self, ctx, input: PlanInput) -> ReconcileOutput:
        plan = self.plan(ctx, input)
        if not plan.status.ready:
            return ReconcileOutput(plan)
        token = JoinToken("join", "abcdef", "0123456789abcdef", ttl_seconds=3600)
        access = ControlPlaneAccess(
            Endpoint("api.c1.test", 443), "-----BEGIN CERTIFICATE-----", "kind: Config", token
        )
        return ReconcileOutput(plan, access)

    def delete_control_plane(self, ctx):
        if ctx.idempotency_key.endswith("2"):
            return Deleted()
        return DeletionInProgress(InProgress("Deleting", "the service is deleting it"))


class Hosted(Provider[None], ControlPlane[None]):
    """A hosted control plane of one Deployment, with a certificate Secret and a place in a
    shared etcd."""

    NAME = "hosted"
    VERSION = "0.1.0"
    DESCRIPTION = "Pods in the management cluster."
    SHAPE = ControlPlaneShape.HOSTED

    def plan(self, ctx, input: PlanInput) -> Plan:
        name = ctx.cluster.name
        applied = next((o for o in input.objects if o.kind == "Deployment"), None)
        ready = applied is not None and applied.ready
        serving = CertificateRequest(
            key="apiserver",
            authority=CertificateAuthority.CLUSTER,
            usage=CertificateUsage.SERVER,
            common_name="kube-apiserver",
            sans=(f"{name}-apiserver",),
        )
        return Plan(
            step=ApplyManifests((f"kind: Deployment\nmetadata:\n  name: {name}-apiserver\n",)),
            status=ControlPlaneStatus(initialized=ready, ready=ready),
            replicas=0,
            ready_replicas=0,
            up_to_date_replicas=0,
            certificates=(
                CertificateSecret(
                    f"{name}-certs",
                    (serving,),
                    (SecretMaterial.CLUSTER_CA_CERTIFICATE, SecretMaterial.SERVICE_ACCOUNT_KEYS),
                ),
            ),
            shared_datastore=SharedDatastore("shared-etcd", f"{name}-datastore"),
        )
