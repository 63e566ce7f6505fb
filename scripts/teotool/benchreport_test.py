# SPDX-License-Identifier: GPL-2.0
"""The summary on fixed runs: testdata/benchreport/*/report.txt and
residency.dat are what the bash benchmark printed and wrote for the same
runs.tsv before the port (its awk summary and its lab table), so the
port must give them byte for byte."""

import json
import shutil
import unittest
from pathlib import Path
from typing import Any, Dict, List, Tuple
from unittest import mock

from teotool import benchlab, benchreport, lab, stats
from teotool.testing import TEO, ScratchTest
from teotool.paths import PACKAGE
from teotool.ui import Fatal, UsageError

DATA = PACKAGE / "testdata" / "benchreport"
RECORDING = ("cpus=2\n"
             "  <idle>-0 [000] 1.000000: cpu_idle: state=2 cpu_id=0\n"
             "  <idle>-0 [000] 1.000300: cpu_idle: state=4294967295 cpu_id=0\n")


def lab_rows() -> Dict[Tuple[str, str, str], Tuple[str, List[List[float]]]]:
    """The lab's per-state counts of fixture e, as the bash benchmark kept
    them."""
    rows: Dict[Tuple[str, str, str], Tuple[str, List[List[float]]]] = {}
    for line in (DATA / "e" / "lab.tsv").read_text().splitlines():
        w, g, r, label, _, *counts = line.split("\t")
        rows.setdefault((w, g, r), (label, []))[1].append([float(x) for x in counts])
    return rows


class FakeLab:
    """benchlab.Lab without the lab: the numbers of fixture e as the
    lab's run --json gives them."""
    govs = [lab.LabGovernor("teo", "ours", "teo.c"),
            lab.LabGovernor("teo-6.12", "base", "base/teo.c"),
            lab.LabGovernor("menu-6.12", "base", "base/menu.c")]

    def __init__(self, log: Path) -> None:
        self.calls: List[str] = []

    def governors(self) -> List[lab.LabGovernor]:
        return self.govs

    def convert(self, recording: Path, trace: Path, table: str, hz: str) -> None:
        assert hz == "250", hz
        trace.write_text("idle-replay-trace 1\n")

    def run(self, trace: Path, table: str, label: str, display: Path, out: Path) -> Any:
        w, g, r = trace.stem.rsplit("-", 2)
        want_label, states = lab_rows()[(w, g, r)]
        assert label == want_label, (label, want_label)
        doc = {"scenario": trace.name, "platform": "recorded", "hz": 250, "governors": [
            {"label": "oracle", "role": "oracle", "states": []},
            {"label": label, "role": "ours", "energy_pct": None, "states": [
                {"index": i, "name": f"S{i}", "usage": int(s[0]), "time_us": int(s[1]),
                 "above": int(s[2]), "below": int(s[3])} for i, s in enumerate(states)]}]}
        out.write_text(json.dumps(doc))
        return doc


class SummaryTest(unittest.TestCase):
    def test_as_bench_sh(self) -> None:
        for name in "abcd":
            with self.subTest(fixture=name):
                names, runs = benchreport.read_runs(DATA / name / "runs.tsv")
                text, dat = benchreport.summarize(names, runs)
                want = (DATA / name / "report.txt").read_text()
                self.assertEqual(text, want.split("\n", 1)[1] if name == "d" else want)
                self.assertEqual(dat, (DATA / name / "residency.dat").read_text())

    def test_lab_table_as_bench_sh(self) -> None:
        names, runs = benchreport.read_runs(DATA / "e" / "runs.tsv")
        predictions = {k: (label, [(s[0], s[1], s[2], s[3]) for s in states])
                       for k, (label, states) in lab_rows().items()}
        text = benchreport.lab_table(names, runs, predictions, "recorded", "250")
        want = (DATA / "e" / "report.txt").read_text()
        self.assertEqual(text, want[want.index("\nLab prediction"):])

    def test_rows_round_trip(self) -> None:
        names, runs = benchreport.read_runs(DATA / "a" / "runs.tsv")
        text = benchreport.header(names) + "".join(benchreport.row(r) for r in runs)
        self.assertEqual(text, (DATA / "a" / "runs.tsv").read_text())

    def test_numbers_are_stats(self) -> None:
        """The verdict of fixture d's fio line, from stats."""
        teo, menu = [721, 722, 723], [641, 642, 643]
        self.assertEqual(f"{stats.relative_change(stats.median(menu), stats.median(teo)):+.1f}",
                         "-11.1")
        self.assertEqual(stats.mann_whitney(menu, teo), (0.0, 0.1))
        self.assertIn("menu vs teo: median -11.1 %; the runs do not overlap: menu is worse,",
                      (DATA / "d" / "report.txt").read_text())

