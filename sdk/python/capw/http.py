"""A small blocking HTTP client over the host's `wasi:http/outgoing-handler` (0.2).

The host lets a provider reach only the authorities granted to it in its WasmProvider; any
other request fails with `HTTPError` of kind `denied`. A call must not wait for slow work to
finish: when a backend says "later", answer in progress or a retryable error
(`Response.throttled`) and let the host call again.

    response = (
        http.Request("POST", "https://api.cloud.test/v1/instances")
        .header("content-type", "application/json")
        .json({"name": "m1"})
        .timeout(ctx.remaining)
        .send()
    )
    if (later := response.throttled()) is not None:
        raise later          # the backend's Retry-After, handed to the host
    instance = response.error_for_status().json()

`HTTPError` is a `ProviderError`: raised on out of an extension-point method it answers the
call as the contract says (`not-granted`, `unavailable`, `invalid-input`, `internal`).
Outside a component, `capw.testing.FakeHost(http=...)` answers requests; with no fake host
every request fails with kind `other`.
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from . import host as _host
from .types import ErrorCode, ProviderError

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")

#: Why a request got no response, and how each answers a provider call.
KINDS = {
    # The authority is not granted: permanent until the operator changes the grants.
    "denied": (ErrorCode.NOT_GRANTED, False),
    # No connection: DNS failure, refused, reset, unreachable. Usually transient.
    "connect": (ErrorCode.UNAVAILABLE, True),
    # Connecting, the first byte or a later byte took longer than allowed.
    "timeout": (ErrorCode.UNAVAILABLE, True),
    # Not an absolute http:// or https:// URL, or a header the host refused.
    "invalid": (ErrorCode.INVALID_INPUT, False),
    # Anything else of the transport (TLS, protocol, an incomplete response).
    "other": (ErrorCode.INTERNAL, True),
}


class HTTPError(ProviderError):
    """A request that got no response. `kind` is one of `KINDS`; the error's code and
    retryability follow from it."""

    def __init__(self, kind: str, message: str) -> None:
        code, retryable = KINDS[kind]
        super().__init__(code, message, retryable=retryable)
        self.kind = kind


@dataclass(frozen=True)
class Target:
    """Where a request goes, split as wasi:http wants it."""

    https: bool
    authority: str
    path_with_query: str

    @classmethod
    def parse(cls, url: str) -> Target:
        """Splits an absolute `http://` or `https://` URL; raises `HTTPError` (invalid)."""
        scheme, sep, rest = url.partition("://")
        if not sep:
            raise HTTPError("invalid", f"invalid url `{url}`: not an absolute URL")
        if scheme.lower() not in ("http", "https"):
            raise HTTPError("invalid", f"invalid url `{url}`: scheme must be http or https")
        rest = rest.split("#", 1)[0]
        cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        authority, path = rest[:cut], rest[cut:]
        if not authority or "@" in authority:
            raise HTTPError("invalid", f"invalid url `{url}`: no host, or user info")
        if not path.startswith("/"):
            path = "/" + path
        return cls(scheme.lower() == "https", authority, path)


@dataclass
class Request:
    """A request being built; `send` sends it and blocks until the whole response is read."""

    method: str
    url: str
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    body: bytes = b""
    #: Bounds connecting, the first response byte and the time between bytes, each; None
    #: leaves the host's defaults and the call's deadline. `ctx.remaining` is a good bound.
    timeout_ms: int | None = None

    def __post_init__(self) -> None:
        self.method = self.method.upper()
        if self.method not in METHODS:
            raise HTTPError(
                "invalid", f"method must be one of {', '.join(METHODS)}, not {self.method}"
            )

    def header(self, name: str, value: str | bytes) -> Request:
        """Adds a header; a name given twice sends both values."""
        self.headers.append((name, value.encode() if isinstance(value, str) else value))
        return self

    def data(self, body: str | bytes) -> Request:
        """Sets the body; it is sent with a content-length unless a header sets one."""
        self.body = body.encode() if isinstance(body, str) else body
        return self

    def json(self, value: Any) -> Request:
        """Sets a JSON body and its content-type."""
        self.header("content-type", "application/json")
        return self.data(_json.dumps(value, separators=(",", ":")))

    def timeout(self, after: timedelta | float) -> Request:
        """Sets `timeout_ms` from a timedelta or seconds."""
        seconds = after.total_seconds() if isinstance(after, timedelta) else float(after)
        self.timeout_ms = max(0, int(seconds * 1000))
        return self

    def target(self) -> Target:
        """The URL split; raises `HTTPError` (invalid)."""
        return Target.parse(self.url)

    def send(self) -> Response:
        """Sends the request through the host and reads the whole response.

        Raises `HTTPError` when no response came.
        """
        target = self.target()
        headers = list(self.headers)
        if self.body and not any(n.lower() == "content-length" for n, _ in headers):
            # Without a length the host streams the body chunked, which some APIs refuse.
            headers.append(("content-length", str(len(self.body)).encode()))
        return _host.current.http(self, target, headers)


@dataclass(frozen=True)
class Response:
    """A whole response."""

    status: int
    #: Header names (lowercase, as wasi:http gives them) and raw values, in received order.
    headers: tuple[tuple[str, bytes], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> bytes | None:
        """The first value of header `name`, compared case-insensitively."""
        return next((v for n, v in self.headers if n.lower() == name.lower()), None)

    @property
    def ok(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body as UTF-8; raises `UnicodeDecodeError`."""
        return self.body.decode()

    def json(self) -> Any:
        """The body as JSON; raises `ValueError`."""
        return _json.loads(self.body)

    def retry_after(self) -> timedelta | None:
        """`Retry-After` in its delta-seconds form; None for the date form, or none at all."""
        value = self.header("retry-after")
        try:
            return timedelta(seconds=int(value.decode().strip())) if value is not None else None
        except ValueError:
            return None

    def throttled(self) -> ProviderError | None:
        """For 429 and 503, the retryable `unavailable` error to answer the call with,
        carrying `Retry-After`; None for every other status."""
        if self.status not in (429, 503):
            return None
        error = ProviderError.retryable(
            ErrorCode.UNAVAILABLE, f"backend answered HTTP {self.status}"
        )
        after = self.retry_after()
        return error if after is None else error.retry_after(after)

    def error_for_status(self) -> Response:
        """This response when it is 2xx; otherwise raises the error its status means for a
        provider call: 429 and 503 as `throttled`, 401 and 403 `unauthorized`, 409 a
        retryable `conflict`, other 4xx `invalid-input`, the rest a retryable `unavailable`."""
        if self.ok:
            return self
        throttled = self.throttled()
        if throttled is not None:
            raise throttled
        message = f"backend answered HTTP {self.status}"
        if self.status in (401, 403):
            raise ProviderError.permanent(ErrorCode.UNAUTHORIZED, message)
        if self.status == 409:
            raise ProviderError.retryable(ErrorCode.CONFLICT, message)
        if 400 <= self.status < 500:
            raise ProviderError.permanent(ErrorCode.INVALID_INPUT, message)
        raise ProviderError.retryable(ErrorCode.UNAVAILABLE, message)
