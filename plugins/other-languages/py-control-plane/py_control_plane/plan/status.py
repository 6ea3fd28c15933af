"""The conditions a plan reports: Available, Upgrading, ScalingUp and ScalingDown, always all
four, `True` or `False`, so a condition that stops applying turns `False` rather than
lingering. The host shows them prefixed (`controlplane.capw.dev/Available`)."""

from __future__ import annotations

from capw import Condition, ConditionStatus

from .membership import Membership, quorum

AVAILABLE = "Available"
UPGRADING = "Upgrading"
SCALING_UP = "ScalingUp"
SCALING_DOWN = "ScalingDown"

TRUE, FALSE = ConditionStatus.TRUE, ConditionStatus.FALSE


def conditions(members: Membership, desired: int, initialized: bool) -> tuple[Condition, ...]:
    """The four conditions for `members` moving toward `desired` replicas.

    `Available` is True when at least one live member is ready and the ready ones are a
    quorum of the live ones; `ScalingDown` is False for a rollout's one surge machine, which is
    `Upgrading`, not a scale-down.
    """
    return (
        _available(members, initialized),
        _upgrading(members),
        _scaling_up(members, desired),
        _scaling_down(members, desired),
    )


def _available(members: Membership, initialized: bool) -> Condition:
    live, ready = members.replicas, members.ready
    needed = quorum(live)
    detail = f"{ready} of {live} members ready; etcd's quorum is {needed}"
    if ready >= 1 and ready >= needed:
        return Condition(AVAILABLE, TRUE, "QuorumReady", detail)
    if not initialized:
        return Condition(
            AVAILABLE,
            FALSE,
            "WaitingForInitialization",
            "no control-plane machine has been ready yet",
        )
    return Condition(AVAILABLE, FALSE, "QuorumNotReady", detail)


def _upgrading(members: Membership) -> Condition:
    live, up_to_date, target = members.replicas, members.up_to_date, members.target
    if up_to_date < live:
        changed = _changed_inputs(members)
        if not changed or changed == ["version"]:
            message = f"{up_to_date} of {live} machines run {target}; replacing one at a time"
        else:
            message = (
                f"{up_to_date} of {live} machines are up to date with {target} and what shapes "
                f"them; changed: {', '.join(changed)}; replacing one at a time"
            )
        return Condition(UPGRADING, TRUE, "RollingOut", message)
    return Condition(UPGRADING, FALSE, "UpToDate", f"every machine runs {target}")


def _changed_inputs(members: Membership) -> list[str]:
    """What makes the live members out of date, each input once, sorted: `version` for a
    member on another version, and the inputs the host listed."""
    changed = set()
    for m in members.out_of_date():
        if m.version != members.target:
            changed.add("version")
        changed.update(m.out_of_date)
    return sorted(changed)


def _scaling_up(members: Membership, desired: int) -> Condition:
    live = members.replicas
    if live < desired:
        return Condition(
            SCALING_UP, TRUE, "ScalingUp", f"{live} of {desired} machines; adding one at a time"
        )
    return Condition(SCALING_UP, FALSE, "NotScalingUp", "")


def _scaling_down(members: Membership, desired: int) -> Condition:
    live = members.replicas
    surge_only = members.up_to_date < live and live <= desired + 1
    if live > desired and not surge_only:
        return Condition(
            SCALING_DOWN,
            TRUE,
            "ScalingDown",
            f"{live} machines, {desired} desired; removing one at a time",
        )
    return Condition(SCALING_DOWN, FALSE, "NotScalingDown", "")
