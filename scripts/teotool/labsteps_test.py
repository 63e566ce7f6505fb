# SPDX-License-Identifier: GPL-2.0
"""labsteps on a small results.tsv written here: the thresholds, the
directions, the medians and the errors on bad input."""

import unittest
from pathlib import Path

from teotool import labsteps
from teotool.testing import ScratchTest
from teotool.ui import Fatal

HEAD = ("scenario\tfamily\tloop\tplatform\tgovernor\twork_per_s\tenergy_pct"
        "\tmiss_pct\tlat_mean_us\n")


def row(scenario: str, family: str, loop: str, platform: str, gov: str,
        work: str, energy: str, miss: str, lat: str) -> str:
    return "\t".join((scenario, family, loop, platform, gov, work, energy, miss, lat)) + "\n"


class StepsTest(ScratchTest):
    def write(self, text: str) -> Path:
        path = self.tmp / "results.tsv"
        path.write_text(text, encoding="utf-8")
        return path

    def results(self) -> Path:
        return self.write(
            HEAD
            # A closed loop: a does 100, b 100.5 (within 1 %), c 150.
            + row("ring", "S3", "closed", "t1", "a", "100", "100", "1.0", "10")
            + row("ring", "S3", "closed", "t1", "b", "100.5", "100", "1.4", "10.5")
            + row("ring", "S3", "closed", "t1", "c", "150", "90", "3.0", "2")
            # Another table: c loses work.
            + row("ring", "S3", "closed", "t2", "a", "100", "100", "1.0", "10")
            + row("ring", "S3", "closed", "t2", "b", "100", "100", "1.0", "10")
            + row("ring", "S3", "closed", "t2", "c", "50", "100", "1.0", "10")
            # An open loop: energy counts, work does not.
            + row("idle", "S1", "open", "t1", "a", "-", "100", "0.0", "600")
            + row("idle", "S1", "open", "t1", "b", "-", "110", "0.0", "600")
            + row("idle", "S1", "open", "t1", "c", "-", "110", "0.0", "600"))

    def test_within_thresholds_nothing_counts(self) -> None:
        changes = labsteps.step(labsteps.read_results(self.results()), "a", "b")
        work = changes[("S3", "work")]
        self.assertEqual(work.runs, 2)
        self.assertEqual((work.ups, work.downs), ([], []))
        self.assertEqual(changes[("S3", "miss")].ups, [])
        self.assertEqual(changes[("S3", "latency")].ups, [])
        self.assertEqual([round(x, 6) for x in changes[("S1", "energy")].ups], [10.0])

    def test_directions_and_medians(self) -> None:
        table = labsteps.rows(labsteps.chain(labsteps.read_results(self.results()),
                                             ["a", "b", "c"]))
        by = {(r[0], r[1], r[2], r[3]): r[4:] for r in table}
        # b -> c: +49.3 % on t1, -50 % on t2.
        self.assertEqual(by[("b", "c", "S3", "work")], ("2", "1", "1", "49.3", "-50.0"))
        self.assertEqual(by[("b", "c", "S3", "miss")], ("2", "1", "0", "1.6", "-"))
        self.assertEqual(by[("b", "c", "S3", "latency")], ("2", "0", "1", "-", "-8.5"))
        self.assertEqual(by[("b", "c", "all", "work")], ("2", "1", "1", "49.3", "-50.0"))
        # S1 energy did not move from b to c: no family row, an "all" row.
        self.assertNotIn(("b", "c", "S1", "energy"), by)
        self.assertEqual(by[("b", "c", "all", "energy")], ("1", "0", "0", "-", "-"))

    def test_unknown_governor(self) -> None:
        with self.assertRaisesRegex(Fatal, "no governor d"):
            labsteps.chain(labsteps.read_results(self.results()), ["a", "d"])

    def test_not_results(self) -> None:
        with self.assertRaisesRegex(Fatal, "not the lab's results.tsv"):
            labsteps.read_results(self.write("a\tb\n1\t2\n"))
        with self.assertRaisesRegex(Fatal, "cannot read"):
            labsteps.read_results(self.tmp / "missing.tsv")


if __name__ == "__main__":
    unittest.main()
