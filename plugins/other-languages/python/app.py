"""The example bootstrap provider in Python (see ../README.md for what it does).

componentize-py turns this module into a component of the world `bootstrap-provider`: the
classes `Metadata` and `Bootstrap` implement the exported interfaces of the same names.
"""

import json
import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import bootstrap, metadata
from wit_world.imports import types

NAME = "python-example"
VERSION = "0.1.0"
CONFIG_SCHEMA = json.dumps(
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Config",
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
)

TIMEZONE = re.compile(r"[A-Za-z0-9_+/-]{1,64}")
PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]*")
TOKEN = "bootstrap-token"


def pointer(*parts) -> str:
    """A JSON Pointer (RFC 6901) to `parts`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def config_problems(text: str) -> list:
    """Every problem of a config, in document order, as field errors."""
    try:
        config = json.loads(text)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        return [metadata.FieldError("", "must be a JSON object")]
    errors = []
    for key, value in config.items():
        if key == "timezone":
            if not isinstance(value, str):
                errors.append(metadata.FieldError("/timezone", "must be a string"))
            elif not TIMEZONE.fullmatch(value):
                errors.append(
                    metadata.FieldError(
                        "/timezone", "must be a time zone name such as Europe/Berlin"
                    )
                )
        elif key == "packages":
            if not isinstance(value, list):
                errors.append(metadata.FieldError("/packages", "must be an array of strings"))
                continue
            for index, item in enumerate(value):
                if not isinstance(item, str):
                    errors.append(metadata.FieldError(pointer("packages", index), "must be a string"))
                elif not PACKAGE.fullmatch(item):
                    errors.append(
                        metadata.FieldError(
                            pointer("packages", index), "must be a Debian package name"
                        )
                    )
        else:
            errors.append(metadata.FieldError(pointer(key), "unknown field"))
    return errors


def invalid_input(message: str) -> Err:
    return Err(types.ProviderError(types.ErrorCode.INVALID_INPUT, message, False, None))


def parse_config(ctx: types.CallContext) -> dict:
    """The call's config; a permanent error when it is not a JSON object."""
    try:
        config = json.loads(ctx.config)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        raise invalid_input("config: must be a JSON object")
    return config


def kebab(role: types.MachineRole) -> str:
    return role.name.lower().replace("_", "-")


class Metadata(exports.Metadata):
    def describe(self) -> metadata.ProviderMetadata:
        return metadata.ProviderMetadata(
            name=NAME,
            version=VERSION,
            description="Example bootstrap provider in Python: cloud-config from a typed config.",
            extension_points=[metadata.ExtensionPoint.BOOTSTRAP],
            config_schema=CONFIG_SCHEMA,
            capabilities=metadata.Capabilities(None, False, False),
            requested_grants=metadata.RequestedGrants([], []),
        )

    def validate_config(self, config: str) -> None:
        errors = config_problems(config)
        if errors:
            raise Err(errors)


class Bootstrap(exports.Bootstrap):
    def cluster_secrets(self, ctx: types.CallContext) -> bootstrap.SecretsState:
        parse_config(ctx)
        token = ("token:" + ctx.cluster.uid).encode()
        return bootstrap.SecretsState_Ready([bootstrap.SecretItem(TOKEN, token)])

    def generate(
        self, ctx: types.CallContext, request: bootstrap.BootstrapRequest
    ) -> bootstrap.BootstrapData:
        config = parse_config(ctx)
        if not any(s.name == TOKEN for s in request.secrets):
            raise invalid_input("request.secrets: no bootstrap-token")
        version = request.version
        endpoint = request.endpoint
        lines = [
            "#cloud-config",
            f"# role: {kebab(request.role)}",
            f"# version: v{version.major}.{version.minor}.{version.patch}",
            f"# endpoint: {endpoint.host}:{endpoint.port}",
            "# members: " + ",".join(m.name for m in request.control_plane_members),
            "timezone: " + config.get("timezone", "UTC"),
        ]
        packages = config.get("packages", [])
        if packages:
            lines.append("packages:")
            lines.extend(f"- {p}" for p in packages)
        else:
            lines.append("packages: []")
        data = ("\n".join(lines) + "\n").encode()
        return bootstrap.BootstrapData(bootstrap.BootstrapFormat.CLOUD_CONFIG, data)

    def kubeconfig(
        self, ctx: types.CallContext, endpoint: types.Endpoint, secrets: list
    ) -> str:
        parse_config(ctx)
        name = ctx.cluster.name
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        user = f"{name}-admin"
        context = f"{user}@{name}"
        return (
            "apiVersion: v1\n"
            "kind: Config\n"
            "clusters:\n"
            f"- name: {name}\n"
            "  cluster:\n"
            f"    server: https://{host}:{endpoint.port}\n"
            "users:\n"
            f"- name: {user}\n"
            "  user: {}\n"
            "contexts:\n"
            f"- name: {context}\n"
            "  context:\n"
            f"    cluster: {name}\n"
            f"    user: {user}\n"
            f"current-context: {context}\n"
        )
