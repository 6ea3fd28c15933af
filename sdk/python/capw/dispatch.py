"""A call as the host makes it: the point checked, the config parsed into a `Context`, the
method run, and whatever it raises turned into a `ProviderError`.

The component glue calls `call` for every extension-point function; `capw.testing.call` does
the same natively, so a provider's tests see exactly the answers the host would.
"""

from __future__ import annotations

from typing import Any

from .config import ConfigError, SchemaError, parse
from .context import CallSource, Context
from .metadata import ExtensionPoint
from .provider import Provider, implemented_points
from .types import ErrorCode, ProviderError


def enter(provider: Provider, point: ExtensionPoint, function: str, source: CallSource) -> Context:
    """The context of a call to `function` of `point`.

    Raises `ProviderError`: `unsupported` when the provider does not serve `point` (before
    the config is read); permanent `invalid-input` when the config does not parse; permanent
    `internal` when the provider's schema uses a keyword `capw.schema` does not check.
    """
    if point not in implemented_points(type(provider)):
        raise ProviderError.unsupported(function)
    try:
        config = parse(provider.CONFIG, provider.config_schema(), source.config())
    except ConfigError as e:
        raise ProviderError.permanent(ErrorCode.INVALID_INPUT, str(e)) from e
    except SchemaError as e:
        # The provider's bug, not the config's: no config passes until the schema is fixed.
        raise ProviderError.permanent(
            ErrorCode.INTERNAL, f"the provider's config schema: {e}"
        ) from e
    return Context(config, source)


def call(
    provider: Provider, point: ExtensionPoint, function: str, source: CallSource, *args: Any
) -> Any:
    """`function` (e.g. `control-plane.plan`) of `provider` with `args`, as the host calls it.

    Raises `ProviderError` only: the provider's own, `unsupported` and `invalid-input` from
    `enter`, and any other exception as a retryable `internal` error naming it (a bug the host
    shows rather than a trap that tells nothing).
    """
    ctx = enter(provider, point, function, source)
    method = getattr(provider, function.split(".", 1)[1].replace("-", "_"))
    try:
        return method(ctx, *args)
    except ProviderError:
        raise
    except Exception as e:  # noqa: BLE001 - the contract's error, not a trap, for any bug
        raise ProviderError.retryable(
            ErrorCode.INTERNAL, f"{function}: {type(e).__name__}: {e}"
        ) from e
