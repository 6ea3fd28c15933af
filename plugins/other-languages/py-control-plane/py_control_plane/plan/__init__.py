"""The planner: observed members and the desired state in, the single next safe step out.

Pure and deterministic: `plan` reads nothing but its arguments, so the host may call it as
often as it likes, and the tests walk whole scale-ups, scale-downs and rollouts through it.
It follows plugins/kubeadm-control-plane's planner rule for rule:

1. Refuse (a permanent `invalid-input` error) what cannot be reached safely: an even desired
   replica count, a version change that skips a minor version, downgrades or changes the
   major version (`version`), a rollout with `maxSurge: 0` below 3 replicas, and a
   `failures_tolerated` that needs more than `MAX_MEMBERS` members. A Cluster that asks
   `failures_tolerated` N instead of a replica count gets 2N+1 members: stacked etcd keeps
   serving with N of 2N+1 failed.
2. A member is being deleted: wait. Nothing else changes until etcd has let it go, so at most
   one membership change is ever under way and at most `replicas + 1` machines exist.
3. No members: create the init machine.
4. A live member is unhealthy (the host's health checks, `Member.unhealthy`): remove it when
   that is safe, else wait saying why. Safe means: another member exists, every other member
   is healthy and ready (one change at a time), and those others are a quorum of the
   membership without it. Rule 6 then creates its replacement. Of several, the one
   `placement` would remove first goes first.
5. A live member is not ready: wait. Joins and removals go one at a time, each only from a
   fully ready membership, so a removal never takes etcd below the quorum of its membership.
6. Fewer live members than desired: create one (a join).
7. More than desired: remove one, out-of-date machines first, by `placement`'s rule.
8. As many as desired, some out of date: with `maxSurge: 1` create one more (the surge; rule
   7 removes an out-of-date machine once it is ready); with `maxSurge: 0` remove an
   out-of-date machine (rule 6 replaces it).
9. Nothing to do.

A member is out of date when it runs another version or the host lists a changed
machine-shaping input for it (`Member.out_of_date`). A member leaves through
`RemoveEtcdMember` when the host says etcd lists it (`Member.etcd`): the host takes it out of
etcd, from another member, before it deletes the machine; otherwise, etcd not observed or the
machine never joined, through `DeleteMachine` (`capw.control_plane.removal` picks).

Every create needs the endpoint (kubeadm writes it into each machine's bootstrap config):
without one the plan waits. New machines run the desired version and go to the failure
domain `placement.domain_for_new_machine` picks.
"""

from __future__ import annotations

from datetime import timedelta

from capw import ErrorCode, InProgress, ProviderError
from capw.control_plane import (
    ControlPlaneStatus,
    CreateMachine,
    MachineToCreate,
    Member,
    Nothing,
    Plan,
    PlanInput,
    Step,
    Wait,
    oldest_version,
    removal,
)

from ..config import DELETE_FIRST_MIN_REPLICAS, KubeadmControlPlaneConfig, Rollout
from . import placement, status, version
from .membership import Membership, quorum
from .version import VersionError

#: How soon to plan again while a machine boots and joins.
MACHINE_READY_POLL = timedelta(seconds=10)
#: How soon to plan again while a machine is being deleted.
DELETION_POLL = timedelta(seconds=5)
#: How soon to plan again while the infrastructure has no endpoint yet.
ENDPOINT_POLL = timedelta(seconds=10)
#: The most members a `failures_tolerated` ask may come to: etcd's own advice is at most 7
#: members, since every write waits for a majority and more members only slow it down.
MAX_MEMBERS = 7
#: Where a Cluster asks for `failures_tolerated`, as refusals name it.
FAILURES_TOLERATED_FIELD = "spec.topology.controlPlane.failuresTolerated"


class PlanError(ProviderError):
    """A desired state no sequence of safe steps reaches: bad input, so a permanent
    `invalid-input` error; the host reports it and waits for the Cluster to change."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_INPUT, message, retryable=False)


class EvenReplicas(PlanError):
    """The desired count is even: 4 members survive one failure, as 3 do."""

    def __init__(self, replicas: int) -> None:
        super().__init__(
            f"replicas must be odd so that etcd keeps a majority; {replicas} tolerates no more "
            f"failures than {replicas - 1}: use {replicas - 1} or {replicas + 1}"
        )
        self.replicas = replicas


class NoReplicas(PlanError):
    """The input's count is 0 (unset) and the config gives no default."""

    def __init__(self) -> None:
        super().__init__(
            "replicas is 0 and the provider config sets no `replicas`: a control plane needs at "
            "least one machine"
        )


