# SPDX-License-Identifier: GPL-2.0
"""The series export's pieces that need no kernel build: the claims the
lab checks, the cover letter's bounds and VM section, the naming of the
base, the git import of a queue and the overlay check, the stripping of
test hooks; and the command line's bad input."""

import difflib
import os
import time
from pathlib import Path
from unittest import mock

from teotool import claims, cover, paths, queue, series, seriescheck, seriesrepo
from teotool.testing import TEO, ScratchTest
from teotool.ui import Fatal

GOVERNOR_PATCH = """Subject: cpuidle: teo: Change a rule

It changes 7 decisions of the lab's corpus.
---
diff --git a/drivers/cpuidle/governors/teo.c b/drivers/cpuidle/governors/teo.c
--- a/drivers/cpuidle/governors/teo.c
+++ b/drivers/cpuidle/governors/teo.c
@@ -1 +1 @@
-int rule = 1;
+int rule = 2;
"""


def fake_queue(tmp: Path, claimed: "dict[str, int]") -> queue.Queue:
    p = queue.parse_patch("0002-rule.patch", GOVERNOR_PATCH)
    p.name = "0002-rule.patch"
    return queue.Queue("6.12", tmp / "6.12", [p], "S", "Text.\n", claimed)


class ClaimsTest(ScratchTest):
    def counts(self, divergent: int, random: int = 0) -> claims.Counts:
        return claims.Counts(100, 1000, divergent, 50, random)

    def test_right_count(self) -> None:
        q = fake_queue(self.tmp, {"0002-rule.patch": 7})
        self.assertIsNone(claims.check_step(q, q.patches[0], self.counts(5, 2), "6.12.1"))

    def test_count_the_lab_does_not_measure(self) -> None:
        q = fake_queue(self.tmp, {"0002-rule.patch": 7})
        why = claims.check_step(q, q.patches[0], self.counts(8), "6.12.1")
        self.assertRegex(why or "", "says 7 for 0002-rule.patch, but on Linux"
                         " 6.12.1 the lab counts 8 divergent cases")

    def test_message_without_its_count(self) -> None:
        q = fake_queue(self.tmp, {"0002-rule.patch": 17})
        why = claims.check_step(q, q.patches[0], self.counts(17), "6.12.1")
        self.assertRegex(why or "", "does not state its differential count 17")

    def test_no_entry_is_a_note(self) -> None:
        q = fake_queue(self.tmp, {})
        with mock.patch.object(claims, "note") as note:
            self.assertIsNone(claims.check_step(q, q.patches[0], self.counts(3), "6.12.1"))
        self.assertIn("the lab counts 3 divergent cases", note.call_args[0][0])

    def test_false_no_functional_change(self) -> None:
        q = fake_queue(self.tmp, {"0002-rule.patch": 0})
        q.patches[0].message = "No functional change intended.\n"
        why = claims.check_step(q, q.patches[0], self.counts(0, 1), "6.12.1")
        self.assertRegex(why or "", "claims no functional change.* in 1 cases")
        self.assertIsNone(claims.check_step(q, q.patches[0], self.counts(0), "6.12.1"))

    def test_states_count(self) -> None:
        self.assertTrue(claims.states_count("changes 1617 decisions", 1617))
        self.assertTrue(claims.states_count("changes 1,617 decisions", 1617))
        self.assertFalse(claims.states_count("changes 16170 decisions", 1617))
        self.assertFalse(claims.states_count("version 2.1617", 1617))

    def test_read_counts(self) -> None:
        tsv = self.tmp / "c.tsv"
        tsv.write_text("old\tnew\truns\tdecisions\tdivergent\trandom_cases\t"
                       "random_decisions\trandom_divergent\na\tb\t5\t60\t3\t10\t70\t4\n")
        (c,) = claims.read_counts(tsv)
        self.assertEqual((c.total, c.all_decisions), (7, 130))
        tsv.write_text("runs\n5\n")
        with self.assertRaisesRegex(Fatal, "is not the lab's table of counts"):
            claims.read_counts(tsv)


class CoverTest(ScratchTest):
    def test_bounds(self) -> None:
        prose61 = "word\n" * 61 + "\n  table\n  row\n"
        self.assertEqual(cover.size(prose61), (61, 64))
        with self.assertRaisesRegex(Fatal, "61 lines of prose and 64 in all"):
            cover.check_size(prose61)
        fine = "word\n" * 60 + "\n  table\n" * 30
        cover.check_size(fine)
        with self.assertRaisesRegex(Fatal, "60 lines of prose and 180 in all"):
            cover.check_size(fine + "  row\n" * 60)

    def test_placeholders(self) -> None:
        cover.check_placeholders("A letter.\n")
        with self.assertRaisesRegex(Fatal, "placeholder: EDITME: say why"):
            cover.check_placeholders("A letter.\nEDITME: say why\n")

    def test_newest_vm_run(self) -> None:
        def run(name: str, date: str, kernel: str) -> Path:
            d = self.tmp / name / "bench"
            d.mkdir(parents=True)
            (d / "setup.txt").write_text(f"date: {date}\nkernel: {kernel}, teo\n")
            (d / "summary.txt").write_text("numbers\n")
            return d.parent
        old = run("1", "2026-01-01T00:00:00Z", "6.12.118")
        same = run("2", "2026-12-01T00:00:00Z", "6.12.118")
        other = run("3", "2026-12-02T00:00:00Z", "7.3.0-rc7")
        since = int(time.mktime((2026, 6, 1, 0, 0, 0, 0, 0, 0)))
        self.assertEqual(cover.newest_vm_run("6.12.118", [old, same, other], since),
                         (same, True))
        self.assertEqual(cover.newest_vm_run("6.13.0", [old, same, other], since),
                         (other, False))
        self.assertEqual(cover.newest_vm_run("6.12.118", [old], since), (None, False))


