"""The call context: the config parsed on entry, the rest asked of the host when read."""

from __future__ import annotations

import unittest
from datetime import timedelta

from capw import KubernetesVersion, log, testing
from capw.context import Context

from .providers import Zones


class ContextTest(unittest.TestCase):
    def test_contexts_default_to_cluster_c1_and_take_their_config(self):
        ctx = testing.context(Zones, '{"zones": ["a"]}')
        self.assertEqual(ctx.cluster, testing.cluster("default", "c1"))
        self.assertEqual(ctx.cluster.uid, "uid-c1")
        self.assertEqual(ctx.idempotency_key, "key-1")
        self.assertEqual((ctx.config.port, ctx.config.zones), (6443, ["a"]))
        self.assertTrue(timedelta(seconds=5) < ctx.remaining <= testing.DEADLINE)

    def test_fields_are_asked_of_the_host_once_when_first_read(self):
        source = testing.source(
            cluster_ref=testing.cluster("team-a", "c2"), idempotency_key="key-2"
        )
        ctx = Context(None, source)
        self.assertEqual(source.reads, {})
        self.assertIn("cluster=None", repr(ctx))
        for _ in range(3):
            self.assertEqual(ctx.cluster.name, "c2")
            self.assertEqual(ctx.idempotency_key, "key-2")
            self.assertGreater(ctx.remaining, timedelta(0))
        self.assertEqual(source.reads, {"cluster": 1, "idempotency_key": 1, "remaining_ms": 3})

    def test_the_time_left_is_zero_once_it_has_passed(self):
        ctx = testing.context(Zones, deadline=timedelta(0))
        self.assertEqual(ctx.remaining, timedelta(0))

    def test_a_test_config_that_does_not_parse_names_its_field(self):
        with self.assertRaises(AssertionError) as refused:
            testing.config(Zones, '{"port": "x"}')
        self.assertIn("config at `/port`", str(refused.exception))


class HostTest(unittest.TestCase):
    def test_log_records_keep_their_fields_in_order_as_strings(self):
        with testing.use_host() as host:
            log.warn("slow", zone="a", attempt=2)
            log.debug("detail")
        self.assertEqual(
            host.logs,
            [
                testing.Record("warn", "slow", (("zone", "a"), ("attempt", "2"))),
                testing.Record("debug", "detail", ()),
            ],
        )
        with self.assertRaises(ValueError):
            log.log("fatal", "no such level")

    def test_versions_order_and_print_as_kubernetes_does(self):
        self.assertLess(KubernetesVersion(1, 34, 9), KubernetesVersion(1, 35, 0))
        self.assertEqual(str(KubernetesVersion.parse("v1.35.2")), "v1.35.2")
        with self.assertRaises(ValueError):
            KubernetesVersion.parse("1.35")


if __name__ == "__main__":
    unittest.main()
