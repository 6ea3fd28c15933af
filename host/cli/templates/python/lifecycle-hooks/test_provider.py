"""Unit tests of the provider, natively: `make test`."""

import unittest

from capw import testing
from capw.lifecycle_hooks import Hold, Hook, HookRequest, Proceed

from provider import StarterProvider


def request(hook: Hook) -> HookRequest:
    return HookRequest(hook, from_version=None, to_version=testing.version(35))


class ProviderTest(unittest.TestCase):
    def test_a_protected_cluster_is_held_at_deletion_only(self):
        ctx = testing.context(StarterProvider, '{"protectFromDelete": true}')
        held = StarterProvider().handle(ctx, request(Hook.BEFORE_CLUSTER_DELETE))
        self.assertIsInstance(held, Hold)
        self.assertEqual(held.progress.reason, "DeletionProtected")
        created = StarterProvider().handle(ctx, request(Hook.BEFORE_CLUSTER_CREATE))
        self.assertEqual(created, Proceed())

    def test_an_unprotected_cluster_is_deleted(self):
        ctx = testing.context(StarterProvider)
        answer = StarterProvider().handle(ctx, request(Hook.BEFORE_CLUSTER_DELETE))
        self.assertEqual(answer, Proceed())

    def test_protection_must_be_a_boolean(self):
        testing.assert_schema_matches(StarterProvider)
        testing.assert_refused_at(
            StarterProvider(), '{"protectFromDelete": "yes"}', ["/protectFromDelete"]
        )


if __name__ == "__main__":
    unittest.main()
