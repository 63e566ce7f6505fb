# SPDX-License-Identifier: GPL-2.0
"""The lab's tests judge right: each is run against fake lab binaries
that answer as the lab should and as it must not (every test has its
negative), and the --per-state reader against the lab's display."""

import io
import json
import unittest
from contextlib import redirect_stdout
from typing import Any, Callable, Dict, List
from unittest import mock

from teotool import lab, labtests
from teotool.lab_test import fake_binary
from teotool.testing import ScratchTest



def run_json(teo_decisions: int = 5, states: int = 3) -> str:
    """The JSON of a run of the oracle and teo (run --json), trimmed."""
    def gov(label: str, decisions: int, usage: List[int]) -> Dict[str, Any]:
        return {"label": label, "role": label, "decisions": decisions,
                "states": [{"index": i, "name": f"S{i}", "usage": u, "time_us": 10 * u,
                            "above": 0, "below": 0} for i, u in enumerate(usage)]}
    return json.dumps({"scenario": "trace-cmd.trace", "platform": "rk3399", "governors": [
        gov("oracle", 4, [1, 0, 1][:states]), gov("teo", teo_decisions, [1, 0, 2][:states])]})


# The last argument of a fake lab command.
LAST = 'for a; do last=$a; done; '


class LabTestsTest(ScratchTest):
    def context(self, script: str) -> labtests.Context:
        build = self.tmp / "build"
        build.mkdir(exist_ok=True)
        fake_binary(build / "idle-replay", script)
        fake_binary(build / "idle-replay-asan", script)
        out = self.tmp / "out"
        out.mkdir(exist_ok=True)
        return labtests.Context(lab.Trees(self.tmp / "base"), [], build, out)

    def lines(self, test: Callable[[labtests.Context], None], ctx: labtests.Context) -> List[str]:
        with redirect_stdout(io.StringIO()) as out:
            test(ctx)
        return out.getvalue().splitlines()

    def test_bad_file(self) -> None:
        bad = self.tmp / "bad.plat"
        for script, ok in (('echo "idle-replay: $2:4: negative exit latency" >&2; exit 1', True),
                           ('echo "idle-replay: $2:5: negative exit latency" >&2; exit 1', False),
                           ('echo "idle-replay: $2:4: x" >&2; echo more >&2; exit 1', False),
                           ('echo "idle-replay: $2:4: negative" >&2; exit 2', False),
                           ("exit 0", False)):
            with self.subTest(script=script):
                ctx = self.context(script)
                lines = self.lines(lambda c: labtests.check_bad_file(c, bad, "4: negative"), ctx)
                self.assertEqual((ctx.results.passed, ctx.results.failed), (ok, not ok))
                self.assertTrue(lines[0].startswith("PASS " if ok else "FAIL "), lines)

    def test_bad_files_of_the_lab(self) -> None:
        """Every bad file has what it must be rejected with; a lab that
        takes them all fails every one."""
        ctx = self.context("exit 0")
        lines = self.lines(labtests.bad_files, ctx)
        self.assertGreater(ctx.results.failed, 10)
        self.assertEqual(ctx.results.passed, 0)
        self.assertEqual(len(lines), ctx.results.failed)

    def test_per_state_verdict(self) -> None:
        self.assertTrue(labtests.per_state_verdict(json.loads(run_json())))
        for name, text in (("usage short of the entries", run_json(teo_decisions=9)),
                           ("more usage than entries", run_json(teo_decisions=2)),
                           ("a state missing", run_json(states=2))):
            with self.subTest(name=name):
                self.assertFalse(labtests.per_state_verdict(json.loads(text)))
        self.assertFalse(labtests.per_state_verdict({"governors": [{"label": "teo"}]}))
        self.assertFalse(labtests.per_state_verdict(None))

    def test_per_state(self) -> None:
        for text, ok in ((run_json(), True), (run_json(teo_decisions=9), False), ("{", False)):
            with self.subTest(text=text[:20]):
                (self.tmp / "run.json").write_text(text)
                ctx = self.context(f'{LAST}cat {self.tmp}/run.json > "$last"')
                self.lines(labtests.per_state, ctx)
                self.assertEqual((ctx.results.passed, ctx.results.failed), (ok, not ok))

    def test_scenario_union(self) -> None:
        """A lab that replays the union and refuses what it must passes
        both; one that keeps the last --scenario, takes an unknown one or
        runs two fails."""
        listing = ("printf 'scenario\\ts4-fio-nvme\\tS4\\tclosed\\nscenario\\ts4-fio-mmc\\tS4"
                   "\\tclosed\\nscenario\\ts2-desktop-idle\\tS2\\topen\\n'")
        both = "s4-fio-nvme s4-fio-mmc s2-desktop-idle"
        unknown = ("echo \"idle-replay: error: no scenario or family 's4-nosuch' (see"
                   " 'idle-replay list')\" >&2; exit 1")
        two = ('echo "idle-replay: error: run takes one --scenario (one timeline), not 2" >&2;'
               ' exit 1')

        def lab_script(scenarios: str, on_unknown: str, run: str) -> str:
            # report's $3 is the --out folder.
            return (f'case $1 in list) {listing};; run) {run};; report) '
                    f'case "$*" in *s4-nosuch*) {on_unknown};; esac; mkdir -p "$3"; '
                    'printf "scenario\\tplatform\\n" > "$3/results.tsv"; '
                    f'printf "%s\\trk3399\\n" {scenarios} >> "$3/results.tsv";; esac')
        for name, script, passed in (
                ("right", lab_script(both, unknown, two), 2),
                ("the last only", lab_script("s2-desktop-idle", unknown, two), 1),
                ("an unknown taken", lab_script(both, "", two), 1),
                ("two run", lab_script(both, unknown, "exit 0"), 1),
                ("an unknown named in two lines",
                 lab_script(both, f"echo more >&2; {unknown}", two), 1)):
            with self.subTest(name=name):
                ctx = self.context(script)
                lines = self.lines(labtests.scenario_union, ctx)
                self.assertEqual((ctx.results.passed, ctx.results.failed), (passed, 2 - passed),
                                 lines)

    def test_overhead_playback(self) -> None:
        head = "governor\\tcalls\\tplayback_faithful\\n"
        for rows, ok in (("teo\\t9\\tyes\\nmenu\\t9\\tyes\\n", True),
                         ("teo\\t9\\tyes\\nmenu\\t9\\tno\\n", False), ("", False)):
            with self.subTest(rows=rows):
                ctx = self.context(f'{LAST}printf "{head}{rows}" > "$last"')
                self.lines(labtests.overhead_playback, ctx)
                self.assertEqual(ctx.results.passed, int(ok))

    def test_same_file(self) -> None:
        a, b = self.tmp / "a", self.tmp / "b"
        a.write_text("x\ny\n")
        b.write_text("x\ny\n")
        self.assertTrue(labtests._same_file(a, b))
        b.write_text("x\nz\n")
        err = io.StringIO()
        with mock.patch("sys.stderr", err):
            self.assertFalse(labtests._same_file(a, b))
            self.assertFalse(labtests._same_file(a, self.tmp / "none"))
        self.assertIn("-y\n+z\n", err.getvalue())

    def test_traced(self) -> None:
        status = self.tmp / "status"
        status.write_text("Name:\tx\nTracerPid:\t0\n")
        self.assertFalse(labtests.traced(status))
        status.write_text("Name:\tx\nTracerPid:\t4242\n")
        self.assertTrue(labtests.traced(status))

    def test_results(self) -> None:
        results = labtests.Results()
        with redirect_stdout(io.StringIO()) as out:
            results.add(True, "one")
            results.add(False, "two")
        results.count(True)
        self.assertEqual((results.passed, results.failed), (2, 1))
        self.assertEqual(out.getvalue(), "PASS one\nFAIL two\n")


if __name__ == "__main__":
    unittest.main()

