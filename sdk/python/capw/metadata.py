"""What every provider answers: who it is (`describe`) and what it finds wrong with a config.

The SDK answers both from the provider's `Provider` subclass; `describe` and
`validate_config` are public so that a provider's tests can look at what the host will see.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .provider import Provider


class ExtensionPoint(enum.Enum):
    """An extension point of the host a provider can implement, in contract order."""

    INFRASTRUCTURE = "infrastructure"
    BOOTSTRAP = "bootstrap"
    CONTROL_PLANE = "control-plane"
    LIFECYCLE_HOOKS = "lifecycle-hooks"


class ControlPlaneShape(enum.Enum):
    """How a control-plane provider runs the control plane."""

    #: On machines of the cluster itself, created by the infrastructure provider (kubeadm-like).
    MACHINES = "machines"
    #: As workloads in the management cluster; the provider returns manifests the host applies.
    HOSTED = "hosted"
    #: As a managed service behind a cloud API the provider calls.
    MANAGED = "managed"


@dataclass(frozen=True)
class Capabilities:
    """What the provider can do; the host refuses a topology it cannot serve before any call."""

    control_plane_shape: ControlPlaneShape | None = None
    control_plane_scalable: bool = False
    version_upgrades: bool = False
    #: Takes a change of more than one minor version in one step of the spec (chained
    #: upgrades); the host admits a skipped minor only from a provider that says so (0.3).
    chains_upgrades: bool = False


@dataclass(frozen=True)
class RequestedGrants:
    """What the provider asks the operator to grant. The host enforces the operator's grants
    in the WasmProvider, never this list."""

    #: Outbound HTTP authorities (`host` or `host:port`).
    http_hosts: tuple[str, ...] = ()
    #: Names of secrets read through `capw.secrets.get`.
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProviderMetadata:
    """Self-description of a provider: the answer of `metadata.describe`."""

    name: str
    version: str
    description: str
    extension_points: tuple[ExtensionPoint, ...]
    #: JSON Schema (draft 2020-12) of the provider's config, as a JSON document.
    config_schema: str
    capabilities: Capabilities
    requested_grants: RequestedGrants


def pointer(*segments: str | int) -> str:
    """A JSON Pointer from unescaped segments: `pointer("zones", 2)` is `/zones/2`."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


@dataclass(frozen=True)
class FieldError:
    """A problem with one field of a config, at its JSON Pointer (`/network/cidr`; `""` for
    the document). `pointer` builds one."""

    path: str
    message: str


def describe(provider: Provider) -> ProviderMetadata:
    """What `metadata.describe` answers for `provider`.

    Guarantees:

    - `extension_points` lists, in contract order, the points whose base class the provider
      subclasses; the others answer `unsupported`.
    - `capabilities` come from the provider's `ControlPlane` attributes when it serves that
      point and are all off otherwise: a shape is declared exactly when `control-plane` is.
    - `config_schema` is the provider's `CONFIG_SCHEMA`, as compact JSON.
    """
    from .provider import implemented_points

    points = implemented_points(type(provider))
    if ExtensionPoint.CONTROL_PLANE in points:
        capabilities = Capabilities(
            control_plane_shape=provider.SHAPE,  # type: ignore[attr-defined]
            control_plane_scalable=provider.SCALABLE,  # type: ignore[attr-defined]
            version_upgrades=provider.VERSION_UPGRADES,  # type: ignore[attr-defined]
            chains_upgrades=provider.CHAINS_UPGRADES,  # type: ignore[attr-defined]
        )
    else:
        capabilities = Capabilities()
    return ProviderMetadata(
        name=provider.NAME,
        version=provider.VERSION,
        description=provider.DESCRIPTION,
        extension_points=points,
        config_schema=json.dumps(provider.config_schema(), separators=(",", ":")),
        capabilities=capabilities,
        requested_grants=provider.requested_grants(),
    )


def validate_config(provider: Provider, text: str) -> list[FieldError]:
    """What `metadata.validate-config` answers for `provider`: every problem the config
    schema finds, each at its JSON Pointer; when there is none, every problem the provider's
    `validate` finds in the parsed config. An empty list accepts the config."""
    from . import config as _config  # config imports this module for FieldError

    try:
        parsed = _config.parse(provider.CONFIG, provider.config_schema(), text)
    except _config.ConfigError as e:
        return list(e.errors)
    except _config.SchemaError as e:
        return [FieldError("", f"the provider's config schema cannot be checked: {e}")]
    return list(provider.validate(parsed))
