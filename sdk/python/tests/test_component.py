"""The component glue (capw.component) against the bindings componentize-py generates for
wit/world.wit: every conversion both ways, run natively. The bindings are generated, not kept:
`make test-component` writes them to a temporary directory and names it in
CAPW_PY_BINDINGS; without it these tests are skipped."""

from __future__ import annotations

import os
import sys
import unittest

BINDINGS = os.environ.get("CAPW_PY_BINDINGS")
if BINDINGS:
    sys.path.insert(0, BINDINGS)


@unittest.skipUnless(BINDINGS, "CAPW_PY_BINDINGS is not set: run `make test-component`")
class ComponentTest(unittest.TestCase):
    def setUp(self):
        from capw import host
        from capw.component import exports

        self.previous_host = host.current
        self.exports = exports

    def tearDown(self):
        from capw import host

        host.current = self.previous_host

    def call_context(self, config: str):
        from wit_world.imports import capw_provider_types as wt

        class CallContext:
            def cluster(self):
                return wt.ClusterRef("default", "c1", "uid-c1")

            def config(self):
                return config

            def idempotency_key(self):
                return "key-1"

            def remaining_ms(self):
                return 10_000

        return CallContext()

    def test_describe_and_validate_config_cross_the_contract(self):
        from componentize_py_types import Err
        from wit_world.exports import metadata as wm

        from .providers import Both, Zones

        metadata, *_ = self.exports.classes(Zones)
        described = metadata().describe()
        self.assertEqual(described.extension_points, [wm.ExtensionPoint.INFRASTRUCTURE])
        self.assertEqual(described.capabilities, wm.Capabilities(None, False, False))
        self.assertEqual(described.requested_grants, wm.RequestedGrants([], ["api-token"]))
        self.assertIsNone(metadata().validate_config('{"zones": ["a"]}'))
        with self.assertRaises(Err) as refused:
            metadata().validate_config('{"zones": [""], "x": 1}')
        self.assertEqual(refused.exception.value, [wm.FieldError("/x", "unknown field")])
        metadata, *_ = self.exports.classes(Both)
        self.assertEqual(
            metadata().describe().capabilities.control_plane_shape, wm.ControlPlaneShape.HOSTED
        )

    def test_a_plan_crosses_the_contract_both_ways(self):
        from wit_world.exports import control_plane as wcp
        from wit_world.imports import capw_provider_types as wt

        from .providers import Planner

        *_, control_plane, _ = self.exports.classes(Planner)
        v34, v35 = wt.KubernetesVersion(1, 34, 0), wt.KubernetesVersion(1, 35, 0)
        members = [
            wcp.Member(wt.MachineRef(f"m{i}", f"uid-m{i}"), v34, d, True, i, False)
            for i, d in enumerate("abc")
        ] + [wcp.Member(wt.MachineRef("m3", "uid-m3"), v35, "a", True, 3, False)]
        answer = control_plane().plan(
            self.call_context("{}"),
            wcp.PlanInput(v35, 3, members, ["a", "b", "c"], wt.Endpoint("cp.c1.test", 6443)),
        )
        self.assertEqual(answer.step, wcp.Step_DeleteMachine(wt.MachineRef("m0", "uid-m0")))
        self.assertEqual(
            (answer.replicas, answer.ready_replicas, answer.up_to_date_replicas), (4, 4, 1)
        )
        self.assertEqual(answer.status.version, v34)
        self.assertEqual(answer.status.endpoint, wt.Endpoint("cp.c1.test", 6443))
        self.assertEqual(
            answer.status.conditions,
            [wt.Condition("Available", wt.ConditionStatus.TRUE, "QuorumReady", "")],
        )
        created = control_plane().plan(self.call_context("{}"), wcp.PlanInput(v35, 3, [], [], None))
        self.assertIsInstance(created.step, wcp.Step_Wait)
        self.assertEqual(created.step.value.requeue_after_ms, 10_000)

    def test_errors_cross_as_the_contract_error(self):
        from componentize_py_types import Err
        from wit_world.exports import control_plane as wcp
        from wit_world.imports import capw_provider_types as wt

        from .providers import Busy, Zones

        _, infrastructure, bootstrap, *_ = self.exports.classes(Busy)
        with self.assertRaises(Err) as refused:
            infrastructure().reconcile_cluster(self.call_context("{}"))
        self.assertEqual(
            refused.exception.value,
            wt.ProviderError(wt.ErrorCode.UNAVAILABLE, "rate-limited", True, 30_000),
        )
        with self.assertRaises(Err) as unsupported:
            bootstrap().cluster_secrets(self.call_context("{}"))
        self.assertEqual(unsupported.exception.value.code, wt.ErrorCode.UNSUPPORTED)
        _, infrastructure, *_ = self.exports.classes(Zones)
        self.assertEqual(
            infrastructure().delete_cluster(self.call_context("{}")), wt.Deletion_Deleted()
        )
        with self.assertRaises(Err) as bad:
            infrastructure().delete_cluster(self.call_context('{"port": 0}'))
        self.assertEqual(
            (bad.exception.value.code, bad.exception.value.retryable),
            (wt.ErrorCode.INVALID_INPUT, False),
        )
        del wcp

    def test_the_imports_serve_log_and_secrets(self):
        from componentize_py_types import Err
        from wit_world.imports import host_log, host_secrets

        from capw import log, secrets
        from capw.component import imports

        records, answers = [], {"ok": b"v", "missing": host_secrets.SecretError_NotFound()}

        def get(name):
            if name not in answers:
                raise Err(host_secrets.SecretError_NotGranted())
            if isinstance(answers[name], bytes):
                return answers[name]
            raise Err(answers[name])

        saved = host_log.log, host_secrets.get
        host_log.log = lambda level, message, fields: records.append((level, message, fields))
        host_secrets.get = get
        try:
            imports.install()
            log.error("failed", step="x")
            self.assertEqual(records, [(host_log.Level.ERROR, "failed", [("step", "x")])])
            self.assertEqual(secrets.get("ok"), b"v")
            with self.assertRaises(secrets.SecretError) as missing:
                secrets.get("missing")
            self.assertTrue(missing.exception.granted)
            with self.assertRaises(secrets.SecretError) as denied:
                secrets.get("other")
            self.assertFalse(denied.exception.granted)
        finally:
            host_log.log, host_secrets.get = saved


if __name__ == "__main__":
    unittest.main()
