"""{{name}}: an infrastructure provider written with capw's Python SDK. It is stateless:
every machine "exists" where the call says, with a provider id made from the call's
idempotency key, and the control-plane endpoint is a name under the configured domain. A real
provider calls its cloud's API over the HTTP client the host grants (`capw.http`; see
plugins/other-languages/go-sim-infra in the capw repository) and keeps nothing in the sandbox
either: the cloud holds the state.

provider.py is the provider; app.py exports it from the component.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capw import (
    Address,
    AddressKind,
    Deleted,
    Deletion,
    Endpoint,
    FieldError,
    Infrastructure,
    MachineRef,
    Provider,
    pointer,
)
from capw.context import Context
from capw.infrastructure import (
    ClusterInfrastructure,
    ClusterReady,
    ClusterState,
    FailureDomain,
    ListedMachine,
    MachinePhase,
    MachineSpec,
    MachineStatus,
)


@dataclass(frozen=True)
class Config:
    """The provider's config, as a ClusterClass gives it (JSON names in camelCase)."""

    #: The DNS domain the control-plane endpoint is named under.
    domain: str = "example.test"
    #: The failure domains machines are spread over.
    failure_domains: tuple[str, ...] = ("zone-a",)


#: Config's JSON Schema, with the same defaults as Config. The host checks every config
#: against it before any call, and so does the SDK.
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Config",
    "description": "The provider's config, as a ClusterClass gives it.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "domain": {
            "description": "The DNS domain the control-plane endpoint is named under.",
            "type": "string",
            "pattern": "^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$",
            "default": "example.test",
        },
        "failureDomains": {
            "description": "The failure domains machines are spread over.",
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "default": ["zone-a"],
        },
    },
}

# One DNS label: a-z, 0-9 and '-', neither first nor last, at most 63 characters.
LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


def is_dns_name(name: str) -> bool:
    """Whether `name` is a DNS label, or labels joined by dots."""
    return 0 < len(name) <= 253 and all(LABEL.fullmatch(label) for label in name.split("."))


class StarterProvider(Provider[Config], Infrastructure[Config]):
    """The provider. It subclasses `Infrastructure`, so that is the one extension point it
    declares; the others answer `unsupported`. Stateless: the host calls each function in a
    fresh instance."""

    NAME = "{{name}}"
    VERSION = "0.1.0"
    DESCRIPTION = "Infrastructure provider: stateless machines named by their idempotency key."
    CONFIG = Config
    CONFIG_SCHEMA = SCHEMA

    def validate(self, config: Config) -> list[FieldError]:
        """What the schema cannot say; validate-config reports each problem at its field's
        JSON Pointer."""
        errors = []
        if not is_dns_name(config.domain):
            errors.append(FieldError("/domain", "must be a DNS name such as example.test"))
        for index, domain in enumerate(config.failure_domains):
            if not LABEL.fullmatch(domain):
                errors.append(
                    FieldError(
                        pointer("failureDomains", index), "must be a DNS label such as zone-a"
                    )
                )
        return errors

    def reconcile_cluster(self, ctx: Context[Config]) -> ClusterState:
        """Ready at once: the endpoint is <cluster>.<domain>:6443, and every configured
        failure domain may hold control-plane machines."""
        return ClusterReady(
            ClusterInfrastructure(
                control_plane_endpoint=Endpoint(f"{ctx.cluster.name}.{ctx.config.domain}", 6443),
                failure_domains=tuple(
                    FailureDomain(name, control_plane=True) for name in ctx.config.failure_domains
                ),
            )
        )

    def delete_cluster(self, ctx: Context[Config]) -> Deletion:
        """Nothing to delete."""
        return Deleted()

    def reconcile_machine(self, ctx: Context[Config], spec: MachineSpec) -> MachineStatus:
        """The machine, running where the host placed it."""
        return MachineStatus(
            phase=MachinePhase.RUNNING,
            # The same key on every call for one machine: the same machine, never a second.
            provider_id=f"static://{ctx.idempotency_key}",
            addresses=(Address(AddressKind.HOSTNAME, spec.machine.name),),
            failure_domain=spec.failure_domain,
        )

    def delete_machine(self, ctx: Context[Config], machine: MachineRef) -> Deletion:
        """Nothing to delete."""
        return Deleted()

    def list_machines(self, ctx: Context[Config]) -> list[ListedMachine]:
        """Nothing, since nothing is kept anywhere. A real provider lists every machine its
        cloud holds for the cluster, so that the host deletes those it has no Machine for
        (see plugins/other-languages/go-sim-infra)."""
        return []
