# SPDX-License-Identifier: GPL-2.0
"""The lab's input checks, its trees, the governor sources it makes in the
cache, its build key, its parallel runs and its machine-readable answers,
on small fake trees and fake lab binaries (nothing is built)."""

import os
import signal
import unittest
from pathlib import Path
from typing import Dict
from unittest import mock

from teotool import lab, paths
from teotool.process_test import alive, wait_for
from teotool.testing import ScratchTest
from teotool.ui import Fatal, UsageError

GOVERNOR = "static struct cpuidle_governor g = { .name = \"g\" };\n"


def lab_tree(root: Path, version: str = "6.12.5", teo: str = "") -> Path:
    """A tree with what the lab reads of one."""
    major, minor, sub = version.split(".")
    (root / paths.GOVERNORS).mkdir(parents=True)
    (root / "Makefile").write_text(f"VERSION = {major}\nPATCHLEVEL = {minor}\nSUBLEVEL = {sub}\n")
    for name in ("menu.c", "gov.h"):
        (root / paths.GOVERNORS / name).write_text(GOVERNOR)
    (root / paths.GOVERNORS / "teo.c").write_text(teo or GOVERNOR)
    return root


def fake_binary(path: Path, script: str) -> Path:
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return path


class InputTest(ScratchTest):
    def test_scenarios(self) -> None:
        for good in ("S4", "X", "s4-fio-nvme", "p-phases", "x-qos-2"):
            self.assertEqual(lab.check_scenario(good), good)
        for bad in ("nosuch", "S10", "s4", "s0-x", "S4-fio", "s4-Fio"):
            with self.subTest(bad=bad), self.assertRaisesRegex(UsageError, "neither a family"):
                lab.check_scenario(bad)

    def test_governor_source(self) -> None:
        gov = self.tmp / "gov.c"
        gov.write_text(GOVERNOR)
        self.assertEqual(lab.governor_source(str(gov), "diff"), gov)
        other = self.tmp / "other.c"
        other.write_text("int main(void) { return 0; }\n")
        with self.assertRaisesRegex(UsageError, "is not a cpuidle governor source"):
            lab.governor_source(str(other), "diff")
        with self.assertRaisesRegex(UsageError, "diff: no such file"):
            lab.governor_source(str(self.tmp / "none.c"), "diff")
        (self.tmp / "a b").mkdir()
        (self.tmp / "a b" / "gov.c").write_text(GOVERNOR)
        with self.assertRaisesRegex(UsageError, "must not contain spaces"):
            lab.governor_source(str(self.tmp / "a b" / "gov.c"), "diff")

    def test_relative_source_made_absolute(self) -> None:
        (self.tmp / "gov.c").write_text(GOVERNOR)
        cwd = os.getcwd()
        os.chdir(self.tmp)
        try:
            self.assertEqual(lab.governor_source("gov.c", "diff"), self.tmp / "gov.c")
        finally:
            os.chdir(cwd)

    def test_gov_option(self) -> None:
        gov = self.tmp / "gov.c"
        gov.write_text(GOVERNOR)
        self.assertEqual(lab.parse_gov(f"next={gov}"), ("next", gov))
        for arg, message in (("nolabel", "wants LABEL=PATH"), (f"a b={gov}", "not a plain name"),
                             (f"={gov}", "not a plain name"), (f"teo={gov}", "taken by the lab"),
                             (f"menu-7.3={gov}", "taken by the lab"),
                             (f"teo-traced={gov}", "taken by the lab"),
                             (f"oracle={gov}", "taken by the lab"),
                             (f"ref-fit={gov}", "taken by the lab"),
                             (f"x={self.tmp}/none.c", "--gov x: no such file")):
            with self.subTest(arg=arg), self.assertRaisesRegex(UsageError, message):
                lab.parse_gov(arg)
        with self.assertRaisesRegex(UsageError, "given twice"):
            lab.parse_gov(f"a={gov}", ["a"])
        # A label that merely starts like the lab's is the user's.
        self.assertEqual(lab.parse_gov(f"teo-next={gov}")[0], "teo-next")


class TreesTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        patcher = mock.patch.dict(os.environ, {"TEO_CACHE": str(self.tmp / "cache"),
                                               "TEO_MAINLINE_SRC": "", "KERNEL_SRC": ""})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_problems(self) -> None:
        t = lab_tree(self.tmp / "t")
        self.assertEqual(lab.tree_problem(t), "")
        self.assertEqual(lab.version_xy(t), "6.12")
        (t / paths.GOVERNORS / "gov.h").unlink()
        self.assertEqual(lab.tree_problem(t), f"has no {paths.GOVERNORS}/gov.h")
        (t / paths.GOVERNORS / "gov.h").write_text("")
        (t / "Makefile").write_text("VERSION = 6\n")
        self.assertEqual(lab.tree_problem(t), "has no VERSION/PATCHLEVEL in its Makefile")

    def test_kernel_src(self) -> None:
        t = lab_tree(self.tmp / "t")
        with mock.patch.dict(os.environ, {"KERNEL_SRC": str(t)}):
            self.assertEqual(lab.base_tree(), t)
        with mock.patch.dict(os.environ, {"KERNEL_SRC": str(self.tmp / "none")}), \
                self.assertRaisesRegex(Fatal, "does not exist"):
            lab.base_tree()
        (t / paths.GOVERNORS / "menu.c").unlink()
        with mock.patch.dict(os.environ, {"KERNEL_SRC": str(t)}), \
                self.assertRaisesRegex(Fatal, f"base tree {t} has no .*menu.c"):
            lab.base_tree()

    def test_mainline(self) -> None:
        base = lab_tree(self.tmp / "base")
        newer = lab_tree(self.tmp / "newer", "7.3.0")
        same = lab_tree(self.tmp / "same", "6.12.9")
        env: Dict[str, str] = {"KERNEL_SRC": str(base)}
        with mock.patch.dict(os.environ, dict(env, TEO_MAINLINE_SRC="none")):
            self.assertEqual(lab.find_trees(True), lab.Trees(base, None))
        with mock.patch.dict(os.environ, dict(env, TEO_MAINLINE_SRC=str(newer))):
            self.assertEqual(lab.find_trees(False), lab.Trees(base, newer))
        with mock.patch.dict(os.environ, dict(env, TEO_MAINLINE_SRC=str(same))), \
                mock.patch.object(lab, "note") as note:
            self.assertEqual(lab.find_trees(False), lab.Trees(base, None))
            note.assert_called_once()
        with mock.patch.dict(os.environ, dict(env, TEO_MAINLINE_SRC=str(self.tmp / "x"))), \
                self.assertRaisesRegex(Fatal, "TEO_MAINLINE_SRC=.* is not a folder"):
            lab.find_trees(False)

    def test_mainline_not_fetched_yet(self) -> None:
        """Only the commands that fetch it need the mainline tree."""
        self.assertIsNone(lab.mainline_tree(False))
        with mock.patch.object(lab.fetch, "newest", side_effect=Fatal("no network")), \
                self.assertRaisesRegex(Fatal, r"cannot fetch .*\(no network\);"
                                       " TEO_MAINLINE_SRC=none runs without it"):
            lab.mainline_tree(True)


class VariantTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        patcher = mock.patch.dict(os.environ, {"TEO_CACHE": str(self.tmp / "cache")})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_over_eager_variant(self) -> None:
        teo = GOVERNOR + "\t\tif (2 * idx_intercept_sum > cpu_data->total - idx_hit_sum) {\n"
        base = lab_tree(self.tmp / "t", teo=teo)
        label, src = lab.over_eager_variant(base)
        self.assertEqual(label, "teo-6.12-seed001")
        self.assertIn("if (2 * (idx_intercept_sum + idx_hit_sum) > cpu_data->total) {",
                      src.read_text())
        self.assertTrue((src.parent / "gov.h").is_file())
        self.assertEqual(lab.over_eager_variant(base)[1], src, "made once")

    def test_variant_that_does_not_apply(self) -> None:
        base = lab_tree(self.tmp / "t")
        with self.assertRaisesRegex(Fatal, "does not apply to .*teo.c"):
            lab.over_eager_variant(base)
        self.assertFalse(list((self.tmp / "cache").rglob("teo.c")), "nothing left behind")

    def test_every_mutant_applies(self) -> None:
        """Each listed difference with a mutant becomes a patched copy of
        our teo.c; the copies are made once."""
        found = lab.mutant_sources()
        self.assertTrue(found)
        for label, src in found:
            with self.subTest(mutant=label):
                self.assertTrue(label.startswith("mutant-"))
                changed = [rel for rel in paths.OUR_GOVERNOR
                           if (src.parent / Path(rel).name).read_bytes()
                           != (paths.REPO / rel).read_bytes()]
                self.assertTrue(changed, "the mutant changes nothing")
        self.assertEqual(lab.mutant_sources(), found)


