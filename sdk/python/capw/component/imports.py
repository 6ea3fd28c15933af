"""The SDK's host over the component's imports: `host-log`, `host-secrets` and wasi:http."""

from __future__ import annotations

from collections.abc import Sequence

from componentize_py_types import Err
from wit_world.imports import host_log, host_secrets

from .. import host
from .wasi_http import WasiHttp


class ComponentHost(WasiHttp):
    """`capw.host.Host` served by the capw host through the component's imports."""

    def log(self, level: str, message: str, fields: Sequence[tuple[str, str]]) -> None:
        host_log.log(host_log.Level[level.upper()], message, list(fields))

    def secret(self, name: str) -> bytes:
        try:
            return host_secrets.get(name)
        except Err as e:
            if isinstance(e.value, host_secrets.SecretError_NotFound):
                raise host.SecretNotFound(name) from None
            raise host.SecretNotGranted(name) from None


def install() -> None:
    """Makes the component's imports the host every `capw.log`, `capw.secrets` and
    `capw.http` call uses."""
    host.current = ComponentHost()
