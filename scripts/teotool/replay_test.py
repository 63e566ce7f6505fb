# SPDX-License-Identifier: GPL-2.0
"""scripts/teo replay as a user runs it: bad arguments are refused with
one line before anything is built, fetched or locked; --help says what
each command does."""

import argparse
import unittest
from pathlib import Path
from typing import Dict, List, Tuple
from unittest import mock

from teotool import lab, paths, replay
from teotool.cli_test import _method_name, _subst
from teotool.lab_test import lab_tree
from teotool.testing import TEO, ScratchTest
from teotool.ui import UsageError

GOOD = str(paths.LAB_TESTS / "govh" / "probe.c")

# name: (status, pattern, arguments after "replay", extra environment)
BAD_INPUT: List[Tuple[str, int, str, List[str], Dict[str, str]]] = [
    ("unknown command", 2, "unknown command 'nosuch'", ["nosuch"], {}),
    ("--gov without a label", 2, "--gov wants LABEL=PATH, got 'nolabel'",
     ["report", "--gov", "nolabel"], {}),
    ("--gov of a missing file", 2, "--gov x: no such file: '/nonexistent/teo.c'",
     ["report", "--gov", "x=/nonexistent/teo.c"], {}),
    ("--gov with a label of the lab", 2, "--gov label 'teo-7.3' is taken by the lab",
     ["report", "--gov", f"teo-7.3={GOOD}"], {}),
    ("--gov twice", 2, "--gov label 'a' given twice",
     ["report", "--gov", f"a={GOOD}", "--gov", f"a={GOOD}"], {}),
    ("--gov with a space", 2, "must not contain spaces or '='",
     ["report", "--gov", "a={tmp}/with space/gov.c"], {}),
    ("--gov of no governor", 2, "'/etc/hostname' is not a cpuidle governor source",
     ["report", "--gov", "a=/etc/hostname"], {}),
    ("report --scenario", 2, "--scenario 'nosuch' is neither a family",
     ["report", "--scenario", "nosuch"], {}),
    ("report --out with a space", 2, "--out: the folder must not contain spaces",
     ["report", "--out", "{tmp}/a b"], {}),
    ("run --scenario", 2, "--scenario 'nosuch' is neither", ["run", "--scenario", "nosuch"], {}),
    ("run --scenario twice", 2, "run replays one timeline: one --scenario, not 2",
     ["run", "--scenario", "s2-desktop-idle", "--scenario", "S4"], {}),
    ("run --trace of a missing file", 2, "--trace: no such file: '{tmp}/none.trace'",
     ["run", "--trace", "{tmp}/none.trace"], {}),
    ("run --platform of a missing file", 2, "--platform: no such file: '{tmp}/x.plat'",
     ["run", "--scenario", "S2", "--platform", "{tmp}/x.plat"], {}),
    ("run --gov of no governor", 2, "'/etc/hostname' is not a cpuidle governor source",
     ["run", "--scenario", "s2-desktop-idle", "--gov", "a=/etc/hostname"], {}),
    ("run --gov with a label of the lab", 2, "--gov label 'teo' is taken by the lab",
     ["run", "--scenario", "s2-desktop-idle", "--gov", f"teo={GOOD}"], {}),
    ("run --gov twice", 2, "--gov label 'a' given twice",
     ["run", "--gov", f"a={GOOD}", "--gov", "teo", "--gov", f"a={GOOD}"], {}),
    ("convert --hz", 2, "--hz wants 100, 250, 300 or 1000, got 'abc'",
     ["convert", "--hz", "abc", "in", "out"], {}),
    ("convert of one file", 2, "required: OUTPUT", ["convert", "only-one"], {}),
    ("convert of a missing file", 2, "convert: no such file: '{tmp}/none'",
     ["convert", "{tmp}/none", "out"], {}),
    ("check --bogus", 2, "unknown argument '--bogus'", ["check", "--bogus"], {}),
    # The targets are always a gate of check: no option turns them on.
    ("check --targets", 2, "unknown argument '--targets'", ["check", "--targets"], {}),
    ("targets extra", 2, "unknown argument 'extra'", ["targets", "extra"], {}),
    ("leaks extra", 2, "unknown argument 'extra'", ["leaks", "extra"], {}),
    ("overhead --rounds 0", 2, "--rounds wants a number of rounds, 1..9999",
     ["overhead", "--rounds", "0"], {}),
    ("overhead --rounds 10000", 2, "1..9999", ["overhead", "--rounds", "10000"], {}),
    ("overhead --gov of no governor", 2, "'/etc/hostname' is not a cpuidle governor source",
     ["overhead", "--gov", "a=/etc/hostname"], {}),
    ("misses --report of a missing folder", 2, "--report: no such folder: '{tmp}/none'",
     ["misses", "--report", "{tmp}/none"], {}),
    ("misses --out in a missing folder", 2, "--out: no such folder: '{tmp}/none'",
     ["misses", "--out", "{tmp}/none/km"], {}),
    ("misses --check --out", 2, "--check writes nothing: leave out --out",
     ["misses", "--check", "--out", "{tmp}/km"], {}),
    ("misses --report of no report", 1, "{tmp}/results.tsv: No such file",
     ["misses", "--report", "{tmp}"], {}),
    ("diff of one file", 2, "diff needs OLD.c and NEW.c", ["diff", GOOD], {}),
    ("diff of no governor", 2, "diff: '/etc/hostname' is not a cpuidle governor source",
     ["diff", "/etc/hostname", GOOD], {}),
    ("diff of a missing file", 2, "diff: no such file: '{tmp}/none.c'",
     ["diff", GOOD, "{tmp}/none.c"], {}),
    ("list without a base tree", 1, "KERNEL_SRC={tmp}/no-such-tree does not exist",
     ["list"], {}),
    ("convert without a base tree", 1, "KERNEL_SRC=/nonexistent does not exist",
     ["convert", GOOD, "-"], {"KERNEL_SRC": "/nonexistent"}),
    ("a base tree without governors", 1, "base tree {tmp} has no Makefile",
     ["list"], {"KERNEL_SRC": "{tmp}"}),
    ("TEO_MAINLINE_SRC not a folder", 1, "TEO_MAINLINE_SRC=/etc/hostname is not a folder",
     ["diff", GOOD, GOOD], {"KERNEL_SRC": "{tmp}/base", "TEO_MAINLINE_SRC": "/etc/hostname"}),
]

