"""describe, validate-config and the calls as the host makes them."""

from __future__ import annotations

import json
import unittest
from datetime import timedelta

from capw import (
    Capabilities,
    ControlPlane,
    ControlPlaneShape,
    Deleted,
    ErrorCode,
    ExtensionPoint,
    InProgress,
    Provider,
    ProviderError,
    testing,
)
from capw.metadata import describe, validate_config

from .providers import Both, Busy, Zones


class DescribeTest(unittest.TestCase):
    def test_describe_lists_the_points_subclassed_in_contract_order(self):
        m = describe(Zones())
        self.assertEqual((m.name, m.version), ("zones", "1.2.3"))
        self.assertEqual(m.extension_points, (ExtensionPoint.INFRASTRUCTURE,))
        self.assertEqual(m.capabilities, Capabilities())
        self.assertEqual(m.requested_grants.secrets, ("api-token",))
        self.assertEqual(json.loads(m.config_schema), Zones.CONFIG_SCHEMA)
        both = describe(Both())
        self.assertEqual(
            both.extension_points, (ExtensionPoint.BOOTSTRAP, ExtensionPoint.CONTROL_PLANE)
        )
        self.assertEqual(both.capabilities, Capabilities(ControlPlaneShape.HOSTED, False, False))

    def test_a_provider_without_config_publishes_the_empty_object(self):
        self.assertEqual(json.loads(describe(Both()).config_schema)["additionalProperties"], False)
        testing.assert_accepted(Both(), "{}")
        testing.assert_refused_at(Both(), '{"a": 1}', ["/a"])

    def test_a_control_plane_must_declare_its_shape(self):
        with self.assertRaises(TypeError) as refused:

            class Shapeless(Provider[None], ControlPlane[None]):
                NAME = "shapeless"

        self.assertIn("SHAPE", str(refused.exception))


class ValidateConfigTest(unittest.TestCase):
    def test_the_schema_goes_first_then_the_rules(self):
        self.assertEqual(validate_config(Zones(), '{"zones": ["a"]}'), [])
        self.assertEqual(
            [e.path for e in validate_config(Zones(), '{"port": 0, "zones": [""]}')], ["/port"]
        )
        self.assertEqual(
            [e.path for e in validate_config(Zones(), '{"zones": ["a", "", ""]}')],
            ["/zones/1", "/zones/2"],
        )

    def test_the_testing_helpers_check_the_schema_and_dataclass(self):
        testing.assert_schema_matches(Zones)
        errors = testing.assert_refused_at(Zones(), '{"zones": [""]}', ["/zones/0"])
        testing.assert_field_error(errors, "/zones/0", "must not be empty")
        with self.assertRaises(AssertionError):
            testing.assert_refused_at(Zones(), "{}", ["/port"])
        with self.assertRaises(AssertionError):
            testing.assert_accepted(Zones(), '{"port": "x"}')
        with self.assertRaises(AssertionError):
            testing.assert_field_error(errors, "/zones/0", "something else")