class BuildTest(ScratchTest):
    def test_make_and_key(self) -> None:
        trees = lab.Trees(Path("/b"), Path("/m"))
        gov = ("next", Path("/g/teo.c"))
        built = lab.Lab(trees, extra=(gov,))
        argv = built.make(Path("/o"), "/o/idle-replay")
        for arg in ("BASE=/b", "MAINLINE=/m", "O=/o", "GOV_EXTRA=next=/g/teo.c",
                    "GOV_MUTANTS=", "/o/idle-replay"):
            self.assertIn(arg, argv)
        self.assertIn("MAINLINE=", lab.Lab(lab.Trees(Path("/b"))).make(Path("/o")))
        keys = {built.folder(), lab.Lab(trees).folder(), lab.Lab(lab.Trees(Path("/b"))).folder(),
                lab.Lab(trees, mutants=(gov,)).folder()}
        self.assertEqual(len(keys), 4, "one build folder per set of governors")
        self.assertEqual(built.folder(), lab.Lab(trees, extra=(gov,)).folder())

    def test_extra_corpus(self) -> None:
        (self.tmp / "c").mkdir()
        with mock.patch.dict(os.environ, {"TEO_CORPUS": f":{self.tmp}/c:"}):
            self.assertEqual(lab.extra_corpus(), [self.tmp / "c"])
        with mock.patch.dict(os.environ, {"TEO_CORPUS": f"{self.tmp}/none"}), \
                self.assertRaisesRegex(Fatal, "TEO_CORPUS: .*/none is not a folder"):
            lab.extra_corpus()


class LanesTest(ScratchTest):
    def cmd(self, name: str, script: str) -> lab.Command:
        return lab.Command(("sh", "-c", script), self.tmp / f"{name}.log")

    def test_order_status_and_logs(self) -> None:
        stamp = self.tmp / "order"
        lanes = [[self.cmd("a1", f"echo a1 >> {stamp}; sleep 0.3; exit 3"),
                  self.cmd("a2", f"echo a2 >> {stamp}; echo out; echo err >&2")],
                 [],
                 [self.cmd("b1", f"echo b1 >> {stamp}")]]
        self.assertEqual(lab.run_lanes(lanes, parallel=2), [[3, 0], [], [0]])
        order = stamp.read_text().split()
        self.assertLess(order.index("a1"), order.index("a2"))
        self.assertEqual((self.tmp / "a2.log").read_text(), "out\nerr\n")

    def test_at_most_parallel(self) -> None:
        """A lane waits for a free slot: two lanes of one slot run in turn."""
        stamp = self.tmp / "order"
        lanes = [[self.cmd("a", f"echo a-start >> {stamp}; sleep 0.3; echo a-end >> {stamp}")],
                 [self.cmd("b", f"echo b-start >> {stamp}")]]
        lab.run_lanes(lanes, parallel=1)
        self.assertEqual(stamp.read_text().split(), ["a-start", "a-end", "b-start"])

    def test_environment(self) -> None:
        cmd = lab.Command(("sh", "-c", "echo $ASAN_OPTIONS"), self.tmp / "env.log",
                          {"ASAN_OPTIONS": "detect_leaks=0"})
        lab.run_lanes([[cmd]])
        self.assertEqual(cmd.log.read_text(), "detect_leaks=0\n")

    def test_unwinding_stops_the_lanes(self) -> None:
        """An exception (a signal's Interrupted) stops every running group."""
        pid_file = self.tmp / "pid"
        lanes = [[self.cmd("a", f"echo $$ > {pid_file}; exec sleep 300")]]

        def alarm(signum: int, frame: object) -> None:
            raise KeyboardInterrupt

        old = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        try:
            with self.assertRaises(KeyboardInterrupt):
                lab.run_lanes(lanes)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        pid = int(pid_file.read_text())
        self.assertTrue(wait_for(lambda: not alive(pid)))


