"""Unit tests of the provider, natively: `make test`."""

import unittest

from capw import testing
from capw.infrastructure import ClusterReady

from provider import StarterProvider


class ProviderTest(unittest.TestCase):
    def test_the_endpoint_is_named_under_the_domain(self):
        ctx = testing.context(StarterProvider, '{"domain": "lab.example"}')
        state = StarterProvider().reconcile_cluster(ctx)
        self.assertIsInstance(state, ClusterReady)
        endpoint = state.infrastructure.control_plane_endpoint
        self.assertEqual(endpoint.host, f"{ctx.cluster.name}.lab.example")
        self.assertEqual(state.infrastructure.failure_domains[0].name, "zone-a")

    def test_a_bad_failure_domain_is_named(self):
        testing.assert_schema_matches(StarterProvider)
        errors = testing.assert_refused_at(
            StarterProvider(), '{"failureDomains": ["zone-a", "Zone B"]}', ["/failureDomains/1"]
        )
        testing.assert_field_error(errors, "/failureDomains/1", "DNS label")


if __name__ == "__main__":
    unittest.main()
