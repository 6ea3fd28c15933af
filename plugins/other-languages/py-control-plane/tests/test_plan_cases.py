"""Every plan case of kubeadm-control-plane against this planner: the two answer alike."""

from __future__ import annotations

import unittest

from py_control_plane import KubeadmControlPlane
from py_control_plane.plan import plan

from capw import ErrorCode, ProviderError, testing

from . import cases


class PlanCasesTest(unittest.TestCase):
    def test_every_case_answers_as_kubeadm_control_plane_does(self):
        defaults, all_cases = cases.load()
        ran = 0
        for case in all_cases:
            with self.subTest(case["name"]):
                config_json, input = cases.plan_input(defaults, case)
                config = testing.config(KubeadmControlPlane, config_json)
                expect = case["expect"]
                if "refused" in expect:
                    with self.assertRaises(ProviderError) as refused:
                        plan(config, input)
                    e = refused.exception
                    self.assertEqual(
                        (e.code, e.retryable, e.retry_after_ms),
                        (ErrorCode.INVALID_INPUT, False, None),
                    )
                    self.assertEqual(e.message, expect["refused"])
                else:
                    self.assertEqual(cases.answer_of(plan(config, input), expect), expect)
                ran += 1
        # Every case runs, those of contract 0.3 included.
        self.assertEqual(ran, len(all_cases))
        self.assertGreaterEqual(ran, 40)

    def test_the_cases_marked_0_3_are_exactly_those_that_give_its_fields(self):
        # The mark says which cases a 0.2 planner could not run; this one runs them all, and
        # checks the mark so that the file stays honest for ports still on 0.2.
        defaults, all_cases = cases.load()
        for case in all_cases:
            given = case["input"]
            needs_0_3 = bool(cases.CONTRACT_0_3_FIELDS & set(given)) or any(
                cases.CONTRACT_0_3_FIELDS & set(m) for m in given.get("members", ())
            )
            with self.subTest(case["name"]):
                self.assertEqual(needs_0_3, case.get("contract") == "0.3")

    def test_no_case_deletes_a_member_etcd_lists(self):
        # The conformance rule control-plane.plan.etcd-members, on every case the planner
        # answers, and on each with every member in etcd.
        defaults, all_cases = cases.load()
        for case in all_cases:
            if "refused" in case["expect"]:
                continue
            config_json, input = cases.plan_input(defaults, case)
            config = testing.config(KubeadmControlPlane, config_json)
            for given in (input, testing.in_etcd(input)):
                with self.subTest(case["name"], listed=given is not input):
                    testing.assert_etcd_members_kept(given, plan(config, given))

    def test_every_case_answers_the_same_through_the_sdk(self):
        # What the component answers: the call as the host makes it, config parsed by the SDK.
        defaults, all_cases = cases.load()
        provider = KubeadmControlPlane()
        for case in all_cases:
            if "refused" in case["expect"]:
                continue
            with self.subTest(case["name"]):
                config_json, input = cases.plan_input(defaults, case)
                answer = testing.call(
                    provider, "control-plane.plan", input, config_json=config_json
                )
                self.assertEqual(cases.answer_of(answer, case["expect"]), case["expect"])


if __name__ == "__main__":
    unittest.main()
