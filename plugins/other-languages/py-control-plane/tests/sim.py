"""A simulated host: applies each step the planner answers, checks that the step was safe,
then lets the machine become ready (or finish deleting) and plans again. The walks of
kubeadm-control-plane's own tests, on contract 0.2 (no etcd observed, no health checks)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from py_control_plane import KubeadmControlPlaneConfig
from py_control_plane.plan import plan

from capw import Endpoint, KubernetesVersion, MachineRef, testing
from capw.control_plane import (
    CreateMachine,
    DeleteMachine,
    MachineToCreate,
    Member,
    Nothing,
    Plan,
    PlanInput,
    Step,
    Wait,
)


@dataclass(frozen=True)
class Snapshot:
    """What the cluster looked like after one transition."""

    machines: int
    live: int
    ready: int


@dataclass
class Sim:
    """The simulated cluster and everything the walk saw."""

    replicas: int
    version: KubernetesVersion
    domains: tuple[str, ...]
    config: KubeadmControlPlaneConfig = field(default_factory=KubeadmControlPlaneConfig)
    members: list[Member] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    clock: int = 1_700_000_000
    created: int = 0

    @classmethod
    def new(
        cls,
        replicas: int,
        minor: int,
        domains: tuple[str, ...] = ("a", "b", "c"),
        max_surge: int = 1,
    ) -> Sim:
        return cls(
            replicas,
            testing.version(minor),
            domains,
            KubeadmControlPlaneConfig(max_surge=max_surge),
        )

    def input(self) -> PlanInput:
        return PlanInput(
            version=self.version,
            replicas=self.replicas,
            members=tuple(self.members),
            failure_domains=self.domains,
            endpoint=Endpoint("cp.c1.test", 6443),
        )

    def try_plan(self) -> Plan:
        return plan(self.config, self.input())

    def plan(self) -> Plan:
        """The plan, checked to be deterministic and independent of the members' order."""
        answer = self.try_plan()
        assert self.try_plan() == answer, "not deterministic"
        reversed_input = dataclasses.replace(self.input(), members=tuple(reversed(self.members)))
        if not isinstance(answer.step, Wait):
            assert plan(self.config, reversed_input).step == answer.step, (
                "depends on the members' order"
            )
        return answer

    def live(self) -> list[Member]:
        return [m for m in self.members if not m.deleting]

    def spread(self) -> list[int]:
        return [sum(1 for m in self.live() if m.failure_domain == d) for d in self.domains]

    def converge(self) -> list[Step]:
        """Applies steps until the plan answers none; every step checked for safety."""
        first = len(self.steps)
        for _ in range(100):
            answer = self.plan()
            self._check_counts(answer)
            step = answer.step
            if isinstance(step, Nothing):
                return self.steps[first:]
            if isinstance(step, CreateMachine):
                self._check_create(step.machine)
                name = self.create(step.machine)
                self.steps.append(step)
                self._expect_wait("a machine is joining")
                self._update(name, ready=True)
            elif isinstance(step, DeleteMachine):
                self._check_delete(step.machine)
                self._update(step.machine.name, deleting=True)
                self.steps.append(step)
                self._expect_wait("a machine is being deleted")
                self.members = [m for m in self.members if m.machine != step.machine]
                self._snapshot()
            else:
                raise AssertionError(f"stuck: {step}\n{self}")
        raise AssertionError(f"no convergence in 100 steps\n{self}")

    def create(self, machine: MachineToCreate) -> str:
        name = f"m{self.created}"
        self.created += 1
        self.clock += 10
        self.members.append(
            Member(
                testing.machine(name),
                machine.version,
                machine.failure_domain,
                ready=False,
                created_at=self.clock,
            )
        )
        self._snapshot()
        return name

    def _update(self, name: str, **changes: bool) -> None:
        self.members = [
            dataclasses.replace(m, **changes) if m.machine.name == name else m for m in self.members
        ]
        self._snapshot()

    def _snapshot(self) -> None:
        live = self.live()
        self.snapshots.append(
            Snapshot(len(self.members), len(live), sum(1 for m in live if m.ready))
        )

    def _expect_wait(self, why: str) -> None:
        answer = self.plan()
        assert isinstance(answer.step, Wait), f"{why}, yet the plan answered {answer.step}"

    def _desired(self) -> int:
        return self.replicas or (self.config.replicas or 0)

    def _out_of_date(self) -> int:
        return sum(1 for m in self.live() if m.version != self.version)

    def _check_counts(self, answer: Plan) -> None:
        live = self.live()
        assert answer.replicas == len(live)
        assert answer.ready_replicas == sum(1 for m in live if m.ready)
        assert answer.up_to_date_replicas == len(live) - self._out_of_date()
        assert answer.status.initialized == any(m.ready for m in self.members)
        assert answer.status.ready == any(m.ready for m in live)
        oldest: int | None = min((m.version.minor for m in live), default=None)
        assert (answer.status.version.minor if answer.status.version else None) == oldest

    def _check_create(self, machine: MachineToCreate) -> None:
        assert all(not m.deleting and m.ready for m in self.members), self
        assert machine.init == (not self.members), self
        assert machine.version == self.version
        if machine.failure_domain is None:
            assert not self.domains
        else:
            assert machine.failure_domain in self.domains
        live_after = len(self.live()) + 1
        if live_after > self._desired():
            assert live_after == self._desired() + 1, "more than one surge machine"
            assert self.config.max_surge == 1, "surge with maxSurge 0"
            assert self._out_of_date() > 0, "surge without a rollout"

    def _check_delete(self, machine: MachineRef) -> None:
        live = self.live()
        assert any(m.machine == machine for m in live), (
            f"deletes {machine}, which is not a live member"
        )
        assert all(not m.deleting and m.ready for m in self.members), self
        # From a whole, ready membership, never the last member: etcd keeps its quorum.
        assert len(live) >= 2, "deletes the last member"