class BaseNameTest(ScratchTest):
    def test_debian_upstream(self) -> None:
        self.assertEqual(series.debian_upstream("7.3~rc7-1~exp1"), "7.3-rc7")
        self.assertEqual(series.debian_upstream("6.12.117-1~deb12u1"), "6.12.117")

    def test_release_names(self) -> None:
        (self.tmp / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 0\n"
                                           "EXTRAVERSION = -rc7\n")
        self.assertEqual(series.release_names(self.tmp), ("7.3-rc7", "7.3.0-rc7"))


class TestHooksTest(ScratchTest):
    def test_strip(self) -> None:
        text = ("a\n#ifdef CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST\n#include \"t.c\"\n"
                "#endif\nb\n\tTEO_TEST_REDIRECT(teo_now);\nc\n")
        self.assertEqual(seriescheck.strip_test_hooks(text), "a\nb\nc\n")
        teo = (paths.REPO / paths.GOVERNORS / "teo.c").read_text()
        self.assertNotRegex(seriescheck.strip_test_hooks(teo), "KUNIT|kunit")


def git(repo: Path, *args: str) -> str:
    return seriesrepo.git(repo, *args)


class RepoTest(ScratchTest):
    """A small base tree holding the overlay's files, recorded as a git
    commit; a queue imported onto it."""

    def setUp(self) -> None:
        super().setUp()
        self.base = self.tmp / "linux-source-x"
        for rel in paths.OVERLAY_PATHS:
            src = paths.REPO / rel
            for f in (sorted(src.rglob("*")) if src.is_dir() else [src]):
                if f.is_file():
                    dst = self.base / f.relative_to(paths.REPO)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    dst.write_bytes(f.read_bytes())
        (self.base / "README").write_text("base\n")
        self.repo = self.tmp / "repo.git"
        env = {"TEO_LOCK": str(self.tmp / "lock")}
        with mock.patch.dict(os.environ, env):
            seriesrepo.base_repo(self.base, self.repo)
        self.who = seriesrepo.Identity("A Developer", "dev@example.org")

    def queue_of(self, diff: str) -> queue.Queue:
        p = queue.parse_patch("0001-x.patch", f"Subject: x: Change\n\nWhy.\n---\n{diff}")
        return queue.Queue("t", self.tmp, [p], "S", "", {})

    def test_import_signs_off_and_lays_in_the_overlay(self) -> None:
        q = self.queue_of("diff --git a/README b/README\n--- a/README\n+++ b/README\n"
                          "@@ -1 +1 @@\n-base\n+changed\n")
        (tip,) = seriesrepo.import_queue(self.repo, q, self.who)
        message = git(self.repo, "show", "-s", "--format=%an <%ae>%n%B", tip)
        self.assertEqual(message, "A Developer <dev@example.org>\nx: Change\n\nWhy.\n\n"
                         "Signed-off-by: A Developer <dev@example.org>\n\n")
        self.assertEqual(seriesrepo.overlay_tree(self.repo, tip),
                         git(self.repo, "rev-parse", f"{tip}^{{tree}}").strip())

    def test_a_queue_that_leaves_the_overlay(self) -> None:
        teo = f"{paths.GOVERNORS}/teo.c"
        old = (self.base / teo).read_text().splitlines(keepends=True)
        new = ["/* not the overlay */\n", *old[1:]]
        q = self.queue_of(f"diff --git a/{teo} b/{teo}\n" + "".join(
            difflib.unified_diff(old, new, f"a/{teo}", f"b/{teo}", n=2)))
        q.folder = paths.SERIES / "t"
        (tip,) = seriesrepo.import_queue(self.repo, q, self.who)
        with self.assertRaisesRegex(Fatal, f"does not lay in the overlay: {teo} differ"):
            series.check_overlay(self.repo, tip, q)

    def test_a_patch_that_does_not_apply_is_named(self) -> None:
        q = self.queue_of("diff --git a/README b/README\n--- a/README\n+++ b/README\n"
                          "@@ -1 +1 @@\n-other\n+changed\n")
        with self.assertRaisesRegex(Fatal, "^t/0001-x.patch does not apply to the base"):
            seriesrepo.import_queue(self.repo, q, self.who)
        # The export names the tree: a newer mainline that changed teo.c.
        with self.assertRaisesRegex(Fatal, "^t/0001-x.patch does not apply to Linux 7.4 "):
            seriesrepo.import_queue(self.repo, q, self.who, where="Linux 7.4")


class CommandLineTest(ScratchTest):
    def test_bad_input(self) -> None:
        self.assertBadInput(2, "--version: '0' is not a positive whole number",
                            [TEO, "series", "export", "--version", "0"])
        self.assertBadInput(2, "check: '.*' is not a folder",
                            [TEO, "series", "check", self.tmp / "none"])
        self.assertBadInput(2, "holds no \\*.patch or \\*.eml mails",
                            [TEO, "series", "check", self.tmp])
        self.assertBadInput(2, "unknown argument '--bogus'",
                            [TEO, "series", "export", "--bogus"])

    def test_help(self) -> None:
        self.assertHelp("export", [TEO, "series", "--help"])
