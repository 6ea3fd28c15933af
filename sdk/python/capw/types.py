"""Types shared by every extension point (the contract's `types` interface).

Records are frozen dataclasses, enums are `Enum`s named as in the contract, and a failed call
is a `ProviderError`, raised: the SDK turns it into the contract's `provider-error`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from datetime import timedelta

#: Hints above this are sent as this: the contract carries milliseconds in a u32.
MAX_MILLIS = 2**32 - 1


def millis(after: timedelta | float | int) -> int:
    """`after` (a timedelta, or seconds) in whole milliseconds, saturated to the contract's u32."""
    seconds = after.total_seconds() if isinstance(after, timedelta) else float(after)
    return max(0, min(MAX_MILLIS, int(seconds * 1000)))


@dataclass(frozen=True)
class ClusterRef:
    """Identity of the cluster a call concerns."""

    namespace: str
    name: str
    #: Changes when a cluster of the same name is recreated.
    uid: str


@dataclass(frozen=True)
class MachineRef:
    """Identity of a machine inside its cluster."""

    name: str
    uid: str


@dataclass(frozen=True, order=True)
class KubernetesVersion:
    """A Kubernetes release; orders as versions do, and prints as `v1.35.2`."""

    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"v{self.major}.{self.minor}.{self.patch}"

    @classmethod
    def parse(cls, text: str) -> KubernetesVersion:
        """`v1.35.2` or `1.35.2`.

        Raises `ValueError` for anything else.
        """
        parts = text.removeprefix("v").split(".")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"not a Kubernetes version: {text!r}")
        return cls(*(int(p) for p in parts))


class MachineRole(enum.Enum):
    """What a machine is for."""

    INIT = "init"
    JOIN_CONTROL_PLANE = "join-control-plane"
    WORKER = "worker"


class AddressKind(enum.Enum):
    """The kind of a machine address, as in Kubernetes `NodeAddress`."""

    HOSTNAME = "hostname"
    INTERNAL_IP = "internal-ip"
    EXTERNAL_IP = "external-ip"
    INTERNAL_DNS = "internal-dns"
    EXTERNAL_DNS = "external-dns"


@dataclass(frozen=True)
class Address:
    """One address of a machine."""

    kind: AddressKind
    address: str


@dataclass(frozen=True)
class Endpoint:
    """Where the cluster's API server is reached."""

    host: str
    port: int


