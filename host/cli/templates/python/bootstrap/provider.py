"""{{name}}: a bootstrap provider written with capw's Python SDK: cloud-config for each
machine from a typed config.

provider.py is the provider; app.py exports it from the component.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capw import Bootstrap, Endpoint, ErrorCode, FieldError, Provider, ProviderError, pointer
from capw.bootstrap import (
    BootstrapData,
    BootstrapFormat,
    BootstrapRequest,
    SecretItem,
    SecretsReady,
    SecretsState,
)
from capw.context import Context


@dataclass(frozen=True)
class Config:
    """The provider's config, as a ClusterClass gives it (JSON names in camelCase)."""

    #: IANA time zone of the machines, e.g. Europe/Berlin.
    timezone: str = "UTC"
    #: Debian packages to install on every machine.
    packages: tuple[str, ...] = ()


#: Config's JSON Schema, with the same defaults as Config. The host checks every config
#: against it before any call, and so does the SDK.
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Config",
    "description": "The provider's config, as a ClusterClass gives it.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "timezone": {
            "description": "IANA time zone of the machines, e.g. Europe/Berlin.",
            "type": "string",
            "default": "UTC",
        },
        "packages": {
            "description": "Debian packages to install on every machine.",
            "type": "array",
            "items": {"type": "string"},
            "default": [],
        },
    },
}

# ASCII only: Python's str.isalnum() would also take letters of every other script.
TIMEZONE = re.compile(r"[A-Za-z0-9_+/-]{1,64}")
PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]*")

#: Name of the one secret item `cluster_secrets` makes.
TOKEN = "bootstrap-token"


class StarterProvider(Provider[Config], Bootstrap[Config]):
    """The provider. It subclasses `Bootstrap`, so that is the one extension point it
    declares; the others answer `unsupported`. Stateless: the host calls each function in a
    fresh instance.

    Its joins carry no bootstrap token for the host to keep valid, so it keeps the SDK's
    `current_join_token` (None) and `renew_join_token` (`unsupported`). A provider whose join
    data carries a kubeadm token overrides both: `current_join_token` reads the token from the
    cluster's secrets, `renew_join_token` makes one with a new id for the same item."""

    NAME = "{{name}}"
    VERSION = "0.1.0"
    DESCRIPTION = "Bootstrap provider: cloud-config from a typed config."
    CONFIG = Config
    CONFIG_SCHEMA = SCHEMA

    def validate(self, config: Config) -> list[FieldError]:
        """What the schema cannot say; validate-config reports each problem at its field's
        JSON Pointer."""
        errors = []
        if not TIMEZONE.fullmatch(config.timezone):
            errors.append(
                FieldError("/timezone", "must be a time zone name such as Europe/Berlin")
            )
        for index, package in enumerate(config.packages):
            if not PACKAGE.fullmatch(package):
                errors.append(
                    FieldError(pointer("packages", index), "must be a Debian package name")
                )
        return errors

    def cluster_secrets(self, ctx: Context[Config]) -> SecretsState:
        """The cluster's secret material: here one token, from the cluster's uid."""
        return SecretsReady((SecretItem(TOKEN, f"token:{ctx.cluster.uid}".encode()),))

    def generate(self, ctx: Context[Config], request: BootstrapRequest) -> BootstrapData:
        """A machine's cloud-config. A worker of a control plane a service runs joins with
        `request.join` (the service's CA and token), and its `secrets` are empty."""
        if request.join is None and not any(item.name == TOKEN for item in request.secrets):
            raise ProviderError.permanent(
                ErrorCode.INVALID_INPUT, "request.secrets: no bootstrap-token"
            )
        members = ",".join(member.name for member in request.control_plane_members)
        data = (
            "#cloud-config\n"
            f"# role: {request.role.value}\n"
            f"# version: {request.version}\n"
            f"# endpoint: {request.endpoint.host}:{request.endpoint.port}\n"
            f"# members: {members}\n"
            f"timezone: {ctx.config.timezone}\n"
        )
        if request.join is not None:
            how = "with a bootstrap token" if request.join.token else "without a token"
            data += f"# joins a service's control plane, {how}\n"
        if ctx.config.packages:
            data += "packages:\n" + "".join(f"- {p}\n" for p in ctx.config.packages)
        else:
            data += "packages: []\n"
        return BootstrapData(BootstrapFormat.CLOUD_CONFIG, data.encode())

    def kubeconfig(
        self, ctx: Context[Config], endpoint: Endpoint, secrets: tuple[SecretItem, ...]
    ) -> str:
        """An admin kubeconfig for the cluster reached at `endpoint`."""
        name = ctx.cluster.name
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host  # IPv6
        user = f"{name}-admin"
        context = f"{user}@{name}"
        return "\n".join(
            [
                "apiVersion: v1",
                "kind: Config",
                "clusters:",
                f"- name: {name}",
                "  cluster:",
                f"    server: https://{host}:{endpoint.port}",
                "users:",
                f"- name: {user}",
                "  user: {}",
                "contexts:",
                f"- name: {context}",
                "  context:",
                f"    cluster: {name}",
                f"    user: {user}",
                f"current-context: {context}",
                "",
            ]
        )
