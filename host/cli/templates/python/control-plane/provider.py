"""{{name}}: a control-plane provider written with capw's Python SDK, of the machines shape:
the host creates and deletes the control-plane machines, one step at a time, and `plan` says
which step is safe next. Scalable, no version upgrades (set `VERSION_UPGRADES` and plan a
rollout to add them: plugins/other-languages/py-control-plane in the capw repository shows
how). `reconcile_control_plane` and `delete_control_plane`, for the shapes without machines,
keep the SDK's answer: a permanent `unsupported`.

provider.py is the provider; app.py exports it from the component.
"""

from __future__ import annotations

from dataclasses import dataclass

from capw import ControlPlane, ControlPlaneShape, FieldError, InProgress, Provider
from capw.context import Context
from capw.control_plane import (
    ControlPlaneStatus,
    CreateMachine,
    MachineToCreate,
    Nothing,
    Plan,
    PlanInput,
    Step,
    Wait,
    removal,
)


@dataclass(frozen=True)
class Config:
    """The provider's config, as a ClusterClass gives it (JSON names in camelCase)."""

    #: The most control-plane machines a cluster may ask for: odd, 1 to 9.
    max_replicas: int = 7


#: Config's JSON Schema, with the same defaults as Config. The host checks every config
#: against it before any call, and so does the SDK.
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Config",
    "description": "The provider's config, as a ClusterClass gives it.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "maxReplicas": {
            "description": "The most control-plane machines a cluster may ask for: odd, 1 to 9.",
            "type": "integer",
            "minimum": 1,
            "maximum": 9,
            "default": 7,
        },
    },
}

#: How soon to plan again while a machine comes up or goes away, in seconds.
WAIT = 5


def wait(reason: str, message: str) -> Wait:
    """A step that waits and plans again after `WAIT`."""
    return Wait(InProgress(reason, message).requeue_after(WAIT))


class StarterProvider(Provider[Config], ControlPlane[Config]):
    """The provider. It subclasses `ControlPlane`, so that is the one extension point it
    declares; the others answer `unsupported`. Stateless: the host calls each function in a
    fresh instance."""

    NAME = "{{name}}"
    VERSION = "0.1.0"
    DESCRIPTION = "Control-plane provider: machines, one at a time, scaled up and down."
    CONFIG = Config
    CONFIG_SCHEMA = SCHEMA

    # Machines of the cluster itself, scalable, no version upgrades.
    SHAPE = ControlPlaneShape.MACHINES
    SCALABLE = True
    VERSION_UPGRADES = False

    def validate(self, config: Config) -> list[FieldError]:
        """What the schema cannot say; validate-config reports each problem at its field's
        JSON Pointer."""
        if config.max_replicas % 2 == 0:
            return [FieldError("/maxReplicas", "must be odd, so that etcd keeps a quorum")]
        return []

    def plan(self, ctx: Context[Config], input: PlanInput) -> Plan:
        """The next safe step toward `input.replicas` machines (at most `maxReplicas`), and
        the status the host shows. Pure: the same input gives the same plan."""
        # The live members are those not being deleted.
        live = [m for m in input.members if not m.deleting]
        ready = sum(1 for m in live if m.ready)
        wanted = min(input.replicas, ctx.config.max_replicas)
        going = next((m for m in input.members if m.deleting), None)

        step: Step
        if going is not None:
            # One change at a time: nothing else until the machine is gone.
            step = wait("MachineDeleting", f"machine {going.machine.name} is being deleted")
        elif len(live) < wanted:
            if ready < len(live):
                step = wait("MachineNotReady", f"{ready} of {len(live)} machines ready")
            else:
                domains = input.failure_domains
                step = CreateMachine(
                    MachineToCreate(
                        init=not live,
                        version=input.version,
                        # Round robin over the failure domains, if there are any.
                        failure_domain=domains[len(live) % len(domains)] if domains else None,
                    )
                )
        elif len(live) > wanted:
            # The oldest goes first. A member etcd lists leaves etcd before its machine goes
            # (`removal` answers RemoveEtcdMember for it, DeleteMachine otherwise): a quorum
            # must never count a member whose machine is gone.
            oldest = min(live, key=lambda m: (m.created_at, m.machine.name))
            step = removal(oldest)
        else:
            step = Nothing()

        return Plan(
            step=step,
            status=ControlPlaneStatus(
                initialized=any(m.ready for m in input.members),
                ready=bool(live) and ready == len(live),
                version=input.version if input.members else None,
                endpoint=input.endpoint,
            ),
            replicas=len(live),
            ready_replicas=ready,
            # The host lists what makes a member out of date (a changed machine-shaping input).
            up_to_date_replicas=sum(1 for m in live if not m.out_of_date),
        )
