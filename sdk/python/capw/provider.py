"""Who a provider is: the base class every provider subclasses, with the points it serves.

A provider is a class that subclasses `Provider` and the base class of each extension point
it implements (`capw.Infrastructure`, `capw.Bootstrap`, `capw.ControlPlane`,
`capw.LifecycleHooks`). A point whose base class it does not subclass is not declared in
`describe` and answers `unsupported`; a method of a subclassed point that the provider does
not override answers `unsupported` too.

Providers are stateless: the host calls each function in a fresh instance, so nothing kept on
the instance or in the module between calls survives.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Generic, TypeVar

from . import config as _config
from .metadata import ExtensionPoint, FieldError, RequestedGrants

C = TypeVar("C")


class Provider(Generic[C]):
    """Who a provider is and what config it takes.

    Class attributes a provider sets:

    - `NAME`: short, lowercase, e.g. `sim-infra`.
    - `VERSION`: the provider's semantic version.
    - `DESCRIPTION`: one line for humans.
    - `CONFIG`: the config dataclass every call's config is parsed into (fields in
      snake_case, JSON names in camelCase unless a field's metadata names it: see
      `capw.config`). `None` for a provider without config, which accepts `{}` only.
    - `CONFIG_SCHEMA`: the JSON Schema (draft 2020-12) of the config, as a dict. It must use
      only the keywords `capw.schema` checks, and agree with `CONFIG`:
      `capw.testing.assert_schema_matches` checks both.

    Methods a provider may override: `requested_grants` and `validate`.
    """

    NAME: ClassVar[str]
    VERSION: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    CONFIG: ClassVar[type | None] = None
    CONFIG_SCHEMA: ClassVar[dict[str, Any] | None] = None

    def requested_grants(self) -> RequestedGrants:
        """What the provider asks the operator to grant; the default asks for nothing."""
        return RequestedGrants()

    def validate(self, config: C) -> Iterable[FieldError]:
        """The rules of a parsed config that its schema cannot say (a value's format, a
        combination of fields), each problem at its field's JSON Pointer, every problem rather
        than the first. Pure and deterministic. The default finds none."""
        return ()

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        """The schema `describe` publishes: `CONFIG_SCHEMA`, or for a provider without
        config one that accepts only `{}`."""
        if cls.CONFIG_SCHEMA is not None:
            return cls.CONFIG_SCHEMA
        return _config.EMPTY_SCHEMA


def implemented_points(cls: type) -> tuple[ExtensionPoint, ...]:
    """The extension points `cls` serves, in contract order: those whose base class it
    subclasses."""
    # Imported here: each point's module imports this one for `Provider`.
    from .bootstrap import Bootstrap
    from .control_plane import ControlPlane
    from .infrastructure import Infrastructure
    from .lifecycle_hooks import LifecycleHooks

    bases = (
        (Infrastructure, ExtensionPoint.INFRASTRUCTURE),
        (Bootstrap, ExtensionPoint.BOOTSTRAP),
        (ControlPlane, ExtensionPoint.CONTROL_PLANE),
        (LifecycleHooks, ExtensionPoint.LIFECYCLE_HOOKS),
    )
    return tuple(point for base, point in bases if issubclass(cls, base))