class ReportTest(ScratchTest):
    def test_overflow_median(self) -> None:
        """An overflowed percentile sorts above every number (the bash
        benchmark's awk sorted it as 0: the one place the port differs)."""
        rows = ("workload\tgovernor\trun\tmetric\tunit\textra\tC1_usage\tC1_time_us\tC1_above"
                "\tC1_below\n")
        for r, p99 in ((1, "30"), (2, ">10000"), (3, ">10000")):
            rows += f"cyclictest\tteo\t{r}\t5\tavg us (lower is better)\tp99={p99}\t1\t1\t0\t0\n"
        (self.tmp / "runs.tsv").write_text(rows)
        names, runs = benchreport.read_runs(self.tmp / "runs.tsv")
        text, _ = benchreport.summarize(names, runs)
        self.assertIn("median of runs: p99 >10000", text)

    def copy(self, name: str) -> Path:
        folder = self.tmp / name
        shutil.copytree(DATA / name, folder)
        for f in ("report.txt", "lab.tsv"):
            (folder / f).unlink(missing_ok=True)
        return folder

    def test_report_command(self) -> None:
        """scripts/teo bench --report prints what the bash benchmark
        printed."""
        folder = self.copy("d")
        run = self.run_cmd([TEO, "bench", "--report", folder, "--no-plot"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, (DATA / "d" / "report.txt").read_text())
        self.assertEqual((folder / "summary.txt").read_text(),
                         run.stdout.split("\n", 1)[1])

    def test_lab_section(self) -> None:
        """Recordings replayed through the lab's JSON: the same table."""
        folder = self.copy("e")
        (folder / "record").mkdir()
        for key in lab_rows():
            (folder / "record" / ("-".join(key) + ".txt")).write_text(RECORDING)
        (folder / "record" / "fio-ladder-1.txt").write_text(RECORDING)
        with mock.patch.object(benchlab, "Lab", FakeLab):
            text = benchreport.report(folder, benchreport.LabOptions(), do_plot=False)
        want = (DATA / "e" / "report.txt").read_text()
        self.assertEqual(text, want)
        self.assertTrue((folder / "record" / "fio-teo-1.json").is_file())
        tsv = (folder / "record" / "lab.tsv").read_text().splitlines()
        self.assertEqual(tsv[3], "fio\tteo\t1\tteo\t3\t2\t107784\t0\t0")

    def test_lab_govs_unknown_label(self) -> None:
        folder = self.copy("e")
        (folder / "record").mkdir()
        (folder / "record" / "fio-teo-1.txt").write_text(RECORDING)
        opts = benchreport.lab_options("", "teo=teo-9.9", "")
        with mock.patch.object(benchlab, "Lab", FakeLab):
            with self.assertRaisesRegex(Fatal, "the lab has no governor 'teo-9.9'"):
                benchreport.report(folder, opts, do_plot=False)

    def test_no_matching_recording(self) -> None:
        folder = self.copy("e")
        (folder / "record").mkdir()
        (folder / "record" / "hackbench-teo-1.txt").write_text(RECORDING)
        with mock.patch.object(benchlab, "Lab", FakeLab):
            with self.assertRaisesRegex(Fatal, "no recording in .* matches a run"):
                benchreport.report(folder, benchreport.LabOptions(), do_plot=False)

    def test_plot(self) -> None:
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot (gnuplot-nox) on this machine")
        folder = self.copy("b")
        benchreport.report(folder, benchreport.LabOptions(), do_plot=True)
        self.assertTrue((folder / "residency.svg").is_file())
        self.assertTrue((folder / "residency.png").is_file())

    def test_missing_runs(self) -> None:
        with self.assertRaisesRegex(Fatal, "no runs.tsv in"):
            benchreport.report(self.tmp, benchreport.LabOptions())
        with self.assertRaisesRegex(UsageError, "is not a folder"):
            benchreport.report(self.tmp / "none", benchreport.LabOptions())


class LabOptionsTest(unittest.TestCase):
    def test_bad(self) -> None:
        for args, pattern in ((("", "teo", ""), "'teo' is not KERNEL_GOVERNOR=LAB_LABEL"),
                              (("", "", "500"), "--hz: '500' is not one of"),
                              (("/none/x.plat", "", ""), "--lab-platform: no such file")):
            with self.subTest(args=args):
                with self.assertRaisesRegex(UsageError, pattern):
                    benchreport.lab_options(*args)

    def test_good(self) -> None:
        o = benchreport.lab_options("rk3399", "teo=teo-base,menu=menu-7.3", "1000")
        self.assertEqual(o.govs, {"teo": "teo-base", "menu": "menu-7.3"})


class CommandTest(ScratchTest):
    def test_report_of_a_file(self) -> None:
        (self.tmp / "f").write_text("")
        self.assertBadInput(2, "--report: '.*/f' is not a folder",
                            [TEO, "bench", "--report", self.tmp / "f"])

    def test_report_without_runs(self) -> None:
        self.assertBadInput(1, "no runs.tsv in", [TEO, "bench", "--report", self.tmp])


if __name__ == "__main__":
    unittest.main()
