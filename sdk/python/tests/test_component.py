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

    def call_context(self, config: str, key: str = "key-1"):
        from wit_world.imports import capw_provider_types as wt

        class CallContext:
            def cluster(self):
                return wt.ClusterRef("default", "c1", "uid-c1")

            def config(self):
                return config

            def idempotency_key(self):
                return key

            def remaining_ms(self):
                return 10_000

        return CallContext()

    def test_describe_and_validate_config_cross_the_contract(self):
        from componentize_py_types import Err
        from wit_world.exports import metadata as wm

        from .providers import Both, Planner, Zones

        metadata, *_ = self.exports.classes(Zones)
        described = metadata().describe()
        self.assertEqual(described.extension_points, [wm.ExtensionPoint.INFRASTRUCTURE])
        self.assertEqual(described.capabilities, wm.Capabilities(None, False, False, False))
        self.assertEqual(described.requested_grants, wm.RequestedGrants([], ["api-token"]))
        self.assertIsNone(metadata().validate_config('{"zones": ["a"]}'))
        with self.assertRaises(Err) as refused:
            metadata().validate_config('{"zones": [""], "x": 1}')
        self.assertEqual(refused.exception.value, [wm.FieldError("/x", "unknown field")])
        metadata, *_ = self.exports.classes(Both)
        self.assertEqual(
            metadata().describe().capabilities.control_plane_shape, wm.ControlPlaneShape.HOSTED
        )
        metadata, *_ = self.exports.classes(Planner)
        self.assertEqual(
            metadata().describe().capabilities,
            wm.Capabilities(wm.ControlPlaneShape.MACHINES, True, True, True),
        )

    def test_a_plan_crosses_the_contract_both_ways(self):
        from wit_world.exports import control_plane as wcp
        from wit_world.imports import capw_provider_types as wt

        from .providers import Planner

        *_, control_plane, _ = self.exports.classes(Planner)
        v34, v35 = wt.KubernetesVersion(1, 34, 0), wt.KubernetesVersion(1, 35, 0)
        unknown = wcp.EtcdMembership.UNKNOWN
        members = [
            wcp.Member(wt.MachineRef(f"m{i}", f"uid-m{i}"), v34, d, True, i, False, unknown, [], [])
            for i, d in enumerate("abc")
        ] + [wcp.Member(wt.MachineRef("m3", "uid-m3"), v35, "a", True, 3, False, unknown, [], [])]
        endpoint = wt.Endpoint("cp.c1.test", 6443)
        answer = control_plane().plan(
            self.call_context("{}"),
            wcp.PlanInput(v35, 3, members, ["a", "b", "c"], endpoint, None, []),
        )
        self.assertEqual(answer.step, wcp.Step_DeleteMachine(wt.MachineRef("m0", "uid-m0")))
        self.assertEqual((answer.certificates, answer.shared_datastore), ([], None))
        self.assertIsNone(answer.status.failures_tolerated)
        # A member etcd lists, or one out of date, crosses as the SDK's member says.
        members[0].etcd = wcp.EtcdMembership.MEMBER
        members[1].out_of_date = ["infrastructure.config/instanceType"]
        listed = control_plane().plan(
            self.call_context("{}"),
            wcp.PlanInput(v35, 3, members, ["a", "b", "c"], endpoint, 1, []),
        )
        self.assertEqual(listed.step, wcp.Step_RemoveEtcdMember(wt.MachineRef("m0", "uid-m0")))
        self.assertEqual(listed.up_to_date_replicas, 1)
        self.assertEqual(
            (answer.replicas, answer.ready_replicas, answer.up_to_date_replicas), (4, 4, 1)
        )
        self.assertEqual(answer.status.version, v34)
        self.assertEqual(answer.status.endpoint, wt.Endpoint("cp.c1.test", 6443))
        self.assertEqual(
            answer.status.conditions,
            [wt.Condition("Available", wt.ConditionStatus.TRUE, "QuorumReady", "")],
        )
        created = control_plane().plan(
            self.call_context("{}"), wcp.PlanInput(v35, 3, [], [], None, None, [])
        )
        self.assertIsInstance(created.step, wcp.Step_Wait)
        self.assertEqual(created.step.value.requeue_after_ms, 10_000)

    def test_the_service_functions_cross_the_contract(self):
        from componentize_py_types import Err
        from wit_world.exports import control_plane as wcp
        from wit_world.imports import capw_provider_types as wt

        from .providers import Managed, Planner

        *_, control_plane, _ = self.exports.classes(Managed)
        v35 = wt.KubernetesVersion(1, 35, 0)
        input = wcp.PlanInput(v35, 0, [], [], None, 1, [])
        waiting = control_plane().reconcile_control_plane(self.call_context("{}", "k1"), input)
        self.assertIsInstance(waiting.plan.step, wcp.Step_Wait)
        self.assertIsNone(waiting.access)
        settled = control_plane().reconcile_control_plane(self.call_context("{}", "k2"), input)
        self.assertEqual(settled.plan.step, wcp.Step_None_())
        self.assertEqual(settled.plan.status.failures_tolerated, 1)
        self.assertEqual(
            settled.access,
            wcp.ControlPlaneAccess(
                wt.Endpoint("api.c1.test", 443),
                "-----BEGIN CERTIFICATE-----",
                "kind: Config",
                wt.JoinToken("join", "abcdef", "0123456789abcdef", 3600, []),
            ),
        )
        going = control_plane().delete_control_plane(self.call_context("{}", "k1"))
        self.assertEqual(going.value.reason, "Deleting")
        self.assertIsInstance(going, wt.Deletion_InProgress)
        gone = control_plane().delete_control_plane(self.call_context("{}", "k2"))
        self.assertEqual(gone, wt.Deletion_Deleted())
        *_, machines, _ = self.exports.classes(Planner)
        for call in (
            lambda: machines().reconcile_control_plane(self.call_context("{}"), input),
            lambda: machines().delete_control_plane(self.call_context("{}")),
        ):
            with self.assertRaises(Err) as refused:
                call()
            self.assertEqual(
                (refused.exception.value.code, refused.exception.value.retryable),
                (wt.ErrorCode.UNSUPPORTED, False),
            )

    def test_a_hosted_plan_crosses_with_its_objects_certificates_and_datastore(self):
        from wit_world.exports import control_plane as wcp
        from wit_world.imports import capw_provider_types as wt

        from .providers import Hosted

        *_, control_plane, _ = self.exports.classes(Hosted)
        applied = wcp.HostedObject(
            "apps/v1", "Deployment", "c1-apiserver", True, None, ["kube-apiserver:v1.35.0"], []
        )
        answer = control_plane().plan(
            self.call_context("{}"),
            wcp.PlanInput(wt.KubernetesVersion(1, 35, 0), 0, [], [], None, None, [applied]),
        )
        self.assertIsInstance(answer.step, wcp.Step_ApplyManifests)
        self.assertTrue(answer.status.ready)
        self.assertEqual(
            answer.certificates,
            [
                wcp.CertificateSecret(
                    "c1-certs",
                    [
                        wcp.CertificateRequest(
                            "apiserver",
                            wcp.CertificateAuthority.CLUSTER,
                            wcp.CertificateUsage.SERVER,
                            "kube-apiserver",
                            [],
                            ["c1-apiserver"],
                            None,
                        )
                    ],
                    [
                        wcp.SecretMaterial.CLUSTER_CA_CERTIFICATE,
                        wcp.SecretMaterial.SERVICE_ACCOUNT_KEYS,
                    ],
                )
            ],
        )
        self.assertEqual(
            answer.shared_datastore, wcp.SharedDatastore("shared-etcd", "c1-datastore")
        )

    def test_join_tokens_and_credentials_cross_the_contract(self):
        from componentize_py_types import Err
        from wit_world.exports import bootstrap as wb
        from wit_world.imports import capw_provider_types as wt

        from capw.component import conv

        from .providers import TOKEN_ITEM, Both, Tokens

        _, _, bootstrap, *_ = self.exports.classes(Tokens)
        secrets = [wb.SecretItem(TOKEN_ITEM, b"000004." + b"s" * 16)]
        self.assertEqual(
            bootstrap().current_join_token(self.call_context("{}"), secrets),
            wt.JoinToken(TOKEN_ITEM, "000004", "s" * 16, 86_400, ["nodes"]),
        )
        self.assertIsNone(bootstrap().current_join_token(self.call_context("{}"), []))
        renewed = bootstrap().renew_join_token(self.call_context("{}"), secrets)
        self.assertEqual((renewed.item, renewed.id), (TOKEN_ITEM, "000005"))
        _, _, bootstrap, *_ = self.exports.classes(Both)
        self.assertIsNone(bootstrap().current_join_token(self.call_context("{}"), secrets))
        with self.assertRaises(Err) as refused:
            bootstrap().renew_join_token(self.call_context("{}"), secrets)
        self.assertEqual(refused.exception.value.code, wt.ErrorCode.UNSUPPORTED)
        # A worker of a service's control plane: its join credentials, no secrets.
        request = conv.bootstrap_request(
            wb.BootstrapRequest(
                wt.MachineRef("w0", "uid-w0"),
                wt.MachineRole.WORKER,
                wt.KubernetesVersion(1, 35, 0),
                wt.Endpoint("api.c1.test", 443),
                [],
                [],
                wb.JoinCredentials("pem", wt.JoinToken("join", "abcdef", "x" * 16, 0, [])),
            )
        )
        self.assertEqual(request.join.ca_certificate, "pem")
        self.assertEqual(request.join.token.token, "abcdef." + "x" * 16)

    def test_an_infrastructure_may_make_no_endpoint(self):
        from wit_world.exports import infrastructure as wi

        from capw.component import conv
        from capw.infrastructure import ClusterInfrastructure, ClusterReady

        ready = conv.cluster_state(ClusterReady(ClusterInfrastructure(None)))
        self.assertEqual(ready, wi.ClusterState_Ready(wi.ClusterInfrastructure(None, [], [])))

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
