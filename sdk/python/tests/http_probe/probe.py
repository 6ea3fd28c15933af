"""An infrastructure provider over HTTP, against `backend.py`: what `make check-http` builds
into a component to check the SDK's wasi:http transport, and the infrastructure conversions,
with the conformance suite."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from capw import (
    Deleted,
    Endpoint,
    FieldError,
    Infrastructure,
    InProgress,
    Provider,
    RequestedGrants,
    http,
    log,
)
from capw.infrastructure import (
    ClusterInfrastructure,
    ClusterInProgress,
    ClusterReady,
    FailureDomain,
    ListedMachine,
    MachinePhase,
    MachineStatus,
)

PHASES = {"booting": MachinePhase.PROVISIONING, "running": MachinePhase.RUNNING}


@dataclass(frozen=True)
class ProbeConfig:
    #: Base URL of the backend, e.g. http://127.0.0.1:8080.
    endpoint: str


class HttpProbe(Provider[ProbeConfig], Infrastructure[ProbeConfig]):
    NAME = "http-probe"
    VERSION = "0.1.0"
    DESCRIPTION = "Clusters and machines of a tiny HTTP backend: checks the SDK's HTTP client."
    CONFIG = ProbeConfig
    CONFIG_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["endpoint"],
        "properties": {"endpoint": {"type": "string", "pattern": "^https?://"}},
    }

    def requested_grants(self) -> RequestedGrants:
        return RequestedGrants(http_hosts=("127.0.0.1",))

    def validate(self, config: ProbeConfig) -> Iterable[FieldError]:
        if re.search(r"/$", config.endpoint):
            yield FieldError("/endpoint", "must not end with a slash")

    def request(self, ctx, method: str, path: str, body: object = None) -> object:
        request = http.Request(method, ctx.config.endpoint + path).timeout(ctx.remaining)
        if body is not None:
            request.json(body)
        return request.send().error_for_status().json()

    def reconcile_cluster(self, ctx):
        answer = self.request(
            ctx, "PUT", f"/clusters/{ctx.cluster.uid}", {"name": ctx.cluster.name}
        )
        if answer["state"] != "ready":
            progress = InProgress("LoadBalancerCreating", "the load balancer is being created")
            return ClusterInProgress(progress.requeue_after(0.2))
        log.info("cluster ready", host=answer["host"])
        endpoint = Endpoint(answer["host"], answer["port"])
        return ClusterReady(ClusterInfrastructure(endpoint, (FailureDomain("zone-a"),)))

    def delete_cluster(self, ctx):
        self.request(ctx, "DELETE", f"/clusters/{ctx.cluster.uid}")
        return Deleted()

    def reconcile_machine(self, ctx, spec):
        body = {
            "name": spec.machine.name,
            "cluster": ctx.cluster.uid,
            "bytes": len(spec.bootstrap_data),
        }
        answer = self.request(ctx, "PUT", f"/machines/{ctx.idempotency_key}", body)
        phase = PHASES[answer["state"]]
        return MachineStatus(
            phase,
            provider_id=f"probe://{answer['id']}",
            failure_domain=spec.failure_domain,
            requeue_after_ms=None if phase is MachinePhase.RUNNING else 200,
        )

    def delete_machine(self, ctx, machine):
        self.request(ctx, "DELETE", f"/machines/{ctx.idempotency_key}")
        return Deleted()

    def list_machines(self, ctx):
        listed = self.request(ctx, "GET", f"/machines?cluster={ctx.cluster.uid}")
        return [
            ListedMachine(m["key"], f"probe://{m['id']}", m["name"], PHASES[m["state"]])
            for m in listed
        ]
