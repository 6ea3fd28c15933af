"""The provider's config and the rules its schema cannot say."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from capw import FieldError


class Rollout(enum.Enum):
    """How a rollout (a version upgrade) replaces a machine; the config says it as `maxSurge`."""

    #: `maxSurge: 1`: create the replacement first, wait until it is ready, then delete the
    #: oldest out-of-date machine. At most `replicas + 1` machines exist at once.
    SURGE = "surge"
    #: `maxSurge: 0`: delete the oldest out-of-date machine first, then create its
    #: replacement. Never more than `replicas` machines; needs `replicas >= 3`.
    DELETE_FIRST = "delete-first"


#: The smallest replica count `Rollout.DELETE_FIRST` accepts: one member can go while the
#: others keep etcd's quorum.
DELETE_FIRST_MIN_REPLICAS = 3

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "KubeadmControlPlaneConfig",
    "description": 'Config of the kubeadm control-plane provider, e.g. {"replicas": 3, '
    '"maxSurge": 1}. Both fields are optional. Besides this schema, replicas must be odd, '
    "and maxSurge 0 needs replicas of at least 3.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "replicas": {
            "description": "Control-plane machines to run when the Cluster's topology leaves "
            "its replica count unset. Odd, at least 1. Unset: the topology must give the count.",
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": 4294967295,
        },
        "maxSurge": {
            "description": "Machines a rollout may add above the replica count: 1 (default) "
            "creates each replacement before deleting the machine it replaces; 0 deletes "
            "first and needs at least 3 replicas.",
            "type": "integer",
            "minimum": 0,
            "maximum": 1,
            "default": 1,
        },
    },
}


@dataclass(frozen=True)
class KubeadmControlPlaneConfig:
    """`{"replicas": 3, "maxSurge": 1}`; `{}` is no default replica count and `maxSurge: 1`."""

    #: Replicas when the plan input's count is 0 (unset); None: the topology must give it.
    replicas: int | None = None
    #: 1 (surge) or 0 (delete first).
    max_surge: int = 1

    @property
    def rollout(self) -> Rollout:
        """`maxSurge` 0 is `DELETE_FIRST`, anything else `SURGE`."""
        return Rollout.DELETE_FIRST if self.max_surge == 0 else Rollout.SURGE


def rule_errors(config: KubeadmControlPlaneConfig) -> list[FieldError]:
    """Every rule violation, each at its field's JSON Pointer: `/replicas` when it is 0 or
    even, `/maxSurge` when it is above 1, or 0 while `replicas` is set below 3."""
    errors = []
    replicas = config.replicas
    if replicas is not None:
        if replicas == 0:
            errors.append(
                FieldError("/replicas", "must be at least 1: a control plane needs a machine")
            )
        elif replicas % 2 == 0:
            errors.append(
                FieldError(
                    "/replicas",
                    f"must be odd so that etcd keeps a majority; {replicas} tolerates no more "
                    f"failures than {replicas - 1}: use {replicas - 1} or {replicas + 1}",
                )
            )
    if config.max_surge > 1:
        errors.append(
            FieldError(
                "/maxSurge",
                f"must be 0 or 1: machines are replaced one at a time; got {config.max_surge}",
            )
        )
    elif (
        config.rollout is Rollout.DELETE_FIRST
        and replicas is not None
        and replicas < DELETE_FIRST_MIN_REPLICAS
    ):
        errors.append(
            FieldError(
                "/maxSurge",
                "0 deletes a machine before creating its replacement, which needs at least "
                f"{DELETE_FIRST_MIN_REPLICAS} replicas to keep etcd's quorum; replicas is "
                f"{replicas}: use maxSurge 1",
            )
        )
    return errors
