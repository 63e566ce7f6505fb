# SPDX-License-Identifier: GPL-2.0
"""The workloads' output read into metrics."""

import json
import unittest
from typing import Any, Dict

from teotool import workloads
from teotool.ui import Fatal

FIO = {"jobs": [{"error": 0, "read": {"iops": 649.34999, "clat_ns": {"percentile": {
    "50.000000": 1368064, "99.000000": 4014079.9}}}}]}


class ParseTest(unittest.TestCase):
    def test_fio(self) -> None:
        """IOPS and us with one decimal, rounded as bench.sh's jq did."""
        r = workloads.parse_fio("fio-3.33 note\n" + json.dumps(FIO), "/dev/vda")
        self.assertEqual((r.metric, r.extras), ("649.3", [("p50", "1368.1"), ("p99", "4014.1")]))
        whole: Dict[str, Any] = json.loads(json.dumps(FIO))
        whole["jobs"][0]["read"]["iops"] = 700.04
        self.assertEqual(workloads.parse_fio(json.dumps(whole), "x").metric, "700")

    def test_fio_error(self) -> None:
        bad: Dict[str, Any] = json.loads(json.dumps(FIO))
        bad["jobs"][0]["error"] = 5
        for text in (json.dumps(bad), "{}", '{"jobs": []}'):
            with self.subTest(text=text):
                with self.assertRaisesRegex(Fatal, "fio on /dev/x: no result or an error"):
                    workloads.parse_fio(text, "/dev/x")
        with self.assertRaisesRegex(Fatal, "not JSON"):
            workloads.parse_fio("{ nope", "/dev/x")

    def test_hackbench(self) -> None:
        text = "Running in process mode with 4 groups\nTime: 1.234\nTime: 1.5\n"
        self.assertEqual(workloads.parse_hackbench(text), "1.5")
        with self.assertRaisesRegex(Fatal, "no 'Time:' line"):
            workloads.parse_hackbench("Running\n")

    def test_cyclictest(self) -> None:
        doc = {"thread": {"0": {"cycles": 100, "avg": 10.0, "max": 99,
                                "histogram": {"5": 50, "9": 49, "30": 1}},
                          "1": {"cycles": 102, "avg": 20.0, "max": 300,
                                "histogram": {"5": 100}}}}
        r = workloads.parse_cyclictest(json.dumps(doc))
        # avg (10 * 100 + 20 * 102) / 202 = 15.05; p99 needs 199.98 of the
        # 202 samples (bucket 30), p99.9 201.8 (beyond the histogram).
        self.assertEqual(r.metric, "15")
        self.assertEqual(r.extras, [("p99", "30"), ("p99.9", ">10000"), ("max", "300")])
        doc["thread"]["1"]["cycles"] = 100  # type: ignore[index]
        r = workloads.parse_cyclictest(json.dumps(doc))
        self.assertEqual(r.extras[0], ("p99", "9"))
        with self.assertRaisesRegex(Fatal, "no latency in cyclictest's JSON output"):
            workloads.parse_cyclictest('{"thread": {}}')

    def test_idle(self) -> None:
        r = workloads.idle_metric([(0, 0, 0, 0), (120, 25, 0, 0), (3, 975, 0, 0)], 1, 60)
        self.assertEqual((r.metric, r.extras), ("2.50", [("entries/s", "2.0")]))

    def test_cases(self) -> None:
        s = workloads.Settings()
        names = [c.name for c in workloads.cases(["fio", "idle"], s)]
        self.assertEqual(names, ["fio", "idle"])
        self.assertEqual(workloads.unit(workloads.cases(["fio"], s)[0], "C1"),
                         "IOPS (higher is better)")
        self.assertEqual(workloads.unit(workloads.Case("idle", "idle"), "WFI"),
                         "% of idle time in WFI (lower is better)")


if __name__ == "__main__":
    unittest.main()