class TooManyFailuresTolerated(PlanError):
    """`failures_tolerated` N needs 2N+1 members, more than `MAX_MEMBERS`."""

    def __init__(self, failures_tolerated: int) -> None:
        super().__init__(
            f"{FAILURES_TOLERATED_FIELD} {failures_tolerated} needs {2 * failures_tolerated + 1} "
            f"stacked etcd members; kubeadm-control-plane runs at most {MAX_MEMBERS}, which "
            f"tolerate {(MAX_MEMBERS - 1) // 2}"
        )
        self.failures_tolerated = failures_tolerated


class ReplicasBelowFailuresTolerated(PlanError):
    """Both a replica count and `failures_tolerated` were given, and the count tolerates fewer
    failures (the contract never gives both; a host that did is refused plainly)."""

    def __init__(self, replicas: int, failures_tolerated: int) -> None:
        super().__init__(
            f"replicas {replicas} tolerate {max(replicas - 1, 0) // 2} failed members, fewer "
            f"than {FAILURES_TOLERATED_FIELD} {failures_tolerated}"
        )
        self.replicas = replicas
        self.failures_tolerated = failures_tolerated


class DeleteFirstTooFewReplicas(PlanError):
    """A `maxSurge: 0` rollout would delete a machine of a control plane too small to keep
    etcd's quorum without it."""

    def __init__(self, replicas: int) -> None:
        super().__init__(
            "maxSurge 0 deletes a machine before creating its replacement, which needs at least "
            f"{DELETE_FIRST_MIN_REPLICAS} replicas; replicas is {replicas}: use maxSurge 1"
        )
        self.replicas = replicas


def plan(config: KubeadmControlPlaneConfig, input: PlanInput) -> Plan:
    """The next safe step toward `input`, and the counts and conditions to show.

    Guarantees:

    - At most one machine is created or deleted per step, and only from a membership whose
      live members are all ready and none of which is being deleted (the init machine aside).
    - A create never brings the live members above `replicas + 1`, and above `replicas` only
      for a rollout's surge machine; a delete never leaves fewer than one live member.
    - `status.initialized` when any member (being deleted or not) is ready, `status.ready`
      when a live one is; the counts are of live members; `status.version` is the oldest live
      member's; `status.endpoint` the input's; `status.failures_tolerated` what
      `failures_tolerated` says of the members now.
    - No member etcd lists is answered `DeleteMachine`: it leaves through `RemoveEtcdMember`.

    Raises `PlanError` or `VersionError` (both `ProviderError`s, permanent `invalid-input`)
    for a desired state no safe sequence of steps reaches.
    """
    desired = desired_replicas(config, requested_replicas(input))
    members = Membership.of(input)
    version.check_change(members.live, input.version)
    rollout = config.rollout
    if (
        rollout is Rollout.DELETE_FIRST
        and desired < DELETE_FIRST_MIN_REPLICAS
        and members.up_to_date < members.replicas
    ):
        # Refused up front, not at the rollout's first delete: a scale-down to one machine
        # would otherwise make progress and then stop with an old machine left.
        raise DeleteFirstTooFewReplicas(desired)
    step = _next_step(rollout, desired, input, members)
    initialized = any(m.ready for m in input.members)
    return Plan(
        step=step,
        status=ControlPlaneStatus(
            initialized=initialized,
            ready=members.ready > 0,
            version=oldest_version(members.live),
            endpoint=input.endpoint,
            conditions=status.conditions(members, desired, initialized),
            failures_tolerated=failures_tolerated(members),
        ),
        replicas=members.replicas,
        ready_replicas=members.ready,
        up_to_date_replicas=members.up_to_date,
    )


def requested_replicas(input: PlanInput) -> int:
    """The replica count the input asks for: `replicas`, or for `failures_tolerated` N (with
    `replicas` 0) 2N+1; 0 when it asks neither.

    Raises `TooManyFailuresTolerated` when 2N+1 exceeds `MAX_MEMBERS`,
    `ReplicasBelowFailuresTolerated` when both are given and the count tolerates fewer than N.
    """
    asked = input.failures_tolerated
    if asked is None:
        return input.replicas
    if input.replicas != 0:
        if max(input.replicas - 1, 0) // 2 >= asked:
            return input.replicas
        raise ReplicasBelowFailuresTolerated(input.replicas, asked)
    if 2 * asked + 1 > MAX_MEMBERS:
        raise TooManyFailuresTolerated(asked)
    return 2 * asked + 1


def failures_tolerated(members: Membership) -> int | None:
    """How many members may fail with etcd still committing, as the members are now: the
    ready live members beyond the quorum of the live ones ((ready - 1) // 2 when every member
    is ready). None while no member is ready: nothing serves yet."""
    ready = members.ready
    return max(ready - quorum(members.replicas), 0) if ready > 0 else None


def desired_replicas(config: KubeadmControlPlaneConfig, requested: int) -> int:
    """The count to reach: the input's, or the config's when the input's is 0 (unset).

    Raises `NoReplicas` when neither gives one, `EvenReplicas` when the count is even.
    """
    replicas = requested if requested != 0 else config.replicas
    if replicas is None or replicas == 0:
        raise NoReplicas()
    if replicas % 2 == 0:
        # A validated config never has an even default; an input may.
        raise EvenReplicas(replicas)
    return replicas


