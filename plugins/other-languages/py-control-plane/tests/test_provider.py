"""What the host sees: describe, the calls through the SDK, the points not served."""

from __future__ import annotations

import dataclasses
import json
import unittest

from py_control_plane import KubeadmControlPlane

from capw import Capabilities, ControlPlaneShape, ErrorCode, ExtensionPoint, ProviderError, testing
from capw.control_plane import CreateMachine, PlanInput
from capw.metadata import describe
from capw.types import Endpoint

P = KubeadmControlPlane()


def plan_input(replicas: int) -> PlanInput:
    return PlanInput(
        version=testing.version(35),
        replicas=replicas,
        members=(),
        endpoint=Endpoint("cp.c1.test", 6443),
    )


class ProviderTest(unittest.TestCase):
    def test_describe_says_machines_scalable_upgradable(self):
        m = describe(P)
        self.assertEqual(m.name, "py-control-plane")
        self.assertEqual(m.extension_points, (ExtensionPoint.CONTROL_PLANE,))
        self.assertEqual(
            m.capabilities,
            Capabilities(ControlPlaneShape.MACHINES, True, True, chains_upgrades=False),
        )
        self.assertEqual((m.requested_grants.http_hosts, m.requested_grants.secrets), ((), ()))
        self.assertEqual(json.loads(m.config_schema), KubeadmControlPlane.CONFIG_SCHEMA)

    def test_plan_through_the_sdk_creates_the_init_machine(self):
        answer = testing.call(P, "control-plane.plan", plan_input(3))
        self.assertIsInstance(answer.step, CreateMachine)
        self.assertTrue(answer.step.machine.init)

    def test_refusals_are_permanent_invalid_input_naming_replicas(self):
        with self.assertRaises(ProviderError) as refused:
            testing.call(P, "control-plane.plan", plan_input(4))
        e = refused.exception
        self.assertEqual(
            (e.code, e.retryable, e.retry_after_ms), (ErrorCode.INVALID_INPUT, False, None)
        )
        self.assertEqual(
            e.message,
            "replicas must be odd so that etcd keeps a majority; 4 tolerates no more failures "
            "than 3: use 3 or 5",
        )

    def test_replicas_zero_takes_the_config_default(self):
        answer = testing.call(P, "control-plane.plan", plan_input(0), config_json='{"replicas": 3}')
        self.assertIsInstance(answer.step, CreateMachine)
        with self.assertRaises(ProviderError) as refused:
            testing.call(P, "control-plane.plan", plan_input(0))
        self.assertIn("replicas is 0", refused.exception.message)

    def test_a_config_that_does_not_parse_is_permanent_invalid_input(self):
        with self.assertRaises(ProviderError) as refused:
            testing.call(P, "control-plane.plan", plan_input(3), config_json='{"maxSurge": "x"}')
        e = refused.exception
        self.assertEqual((e.code, e.retryable), (ErrorCode.INVALID_INPUT, False))
        self.assertIn("/maxSurge", e.message)

    def test_the_plan_reads_neither_the_cluster_nor_the_key(self):
        source = testing.source("{}")
        from capw.dispatch import call

        call(P, ExtensionPoint.CONTROL_PLANE, "control-plane.plan", source, plan_input(3))
        self.assertEqual(source.reads, {"config": 1})

    def test_failures_tolerated_becomes_an_odd_membership_or_a_refusal_naming_the_field(self):
        asked = dataclasses.replace(plan_input(0), failures_tolerated=1)
        answer = testing.call(P, "control-plane.plan", asked)
        self.assertIsInstance(answer.step, CreateMachine)
        self.assertTrue(answer.step.machine.init)
        with self.assertRaises(ProviderError) as refused:
            testing.call(
                P, "control-plane.plan", dataclasses.replace(asked, failures_tolerated=4)
            )
        e = refused.exception
        self.assertEqual((e.code, e.retryable), (ErrorCode.INVALID_INPUT, False))
        self.assertIn("spec.topology.controlPlane.failuresTolerated", e.message)

    def test_the_service_functions_are_unsupported_for_machines(self):
        for function, args in (
            ("control-plane.reconcile-control-plane", (plan_input(3),)),
            ("control-plane.delete-control-plane", ()),
        ):
            with self.subTest(function), self.assertRaises(ProviderError) as refused:
                testing.call(P, function, *args)
            self.assertEqual(
                (refused.exception.code, refused.exception.retryable),
                (ErrorCode.UNSUPPORTED, False),
            )

    def test_other_points_are_unsupported(self):
        for function in (
            "infrastructure.list-machines",
            "bootstrap.cluster-secrets",
            "lifecycle-hooks.handle",
        ):
            with self.subTest(function), self.assertRaises(ProviderError) as refused:
                testing.call(P, function)
            self.assertEqual(
                (refused.exception.code, refused.exception.retryable),
                (ErrorCode.UNSUPPORTED, False),
            )


if __name__ == "__main__":
    unittest.main()
