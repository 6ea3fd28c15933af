"""{{name}}: a lifecycle-hooks provider written with capw's Python SDK: deletion protection.
Every transition proceeds, except a cluster's deletion while the ClusterClass's config says
`protectFromDelete: true`; the host holds only that cluster's deletion and asks again.

provider.py is the provider; app.py exports it from the component.
"""

from __future__ import annotations

from dataclasses import dataclass

from capw import InProgress, LifecycleHooks, Provider
from capw.context import Context
from capw.lifecycle_hooks import Hold, Hook, HookRequest, HookResponse, Proceed


@dataclass(frozen=True)
class Config:
    """The provider's config, as a ClusterClass gives it (JSON names in camelCase). The
    schema is its one rule: protectFromDelete must be a boolean, or validate-config refuses it
    at /protectFromDelete."""

    #: Hold every deletion of the class's clusters.
    protect_from_delete: bool = False


#: Config's JSON Schema, with the same default as Config. The host checks every config
#: against it before any call, and so does the SDK.
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Config",
    "description": "The provider's config, as a ClusterClass gives it.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "protectFromDelete": {
            "description": "Hold every deletion of the class's clusters.",
            "type": "boolean",
            "default": False,
        },
    },
}

#: How soon the host asks again about a held deletion, in seconds.
RECHECK = 60


class StarterProvider(Provider[Config], LifecycleHooks[Config]):
    """The provider. It subclasses `LifecycleHooks`, so that is the one extension point it
    declares; the others answer `unsupported`. Stateless: the host calls each function in a
    fresh instance."""

    NAME = "{{name}}"
    VERSION = "0.1.0"
    DESCRIPTION = "Lifecycle hooks: holds the deletion of protected clusters."
    CONFIG = Config
    CONFIG_SCHEMA = SCHEMA

    def handle(self, ctx: Context[Config], request: HookRequest) -> HookResponse:
        """Every transition proceeds but the deletion of a protected cluster."""
        if request.hook is Hook.BEFORE_CLUSTER_DELETE and ctx.config.protect_from_delete:
            return Hold(
                InProgress(
                    "DeletionProtected",
                    "set protectFromDelete to false in the ClusterClass to delete this cluster",
                ).requeue_after(RECHECK)
            )
        return Proceed()