class OutputTest(ScratchTest):
    def test_grep_after(self) -> None:
        lines = ["x", "DIVERGENCE 1", "a", "b", "c", "DIVERGENCE 2", "d", "e", "f", "g"]
        self.assertEqual(lab.grep_after(lines, "^DIVERGENCE", 1, 40),
                         ["DIVERGENCE 1", "a", "--", "DIVERGENCE 2", "d"])
        self.assertEqual(lab.grep_after(lines, "^DIVERGENCE", 4, 40),
                         ["DIVERGENCE 1", "a", "b", "c", "DIVERGENCE 2", "d", "e", "f", "g"])
        self.assertEqual(lab.grep_after(lines, "^DIVERGENCE", 6, 3), ["DIVERGENCE 1", "a", "b"])
        self.assertEqual(lab.grep_after(lines, "^NONE", 6, 40), [])

    def test_read_counts(self) -> None:
        good = self.tmp / "good.tsv"
        good.write_text("runs\tdecisions\n3\t40\n")
        self.assertEqual(lab.read_counts(good), {"runs": 3, "decisions": 40})
        for name, text in (("empty", ""), ("ragged", "runs\tdecisions\n3\n"),
                           ("words", "runs\nmany\n")):
            bad = self.tmp / name
            bad.write_text(text)
            with self.subTest(name=name), self.assertRaisesRegex(Fatal, "no table of counts"):
                lab.read_counts(bad)
        with self.assertRaisesRegex(Fatal, "no table of counts"):
            lab.read_counts(self.tmp / "none")

    def test_read_count_rows_of_a_chain(self) -> None:
        chain = self.tmp / "chain.tsv"
        chain.write_text("runs\tdivergent\n3\t0\n3\t2\n")
        self.assertEqual(lab.read_count_rows(chain),
                         [{"runs": 3, "divergent": 0}, {"runs": 3, "divergent": 2}])
        with self.assertRaisesRegex(Fatal, "2 rows of counts where one"):
            lab.read_counts(chain)
        header = self.tmp / "header.tsv"
        header.write_text("runs\tdivergent\n")
        with self.assertRaisesRegex(Fatal, "no table of counts"):
            lab.read_count_rows(header)
        ragged = self.tmp / "ragged.tsv"
        ragged.write_text("runs\tdivergent\n3\t0\n3\n")
        with self.assertRaisesRegex(Fatal, "no table of counts"):
            lab.read_count_rows(ragged)

    def test_governors(self) -> None:
        binary = fake_binary(self.tmp / "lab", "printf 'governor\\toracle\\toracle\\t-\\n"
                             "governor\\tteo\\tours\\t/r/teo.c\\nplatform\\tadl\\tIntel\\n'")
        self.assertEqual(lab.governors(binary), [lab.LabGovernor("oracle", "oracle", "-"),
                                                 lab.LabGovernor("teo", "ours", "/r/teo.c")])
        found = lab.listing(fake_binary(self.tmp / "all", "printf 'governor\\tteo\\tours\\t-\\n"
                                        "platform\\tadl\\tIntel Alder Lake\\n"
                                        "scenario\\ts2-desktop-idle\\tS2\\topen\\n'"))
        self.assertEqual(found.platforms, ("adl",))
        self.assertEqual(found.scenarios, (("s2-desktop-idle", "S2"),))
        with self.assertRaisesRegex(Fatal, "names no governor"):
            lab.governors(fake_binary(self.tmp / "empty", "true"))
        with self.assertRaisesRegex(Fatal, "list --tsv failed: unknown option"):
            lab.governors(fake_binary(self.tmp / "old", "echo unknown option >&2; exit 1"))

    def test_validate(self) -> None:
        good = fake_binary(self.tmp / "good", "exit 0")
        lab.validate(good, ["a.trace", "b.plat"])
        bad = fake_binary(self.tmp / "bad", 'echo "idle-replay: $2:4: negative time" >&2; exit 1')
        with self.assertRaisesRegex(Fatal, "^b.plat:4: negative time$"):
            lab.validate(bad, ["b.plat"])


if __name__ == "__main__":
    unittest.main()
