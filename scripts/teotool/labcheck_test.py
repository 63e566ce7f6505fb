# SPDX-License-Identifier: GPL-2.0
"""The verdicts of the check's gates, contract check and trace gate from
the logs and tables the lab writes, each with its negative, and the
counting of the bash negative tests of the gates (on fake ones)."""

import io
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from typing import List, Tuple

from teotool import lab, labcheck, paths
from teotool.labtests import Context
from teotool.testing import ScratchTest
from teotool.ui import Fatal

COUNTS = ("runs\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent\n"
          "{runs}\t900\t{div}\t1000\t5000\t{rdiv}\n")
TSV = ("runs\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent"
       "\tevents_decisions\tevents_inconsistent\n"
       "{runs}\t900\t{div}\t1000\t5000\t{rdiv}\t700\t{bad}\n")
EVENTS = "events of teo-traced: 700 decisions, {bad} inconsistent with their events\n"


class VerdictTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        self.ctx = Context(lab.Trees(self.tmp / "base"), [], self.tmp / "build", self.tmp)

    def verdict(self) -> Tuple[int, int, List[str]]:
        return self.ctx.results.passed, self.ctx.results.failed, self.out.getvalue().splitlines()

    def run_quietly(self, fn: "object", *args: object) -> Tuple[int, int, List[str]]:
        self.out = io.StringIO()
        with redirect_stdout(self.out):
            fn(*args)  # type: ignore[operator]
        return self.verdict()

    def test_gates(self) -> None:
        cmd = lab.Command(("x",), self.tmp / "gates.log")
        cmd.log.write_text("noise\n- NOT LISTED: `S2 median teo-6.12 energy`\n"
                           "- TARGET NOT LISTED: S2 energy against teo-6.12 needs the line ...\n"
                           "gates: 1 failed\n")
        passed, failed, lines = self.run_quietly(labcheck.gates_result, self.ctx, cmd, 1)
        self.assertEqual((passed, failed), (0, 1))
        self.assertEqual(lines[:3], ["  - NOT LISTED: `S2 median teo-6.12 energy`",
                                     "  - TARGET NOT LISTED: S2 energy against teo-6.12 needs the line ...",
                                     "  gates: 1 failed"])
        self.assertIn("against the best one, each miss documented", lines[-1])

    def test_gates_command_gates_the_targets(self) -> None:
        """The check always gates the targets, against the documented
        misses: the lab gets both options."""
        argv = labcheck.gates_command(self.ctx).argv
        self.assertIn("--targets", argv)
        self.assertEqual(argv[argv.index("--known-misses") + 1], str(paths.LAB_KNOWN_MISSES))

    def test_gates_that_never_ended(self) -> None:
        """Exit 0 without the gates' summary line is a failure."""
        cmd = lab.Command(("x",), self.tmp / "gates.log")
        cmd.log.write_text("one\ntwo\n")
        passed, failed, lines = self.run_quietly(labcheck.gates_result, self.ctx, cmd, 0)
        self.assertEqual((passed, failed), (0, 1))
        self.assertEqual(lines[:2], ["  one", "  two"])

    def contract(self, logs: List[Tuple[str, str, int]]) -> Tuple[int, int, List[str]]:
        cmds = []
        for gov, text, _ in logs:
            cmds.append(lab.Command(("asan", "fuzz", "--gov", gov), self.tmp / f"fuzz-{gov}.log"))
            cmds[-1].log.write_text(text)
        return self.run_quietly(labcheck.contract_result, self.ctx, cmds,
                                [rc for _, _, rc in logs])

    def test_contract(self) -> None:
        passed, failed, lines = self.contract([
            ("teo", "fuzz teo\n1000000 decisions, 0 violations\n", 0),
            ("menu-6.12", "fuzz menu\nVIOLATION: state 3 disabled\n"
             "/base/menu.c:12: runtime error: shift\n", 1)])
        self.assertEqual((passed, failed), (1, 0), "a baseline's finding is no failure")
        self.assertIn("  baseline menu-6.12: exit 1, findings above (not a failure of ours)",
                      lines)
        self.assertIn("    /base/menu.c:12: runtime error: shift", lines)

    def test_contract_violation_of_ours(self) -> None:
        passed, failed, lines = self.contract([("teo", "fuzz\nVIOLATION\n", 1)])
        self.assertEqual((passed, failed), (0, 1))
        self.assertIn("  teo: exit 1 (a violation of ours or the oracle's)", lines)

    def test_contract_of_no_governor(self) -> None:
        """A lab that lists no governor checks nothing: a failure."""
        self.assertEqual(self.contract([])[:2], (0, 1))

    def test_sanitizer_report_in_our_code(self) -> None:
        """Exit 0, but UBSan names our source: a failure."""
        ours = paths.REPO / paths.GOVERNORS / "teo.c"
        passed, failed, _ = self.contract([
            ("teo-traced", f"fuzz\n{ours}:9:3: runtime error: signed overflow\n", 0)])
        self.assertEqual((passed, failed), (0, 1))

    def trace(self, tsv: str, log: str, status: int = 0) -> Tuple[int, int, List[str]]:
        cmd = labcheck.trace_command(self.ctx)
        if tsv:
            (self.tmp / "trace-gate.tsv").write_text(tsv)
        cmd.log.write_text(log)
        return self.run_quietly(labcheck.trace_result, self.ctx, cmd, status)

    def test_trace_gate(self) -> None:
        passed, failed, lines = self.trace(TSV.format(runs=40, div=0, rdiv=0, bad=0),
                                           EVENTS.format(bad=0))
        self.assertEqual((passed, failed), (1, 0))
        self.assertIn("over 40 runs and the random tables, 900 decisions, 0 divergent; 700"
                      " decisions checked against their events, 0 inconsistent", lines[-1])

    def test_trace_gate_negatives(self) -> None:
        for name, tsv, log, status in (
                ("divergent", TSV.format(runs=40, div=1, rdiv=0, bad=0), EVENTS.format(bad=0), 0),
                ("random divergent", TSV.format(runs=40, div=0, rdiv=2, bad=0), EVENTS.format(bad=0), 0),
                ("inconsistent events", TSV.format(runs=40, div=0, rdiv=0, bad=3),
                 EVENTS.format(bad=3) + "  first: s4 on adl step 9: a lie\n", 0),
                ("no event counts", COUNTS.format(runs=40, div=0, rdiv=0),
                 EVENTS.format(bad=0), 0),
                ("no counts", "", EVENTS.format(bad=0), 0),
                ("failed", TSV.format(runs=40, div=0, rdiv=0, bad=0), EVENTS.format(bad=0), 1)):
            with self.subTest(name=name):
                (self.tmp / "trace-gate.tsv").unlink(missing_ok=True)
                self.ctx.results.passed = self.ctx.results.failed = 0
                passed, failed, lines = self.trace(tsv, log, status)
                self.assertEqual((passed, failed), (0, 1), lines)

    def test_event_counts_only_from_the_table(self) -> None:
        """The display line is for people: a table without the counts
        is an error even when the log has the line."""
        counts = {"events_decisions": 5, "events_inconsistent": 1}
        self.assertEqual(labcheck.event_counts(counts), [5, 1])
        with self.assertRaisesRegex(Fatal, "no events_decisions"):
            labcheck.event_counts({"runs": 3})


