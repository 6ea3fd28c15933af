"""The transport of `capw.http`: one request through `wasi:http/outgoing-handler`, blocking
on its pollables."""

from __future__ import annotations

from collections.abc import Sequence

from componentize_py_types import Err, Ok
from wit_world.imports import outgoing_handler, streams
from wit_world.imports import wasi_http_types as wh

from ..http import HTTPError, Request, Response, Target

#: `blocking-write-and-flush` takes at most this many bytes per call (wasi:io 0.2).
WRITE_CHUNK = 4096
#: Bytes asked for per read of the response body.
READ_CHUNK = 64 * 1024

METHODS = {
    "GET": wh.Method_Get,
    "HEAD": wh.Method_Head,
    "POST": wh.Method_Post,
    "PUT": wh.Method_Put,
    "PATCH": wh.Method_Patch,
    "DELETE": wh.Method_Delete,
}

#: wasi:http error codes by the kind of `HTTPError` they are.
DENIED = (wh.ErrorCode_HttpRequestDenied,)
CONNECT = (
    wh.ErrorCode_DnsError,
    wh.ErrorCode_DnsTimeout,
    wh.ErrorCode_DestinationNotFound,
    wh.ErrorCode_DestinationUnavailable,
    wh.ErrorCode_DestinationIpProhibited,
    wh.ErrorCode_DestinationIpUnroutable,
    wh.ErrorCode_ConnectionRefused,
    wh.ErrorCode_ConnectionTerminated,
    wh.ErrorCode_ConnectionLimitReached,
)
TIMEOUT = (
    wh.ErrorCode_ConnectionTimeout,
    wh.ErrorCode_ConnectionReadTimeout,
    wh.ErrorCode_ConnectionWriteTimeout,
    wh.ErrorCode_HttpResponseTimeout,
)


def error_from(code: object, target: Target, url: str) -> HTTPError:
    """The `HTTPError` a wasi:http error code means."""
    name = type(code).__name__.removeprefix("ErrorCode_")
    if isinstance(code, DENIED):
        return HTTPError(
            "denied",
            f"request to `{target.authority}` denied: the host is not granted to this provider",
        )
    if isinstance(code, CONNECT):
        return HTTPError("connect", f"cannot connect to `{target.authority}`: {name}")
    if isinstance(code, TIMEOUT):
        return HTTPError("timeout", f"request to `{target.authority}` timed out: {name}")
    if isinstance(
        code, (wh.ErrorCode_HttpRequestUriInvalid, wh.ErrorCode_HttpRequestMethodInvalid)
    ):
        return HTTPError("invalid", f"invalid request `{url}`: {name}")
    return HTTPError("other", f"http request to `{url}` failed: {name}")


class WasiHttp:
    """`capw.host.Host.http` over wasi:http."""

    def http(
        self, request: Request, target: Target, headers: Sequence[tuple[str, bytes]]
    ) -> Response:
        url = f"{'https' if target.https else 'http'}://{target.authority}{target.path_with_query}"
        try:
            fields = wh.Fields.from_list(list(headers))
        except Err:
            raise HTTPError(
                "invalid", f"invalid or forbidden header `{_first_bad_header(headers)}`"
            ) from None
        outgoing = wh.OutgoingRequest(fields)
        try:
            outgoing.set_method(METHODS[request.method]())
            outgoing.set_scheme(wh.Scheme_Https() if target.https else wh.Scheme_Http())
            outgoing.set_authority(target.authority)
            outgoing.set_path_with_query(target.path_with_query)
        except Err:
            raise HTTPError("invalid", f"invalid url `{url}`: the host refused it") from None
        # The body resource is taken before the request is handed over and written after:
        # its stream has a bounded buffer that drains only once the request is on its way.
        body = outgoing.body() if request.body else None
        try:
            future = outgoing_handler.handle(outgoing, _options(request.timeout_ms))
        except Err as e:
            raise error_from(e.value, target, url) from None
        if body is not None:
            _write(body, request.body)
            try:
                wh.OutgoingBody.finish(body, None)
            except Err as e:
                raise error_from(e.value, target, url) from None
        with future:
            with future.subscribe() as ready:
                ready.block()
            answer = future.get()
        if not isinstance(answer, Ok):
            raise HTTPError("other", f"http request to `{url}` failed: no response")
        if isinstance(answer.value, Err):
            raise error_from(answer.value.value, target, url)
        incoming = answer.value.value if isinstance(answer.value, Ok) else answer.value
        with incoming:
            status = incoming.status()
            with incoming.headers() as fields:
                received = tuple((name, bytes(value)) for name, value in fields.entries())
            data = _read(incoming.consume(), target, url)
        return Response(status, received, data)


def _write(body: wh.OutgoingBody, data: bytes) -> None:
    # The stream is a child of the body: it must be gone before the body is finished.
    with body.write() as stream:
        for start in range(0, len(data), WRITE_CHUNK):
            try:
                stream.blocking_write_and_flush(data[start : start + WRITE_CHUNK])
            except Err as e:
                raise HTTPError(
                    "other", f"writing the request body: {type(e.value).__name__}"
                ) from None


def _read(body: wh.IncomingBody, target: Target, url: str) -> bytes:
    chunks = []
    with body:
        with body.stream() as stream:
            while True:
                try:
                    chunks.append(bytes(stream.blocking_read(READ_CHUNK)))
                except Err as e:
                    if isinstance(e.value, streams.StreamError_Closed):
                        break
                    code = wh.http_error_code(e.value.value)
                    if code is not None:
                        raise error_from(code, target, url) from None
                    raise HTTPError(
                        "other", f"reading the response body of `{url}` failed"
                    ) from None
    return b"".join(chunks)


def _options(timeout_ms: int | None) -> wh.RequestOptions | None:
    if timeout_ms is None:
        return None
    options = wh.RequestOptions()
    nanos = timeout_ms * 1_000_000
    for set_timeout in (
        options.set_connect_timeout,
        options.set_first_byte_timeout,
        options.set_between_bytes_timeout,
    ):
        try:
            set_timeout(nanos)
        except Err:
            # A host that cannot set a timeout refuses it; the call's deadline still bounds
            # the request, so the refusal is not an error.
            pass
    return options


def _first_bad_header(headers: Sequence[tuple[str, bytes]]) -> str:
    # `from-list` does not say which header it refused: ask one at a time.
    for name, value in headers:
        try:
            with wh.Fields.from_list([(name, value)]):
                pass
        except Err:
            return name
    return ""
