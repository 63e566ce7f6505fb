# SPDX-License-Identifier: GPL-2.0
"""The lab's machine-readable output as the benchmark reads it, which lab
governor stands for which kernel governor, and a timeline given a PM QoS
limit."""

import json
import unittest
from pathlib import Path

from teotool import benchlab, lab
from teotool.ui import Fatal

GOVS = [lab.LabGovernor("oracle", "oracle", "-"),
        lab.LabGovernor("teo", "ours", "/repo/drivers/cpuidle/governors/teo.c"),
        lab.LabGovernor("teo-traced", "twin", "/repo/drivers/cpuidle/governors/teo.c"),
        lab.LabGovernor("teo-6.12", "base", "/base/teo.c"),
        lab.LabGovernor("menu-6.12", "base", "/base/menu.c"),
        lab.LabGovernor("menu-7.3", "mainline", "/main/menu.c")]


class LabelTest(unittest.TestCase):
    def test_labels(self) -> None:
        self.assertEqual(benchlab.label_for("teo", {}, GOVS), "teo")
        self.assertEqual(benchlab.label_for("menu", {}, GOVS), "menu-6.12")
        self.assertEqual(benchlab.label_for("ladder", {}, GOVS), "")
        self.assertEqual(benchlab.label_for("teo", {"teo": "teo-base"}, GOVS), "teo-6.12")
        self.assertEqual(benchlab.label_for("menu", {"menu": "menu-7.3"}, GOVS), "menu-7.3")
        self.assertEqual(benchlab.resolve("teo-base", []), "")


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
