"""Which version changes kubeadm can make: one minor version up at a time, never down."""

from __future__ import annotations

from collections.abc import Sequence

from capw import ErrorCode, KubernetesVersion, ProviderError
from capw.control_plane import Member


class VersionError(ProviderError):
    """A version change kubeadm cannot make, naming the machine whose version forbids it.
    Bad input: a permanent `invalid-input` error."""

    def __init__(
        self, machine: str, from_: KubernetesVersion, to: KubernetesVersion, message: str
    ) -> None:
        super().__init__(ErrorCode.INVALID_INPUT, message, retryable=False)
        self.machine = machine
        self.from_ = from_
        self.to = to


class Downgrade(VersionError):
    """The desired version is older than a member's: etcd's data and the API server's stored
    objects only move forward."""

    def __init__(self, machine: str, from_: KubernetesVersion, to: KubernetesVersion) -> None:
        super().__init__(
            machine,
            from_,
            to,
            f"machine `{machine}` runs {from_}; downgrading the control plane to {to} is not "
            "supported",
        )


class SkipsMinor(VersionError):
    """The desired version is more than one minor above a member's: the version skew policy
    allows one minor version per upgrade."""

    def __init__(self, machine: str, from_: KubernetesVersion, to: KubernetesVersion) -> None:
        super().__init__(
            machine,
            from_,
            to,
            f"machine `{machine}` runs {from_}; upgrading it to {to} would skip minor version "
            f"{from_.major}.{from_.minor + 1}: upgrade one minor version at a time",
        )


class MajorChange(VersionError):
    """The desired version has another major version than a member's."""

    def __init__(self, machine: str, from_: KubernetesVersion, to: KubernetesVersion) -> None:
        super().__init__(
            machine,
            from_,
            to,
            f"machine `{machine}` runs {from_}; changing the major version to {to} is not "
            "supported",
        )


def check_change(members: Sequence[Member], target: KubernetesVersion) -> None:
    """Checks that every member can move to `target`: stay, move up patch versions, or move
    up one minor version to any patch of it. Pass the live members: one being deleted never
    runs again.

    Raises the first `VersionError` found, members oldest first (then by name), so the answer
    does not depend on the input's order.
    """
    for member in sorted(members, key=lambda m: (m.created_at, m.machine.name)):
        _check_one(member, target)


def _check_one(member: Member, to: KubernetesVersion) -> None:
    from_ = member.version
    name = member.machine.name
    if from_.major != to.major:
        raise MajorChange(name, from_, to)
    if (to.minor, to.patch) < (from_.minor, from_.patch):
        raise Downgrade(name, from_, to)
    if to.minor > from_.minor + 1:
        raise SkipsMinor(name, from_, to)
