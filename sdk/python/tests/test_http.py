"""capw.http natively, through the fake host: what is sent, and what answers mean."""

from __future__ import annotations

import unittest
from datetime import timedelta

from capw import ErrorCode, ProviderError, http, testing


def ok(sent: testing.SentRequest) -> http.Response:
    return http.Response(200, (("content-type", b"application/json"),), b'{"id": "i-1"}')


class RequestTest(unittest.TestCase):
    def test_a_request_is_sent_as_built_with_its_length(self):
        with testing.use_host(testing.FakeHost(http=ok)) as host:
            response = (
                http.Request("post", "https://api.cloud.test/v1/instances?zone=a")
                .json({"name": "m1"})
                .timeout(timedelta(seconds=2))
                .send()
            )
        self.assertEqual(response.json(), {"id": "i-1"})
        self.assertEqual(response.header("Content-Type"), b"application/json")
        (sent,) = host.sent
        self.assertEqual(
            (sent.method, sent.url, sent.body, sent.timeout_ms),
            ("POST", "https://api.cloud.test/v1/instances?zone=a", b'{"name":"m1"}', 2000),
        )
        self.assertEqual(sent.header("content-length"), b"13")
        self.assertEqual(sent.header("content-type"), b"application/json")

    def test_urls_split_as_wasi_http_wants_them(self):
        target = http.Target.parse("http://127.0.0.1:8080")
        self.assertEqual(
            (target.https, target.authority, target.path_with_query), (False, "127.0.0.1:8080", "/")
        )
        self.assertEqual(http.Target.parse("https://h.test?x=1#f").path_with_query, "/?x=1")
        for url in ("api.test/x", "ftp://h.test/", "https://user@h.test/", "https:///x"):
            with self.subTest(url), self.assertRaises(http.HTTPError) as refused:
                http.Target.parse(url)
            self.assertEqual(
                (refused.exception.kind, refused.exception.code),
                ("invalid", ErrorCode.INVALID_INPUT),
            )
        with self.assertRaises(http.HTTPError):
            http.Request("TRACE", "https://h.test/")

    def test_a_host_not_granted_is_a_permanent_not_granted_error(self):
        with testing.use_host(), self.assertRaises(http.HTTPError) as refused:
            http.Request("GET", "https://api.cloud.test/").send()
        e = refused.exception
        self.assertEqual((e.kind, e.code, e.retryable), ("denied", ErrorCode.NOT_GRANTED, False))
        self.assertIn("`api.cloud.test`", e.message)

    def test_no_host_outside_a_component_or_test(self):
        with self.assertRaises(http.HTTPError) as refused:
            http.Request("GET", "https://api.cloud.test/").send()
        self.assertEqual((refused.exception.kind, refused.exception.retryable), ("other", True))


class ResponseTest(unittest.TestCase):
    def test_throttling_hands_retry_after_to_the_host(self):
        throttled = http.Response(429, (("retry-after", b" 30 "),)).throttled()
        self.assertEqual(
            throttled,
            ProviderError(
                ErrorCode.UNAVAILABLE,
                "backend answered HTTP 429",
                retryable=True,
                retry_after_ms=30_000,
            ),
        )
        self.assertIsNone(
            http.Response(503, (("retry-after", b"Wed, 21 Oct 2015 07:28:00 GMT"),))
            .throttled()
            .retry_after_ms
        )
        self.assertIsNone(http.Response(500).throttled())

    def test_statuses_mean_the_errors_of_the_contract(self):
        for status, code, retryable in (
            (401, ErrorCode.UNAUTHORIZED, False),
            (403, ErrorCode.UNAUTHORIZED, False),
            (404, ErrorCode.INVALID_INPUT, False),
            (409, ErrorCode.CONFLICT, True),
            (429, ErrorCode.UNAVAILABLE, True),
            (500, ErrorCode.UNAVAILABLE, True),
        ):
            with self.subTest(status), self.assertRaises(ProviderError) as refused:
                http.Response(status).error_for_status()
            self.assertEqual(
                (refused.exception.code, refused.exception.retryable), (code, retryable)
            )
        response = http.Response(204)
        self.assertIs(response.error_for_status(), response)


if __name__ == "__main__":
    unittest.main()
