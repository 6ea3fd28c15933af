"""The config: its schema, its defaults and the rules the schema cannot say."""

from __future__ import annotations

import unittest

from py_control_plane import KubeadmControlPlane, KubeadmControlPlaneConfig, Rollout

from capw import testing

P = KubeadmControlPlane()


class ConfigTest(unittest.TestCase):
    def test_the_schema_and_the_dataclass_say_the_same_fields(self):
        testing.assert_schema_matches(KubeadmControlPlane)
        schema = testing.config_schema(KubeadmControlPlane)
        self.assertIs(schema["additionalProperties"], False)
        self.assertEqual(schema["properties"]["maxSurge"]["default"], 1)
        self.assertNotIn("required", schema)

    def test_the_empty_config_takes_the_defaults(self):
        parsed = testing.config(KubeadmControlPlane, "{}")
        self.assertEqual(parsed, KubeadmControlPlaneConfig(replicas=None, max_surge=1))
        self.assertIs(parsed.rollout, Rollout.SURGE)
        testing.assert_accepted(P, "{}")

    def test_odd_replicas_and_both_surges_are_accepted(self):
        for json in (
            '{"replicas": 1}',
            '{"replicas": 3, "maxSurge": 1}',
            '{"replicas": 5, "maxSurge": 0}',
            '{"maxSurge": 0}',
        ):
            with self.subTest(json):
                testing.assert_accepted(P, json)
        self.assertIs(
            testing.config(KubeadmControlPlane, '{"maxSurge": 0}').rollout, Rollout.DELETE_FIRST
        )

    def test_even_replicas_are_refused_at_their_path(self):
        errors = testing.assert_refused_at(P, '{"replicas": 4}', ["/replicas"])
        testing.assert_field_error(errors, "/replicas", "odd")
        testing.assert_field_error(errors, "/replicas", "use 3 or 5")

    def test_replicas_below_one_are_refused_by_the_schema(self):
        errors = testing.assert_refused_at(P, '{"replicas": 0}', ["/replicas"])
        testing.assert_field_error(errors, "/replicas", "at least 1")

    def test_max_surge_is_zero_or_one(self):
        errors = testing.assert_refused_at(P, '{"replicas": 3, "maxSurge": 2}', ["/maxSurge"])
        testing.assert_field_error(errors, "/maxSurge", "at most 1")

    def test_delete_first_needs_three_replicas(self):
        errors = testing.assert_refused_at(P, '{"replicas": 1, "maxSurge": 0}', ["/maxSurge"])
        testing.assert_field_error(errors, "/maxSurge", "at least 3 replicas")

    def test_every_problem_is_reported(self):
        testing.assert_refused_at(P, '{"replicas": -1, "maxSurge": 7}', ["/replicas", "/maxSurge"])
        # The rules run once the schema passes, and report every problem too.
        testing.assert_refused_at(P, '{"replicas": 2, "maxSurge": 0}', ["/replicas", "/maxSurge"])

    def test_type_errors_and_unknown_fields_are_refused_at_their_own_path(self):
        errors = testing.assert_refused_at(P, '{"maxSurge": "1"}', ["/maxSurge"])
        testing.assert_field_error(errors, "/maxSurge", "must be an integer, not a string")
        errors = testing.assert_refused_at(P, '{"replicas": 3, "surge": 1}', ["/surge"])
        testing.assert_field_error(errors, "/surge", "unknown field")
        testing.assert_refused_at(P, "[]", [""])
        testing.assert_refused_at(P, "{", [""])


if __name__ == "__main__":
    unittest.main()
