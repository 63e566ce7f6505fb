# SPDX-License-Identifier: GPL-2.0
"""The statistics agree with the benchmark's: each function is checked
against bench.sh's own awk (and jq) definitions, run on the same random
inputs, and against a report bench.sh prints.  (When bench.sh is ported
onto this module, these become fixed-value tests.)"""

import json
import random
import re
import subprocess
import unittest
from typing import Dict, List, Sequence

from teotool import paths, stats
from teotool.testing import ScratchTest

BENCH = paths.SCRIPTS / "bench.sh"


def awk_function(name: str) -> str:
    """The text of awk function name as bench.sh defines it."""
    text = BENCH.read_text()
    m = re.search(rf"^(\t+)function {name}\(.*?^\1\}}$", text, re.M | re.S)
    assert m, f"bench.sh defines no awk function {name}"
    return m.group(0)


def awk(functions: Sequence[str], begin: str) -> str:
    program = "\n".join(awk_function(f) for f in functions) + f"\nBEGIN {{ {begin} }}"
    return subprocess.run(["awk", program], capture_output=True, text=True, check=True).stdout


def words(values: Sequence[float]) -> str:
    return " ".join(f"{v:g}" for v in values)


class AgainstBenchTest(unittest.TestCase):
    def setUp(self) -> None:
        self.rng = random.Random(20261202)

    def samples(self, n: int) -> List[float]:
        # Few distinct values, so that ties occur.
        return [self.rng.choice([1, 2, 2.5, 3, 7, 10.25, 11, 400]) for _ in range(n)]

    def test_median(self) -> None:
        cases = [self.samples(self.rng.randint(1, 7)) for _ in range(40)]
        begin = " ".join(f'print median("{words(c)}");' for c in cases)
        got = awk(["sorted", "median"], "OFMT = \"%.10g\"; " + begin).split()
        for case, line in zip(cases, got):
            with self.subTest(values=case):
                self.assertAlmostEqual(stats.median(case), float(line))

    def test_mann_whitney(self) -> None:
        cases = [(self.samples(self.rng.randint(1, 6)), self.samples(self.rng.randint(1, 6)))
                 for _ in range(40)]
        begin = " ".join(f'mwu("{words(a)}", "{words(b)}"); printf "%.10g %.10g\\n", mwu_u, mwu_p;'
                         for a, b in cases)
        lines = awk(["ways", "mwu"], begin).splitlines()
        for (a, b), line in zip(cases, lines):
            with self.subTest(a=a, b=b):
                u, p = stats.mann_whitney(a, b)
                want_u, want_p = (float(x) for x in line.split())
                self.assertEqual(u, want_u)
                self.assertAlmostEqual(p, want_p, places=9)

    def test_tvd(self) -> None:
        begin = ""
        cases = []
        for _ in range(30):
            n = self.rng.randint(1, 6)
            a = [self.rng.choice([0, 1, 5, 80, 1000]) for _ in range(n)]
            b = [self.rng.choice([0, 2, 5, 90, 999]) for _ in range(n)]
            cases.append((a, b))
            fill = " ".join(f"A[{i}] = {x}; B[{i}] = {y};" for i, (x, y) in enumerate(zip(a, b)))
            begin += (f"delete A; delete B; {fill} printf \"%.10g\\n\","
                      f" tvd(A, {sum(a)}, B, {sum(b)}, {n});")
        for (a, b), line in zip(cases, awk(["tvd"], begin).splitlines()):
            with self.subTest(a=a, b=b):
                self.assertAlmostEqual(stats.tvd(a, b), float(line), places=7)

    def test_histogram_percentile(self) -> None:
        """bench.sh's jq: cyclictest's histograms summed over the threads,
        overflow samples (cycles beyond the buckets) counted."""
        m = re.search(r"jq -er '(\[\.thread\[\]\] as \$t.*?)' \\\n", BENCH.read_text(), re.S)
        assert m, "no cyclictest jq program in bench.sh"
        for _ in range(20):
            threads = []
            for _ in range(self.rng.randint(1, 3)):
                hist = {str(us): self.rng.randint(0, 50) for us in
                        sorted(self.rng.sample(range(1, 60), 8))}
                cycles = sum(hist.values()) + self.rng.choice([0, 0, 3])
                threads.append({"cycles": cycles, "avg": 5.0, "max": 99, "histogram": hist})
            out = subprocess.run(["jq", "-er", m.group(1)], input=json.dumps({"thread": threads}),
                                 capture_output=True, text=True, check=True).stdout
            fields = dict(kv.split("=") for kv in out.split()[1].split(","))
            merged: Dict[int, int] = {}
            for t in threads:
                for us, c in t["histogram"].items():  # type: ignore[attr-defined]
                    merged[int(us)] = merged.get(int(us), 0) + c
            total = sum(int(t["cycles"]) for t in threads)  # type: ignore[call-overload]
            for p, key in ((99, "p99"), (99.9, "p99.9")):
                got = stats.histogram_percentile(merged, p, total)
                self.assertEqual(">10000" if got is None else str(got), fields[key],
                                 f"{key} of {threads}")


