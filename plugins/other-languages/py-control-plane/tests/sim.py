"""A simulated host: applies each step the planner answers, checks that the step was safe,
then lets the machine become ready (or finish deleting) and plans again. The walks of
kubeadm-control-plane's own tests: a host that may observe etcd (a machine joins etcd as it
becomes ready and leaves it on `RemoveEtcdMember`), records what shaped each machine (a
generation of the machine-shaping inputs) and judges machines unhealthy."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from py_control_plane import KubeadmControlPlaneConfig
from py_control_plane.plan import plan
from py_control_plane.plan.membership import quorum

from capw import Endpoint, KubernetesVersion, MachineRef, testing
from capw.control_plane import (
    CreateMachine,
    DeleteMachine,
    EtcdMembership,
    MachineToCreate,
    Member,
    Nothing,
    Plan,
    PlanInput,
    RemoveEtcdMember,
    Step,
    Wait,
)

#: What the host lists for a machine made with an older generation of the shaping inputs.
SHAPE_INPUT = "infrastructure.config/instanceType"


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
    failures_tolerated: int | None = None
    members: list[Member] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    #: Whether the host observes etcd: members then say whether etcd lists them.
    etcd: bool = False
    #: The generation of the machine-shaping inputs new machines are made with.
    shape: int = 0
    #: The generation each machine was made with, by name; absent: generation 0.
    shapes: dict[str, int] = field(default_factory=dict)
    #: The machines the host's health checks judge unhealthy, with why, by name.
    sick: dict[str, str] = field(default_factory=dict)
    clock: int = 1_700_000_000
    created: int = 0

    @classmethod
    def new(
        cls,
        replicas: int,
        minor: int,
        domains: tuple[str, ...] = ("a", "b", "c"),
        max_surge: int = 1,
        etcd: bool = False,
    ) -> Sim:
        return cls(
            replicas,
            testing.version(minor),
            domains,
            KubeadmControlPlaneConfig(max_surge=max_surge),
            etcd=etcd,
        )

    def input(self) -> PlanInput:
        members = tuple(
            dataclasses.replace(
                m,
                out_of_date=self.changed(m),
                unhealthy=tuple(r for n, r in self.sick.items() if n == m.machine.name),
            )
            for m in self.members
        )
        return PlanInput(
            version=self.version,
            replicas=self.replicas,
            members=members,
            failure_domains=self.domains,
            endpoint=Endpoint("cp.c1.test", 6443),
            failures_tolerated=self.failures_tolerated,
        )

    def try_plan(self) -> Plan:
        return plan(self.config, self.input())

    def plan(self) -> Plan:
        """The plan, checked to be deterministic and independent of the members' order."""
        answer = self.try_plan()
        assert self.try_plan() == answer, "not deterministic"
        input = self.input()
        reversed_input = dataclasses.replace(input, members=tuple(reversed(input.members)))
        if not isinstance(answer.step, Wait):
            assert plan(self.config, reversed_input).step == answer.step, (
                "depends on the members' order"
            )
        testing.assert_etcd_members_kept(input, answer)
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
                self.set_ready(name)
            elif isinstance(step, DeleteMachine):
                self._check_delete(step.machine)
                listed = [m for m in self.live() if m.machine == step.machine and m.in_etcd]
                assert not listed, f"DeleteMachine for {step.machine}, which etcd lists"
                self._update(step.machine.name, deleting=True)
                self.steps.append(step)
                self._expect_wait("a machine is being deleted")
                self.remove(step.machine.name)
            elif isinstance(step, RemoveEtcdMember):
                self._check_delete(step.machine)
                listed = [m for m in self.live() if m.machine == step.machine and m.in_etcd]
                assert listed, f"RemoveEtcdMember for {step.machine}, which etcd does not list"
                # As the host does: the machine is marked deleted first, then leaves etcd.
                self._update(step.machine.name, deleting=True, etcd=self._not_member())
                self.steps.append(step)
                self._expect_wait("a member is leaving etcd")
                self.remove(step.machine.name)
            else:
                raise AssertionError(f"stuck: {step}\n{self}")
        raise AssertionError(f"no convergence in 100 steps\n{self}")

    def create(self, machine: MachineToCreate) -> str:
        """Adds a machine for `machine`, not ready yet; returns its name."""
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
                etcd=self._not_member(),
            )
        )
        self.shapes[name] = self.shape
        self._snapshot()
        return name

    def set_ready(self, name: str) -> None:
        """A machine ready: its kubeadm join has added it to etcd."""
        joined = EtcdMembership.MEMBER if self.etcd else EtcdMembership.UNKNOWN
        self._update(name, ready=True, etcd=joined)

    def remove(self, name: str) -> None:
        self.members = [m for m in self.members if m.machine.name != name]
        self.sick.pop(name, None)
        self._snapshot()

    def fall_ill(self, name: str) -> None:
        """The host judges `name` unhealthy (its Node NotReady): it is no longer ready."""
        self.sick[name] = f"Node {name}: Ready is Unknown for 400s"
        self._update(name, ready=False)

    def changed(self, m: Member) -> tuple[str, ...]:
        """What the host lists as out of date for `m`, as capw's engine does."""
        changed = []
        if m.version != self.version:
            changed.append("version")
        if self.shapes.get(m.machine.name, 0) != self.shape:
            changed.append(SHAPE_INPUT)
        return tuple(changed)

    def _not_member(self) -> EtcdMembership:
        """What the host says of a machine etcd does not list."""
        return EtcdMembership.NOT_MEMBER if self.etcd else EtcdMembership.UNKNOWN

    def _update(self, name: str, **changes: object) -> None:
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
        if self.replicas:
            return self.replicas
        if self.failures_tolerated is not None:
            return 2 * self.failures_tolerated + 1
        return self.config.replicas or 0

    def _out_of_date(self) -> int:
        return sum(1 for m in self.live() if self.changed(m))

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
        """A delete is safe: nothing else under way, a live member, never the last one, etcd
        keeps its quorum through the removal. An unhealthy member (which may be unready) goes
        before anything else, with every other member healthy and ready."""
        live = self.live()
        target = next((m for m in live if m.machine == machine), None)
        assert target is not None, f"deletes {machine}, which is not a live member"
        sick = machine.name in self.sick
        others = [m for m in self.members if m.machine != machine]
        assert all(
            not m.deleting and m.ready and m.machine.name not in self.sick for m in others
        ), self
        assert sick or target.ready, f"deletes an unready member: {self}"
        assert sick or not self.sick, f"deletes a healthy member while one is unhealthy: {self}"
        assert len(live) >= 2, "deletes the last member"
        others_ready = sum(1 for m in live if m.ready and m.machine != machine)
        assert others_ready >= quorum(len(live) - 1), "removal leaves etcd without quorum"
        if not sick and self._out_of_date() > 0:
            assert self.changed(target), "deletes an up-to-date machine first"
