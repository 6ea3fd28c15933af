"""The typed context every extension-point call receives.

The host lends each call its context (`borrow<call-context>`) and the provider asks for the
fields it reads. `Context` keeps that: the config is parsed on entry (every call needs it),
while the cluster and the idempotency key are asked of the host the first time they are read,
once per call, and the time left is asked for live.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Generic, Protocol, TypeVar

from .types import ClusterRef

C = TypeVar("C")


class CallSource(Protocol):
    """The fields of a call's context as the host serves them: the contract's `call-context`
    inside a component, a plain record in tests."""

    def cluster(self) -> ClusterRef: ...

    def config(self) -> str: ...

    def idempotency_key(self) -> str: ...

    def remaining_ms(self) -> int: ...


class GivenCall:
    """A call source whose fields are given up front, its deadline counted from creation:
    what `capw.testing` builds."""

    def __init__(
        self, cluster: ClusterRef, config: str, idempotency_key: str, deadline: timedelta
    ) -> None:
        self._cluster = cluster
        self._config = config
        self._key = idempotency_key
        self._ends = time.monotonic() + deadline.total_seconds()
        #: How often each field was asked for, by name: tests check that reads are lazy.
        self.reads: dict[str, int] = {}

    def _read(self, name: str) -> None:
        self.reads[name] = self.reads.get(name, 0) + 1

    def cluster(self) -> ClusterRef:
        self._read("cluster")
        return self._cluster

    def config(self) -> str:
        self._read("config")
        return self._config

    def idempotency_key(self) -> str:
        self._read("idempotency_key")
        return self._key

    def remaining_ms(self) -> int:
        self._read("remaining_ms")
        return max(0, int((self._ends - time.monotonic()) * 1000))


class Context(Generic[C]):
    """What a call knows about its caller's intent, with the config parsed into the
    provider's config dataclass.

    Guarantees:

    - `config` is the provider's config for this call, defaults applied; the host validated it
      with `validate-config` first.
    - `idempotency_key` is stable for one intent across retries and host restarts: two calls
      with the same key must never create two resources.
    """

    def __init__(self, config: C, source: CallSource) -> None:
        #: The provider's config for this call.
        self.config = config
        self._source = source
        self._cluster: ClusterRef | None = None
        self._key: str | None = None

    @property
    def cluster(self) -> ClusterRef:
        """The cluster the call concerns; asked of the host once, when first read."""
        if self._cluster is None:
            self._cluster = self._source.cluster()
        return self._cluster

    @property
    def idempotency_key(self) -> str:
        """Stable for one intent across retries, restarts and crashes; asked of the host once,
        when first read."""
        if self._key is None:
            self._key = self._source.idempotency_key()
        return self._key

    @property
    def remaining(self) -> timedelta:
        """Time left before the host cancels this call, asked of the host now; zero once it
        has passed. Bound outbound requests by it, so a slow backend yields an error the
        provider chose rather than a cancellation."""
        return timedelta(milliseconds=max(0, self._source.remaining_ms()))

    def __repr__(self) -> str:
        # The fields read so far: printing a context asks the host for nothing.
        return (
            f"Context(config={self.config!r}, cluster={self._cluster!r}, "
            f"idempotency_key={self._key!r})"
        )