class FixedValuesTest(unittest.TestCase):
    def test_exact_p(self) -> None:
        self.assertEqual(stats.mann_whitney([1, 2, 3], [4, 5, 6]), (0.0, 0.1))
        u, p = stats.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
        self.assertEqual(u, 25)
        self.assertAlmostEqual(p, 2 / 252)
        self.assertTrue(stats.disjoint(u, 5, 5))

    def test_median_overflow(self) -> None:
        self.assertEqual(stats.median_text(["3", ">10000", "5"]), "5")
        self.assertEqual(stats.median_text(["3", ">10000", "5", ">10000"]), ">10000")
        self.assertEqual(stats.median_text(["4", "1", "2", "3"]), "2.5")
        self.assertEqual(stats.sorted_values(["10", "9", ">10000", "1.5"]),
                         ["1.5", "9", "10", ">10000"])

    def test_tvd_bounds(self) -> None:
        self.assertEqual(stats.tvd([1, 0], [0, 1]), 100)
        self.assertEqual(stats.tvd([2, 2], [1, 1]), 0)

    def test_relative_change(self) -> None:
        self.assertAlmostEqual(stats.relative_change(642, 722), -11.0803, places=3)
        self.assertEqual(stats.relative_change(1, 0), 0)


class BenchReportTest(ScratchTest):
    """bench.sh's report on made-up runs: medians, p50/p99, ceiling
    ratios and noise verdicts, and their numbers are this module's."""

    def test_report(self) -> None:
        rows = ["workload\tgovernor\trun\tmetric\tunit\textra\tC1_usage\tC1_time_us\tC1_above"
                "\tC1_below\tC2_usage\tC2_time_us\tC2_above\tC2_below"]
        for r in (1, 2, 3):
            rows += [f"fio\tteo\t{r}\t{720 + r}\tIOPS (higher is better)\tp50={1300 + r},"
                     f"p99={2000 + r}\t10\t100\t1\t0\t10\t900\t0\t1",
                     f"fio\tmenu\t{r}\t{640 + r}\tIOPS (higher is better)\tp50=1400,p99=2400"
                     "\t10\t500\t1\t0\t10\t500\t0\t1",
                     f"fio\tceiling\t{r}\t900\tIOPS (higher is better)\t-\t0\t0\t0\t0\t0\t0\t0\t0",
                     f"hackbench\tteo\t{r}\t1.{r * 3}\ts (lower is better)\t-\t1\t1\t0\t0\t1\t1\t0\t0",
                     f"hackbench\tmenu\t{r}\t1.{r * 2 + 1}\ts (lower is better)\t-\t1\t1\t0\t0"
                     "\t1\t1\t0\t0"]
        (self.tmp / "runs.tsv").write_text("\n".join(rows) + "\n")
        run = subprocess.run([str(BENCH), "--report", str(self.tmp), "--no-plot"],
                             capture_output=True, text=True, env=self.env())
        self.assertEqual(run.returncode, 0, run.stderr)
        out = run.stdout
        self.assertIn("menu vs teo: median -11.1 %; the runs do not overlap: menu is worse,"
                      " beyond the run-to-run spread (Mann-Whitney U=0 of 9, exact two-sided"
                      " p=0.10, 3+3 runs)", out)
        self.assertIn("menu vs teo: median -6.3 %; the runs overlap: within the run-to-run"
                      " noise (Mann-Whitney U=3.5 of 9", out)
        self.assertIn("against the ceiling (median 900): teo 0.80x, menu 0.71x", out)
        self.assertIn("median of runs: p50 1302 p99 2002", out)
        self.assertRegex(out, r"(?m)^  teo +721 722 723 +722 +60 .* 90\.0%")
        # The same numbers from this module.
        teo, menu = [721, 722, 723], [641, 642, 643]
        self.assertEqual(f"{stats.relative_change(stats.median(menu), stats.median(teo)):+.1f}", "-11.1")
        self.assertEqual(stats.mann_whitney(menu, teo), (0.0, 0.1))
        u, p = stats.mann_whitney([1.3, 1.5, 1.7], [1.3, 1.6, 1.9])
        self.assertEqual(u, 3.5)
        m = re.search(r"U=3\.5 of 9, exact two-sided p=([0-9.]+)", out)
        assert m
        self.assertEqual(f"{p:.2f}", m.group(1))
        self.assertEqual(f"{stats.median(teo) / stats.median([900, 900, 900]):.2f}", "0.80")


if __name__ == "__main__":
    unittest.main()
