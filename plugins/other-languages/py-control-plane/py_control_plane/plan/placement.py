"""Where a new machine goes and which machine goes first: the failure-domain rules. New
machines fill the emptiest domain, removals thin the fullest, so members stay spread evenly
through scale-ups, scale-downs and rollouts alike."""

from __future__ import annotations

from collections.abc import Sequence

from capw import KubernetesVersion
from capw.control_plane import Member

from .membership import is_up_to_date


def domain_for_new_machine(
    domains: Sequence[str], live: Sequence[Member], target: KubernetesVersion
) -> str | None:
    """The domain holding the fewest live members; among equals, the one holding the fewest
    up-to-date members (so a rollout's replacement lands where no replacement is yet); among
    equals still, the first in `domains`. None exactly when `domains` is empty. Members in no
    listed domain count for none."""

    def load(domain: str) -> tuple[int, int]:
        members = [m for m in live if m.failure_domain == domain]
        return len(members), sum(1 for m in members if is_up_to_date(m, target))

    # `min` keeps the first of equal keys: the order tie-break.
    return min(domains, key=load, default=None)


def machine_to_remove(candidates: Sequence[Member], live: Sequence[Member]) -> Member | None:
    """A candidate in the most populated failure domain, counting every live member (members
    without a domain count as one more domain); among equals, the oldest (`created_at`), then
    the first by name, then by uid, so the answer never depends on the input's order. None
    exactly when `candidates` is empty."""

    def order(member: Member) -> tuple[int, int, str, str]:
        population = sum(1 for m in live if m.failure_domain == member.failure_domain)
        return -population, member.created_at, member.machine.name, member.machine.uid

    return min(candidates, key=order, default=None)