def _next_step(rollout: Rollout, desired: int, input: PlanInput, members: Membership) -> Step:
    if members.deleting:
        return _wait_for_deletion(members.deleting[0], len(members.deleting))
    if not members.live:
        return _create(input, members, init=True)
    unhealthy = members.unhealthy()
    if unhealthy:
        return _remediate(unhealthy, members)
    unready = members.unready()
    if unready:
        return _wait_for_ready(unready[0], len(unready), members)
    live = members.replicas
    out_of_date = members.out_of_date()
    if live < desired:
        return _create(input, members, init=False)
    if live > desired:
        # Out-of-date machines go first: a scale-down during a rollout also advances it.
        return _delete(out_of_date or members.live, members)
    if not out_of_date:
        return Nothing()
    if rollout is Rollout.SURGE:
        return _create(input, members, init=False)
    return _delete(out_of_date, members)


def _create(input: PlanInput, members: Membership, init: bool) -> Step:
    """Create a machine at the desired version in the emptiest domain, once the endpoint is
    known."""
    if input.endpoint is None:
        return Wait(
            InProgress(
                "WaitingForEndpoint",
                "the infrastructure has not reported the control-plane endpoint yet; kubeadm "
                "writes it into every machine's bootstrap config",
            ).requeue_after(ENDPOINT_POLL)
        )
    domain = placement.domain_for_new_machine(input.failure_domains, members.live, input.version)
    return CreateMachine(MachineToCreate(init=init, version=input.version, failure_domain=domain))


def _delete(candidates: tuple[Member, ...], members: Membership) -> Step:
    """Remove the candidate `placement.machine_to_remove` picks: out of etcd first when etcd
    lists it. The callers' candidates are never empty; were they, the plan would do nothing
    rather than guess."""
    member = placement.machine_to_remove(candidates, members.live)
    return Nothing() if member is None else removal(member)


def _remediate(unhealthy: tuple[Member, ...], members: Membership) -> Step:
    """Replace an unhealthy member: remove the one `placement.machine_to_remove` picks among
    `unhealthy` when the rest of the membership can do without it, else wait saying why."""
    member = placement.machine_to_remove(unhealthy, members.live)
    if member is None:
        return Nothing()
    name, why = member.machine.name, "; ".join(member.unhealthy)
    others = [m for m in members.live if m.machine != member.machine]

    def blocked(reason: str, message: str) -> Step:
        return Wait(InProgress(reason, message).requeue_after(MACHINE_READY_POLL))

    if not others:
        return blocked(
            "RemediationNotPossible",
            f"`{name}` is unhealthy ({why}) and is the only member: removing it would lose "
            "etcd's data; add members (replicas 3) to make the control plane repairable",
        )
    other = next((m for m in others if m.unhealthy or not m.ready), None)
    if other is not None:
        healthy = sum(1 for m in others if not m.unhealthy and m.ready)
        needed = quorum(len(others))
        if healthy < needed:
            return blocked(
                "RemediationBlocked",
                f"`{name}` is unhealthy ({why}); removing it would leave {healthy} healthy of "
                f"{len(others)} members, fewer than etcd's quorum of {needed}: waiting for "
                f"`{other.machine.name}`",
            )
        return blocked(
            "RemediationWaiting",
            f"`{name}` is unhealthy ({why}); one change at a time: waiting for "
            f"`{other.machine.name}` first",
        )
    return _delete((member,), members)


def _wait_for_deletion(first: Member, deleting: int) -> Step:
    if deleting == 1:
        message = (
            f"machine `{first.machine.name}` is being deleted; the next change waits for etcd "
            "to let it go"
        )
    else:
        message = (
            f"{deleting} machines are being deleted, `{first.machine.name}` among them; the next "
            "change waits for etcd to let them go"
        )
    return Wait(InProgress("WaitingForDeletion", message).requeue_after(DELETION_POLL))


def _wait_for_ready(first: Member, unready: int, members: Membership) -> Step:
    others = " and others" if unready > 1 else ""
    message = (
        f"{members.ready} of {members.replicas} control-plane machines ready; waiting for "
        f"`{first.machine.name}`{others} before the next change"
    )
    return Wait(InProgress("WaitingForMachinesReady", message).requeue_after(MACHINE_READY_POLL))


__all__ = [
    "DeleteFirstTooFewReplicas",
    "EvenReplicas",
    "NoReplicas",
    "PlanError",
    "ReplicasBelowFailuresTolerated",
    "TooManyFailuresTolerated",
    "VersionError",
    "desired_replicas",
    "failures_tolerated",
    "plan",
    "requested_replicas",
]
