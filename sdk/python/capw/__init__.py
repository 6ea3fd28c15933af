"""Write capw providers in Python.

A capw provider is a WebAssembly component the capw host calls through the
`capw:provider@0.2.0` contract. This package turns the contract into ordinary Python: a
`Provider` base class for who the provider is, one base class per extension point
(`Infrastructure`, `Bootstrap`, `ControlPlane`, `LifecycleHooks`) whose methods all answer
`unsupported` until overridden, a typed config dataclass parsed (and checked against the
provider's JSON Schema) into every call's `Context`, and `capw.component.export`, which
exports the provider from the module componentize-py builds.

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
CONTRACT = "capw:provider@0.2.0"