HELP: List[Tuple[str, List[str]]] = [
    ("TEO_MAINLINE_SRC", []),
    ("--gov LABEL=PATH", ["report"]),
    ("repeatable: every scenario any of them names", ["report"]),
    ("the mean over the families has no such", ["check"]),
    ("targets table", ["targets"]),
    ("--counts FILE", ["diff"]),
    ("--rounds N", ["overhead"]),
    ("--report DIR", ["misses"]),
    ("lines of the family medians are written by hand", ["misses"]),
    ("With --check nothing is written", ["misses"]),
    ("--gov LABEL=PATH", ["overhead"]),
    ("--platform NAME|FILE", ["convert"]),
    ("LeakSanitizer", ["leaks"]),
    ("--per-state", ["run"]),
    ("LABEL=PATH, a governor source compiled in", ["run"]),
    ("is refused ('report' takes several)", ["run"]),
    ("--tsv", ["list"]),
]


class ReplayInputTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        (self.tmp / "with space").mkdir()
        (self.tmp / "with space" / "gov.c").write_text(Path(GOOD).read_text())
        lab_tree(self.tmp / "base")

    def test_no_command(self) -> None:
        """The help, then one error line."""
        run = self.run_cmd([TEO, "replay"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("usage: teo replay", run.stderr)
        self.assertTrue(run.stderr.endswith("teo: error: no command given (see --help)\n"))
        self.assertEqual(run.stderr.count("error:"), 1)


def _bad_input_case(status: int, pattern: str, args: List[str],
                    env: Dict[str, str]) -> "object":
    def test(self: ReplayInputTest) -> None:
        self.assertBadInput(status, _subst(pattern, self.tmp),
                            [TEO, "replay", *(_subst(a, self.tmp) for a in args)],
                            {k: _subst(v, self.tmp) for k, v in env.items()})
    return test


def _help_case(pattern: str, args: List[str]) -> "object":
    def test(self: ReplayInputTest) -> None:
        self.assertHelp(pattern, [TEO, "replay", *args, "--help"])
    return test


for _name, _status, _pattern, _args, _env in BAD_INPUT:
    setattr(ReplayInputTest, _method_name("bad " + _name),
            _bad_input_case(_status, _pattern, _args, _env))
for _pattern, _args in HELP:
    setattr(ReplayInputTest, _method_name(f"help {' '.join(_args) or 'replay'}"),
            _help_case(_pattern, _args))


class ReportTest(ScratchTest):
    def report(self, scenarios: List[str]) -> mock.MagicMock:
        """replay.report with the lab faked (a scenario of S1, P and S2
        each); the mock of process.run, every run a success."""
        listing = lab.Listing((), (), (("s1-idle-hz1000", "S1"), ("p-io-idle", "P"),
                                       ("s2-desktop-idle", "S2")))
        trees = lab.Trees(self.tmp)
        with mock.patch.object(replay.deps, "need_cmd"), \
                mock.patch.object(lab, "find_trees", return_value=trees), \
                mock.patch.object(lab, "over_eager_variant", return_value=("v", self.tmp)), \
                mock.patch.object(lab, "corpus", return_value=["--data", "/c"]), \
                mock.patch.object(lab.Lab, "build", return_value=self.tmp), \
                mock.patch.object(lab, "listing", return_value=listing), \
                mock.patch.object(replay.process, "run", return_value=0) as run:
            replay.report(self.tmp / "out", scenarios=scenarios)
        return run

    def test_unknown_scenario(self) -> None:
        """A scenario of the right form that the lab does not have is a
        usage error before the report runs."""
        with self.assertRaisesRegex(UsageError, "'s2-nosuch': no such scenario"):
            self.report(["S2", "s2-desktop-idle", "s2-nosuch"])
        self.assertFalse((self.tmp / "out").exists())

    def test_two_scenarios(self) -> None:
        """Each --scenario goes to the lab, in order (the lab replays the
        union of what they name)."""
        run = self.report(["S1", "p-io-idle"])
        argv = [str(a) for a in run.call_args_list[0].args[0]]
        self.assertEqual(argv[argv.index("/c") + 1:argv.index("--gates")],
                         ["--scenario", "S1", "--scenario", "p-io-idle"])
        self.assertEqual(run.call_args_list[1].args[0], ["gnuplot", "plots.gp"])
        self.assertTrue((self.tmp / "out").is_dir())


class RunTest(ScratchTest):
    def run_tool(self, govs: List[str]) -> Tuple[mock.MagicMock, mock.MagicMock]:
        """replay run with the lab faked; the mocks of lab.Lab and of
        process.run."""
        args = argparse.Namespace(
            command="run", scenario=["s2-desktop-idle"], trace=None, platform=None,
            json=None, gov=govs, per_state=False)
        with mock.patch.object(lab, "find_trees", return_value=lab.Trees(self.tmp)), \
                mock.patch.object(lab, "corpus", return_value=["--data", "/c"]), \
                mock.patch.object(lab, "Lab") as fake_lab, \
                mock.patch.object(lab, "validate"), \
                mock.patch.object(replay.process, "run", return_value=0) as run:
            fake_lab.return_value.build.return_value = self.tmp
            self.assertEqual(replay._cmd_tool(args), 0)
        return fake_lab, run

    def test_sources_are_compiled_in_and_run_by_label(self) -> None:
        """A --gov LABEL=PATH goes into the lab build as an extra
        governor and to the lab's run as its label, beside plain labels,
        in the order given."""
        fake_lab, run = self.run_tool(["teo", f"v={GOOD}"])
        self.assertEqual(fake_lab.call_args.kwargs["extra"], (("v", Path(GOOD)),))
        argv = run.call_args.args[0]
        self.assertEqual(argv[argv.index("s2-desktop-idle") + 1:],
                         ["--gov", "teo", "--gov", "v"])

    def test_plain_labels_build_the_plain_lab(self) -> None:
        fake_lab, _ = self.run_tool(["teo", "menu-6.12"])
        self.assertEqual(fake_lab.call_args.kwargs["extra"], ())


class DifferentialTest(unittest.TestCase):
    def test_counts_row(self) -> None:
        d = replay.Differential(Path("/a.c"), Path("/b.c"), 1, 2, 3, 4, 5, 6, ())
        self.assertEqual(d.row(), "/a.c\t/b.c\t1\t2\t3\t4\t5\t6")
        self.assertEqual(replay.COUNT_COLUMNS[0], "runs")

    def test_chain_lanes_cover_every_pair_once(self) -> None:
        for pairs in range(1, 30):
            for lanes in (1, 2, 3):
                pieces = replay.chain_lanes(pairs, lanes)
                self.assertEqual(len(pieces), min(pairs, lanes))
                self.assertEqual(pieces[0][0], 0)
                self.assertEqual(pieces[-1][1], pairs)
                for (_, last), (first, _) in zip(pieces, pieces[1:]):
                    self.assertEqual(last, first)
                sizes = [last - first for first, last in pieces]
                self.assertLessEqual(max(sizes) - min(sizes), 1)

    def test_chain_lanes_run_each_governor_once_plus_cuts(self) -> None:
        pieces = replay.chain_lanes(24, 2)
        self.assertEqual(pieces, [(0, 12), (12, 24)])
        self.assertEqual(sum(last - first + 1 for first, last in pieces), 26)


if __name__ == "__main__":
    unittest.main()
