"""The observed members, split the way every rule looks at them, and etcd's quorum."""

from __future__ import annotations

from dataclasses import dataclass

from capw import KubernetesVersion
from capw.control_plane import Member, PlanInput


@dataclass(frozen=True)
class Membership:
    """The members of one plan input: those that stay (live) and those already being
    deleted, in the input's order, with the desired version to tell up-to-date from out of
    date."""

    #: Members not being deleted: the etcd membership the plan reasons about.
    live: tuple[Member, ...]
    #: Members being deleted already.
    deleting: tuple[Member, ...]
    #: The desired version; a live member running another is out of date.
    target: KubernetesVersion

    @classmethod
    def of(cls, input: PlanInput) -> Membership:
        """Splits `input.members`."""
        return cls(
            live=tuple(m for m in input.members if not m.deleting),
            deleting=tuple(m for m in input.members if m.deleting),
            target=input.version,
        )

    @property
    def replicas(self) -> int:
        """Live members."""
        return len(self.live)

    @property
    def ready(self) -> int:
        """Live members whose node is ready."""
        return sum(1 for m in self.live if m.ready)

    @property
    def up_to_date(self) -> int:
        """Live members that run the desired version."""
        return sum(1 for m in self.live if self.is_up_to_date(m))

    def is_up_to_date(self, member: Member) -> bool:
        """Whether `member` runs the desired version, patch included, and the host found
        nothing else that shaped it out of date (`out_of_date` empty: a changed
        machine-shaping input rolls the machine as a version does)."""
        return is_up_to_date(member, self.target)

    def out_of_date(self) -> tuple[Member, ...]:
        """Live members that are not up to date, in input order."""
        return tuple(m for m in self.live if not self.is_up_to_date(m))

    def unhealthy(self) -> tuple[Member, ...]:
        """Live members the host asks to replace as unhealthy, in input order."""
        return tuple(m for m in self.live if m.unhealthy)

    def unready(self) -> tuple[Member, ...]:
        """Live members whose node is not ready, in input order."""
        return tuple(m for m in self.live if not m.ready)


def quorum(members: int) -> int:
    """The majority of `members` etcd members: 1 for 1, 2 for 2 and 3, 3 for 4 and 5."""
    return members // 2 + 1


def is_up_to_date(member: Member, target: KubernetesVersion) -> bool:
    """Whether `member` runs `target`, patch included, with no machine-shaping input the host
    lists as changed."""
    return member.version == target and not member.out_of_date