class GateTestsTest(ScratchTest):
    """The bash negative tests of the gates are counted as they report."""

    def fake_lab(self, body: str) -> Path:
        folder = self.tmp / "lab"
        (folder / "tests").mkdir(parents=True)
        (folder / "tests" / "gates.sh").write_text(body)
        return folder

    def run_gates(self, body: str) -> Tuple[int, int, str]:
        ctx = Context(lab.Trees(self.tmp / "base"), ["--data", "/d"], self.tmp / "build", self.tmp)
        out = io.StringIO()
        with redirect_stdout(out):
            labcheck.gate_tests(ctx, self.fake_lab(body))
        return ctx.results.passed, ctx.results.failed, out.getvalue()

    def test_counted(self) -> None:
        passed, failed, _ = self.run_gates(
            'gate_tests() { result 0 "one $1 $2 ${data_args[*]}"; result 1 two; }\n'
            'trace_gate_tests() { [ -z "$mainline" ] && result 0 "three $base"; }\n')
        self.assertEqual((passed, failed), (2, 1))
        rows = (self.tmp / "gate-tests.tsv").read_text().splitlines()
        self.assertEqual(rows[0], f"0\tone {self.tmp}/build {self.tmp} --data /d")
        self.assertEqual(rows[2], f"0\tthree {self.tmp}/base")

    def test_stopped_early(self) -> None:
        """A test script that dies (set -e, a typo) is a failure, not a
        shorter list of passes."""
        passed, failed, _ = self.run_gates('gate_tests() { result 0 one; false; }\n'
                                           'trace_gate_tests() { result 0 two; }\n')
        self.assertEqual((passed, failed), (1, 1))


if __name__ == "__main__":
    unittest.main()
