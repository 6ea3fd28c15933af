"""Whole scale-ups, scale-downs and rollouts, walked step by step through the simulated host,
which checks every step for safety; these tests check the path and the end."""

from __future__ import annotations

import unittest

from py_control_plane.plan import DeleteFirstTooFewReplicas

from capw import testing
from capw.control_plane import CreateMachine, DeleteMachine, RemoveEtcdMember

from .sim import Sim


def creates(steps) -> int:
    return sum(1 for s in steps if isinstance(s, CreateMachine))


def deletes(steps) -> int:
    return sum(1 for s in steps if isinstance(s, (DeleteMachine, RemoveEtcdMember)))


def peak(snapshots) -> int:
    return max((s.machines for s in snapshots), default=0)


class WalksTest(unittest.TestCase):
    def assert_converged(self, sim: Sim, replicas: int) -> None:
        self.assertEqual(len(sim.members), replicas)
        self.assertTrue(
            all(m.ready and not m.deleting and m.version == sim.version for m in sim.members)
        )

    def test_scales_1_3_5_3_1_one_machine_at_a_time(self):
        sim = Sim.new(1, 35)
        seen = 0
        for replicas, want_creates, want_deletes in [
            (1, 1, 0),
            (3, 2, 0),
            (5, 2, 0),
            (3, 0, 2),
            (1, 0, 2),
        ]:
            sim.replicas = replicas
            steps = sim.converge()
            self.assertEqual(
                (creates(steps), deletes(steps)), (want_creates, want_deletes), f"to {replicas}"
            )
            self.assert_converged(sim, replicas)
            phase = sim.snapshots[seen:]
            seen = len(sim.snapshots)
            before = max(phase[0].machines, phase[0].live) if phase else 0
            self.assertLessEqual(peak(phase), max(before, replicas))
            for s in phase:
                self.assertLessEqual(s.machines - s.ready, 1)
                self.assertGreaterEqual(s.live, 1)
        inits = [s for s in sim.steps if isinstance(s, CreateMachine) and s.machine.init]
        self.assertEqual(len(inits), 1)
        self.assertIs(sim.steps[0], inits[0])

    def test_an_upgrade_of_three_with_surge_rolls_one_at_a_time(self):
        sim = Sim.new(3, 34)
        sim.converge()
        start = len(sim.snapshots)
        old = [m.machine.name for m in sim.members]
        sim.version = testing.version(35)
        steps = sim.converge()
        self.assertEqual(len(steps), 6)
        for create, delete in zip(steps[0::2], steps[1::2], strict=True):
            self.assertIsInstance(create, CreateMachine)
            self.assertFalse(create.machine.init)
            self.assertIsInstance(delete, DeleteMachine)
            self.assertIn(delete.machine.name, old)
        self.assertEqual(steps[1].machine.name, old[0])
        during = sim.snapshots[start:]
        self.assertLessEqual(peak(during), 4)
        self.assertTrue(all(s.ready >= 3 and s.machines - s.ready <= 1 for s in during))
        self.assert_converged(sim, 3)
        self.assertEqual(sim.spread(), [1, 1, 1])

    def test_an_upgrade_of_one_with_surge_keeps_a_member(self):
        sim = Sim.new(1, 34)
        sim.converge()
        start = len(sim.snapshots)
        sim.version = testing.version(35)
        steps = sim.converge()
        self.assertEqual((creates(steps), deletes(steps)), (1, 1))
        self.assertIsInstance(steps[0], CreateMachine)
        self.assertLessEqual(peak(sim.snapshots[start:]), 2)
        self.assertTrue(all(s.ready >= 1 for s in sim.snapshots[start:]))

    def test_an_upgrade_of_three_deleting_first_never_exceeds_three(self):
        sim = Sim.new(3, 34, max_surge=0)
        sim.converge()
        start = len(sim.snapshots)
        sim.version = testing.version(35)
        steps = sim.converge()
        self.assertEqual(len(steps), 6)
        for delete, create in zip(steps[0::2], steps[1::2], strict=True):
            self.assertIsInstance(delete, DeleteMachine)
            self.assertIsInstance(create, CreateMachine)
        during = sim.snapshots[start:]
        self.assertLessEqual(peak(during), 3)
        self.assertTrue(all(s.ready >= 2 for s in during))
        self.assert_converged(sim, 3)
        self.assertEqual(sim.spread(), [1, 1, 1])

    def test_five_spread_over_three_domains_two_two_one(self):
        sim = Sim.new(5, 35)
        steps = sim.converge()
        self.assertEqual([s.machine.failure_domain for s in steps], ["a", "b", "c", "a", "b"])
        self.assertEqual(sim.spread(), [2, 2, 1])

    def test_a_scale_down_during_an_upgrade_removes_old_machines_first(self):
        sim = Sim.new(5, 34)
        sim.converge()
        sim.version = testing.version(35)
        sim.replicas = 3
        steps = sim.converge()
        self.assertIsInstance(steps[0], DeleteMachine)
        self.assertIsInstance(steps[1], DeleteMachine)
        self.assertEqual((creates(steps), deletes(steps)), (3, 5))
        self.assert_converged(sim, 3)
        self.assertEqual(sim.spread(), [1, 1, 1])

    def test_every_walk_converges_safely_and_evenly(self):
        for start in (1, 3, 5, 7):
            for end in (1, 3, 5, 7):
                for upgrade in (False, True):
                    for surge in (1, 0):
                        for domains in ((), ("a", "b"), ("a", "b", "c")):
                            for etcd in (False, True):
                                with self.subTest(
                                    start=start,
                                    end=end,
                                    upgrade=upgrade,
                                    surge=surge,
                                    domains=domains,
                                    etcd=etcd,
                                ):
                                    self._walk(start, end, upgrade, surge, domains, etcd)

    def _walk(
        self,
        start: int,
        end: int,
        upgrade: bool,
        surge: int,
        domains: tuple[str, ...],
        etcd: bool,
    ) -> None:
        sim = Sim.new(start, 34, domains, max_surge=surge, etcd=etcd)
        sim.converge()
        sim.replicas = end
        if upgrade:
            sim.version = testing.version(35)
        if upgrade and surge == 0 and end < 3:
            with self.assertRaises(DeleteFirstTooFewReplicas):
                sim.try_plan()
            return
        first = len(sim.snapshots)
        sim.converge()
        self.assert_converged(sim, end)
        self.assertLessEqual(peak(sim.snapshots[first:]), max(start, end) + surge)
        spread = sim.spread()
        if spread:
            self.assertLessEqual(max(spread) - min(spread), 1, spread)


if __name__ == "__main__":
    unittest.main()