class CallTest(unittest.TestCase):
    def test_a_call_reads_its_config_secret_and_logs_through_the_host(self):
        with testing.use_host(testing.FakeHost(secrets={"api-token": b"t0k"})) as host:
            answer = testing.call(
                Zones(), "infrastructure.reconcile-cluster", config_json='{"port": 7443}'
            )
        self.assertEqual(answer.infrastructure.control_plane_endpoint.port, 7443)
        self.assertEqual(
            host.logs,
            [testing.Record("info", "reconciling", (("cluster", "c1"), ("token_bytes", "3")))],
        )

    def test_secrets_not_granted_or_not_found_become_provider_errors(self):
        with testing.use_host(testing.FakeHost()), self.assertRaises(ProviderError) as refused:
            testing.call(Zones(), "infrastructure.reconcile-cluster")
        self.assertEqual(
            (refused.exception.code, refused.exception.retryable), (ErrorCode.NOT_GRANTED, False)
        )
        with (
            testing.use_host(testing.FakeHost(secrets={"api-token": None})),
            self.assertRaises(ProviderError) as missing,
        ):
            testing.call(Zones(), "infrastructure.reconcile-cluster")
        self.assertEqual(
            (missing.exception.code, missing.exception.retryable), (ErrorCode.UNAVAILABLE, True)
        )

    def test_methods_left_out_and_points_not_served_answer_unsupported(self):
        for provider, function in (
            (Zones(), "infrastructure.reconcile-machine"),
            (Zones(), "bootstrap.generate"),
            (Both(), "control-plane.plan"),
            (Both(), "lifecycle-hooks.handle"),
        ):
            with self.subTest(function), self.assertRaises(ProviderError) as refused:
                testing.call(provider, function, None)
            e = refused.exception
            self.assertEqual(
                (e.code, e.retryable, e.message),
                (ErrorCode.UNSUPPORTED, False, f"{function} is not supported by this provider"),
            )

    def test_a_point_not_served_is_refused_before_its_config_is_read(self):
        source = testing.source("not json")
        from capw.dispatch import call

        with self.assertRaises(ProviderError) as refused:
            call(Zones(), ExtensionPoint.BOOTSTRAP, "bootstrap.generate", source, None)
        self.assertEqual(refused.exception.code, ErrorCode.UNSUPPORTED)
        self.assertEqual(source.reads, {})

    def test_a_config_that_does_not_parse_is_permanent_invalid_input(self):
        with self.assertRaises(ProviderError) as refused:
            testing.call(Zones(), "infrastructure.delete-cluster", config_json='{"port": "x"}')
        e = refused.exception
        self.assertEqual((e.code, e.retryable), (ErrorCode.INVALID_INPUT, False))
        self.assertEqual(e.message, "config at `/port`: must be an integer, not a string")

    def test_any_other_exception_is_a_retryable_internal_error_naming_it(self):
        with self.assertRaises(ProviderError) as refused:
            testing.call(Zones(), "infrastructure.list-machines")
        e = refused.exception
        self.assertEqual((e.code, e.retryable), (ErrorCode.INTERNAL, True))
        self.assertEqual(e.message, "infrastructure.list-machines: ValueError: a bug")

    def test_a_schema_outside_the_subset_refuses_every_config_without_a_trap(self):
        class Loose(Zones):
            CONFIG_SCHEMA = {"type": "object", "oneOf": [{"required": ["port"]}]}

        self.assertIn("keyword `oneOf`", validate_config(Loose(), "{}")[0].message)
        with self.assertRaises(ProviderError) as refused:
            testing.call(Loose(), "infrastructure.delete-cluster")
        self.assertEqual(
            (refused.exception.code, refused.exception.retryable), (ErrorCode.INTERNAL, False)
        )
        with self.assertRaises(AssertionError):
            testing.config_schema(Loose)

    def test_a_provider_error_keeps_its_retry_hint(self):
        with self.assertRaises(ProviderError) as refused:
            testing.call(Busy(), "infrastructure.reconcile-cluster")
        self.assertEqual(
            refused.exception,
            ProviderError(
                ErrorCode.UNAVAILABLE, "rate-limited", retryable=True, retry_after_ms=30_000
            ),
        )
        self.assertEqual(testing.call(Zones(), "infrastructure.delete-cluster"), Deleted())


class TypesTest(unittest.TestCase):
    def test_error_constructors_say_their_intent(self):
        self.assertTrue(ProviderError.retryable(ErrorCode.CONFLICT, "busy").retryable)
        permanent = ProviderError.permanent(ErrorCode.INVALID_INPUT, "bad")
        self.assertEqual((permanent.retryable, permanent.retry_after_ms), (False, None))
        # A retry hint makes the error retryable: a hint on an error never retried would
        # contradict itself.
        hinted = ProviderError.permanent(ErrorCode.UNAVAILABLE, "down").retry_after(
            timedelta(minutes=1)
        )
        self.assertEqual((hinted.retryable, hinted.retry_after_ms), (True, 60_000))
        self.assertEqual(
            ProviderError.unsupported("x").retry_after(10**12).retry_after_ms, 2**32 - 1
        )

    def test_in_progress_defaults_to_five_seconds(self):
        progress = InProgress("InstanceBooting", "booting")
        self.assertEqual(progress.requeue_after_ms, 5_000)
        self.assertEqual(progress.requeue_after(timedelta(seconds=2.5)).requeue_after_ms, 2_500)


if __name__ == "__main__":
    unittest.main()
