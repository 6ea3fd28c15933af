"""What contract 0.3 adds to the control-plane point: members in etcd, out of date and
unhealthy, the chains-upgrades capability, the managed shape's reconcile and delete, the
hosted shape's objects, certificates and shared datastore."""

from __future__ import annotations

import unittest

from capw import (
    Capabilities,
    ControlPlaneShape,
    Deleted,
    Endpoint,
    ErrorCode,
    ProviderError,
    testing,
)
from capw.control_plane import (
    DeleteMachine,
    EtcdMembership,
    HostedObject,
    Plan,
    PlanInput,
    RemoveEtcdMember,
    removal,
)
from capw.metadata import describe
from capw.types import DeletionInProgress

from .providers import Both, Hosted, Managed, Planner

ENDPOINT = Endpoint("cp.c1.test", 6443)


def plan_input(*members, **given) -> PlanInput:
    return PlanInput(testing.version(35), 1, tuple(members), endpoint=ENDPOINT, **given)


class MembersTest(unittest.TestCase):
    def test_a_member_defaults_to_etcd_unknown_up_to_date_and_healthy(self):
        m = testing.member("m0")
        self.assertEqual((m.etcd, m.out_of_date, m.unhealthy), (EtcdMembership.UNKNOWN, (), ()))
        self.assertFalse(m.in_etcd)
        self.assertTrue(testing.member("m0", etcd=EtcdMembership.MEMBER).in_etcd)
        self.assertFalse(testing.member("m0", etcd=EtcdMembership.NOT_MEMBER).in_etcd)

    def test_removal_takes_a_member_etcd_lists_out_of_etcd_first(self):
        for etcd, step in (
            (EtcdMembership.MEMBER, RemoveEtcdMember),
            (EtcdMembership.NOT_MEMBER, DeleteMachine),
            (EtcdMembership.UNKNOWN, DeleteMachine),
        ):
            with self.subTest(etcd):
                self.assertEqual(
                    removal(testing.member("m0", etcd=etcd)), step(testing.machine("m0"))
                )

    def test_in_etcd_marks_every_member_listed(self):
        listed = testing.in_etcd(plan_input(testing.member("m0"), testing.member("m1")))
        self.assertTrue(all(m.in_etcd for m in listed.members))

    def test_the_etcd_rule_refuses_deleting_a_listed_member_only(self):
        old, new = testing.member("old", created_at=1), testing.member("new", created_at=2)
        unknown = plan_input(old, new)
        listed = testing.in_etcd(unknown)
        for input in (unknown, listed):
            testing.assert_etcd_members_kept(
                input, testing.call(Planner(), "control-plane.plan", input)
            )
        answer = testing.call(Planner(), "control-plane.plan", listed)
        self.assertEqual(answer.step, RemoveEtcdMember(testing.machine("old")))
        deleting = Plan(DeleteMachine(testing.machine("old")), answer.status, 2, 2, 2)
        with self.assertRaises(AssertionError) as failed:
            testing.assert_etcd_members_kept(listed, deleting)
        self.assertIn("`old`, which etcd lists", str(failed.exception))
        testing.assert_etcd_members_kept(unknown, deleting)

    def test_out_of_date_members_are_not_counted_up_to_date(self):
        shaped = testing.member("m1", out_of_date=("infrastructure.config/instanceType",))
        input = plan_input(testing.member("m0"), shaped)
        answer = testing.call(Planner(), "control-plane.plan", input)
        self.assertEqual(answer.up_to_date_replicas, 1)


class CapabilitiesTest(unittest.TestCase):
    def test_chains_upgrades_is_declared_from_the_class(self):
        self.assertEqual(
            describe(Planner()).capabilities,
            Capabilities(ControlPlaneShape.MACHINES, True, True, chains_upgrades=True),
        )
        self.assertFalse(describe(Both()).capabilities.chains_upgrades)


class ServiceFunctionsTest(unittest.TestCase):
    def test_the_machines_shape_answers_both_with_a_permanent_unsupported(self):
        for function, args in (
            ("control-plane.reconcile-control-plane", (plan_input(),)),
            ("control-plane.delete-control-plane", ()),
        ):
            with self.subTest(function), self.assertRaises(ProviderError) as refused:
                testing.call(Planner(), function, *args)
            e = refused.exception
            self.assertEqual(
                (e.code, e.retryable, e.message),
                (ErrorCode.UNSUPPORTED, False, f"{function} is not supported by this provider"),
            )

    def test_a_managed_control_plane_converges_and_hands_out_its_access(self):
        first = testing.call(
            Managed(), "control-plane.reconcile-control-plane", plan_input(), idempotency_key="k1"
        )
        self.assertEqual(first.plan.step.progress.reason, "Creating")
        self.assertIsNone(first.access)
        settled = testing.call(
            Managed(), "control-plane.reconcile-control-plane", plan_input(), idempotency_key="k2"
        )
        self.assertTrue(settled.plan.status.ready)
        self.assertEqual(settled.plan.status.failures_tolerated, 1)
        self.assertEqual(settled.access.endpoint, Endpoint("api.c1.test", 443))
        self.assertEqual(settled.access.join_token.id, "abcdef")
        # The admin kubeconfig is a secret: never in a repr that a log could carry.
        self.assertNotIn("kind: Config", repr(settled.access))

    def test_a_managed_control_plane_is_deleted_honouring_in_progress(self):
        going = testing.call(Managed(), "control-plane.delete-control-plane", idempotency_key="k1")
        self.assertIsInstance(going, DeletionInProgress)
        gone = testing.call(Managed(), "control-plane.delete-control-plane", idempotency_key="k2")
        self.assertEqual(gone, Deleted())

    def test_failures_tolerated_and_objects_default_to_none_asked(self):
        input = plan_input()
        self.assertEqual((input.failures_tolerated, input.objects), (None, ()))


class HostedTest(unittest.TestCase):
    def test_a_hosted_plan_reads_its_objects_and_names_its_certificates(self):
        applied = HostedObject(
            "apps/v1", "Deployment", "c1-apiserver", True, images=("kube-apiserver:v1.35.0",)
        )
        answer = testing.call(Hosted(), "control-plane.plan", plan_input(objects=(applied,)))
        self.assertTrue(answer.status.ready)
        (secret,) = answer.certificates
        self.assertEqual(secret.name, "c1-certs")
        self.assertEqual(secret.certificates[0].sans, ("c1-apiserver",))
        self.assertEqual(answer.shared_datastore.secret, "c1-datastore")
        unready = testing.call(Hosted(), "control-plane.plan", plan_input())
        self.assertFalse(unready.status.ready)


if __name__ == "__main__":
    unittest.main()
