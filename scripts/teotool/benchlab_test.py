# SPDX-License-Identifier: GPL-2.0
"""The lab's machine-readable output as the benchmark reads it, and which
lab governor stands for which kernel governor."""

import json
import unittest
from pathlib import Path

from teotool import benchlab
from teotool.ui import Fatal

LIST = ("governor\toracle\toracle\t-\n"
        "governor\tteo\tours\t/repo/drivers/cpuidle/governors/teo.c\n"
        "governor\tteo-traced\ttwin\t/repo/drivers/cpuidle/governors/teo.c\n"
        "governor\tteo-6.12\tbase\t/base/teo.c\n"
        "governor\tmenu-6.12\tbase\t/base/menu.c\n"
        "governor\tmenu-7.3\tmainline\t/main/menu.c\n"
        "platform\trk3399\tArm RK3399\n"
        "scenario\ts4-fio\tS4\tclosed\n")


class ListTest(unittest.TestCase):
    def test_parse(self) -> None:
        govs = benchlab.parse_list(LIST)
        self.assertEqual([g.label for g in govs],
                         ["oracle", "teo", "teo-traced", "teo-6.12", "menu-6.12", "menu-7.3"])
        self.assertEqual(govs[3], benchlab.Governor("teo-6.12", "base", "/base/teo.c"))

    def test_labels(self) -> None:
        govs = benchlab.parse_list(LIST)
        self.assertEqual(benchlab.label_for("teo", {}, govs), "teo")
        self.assertEqual(benchlab.label_for("menu", {}, govs), "menu-6.12")
        self.assertEqual(benchlab.label_for("ladder", {}, govs), "")
        self.assertEqual(benchlab.label_for("teo", {"teo": "teo-base"}, govs), "teo-6.12")
        self.assertEqual(benchlab.label_for("menu", {"menu": "menu-7.3"}, govs), "menu-7.3")
        self.assertEqual(benchlab.resolve("teo-base", benchlab.parse_list("")), "")


class QosTest(unittest.TestCase):
    def test_with_qos(self) -> None:
        trace = "# from x\nidle-replay-trace 1\nhz 250\ncpus 2\n100 0 irq 0\n200 1 timer 5\n"
        self.assertEqual(benchlab.with_qos(trace, 0).splitlines()[4:7],
                         ["0 0 qos 0", "0 1 qos 0", "100 0 irq 0"])
        bare = "idle-replay-trace 1\n5 3 irq 0\n"
        self.assertEqual(benchlab.with_qos(bare, 20000).splitlines()[1:5],
                         ["0 0 qos 20000", "0 1 qos 20000", "0 2 qos 20000", "0 3 qos 20000"])


class JsonTest(unittest.TestCase):
    doc = {"scenario": "x.trace", "platform": "recorded", "hz": 250, "governors": [
        {"label": "oracle", "role": "oracle", "states": []},
        {"label": "teo", "role": "ours", "energy_pct": None, "states": [
            {"index": 1, "name": "C1", "usage": 4, "time_us": 7.5, "above": 1, "below": 0},
            {"index": 0, "name": "POLL", "usage": 2, "time_us": 3, "above": 0, "below": 1}]}]}

    def test_states(self) -> None:
        self.assertEqual(benchlab.states_of(self.doc, "teo", Path("x.json")),
                         [(2.0, 3.0, 0.0, 1.0), (4.0, 7.5, 1.0, 0.0)])

    def test_bad(self) -> None:
        with self.assertRaisesRegex(Fatal, "x.json: the lab's JSON has no governor 'menu-6.12'"):
            benchlab.states_of(self.doc, "menu-6.12", Path("x.json"))
        broken = json.loads(json.dumps(self.doc))
        broken["governors"][1]["states"][0]["usage"] = None
        with self.assertRaisesRegex(Fatal, "no number where a count belongs"):
            benchlab.states_of(broken, "teo", Path("x.json"))
        del broken["governors"][1]["states"]
        with self.assertRaisesRegex(Fatal, "no per-state counts"):
            benchlab.states_of(broken, "teo", Path("x.json"))


if __name__ == "__main__":
    unittest.main()