class ConditionStatus(enum.Enum):
    """Status of a condition, as in Kubernetes `metav1.Condition`."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Condition:
    """A condition the host copies onto the object the call concerns, its type prefixed with
    the extension point. `type` and `reason` are CamelCase; `message` never holds secrets."""

    type: str
    status: ConditionStatus
    reason: str
    message: str = ""


@dataclass(frozen=True)
class InProgress:
    """The answer of a call whose work has started but not finished: the host calls again
    after `requeue_after_ms` (or sooner when something changes). Never block to wait instead.

    `InProgress("InstanceBooting", "...").requeue_after(10)` waits ten seconds.
    """

    #: CamelCase, e.g. `InstanceBooting`.
    reason: str
    message: str
    #: When to call again; the default is the host's own requeue interval of a few seconds.
    requeue_after_ms: int = 5_000
    conditions: tuple[Condition, ...] = ()

    def requeue_after(self, after: timedelta | float | int) -> InProgress:
        """The same, calling again after `after` (a timedelta, or seconds)."""
        return replace(self, requeue_after_ms=millis(after))

    def with_condition(self, condition: Condition) -> InProgress:
        """The same, showing `condition` while the work goes on."""
        return replace(self, conditions=(*self.conditions, condition))


class ErrorCode(enum.Enum):
    """Why a call failed."""

    #: The config or request is invalid; retrying the same input fails again.
    INVALID_INPUT = "invalid-input"
    #: The provider lacks a capability it needs (a secret or host not granted).
    NOT_GRANTED = "not-granted"
    #: The backend refused our credentials.
    UNAUTHORIZED = "unauthorized"
    #: The backend is out of capacity or quota.
    QUOTA_EXCEEDED = "quota-exceeded"
    #: The backend is unreachable, overloaded or rate-limiting.
    UNAVAILABLE = "unavailable"
    #: The resource is in a state that forbids the operation now.
    CONFLICT = "conflict"
    #: The provider does not implement this function or this case of it.
    UNSUPPORTED = "unsupported"
    #: Anything else.
    INTERNAL = "internal"


class ProviderError(Exception):
    """A failed call, raised from an extension-point method. The host turns it into a
    condition on the object and, when `retryable`, calls again after `retry_after_ms` (or its
    own backoff when that is None).

    Build one with the constructor that says its intent: `ProviderError.retryable`,
    `ProviderError.permanent` or `ProviderError.unsupported`. Any other exception escaping a
    method is answered as a retryable `internal` error naming its type and message.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        retryable: bool,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.retry_after_ms = retry_after_ms

    # On an instance `retryable` is the flag `__init__` sets, which shadows this constructor.
    @classmethod
    def retryable(cls, code: ErrorCode, message: str) -> ProviderError:  # type: ignore[no-redef]
        """A failure the same call may overcome later (a backend unavailable, a conflict)."""
        return cls(code, message, retryable=True)

    @classmethod
    def permanent(cls, code: ErrorCode, message: str) -> ProviderError:
        """A failure the same call meets again: only a change of input helps."""
        return cls(code, message, retryable=False)

    @classmethod
    def unsupported(cls, what: str) -> ProviderError:
        """The answer of a function, or a case of one, this provider does not implement."""
        return cls(
            ErrorCode.UNSUPPORTED, f"{what} is not supported by this provider", retryable=False
        )

    def retry_after(self, after: timedelta | float | int) -> ProviderError:
        """This error, retryable, with the hint to retry after `after` (a timedelta, or
        seconds), e.g. from an HTTP `Retry-After`."""
        self.retryable = True
        self.retry_after_ms = millis(after)
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProviderError):
            return NotImplemented
        return (self.code, self.message, self.retryable, self.retry_after_ms) == (
            other.code,
            other.message,
            other.retryable,
            other.retry_after_ms,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        hint = "" if self.retry_after_ms is None else f", retry_after_ms={self.retry_after_ms}"
        return (
            f"ProviderError({self.code.value}, {self.message!r}, retryable={self.retryable}{hint})"
        )


@dataclass(frozen=True)
class Deleted:
    """The answer of a delete: nothing is left, also when there was nothing to delete."""


@dataclass(frozen=True)
class DeletionInProgress:
    """The answer of a delete that started and has not finished: the host calls again."""

    progress: InProgress


Deletion = Deleted | DeletionInProgress
"""The answer of `delete-cluster`, `delete-machine` and `delete-control-plane`."""


@dataclass(frozen=True)
class JoinToken:
    """A bootstrap token (Kubernetes' Secret type `bootstrap.kubernetes.io/token`): the
    credential a joining machine's data carries and the workload cluster must still accept.
    A bootstrap provider names the one its join data carries (`Bootstrap.current_join_token`)
    and makes fresh ones (`Bootstrap.renew_join_token`); a control plane a service runs hands
    out the one its workers join with (`capw.control_plane.ControlPlaneAccess`). Since 0.3.

    Its `secret` is secret: it is left out of the dataclass's repr, and must never be logged.
    """

    #: The item of the cluster's secrets that holds it (as `<id>.<secret>`, `token`), which
    #: `generate` reads. The host replaces that item when it renews the token.
    item: str
    #: `[a-z0-9]{6}`: public; the workload cluster keeps the token as Secret
    #: `kube-system/bootstrap-token-<id>`.
    id: str
    #: `[a-z0-9]{16}`. Secret: never log it.
    secret: str = field(repr=False)
    #: How long the workload cluster accepts it from when it is written there, in seconds;
    #: 0: it never expires.
    ttl_seconds: int = 0
    #: Groups it authenticates as besides `system:bootstrappers`, e.g. the group the
    #: cluster's RBAC lets post node CSRs.
    extra_groups: tuple[str, ...] = ()

    @property
    def token(self) -> str:
        """`<id>.<secret>`: the token as a join presents it and as its item holds it. Secret:
        never log it."""
        return f"{self.id}.{self.secret}"
