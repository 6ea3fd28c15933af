"""What contract 0.3 tells the planner, walked through the simulated host: members etcd
lists, machine-shaping changes, unhealthy members and `failures_tolerated`, as
kubeadm-control-plane's own walks do."""

from __future__ import annotations

import unittest

from py_control_plane.plan.status import UPGRADING as UPGRADING_CONDITION

from capw import testing
from capw.control_plane import CreateMachine, DeleteMachine, RemoveEtcdMember, Wait

from .sim import SHAPE_INPUT, Sim


def wait_reason(step) -> str:
    assert isinstance(step, Wait), step
    return step.progress.reason


class EtcdTest(unittest.TestCase):
    def test_with_etcd_observed_every_member_leaves_etcd_before_its_machine(self):
        # The simulated host refuses a DeleteMachine for a member etcd lists.
        sim = Sim.new(5, 34, etcd=True)
        sim.converge()
        sim.replicas = 3
        down = sim.converge()
        self.assertEqual(len(down), 2)
        self.assertTrue(all(isinstance(s, RemoveEtcdMember) for s in down), down)
        sim.version = testing.version(35)
        rollout = sim.converge()
        self.assertEqual(sum(1 for s in rollout if isinstance(s, CreateMachine)), 3)
        self.assertEqual(sum(1 for s in rollout if isinstance(s, RemoveEtcdMember)), 3)
        self.assertFalse(any(isinstance(s, DeleteMachine) for s in rollout))
        self.assertEqual(len(sim.members), 3)

    def test_without_etcd_observed_machines_are_deleted_as_before(self):
        sim = Sim.new(3, 34)
        sim.converge()
        sim.replicas = 1
        down = sim.converge()
        self.assertEqual(len(down), 2)
        self.assertTrue(all(isinstance(s, DeleteMachine) for s in down), down)


class ShapingTest(unittest.TestCase):
    def test_a_changed_machine_shaping_input_rolls_like_a_version(self):
        sim = Sim.new(3, 35, etcd=True)
        sim.converge()
        start = len(sim.snapshots)
        old = [m.machine.name for m in sim.members]
        sim.shape = 1
        upgrading = sim.plan()
        condition = next(c for c in upgrading.status.conditions if c.type == UPGRADING_CONDITION)
        self.assertIn(f"changed: {SHAPE_INPUT}", condition.message)
        self.assertEqual(upgrading.up_to_date_replicas, 0)
        steps = sim.converge()
        # Surge, then the old member out of etcd, three times over; the version never moved.
        self.assertEqual(len(steps), 6)
        for create, remove in zip(steps[0::2], steps[1::2], strict=True):
            self.assertIsInstance(create, CreateMachine)
            self.assertEqual(create.machine.version, testing.version(35))
            self.assertIsInstance(remove, RemoveEtcdMember)
            self.assertIn(remove.machine.name, old)
        self.assertTrue(all(s.ready >= 3 for s in sim.snapshots[start:]))
        self.assertEqual(sim.spread(), [1, 1, 1])


class HealthTest(unittest.TestCase):
    def test_an_unhealthy_member_leaves_etcd_and_is_replaced(self):
        sim = Sim.new(3, 35, etcd=True)
        sim.converge()
        sick = sim.members[1].machine.name
        sim.fall_ill(sick)
        steps = sim.converge()
        # Out first (etcd lists it), then its replacement, in the domain it left.
        self.assertEqual(len(steps), 2)
        self.assertEqual(steps[0], RemoveEtcdMember(testing.machine(sick)))
        self.assertIsInstance(steps[1], CreateMachine)
        self.assertFalse(steps[1].machine.init)
        self.assertEqual(sim.spread(), [1, 1, 1])
        self.assertNotIn(sick, [m.machine.name for m in sim.members])

    def test_two_unhealthy_members_of_three_wait_for_quorum(self):
        sim = Sim.new(3, 35, etcd=True)
        sim.converge()
        a, b = sim.members[0].machine.name, sim.members[1].machine.name
        sim.fall_ill(a)
        sim.fall_ill(b)
        step = sim.plan().step
        self.assertEqual(wait_reason(step), "RemediationBlocked")
        self.assertIn("fewer than etcd's quorum of 2", step.progress.message)
        # One recovers: the other is replaced.
        del sim.sick[a]
        sim.set_ready(a)
        steps = sim.converge()
        self.assertEqual(steps[0], RemoveEtcdMember(testing.machine(b)))
        self.assertEqual(len(sim.members), 3)

    def test_the_only_member_is_never_removed_as_unhealthy(self):
        sim = Sim.new(1, 35, etcd=True)
        sim.converge()
        sim.fall_ill(sim.members[0].machine.name)
        self.assertEqual(wait_reason(sim.plan().step), "RemediationNotPossible")

    def test_an_unhealthy_member_waits_while_another_joins(self):
        sim = Sim.new(3, 35, etcd=True)
        sim.converge()
        sim.replicas = 5
        joining = sim.plan().step
        self.assertIsInstance(joining, CreateMachine)
        sim.create(joining.machine)
        sim.fall_ill(sim.members[0].machine.name)
        self.assertEqual(wait_reason(sim.plan().step), "RemediationWaiting")


class FailuresToleratedTest(unittest.TestCase):
    def test_one_then_two_grows_to_three_then_five_members(self):
        sim = Sim.new(0, 35)
        sim.failures_tolerated = 1
        steps = sim.converge()
        self.assertEqual(sum(1 for s in steps if isinstance(s, CreateMachine)), 3)
        self.assertEqual(sim.plan().status.failures_tolerated, 1)
        sim.failures_tolerated = 2
        sim.converge()
        self.assertEqual(len(sim.members), 5)
        self.assertEqual(sim.plan().status.failures_tolerated, 2)
        # What it tolerates follows what is ready: of five with two not ready, etcd's quorum
        # of three leaves none to lose.
        for m in sim.members[:2]:
            sim._update(m.machine.name, ready=False)
        self.assertEqual(sim.plan().status.failures_tolerated, 0)

    def test_nothing_ready_tolerates_nothing_known(self):
        sim = Sim.new(3, 35)
        self.assertIsNone(sim.plan().status.failures_tolerated)


if __name__ == "__main__":
    unittest.main()
