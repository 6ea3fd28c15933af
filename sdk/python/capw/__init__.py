"""Write capw providers in Python.

A capw provider is a WebAssembly component the capw host calls through the
`capw:provider@0.3.0` contract. This package turns the contract into ordinary Python: a
`Provider` base class for who the provider is, one base class per extension point
(`Infrastructure`, `Bootstrap`, `ControlPlane`, `LifecycleHooks`) whose methods answer
`unsupported` until overridden (`Bootstrap.current_join_token` aside, which answers that the
provider keeps no join token), a typed config dataclass parsed (and checked against the
provider's JSON Schema) into every call's `Context`, and `capw.component.export`, which
exports the provider from the module componentize-py builds.

Contract 0.3 adds, and this package says as: a control-plane member's place in etcd, what
makes it out of date and why it is unhealthy (`capw.control_plane.Member`, with
`capw.control_plane.removal` for the step that takes one out), `failures_tolerated`, the
`CHAINS_UPGRADES` capability, a managed control plane's `reconcile_control_plane` and
`delete_control_plane`, a hosted one's applied objects, minted certificates and shared
datastore, join tokens (`JoinToken`, `Bootstrap.current_join_token` and `renew_join_token`, a
worker's `capw.bootstrap.JoinCredentials`) and an infrastructure without an endpoint. Every
new field has a default, so a provider written with the 0.2 SDK builds unchanged.

Where to start: `Provider` (`capw.provider`), the base class of the point you serve, the
types of its module (`capw.control_plane`, ...), then `capw.testing` for unit tests run with
plain `python3 -m unittest`. README.md has a complete example.
"""

from . import http, log, secrets
from .bootstrap import Bootstrap
from .config import ConfigError
from .context import Context
from .control_plane import ControlPlane
from .infrastructure import Infrastructure
from .lifecycle_hooks import LifecycleHooks
from .metadata import (
    Capabilities,
    ControlPlaneShape,
    ExtensionPoint,
    FieldError,
    RequestedGrants,
    pointer,
)
from .provider import Provider
from .types import (
    Address,
    AddressKind,
    ClusterRef,
    Condition,
    ConditionStatus,
    Deleted,
    Deletion,
    DeletionInProgress,
    Endpoint,
    ErrorCode,
    InProgress,
    JoinToken,
    KubernetesVersion,
    MachineRef,
    MachineRole,
    ProviderError,
)

__all__ = [
    "Address",
    "AddressKind",
    "Bootstrap",
    "Capabilities",
    "ClusterRef",
    "Condition",
    "ConditionStatus",
    "ConfigError",
    "Context",
    "ControlPlane",
    "ControlPlaneShape",
    "Deleted",
    "Deletion",
    "DeletionInProgress",
    "Endpoint",
    "ErrorCode",
    "ExtensionPoint",
    "FieldError",
    "InProgress",
    "Infrastructure",
    "JoinToken",
    "KubernetesVersion",
    "LifecycleHooks",
    "MachineRef",
    "MachineRole",
    "Provider",
    "ProviderError",
    "RequestedGrants",
    "http",
    "log",
    "pointer",
    "secrets",
]

#: The contract this SDK builds components of.
CONTRACT = "capw:provider@0.3.0"
