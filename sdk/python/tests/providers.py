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
from capw.control_plane import (
    ControlPlaneStatus,
    DeleteMachine,
    Plan,
    PlanInput,
    Wait,
    oldest_version,
)
from capw.infrastructure import ClusterInfrastructure, ClusterReady


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

    def plan(self, ctx, input: PlanInput) -> Plan:
        if input.endpoint is None:
            step = Wait(InProgress("WaitingForEndpoint", "no endpoint yet").requeue_after(10))
        else:
            step = DeleteMachine(min(input.members, key=lambda m: m.created_at).machine)
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
            up_to_date_replicas=sum(1 for m in input.members if m.version == input.version),
        )
