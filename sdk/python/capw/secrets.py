"""Secrets the operator granted to this provider in its WasmProvider, by grant name.

`capw.secrets.get("api-token")` answers the value, or raises `SecretError`, itself a
`ProviderError`: raised on out of an extension-point method it answers the call with
`not-granted` (permanent: the operator must grant it) or `unavailable` (retryable: the Secret
may appear). Ask for the secrets you read in `Provider.requested_grants`.
"""

from __future__ import annotations

from . import host as _host
from .types import ErrorCode, ProviderError


class SecretError(ProviderError):
    """A secret the host did not give. `granted` tells the two cases apart."""

    def __init__(self, name: str, granted: bool) -> None:
        if granted:
            super().__init__(
                ErrorCode.UNAVAILABLE,
                f"secret `{name}` is granted but its Secret does not exist (yet)",
                retryable=True,
            )
        else:
            super().__init__(
                ErrorCode.NOT_GRANTED,
                f"secret `{name}` is not granted to this provider; grant it in the WasmProvider",
                retryable=False,
            )
        self.name = name
        self.granted = granted


def get(name: str) -> bytes:
    """The value of the granted secret `name`.

    Raises `SecretError` when it is not granted or its Secret does not exist.
    """
    try:
        return _host.current.secret(name)
    except _host.SecretNotGranted:
        raise SecretError(name, granted=False) from None
    except _host.SecretNotFound:
        raise SecretError(name, granted=True) from None
