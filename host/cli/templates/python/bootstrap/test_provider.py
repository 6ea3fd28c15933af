"""Unit tests of the provider, natively: `make test`."""

import unittest

from capw import testing
from capw.bootstrap import SecretsReady

from provider import TOKEN, StarterProvider


class ProviderTest(unittest.TestCase):
    def test_the_token_is_made_once_per_cluster(self):
        ctx = testing.context(StarterProvider)
        state = StarterProvider().cluster_secrets(ctx)
        self.assertIsInstance(state, SecretsReady)
        self.assertEqual(state.items[0].name, TOKEN)
        self.assertEqual(state.items[0].data, f"token:{ctx.cluster.uid}".encode())

    def test_joins_carry_no_token_for_the_host_to_keep(self):
        secrets = StarterProvider().cluster_secrets(testing.context(StarterProvider)).items
        self.assertIsNone(testing.assert_join_token_renews(StarterProvider(), secrets))

    def test_a_bad_package_is_named(self):
        testing.assert_schema_matches(StarterProvider)
        errors = testing.assert_refused_at(
            StarterProvider(), '{"packages": ["curl", "Bad Name"]}', ["/packages/1"]
        )
        testing.assert_field_error(errors, "/packages/1", "Debian package")


if __name__ == "__main__":
    unittest.main()
