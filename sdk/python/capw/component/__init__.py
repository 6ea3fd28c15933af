"""Exports a provider from the module componentize-py builds into a component.

The provider's entry module (the one named to `componentize-py componentize`) holds one line:

    Metadata, Infrastructure, Bootstrap, ControlPlane, LifecycleHooks = export(MyProvider)

componentize-py finds the five exported interfaces of the world `provider` (the SDK's
`wit/world.wit`: the contract's `provider` world of capw:provider@0.3.0 and
`wasi:http/outgoing-handler`) as classes of those names in that module. This package is the
only code that imports the bindings componentize-py generates (`wit_world`), and it imports
them only when `export` runs, inside the build: a provider's own modules, and its unit tests,
never see them.
"""

from __future__ import annotations


def export(provider: type) -> tuple[type, type, type, type, type]:
    """The classes componentize-py exports for `provider` (a `capw.Provider` subclass), in
    the order Metadata, Infrastructure, Bootstrap, ControlPlane, LifecycleHooks. Also makes
    the component's imports the SDK's host (log, secrets, HTTP)."""
    from . import exports, imports

    imports.install()
    return exports.classes(provider)


__all__ = ["export"]
