# SPDX-License-Identifier: GPL-2.0
"""scripts/teo compare on fixed results folders: boot medians, the verdict
over boots and not over runs, and bad input."""

import argparse
import contextlib
import io
from pathlib import Path
from typing import Dict, List, Sequence

from teotool import benchcompare
from teotool.testing import TEO, ScratchTest
from teotool.ui import Fatal, UsageError

HEADER = "workload\tgovernor\trun\tmetric\tunit\textra\tS0_usage\tS0_time_us\tS0_above\tS0_below\n"
LAPS = "laps/s (higher is better)"


def write_boot(folder: Path, runs: Dict[str, Sequence[float]],
               governor: str = "teo", unit: str = LAPS) -> Path:
    """A results folder whose runs.tsv holds @runs of @governor."""
    folder.mkdir(parents=True)
    lines = [HEADER]
    for wl, values in runs.items():
        for i, v in enumerate(values, 1):
            lines.append(f"{wl}\t{governor}\t{i}\t{v}\t{unit}\t-\t100\t1000\t0\t0\n")
    (folder / "runs.tsv").write_text("".join(lines))
    return folder


class CompareTest(ScratchTest):
    def boots(self, name: str, runs: List[Dict[str, Sequence[float]]]) -> str:
        dirs = [write_boot(self.tmp / f"{name}{i}", r) for i, r in enumerate(runs)]
        return f"{name}=" + ",".join(str(d) for d in dirs)

    def run_main(self, *argv: str) -> str:
        p = argparse.ArgumentParser()
        benchcompare.add_arguments(p)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(benchcompare.main(p.parse_args(list(argv))), 0)
        return out.getvalue()

    def test_runs_apart_but_boots_overlapping_is_no_difference(self) -> None:
        # Inside each boot the runs are tight; the boots of each kernel
        # spread more than the kernels differ.  Pooled, every run of "b"
        # would beat every run of "a" but one; boot by boot they overlap.
        a = self.boots("a", [{"ring": [100, 101, 102]}, {"ring": [80, 81, 82]},
                             {"ring": [90, 91, 92]}])
        b = self.boots("b", [{"ring": [105, 106, 107]}, {"ring": [85, 86, 87]},
                             {"ring": [88, 89, 90]}])
        out = self.run_main(a, b)
        self.assertIn("a            boots: 81 91 101  median 91", out)
        self.assertIn("b            boots: 86 89 106  median 89", out)
        self.assertIn("b vs a: median -2.2 %; the boots overlap: within the boot-to-boot"
                      " noise", out)
        self.assertIn("3+3 boots", out)

    def test_each_workload_has_its_verdicts(self) -> None:
        a = self.boots("a", [{"w1": [1], "w2": [5]}, {"w1": [2], "w2": [6]}])
        b = self.boots("b", [{"w1": [3], "w2": [1]}, {"w1": [4], "w2": [2]}])
        out = self.run_main(a, b)
        w1, w2 = out.index("w1:"), out.index("w2:")
        better, worse = out.index("b is better"), out.index("b is worse")
        self.assertTrue(w1 < better < w2 < worse, out)

    def test_boots_apart_is_a_difference_with_its_direction(self) -> None:
        a = self.boots("a", [{"ring": [100, 101]}, {"ring": [99, 100]}, {"ring": [98, 97]}])
        b = self.boots("b", [{"ring": [80, 81]}, {"ring": [82, 83]}, {"ring": [79, 78]}])
        tsv = self.tmp / "out.tsv"
        out = self.run_main(a, b, "--tsv", str(tsv))
        self.assertIn("the boots do not overlap: b is worse", out)
        self.assertIn("p=0.10", out)
        rows = [line.split("\t") for line in tsv.read_text().splitlines()]
        self.assertEqual(tuple(rows[0]), benchcompare.TSV_HEADER)
        self.assertEqual(rows[1][:2] + rows[1][6:], ["ring", "a", "-", "-", "-", "-"])
        self.assertEqual(rows[2][1], "b")
        self.assertEqual(rows[2][3], "3")
        self.assertEqual(rows[2][9], "1")
        self.assertLess(float(rows[2][6]), -15)

    def test_lower_is_better_unit_turns_the_direction(self) -> None:
        unit = "s (lower is better)"
        a = ",".join(str(write_boot(self.tmp / f"a{i}", {"hackbench": [v]}, unit=unit))
                     for i, v in enumerate([3.0, 3.1]))
        b = ",".join(str(write_boot(self.tmp / f"b{i}", {"hackbench": [v]}, unit=unit))
                     for i, v in enumerate([2.0, 2.1]))
        out = self.run_main(f"a={a}", f"b={b}")
        self.assertIn("the boots do not overlap: b is better", out)

    def test_one_boot_has_no_verdict(self) -> None:
        a = self.boots("a", [{"ring": [100, 101, 102]}])
        b = self.boots("b", [{"ring": [50, 51, 52]}, {"ring": [52, 53, 54]}])
        out = self.run_main(a, b)
        self.assertIn("one boot each: no spread to compare against", out)

    def test_only_workloads_every_boot_ran(self) -> None:
        a = self.boots("a", [{"ring": [1, 2], "fio": [5]}, {"ring": [1, 2]}])
        b = self.boots("b", [{"ring": [1, 2], "fio": [5]}, {"ring": [3]}])
        out = self.run_main(a, b)
        self.assertIn("ring:", out)
        self.assertNotIn("fio", out)

    def test_other_governor(self) -> None:
        a = str(write_boot(self.tmp / "a", {"ring": [1.0]}, governor="menu"))
        b = str(write_boot(self.tmp / "b", {"ring": [2.0]}, governor="menu"))
        self.assertIn("ring:", self.run_main(f"a={a}", f"b={b}", "--governor", "menu"))
        with self.assertRaisesRegex(Fatal, "no workload that every folder ran with"
                                    " governor 'teo'"):
            self.run_main(f"a={a}", f"b={b}")

    def test_malformed_metric(self) -> None:
        a = write_boot(self.tmp / "a", {"ring": [1.0]})
        (a / "runs.tsv").write_text(HEADER + "ring\tteo\t1\tfast\tx\t-\t1\t1\t0\t0\n")
        b = write_boot(self.tmp / "b", {"ring": [1.0]})
        with self.assertRaisesRegex(Fatal, "metric 'fast' is not a number"):
            self.run_main(f"a={a}", f"b={b}")

    def test_bad_sides(self) -> None:
        a = str(write_boot(self.tmp / "a", {"ring": [1.0]}))
        for argv, pattern in (([f"a={a}"], "two or more"),
                              ([f"a={a}", f"a={a}"], "label 'a' given twice"),
                              ([a, f"b={a}"], "is not LABEL=DIR"),
                              ([f"a={a},", f"b={a}"], "an empty folder name"),
                              ([f"a={a}", f"b={self.tmp}/none"], "is not a folder")):
            with self.subTest(argv=argv):
                with self.assertRaisesRegex(UsageError, pattern):
                    self.run_main(*argv)
        empty = self.tmp / "empty"
        empty.mkdir()
        with self.assertRaisesRegex(Fatal, "no runs.tsv in"):
            self.run_main(f"a={a}", f"b={empty}")

    def test_bad_input_from_the_command_line(self) -> None:
        a = str(write_boot(self.tmp / "a", {"ring": [1.0]}))
        tsv = self.tmp / "out.tsv"
        self.assertBadInput(2, r"^teo: error: give two or more",
                            [TEO, "compare", f"a={a}", "--tsv", tsv])
        self.assertFalse(tsv.exists())
        self.assertBadInput(1, r"^teo: error: no runs.tsv in",
                            [TEO, "compare", f"a={a}", f"b={self.tmp}", "--tsv", tsv])
        self.assertFalse(tsv.exists())

    def test_help(self) -> None:
        self.assertHelp("boot by boot", [TEO, "compare", "--help"])
