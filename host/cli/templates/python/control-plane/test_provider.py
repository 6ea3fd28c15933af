"""Unit tests of the provider, natively: `make test`."""

import unittest

from capw import testing
from capw.control_plane import (
    CreateMachine,
    DeleteMachine,
    EtcdMembership,
    Member,
    PlanInput,
    RemoveEtcdMember,
    Wait,
)

from provider import StarterProvider


def member(name: str, ready: bool, created_at: int) -> Member:
    return testing.member(name, 35, ready=ready, created_at=created_at)


def plan_input(replicas: int, *members: Member) -> PlanInput:
    return PlanInput(testing.version(35), replicas, members, failure_domains=("a", "b"))


class ProviderTest(unittest.TestCase):
    def test_scales_up_one_ready_machine_at_a_time(self):
        ctx = testing.context(StarterProvider)
        step = StarterProvider().plan(ctx, plan_input(3)).step
        self.assertIsInstance(step, CreateMachine)
        self.assertTrue(step.machine.init)
        step = StarterProvider().plan(ctx, plan_input(3, member("m-0", False, 1))).step
        self.assertIsInstance(step, Wait)
        step = StarterProvider().plan(ctx, plan_input(3, member("m-0", True, 1))).step
        self.assertIsInstance(step, CreateMachine)
        self.assertEqual((step.machine.init, step.machine.failure_domain), (False, "b"))

    def test_scales_down_the_oldest_first(self):
        ctx = testing.context(StarterProvider)
        members = (member("new", True, 2), member("old", True, 1))
        step = StarterProvider().plan(ctx, plan_input(1, *members)).step
        self.assertEqual(step, DeleteMachine(testing.machine("old")))

    def test_a_member_etcd_lists_leaves_etcd_first(self):
        ctx = testing.context(StarterProvider)
        members = (member("new", True, 2), member("old", True, 1))
        listed = testing.in_etcd(plan_input(1, *members))
        plan = StarterProvider().plan(ctx, listed)
        self.assertEqual(plan.step, RemoveEtcdMember(testing.machine("old")))
        testing.assert_etcd_members_kept(listed, plan)
        self.assertEqual(listed.members[0].etcd, EtcdMembership.MEMBER)

    def test_an_even_maximum_is_refused(self):
        testing.assert_schema_matches(StarterProvider)
        errors = testing.assert_refused_at(
            StarterProvider(), '{"maxReplicas": 4}', ["/maxReplicas"]
        )
        testing.assert_field_error(errors, "/maxReplicas", "odd")


if __name__ == "__main__":
    unittest.main()
