"""Tests of deploy/image/probes.py: answers judged as the kubelet judges them."""

import os
import sys
import unittest

SOURCE = os.environ.get("ROUTESTATUS_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "deploy", "image"))

import probes  # noqa: E402
from pod_spec import Probe  # noqa: E402


def answers(kind, seq, success_threshold=1):
    record = probes.ProbeAnswers(Probe(kind, "/readyz", 1936, 0, 5, 2, 2, success_threshold))
    for i, answer in enumerate(seq):
        record.add(i * 5.0, answer, 0.001)
    return record


class ProbeAnswersTest(unittest.TestCase):
    def test_success_is_2xx_or_3xx(self):
        for answer, ok in ((200, True), (302, True), (399, True), (400, False), (503, False),
                           ("ConnectionRefusedError", False), ("timeout", False)):
            self.assertEqual(probes.succeeded(answer), ok, answer)

    def test_first_success_needs_the_success_threshold_in_a_row(self):
        self.assertEqual(answers("readiness", ["ConnectionRefusedError", 503, 200, 200])
                         .first_success(), 10.0)
        self.assertEqual(answers("readiness", [200, 503, 200, 200], 2).first_success(), 15.0)
        self.assertIsNone(answers("readiness", [503, 503]).first_success())
        self.assertIsNone(answers("readiness", []).first_success())

    def test_failure_streaks_count_consecutive_failures_after_a_time(self):
        record = answers("readiness", [503, 503, 503, 200, 503, 200, 503, 503])
        self.assertEqual(record.longest_failure_streak(), 3)
        self.assertEqual(record.longest_failure_streak(after=15.0), 2)
        self.assertEqual(answers("liveness", [200, 200]).longest_failure_streak(), 0)

    def test_summary_counts_answers(self):
        summary = answers("readiness", [503, 200, 200]).summary()
        self.assertIn("readiness GET :1936/readyz every 5 s (timeout 2 s)", summary)
        self.assertIn("2x 200, 1x 503", summary)


if __name__ == "__main__":
    unittest.main()
