"""The seam between the SDK's API and whatever serves it: the component's imports inside a
component, a fake host in unit tests (`capw.testing.FakeHost`), and outside both a native
stand-in whose logs go to stderr and which grants nothing (no secret, no HTTP).

Not a provider's API: providers call `capw.log` and `capw.secrets`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .http import Request, Response, Target


class SecretNotGranted(Exception):
    """The host's answer for a secret the operator did not grant."""


class SecretNotFound(Exception):
    """The host's answer for a granted secret whose Secret does not exist (yet)."""


class Host(Protocol):
    """What the SDK asks of the host besides the call context."""

    def log(self, level: str, message: str, fields: Sequence[tuple[str, str]]) -> None:
        """One log record; `level` is `trace`, `debug`, `info`, `warn` or `error`."""

    def secret(self, name: str) -> bytes:
        """The granted secret `name`; raises `SecretNotGranted` or `SecretNotFound`."""

    def http(
        self, request: Request, target: Target, headers: Sequence[tuple[str, bytes]]
    ) -> Response:
        """`request` sent to `target` with `headers` (content-length added); raises
        `capw.http.HTTPError` when no response came."""


class NativeHost:
    """No host: a provider's code run natively outside a test's fake host."""

    def log(self, level: str, message: str, fields: Sequence[tuple[str, str]]) -> None:
        detail = "".join(f" {k}={v}" for k, v in fields)
        print(f"{level.upper()} {message}{detail}", file=sys.stderr)

    def secret(self, name: str) -> bytes:
        raise SecretNotGranted(name)

    def http(
        self, request: Request, target: Target, headers: Sequence[tuple[str, bytes]]
    ) -> Response:
        from .http import HTTPError

        raise HTTPError(
            "other", "http request failed: no host outside a component; use capw.testing.FakeHost"
        )


#: The host the SDK talks to now. The component glue and `capw.testing.use_host` replace it.
current: Host = NativeHost()
