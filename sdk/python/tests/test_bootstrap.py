"""The bootstrap point's join tokens (contract 0.3): the defaults, a provider that keeps one,
and `capw.testing`'s check of the conformance rule."""

from __future__ import annotations

import unittest

from capw import Endpoint, ErrorCode, JoinToken, ProviderError, testing
from capw.bootstrap import BootstrapRequest, JoinCredentials, SecretItem
from capw.types import MachineRole

from .providers import TOKEN_ITEM, Both, Tokens, token_secrets


class JoinTokenTest(unittest.TestCase):
    def test_a_provider_without_tokens_keeps_none_and_cannot_renew(self):
        # A bootstrap provider that says nothing of join tokens passes the rule: no token to
        # keep, so the host never asks for a renewal.
        self.assertIsNone(testing.call(Both(), "bootstrap.current-join-token", ()))
        with self.assertRaises(ProviderError) as refused:
            testing.call(Both(), "bootstrap.renew-join-token", ())
        e = refused.exception
        self.assertEqual(
            (e.code, e.retryable, e.message),
            (
                ErrorCode.UNSUPPORTED,
                False,
                "bootstrap.renew-join-token is not supported by this provider",
            ),
        )
        self.assertIsNone(testing.assert_join_token_renews(Both(), ()))

    def test_the_current_token_is_read_from_the_secrets(self):
        token = testing.call(Tokens(), "bootstrap.current-join-token", token_secrets("000007"))
        self.assertEqual(
            token, JoinToken(TOKEN_ITEM, "000007", "s" * 16, 86_400, extra_groups=("nodes",))
        )
        self.assertEqual(token.token, "000007." + "s" * 16)

    def test_a_renewal_passes_the_conformance_rule(self):
        renewed = testing.assert_join_token_renews(Tokens(), token_secrets("000007"))
        self.assertEqual((renewed.item, renewed.id), (TOKEN_ITEM, "000008"))

    def test_a_renewal_that_keeps_the_id_fails_the_rule(self):
        class Stuck(Tokens):
            def renew_join_token(self, ctx, secrets):
                return self.current_join_token(ctx, secrets)

        with self.assertRaises(AssertionError) as failed:
            testing.assert_join_token_renews(Stuck(), token_secrets())
        self.assertIn("the current token's id 000001", str(failed.exception))

    def test_a_token_in_another_item_fails_the_rule(self):
        class Elsewhere(Tokens):
            def renew_join_token(self, ctx, secrets):
                return JoinToken("other", "000009", "s" * 16)

        with self.assertRaises(AssertionError) as failed:
            testing.assert_join_token_renews(Elsewhere(), token_secrets())
        self.assertIn("answered item 'other'", str(failed.exception))

    def test_the_secret_part_never_shows_in_the_repr(self):
        token = JoinToken("t", "abcdef", "0123456789abcdef")
        self.assertNotIn("0123456789abcdef", repr(token))
        self.assertNotIn("0123456789abcdef", repr(JoinCredentials("pem", token)))
        self.assertEqual((token.ttl_seconds, token.extra_groups), (0, ()))


class RequestTest(unittest.TestCase):
    def test_a_worker_of_a_service_joins_with_its_credentials_not_the_secrets(self):
        def request(**given) -> BootstrapRequest:
            return BootstrapRequest(
                machine=testing.machine("w0"),
                role=MachineRole.WORKER,
                version=testing.version(35),
                endpoint=Endpoint("cp.c1.test", 6443),
                **given,
            )

        machines = request(secrets=(SecretItem("ca.crt", b"pem"),))
        self.assertIsNone(machines.join)
        token = JoinToken("join", "abcdef", "0123456789abcdef", 3600)
        managed = request(secrets=(), join=JoinCredentials("pem", token))
        self.assertEqual(managed.join.token.id, "abcdef")
        self.assertIsNone(JoinCredentials("pem").token)


if __name__ == "__main__":
    unittest.main()
