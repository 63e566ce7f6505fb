# SPDX-License-Identifier: GPL-2.0
"""The patch queues: the real ones read cleanly, and every malformed
piece of a queue is refused with one line naming it."""

import shutil
from pathlib import Path

from teotool import paths, queue
from teotool.testing import ScratchTest
from teotool.ui import Fatal

PATCH = """Subject: cpuidle: teo: Do a thing

Because it helps.

Cc: A B <a@example.org>
---
diff --git a/drivers/cpuidle/governors/teo.c b/drivers/cpuidle/governors/teo.c
index 1111111..2222222 100644
--- a/drivers/cpuidle/governors/teo.c
+++ b/drivers/cpuidle/governors/teo.c
@@ -1 +1 @@
-old
+new
diff --git a/MAINTAINERS b/MAINTAINERS
--- a/MAINTAINERS
+++ b/MAINTAINERS
@@ -1 +1,2 @@
 F:	x
+F:	y
"""


class RealQueuesTest(ScratchTest):
    def test_both_queues_read(self) -> None:
        for name in (queue.LTS, queue.MAINLINE):
            q = queue.read_queue(name)
            self.assertTrue(q.patches)
            self.assertTrue(q.cover_subject)
            for p in q.patches:
                self.assertLessEqual(len(p.subject), queue.SUBJECT_MAX)
                self.assertTrue(p.files, p.name)

    def test_upstream_edits_leave_the_overlay_alone(self) -> None:
        diff = queue.read_queue(queue.LTS).upstream_diff()
        self.assertIn("b/MAINTAINERS", diff)
        self.assertNotIn(f"b/{paths.GOVERNORS}/teo.c", diff)

    def test_cc(self) -> None:
        for addr in queue.read_cc():
            self.assertRegex(addr, r"^[^<>]+ <[^<>@]+@[^<>]+>$")

    def test_queue_of_a_version(self) -> None:
        self.assertEqual(queue.queue_name((6, 12, 118)), queue.LTS)
        self.assertEqual(queue.queue_name((7, 3, 0)), queue.MAINLINE)
        self.assertEqual(queue.queue_name((6, 13, 0)), queue.MAINLINE)


class ParseTest(ScratchTest):
    def test_parts(self) -> None:
        p = queue.parse_patch("x.patch", PATCH)
        self.assertEqual(p.subject, "cpuidle: teo: Do a thing")
        self.assertEqual(p.message, "Because it helps.\n\nCc: A B <a@example.org>\n")
        self.assertEqual([f.path for f in p.files],
                         [f"{paths.GOVERNORS}/teo.c", "MAINTAINERS"])
        self.assertEqual(p.text(), PATCH)
        self.assertTrue(p.touches(paths.GOVERNORS))
        self.assertFalse(p.touches("include/"))

    def test_malformed(self) -> None:
        cases = {
            "no subject": ("x", "the first line is not 'Subject: ...'"),
            "Subject: a\nno blank": ("x", "no blank line after the subject"),
            "Subject: a\n\nbody\n": ("x", "no 'diff --git' part"),
            PATCH.replace("\n---\n", "\n"): ("x", "the message must end with a line '---'"),
        }
        for text, (name, why) in cases.items():
            with self.assertRaisesRegex(Fatal, f"^{name}: {why}"):
                queue.parse_patch(name, text)

    def test_overlay_path_of(self) -> None:
        self.assertEqual(queue.overlay_path_of(
            "tools/testing/selftests/cpuidle-teo/Makefile"),
            "tools/testing/selftests/cpuidle-teo")
        self.assertIsNone(queue.overlay_path_of(f"{paths.GOVERNORS}/menu.c"))


class QueueFolderTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        self.series = self.tmp / "series"
        self.q = self.series / "6.12"
        self.q.mkdir(parents=True)
        (self.q / "0001-a.patch").write_text(PATCH)
        (self.q / "series").write_text("# the order\n0001-a.patch\n")
        (self.q / "cover-letter").write_text("Subject: The series\n\nText.\n")

    def read(self) -> queue.Queue:
        return queue.read_queue("6.12", self.series)

    def refused(self, pattern: str) -> None:
        with self.assertRaisesRegex(Fatal, pattern):
            self.read()

    def test_good(self) -> None:
        q = self.read()
        self.assertEqual([p.name for p in q.patches], ["0001-a.patch"])
        self.assertEqual(q.cover_subject, "The series")
        self.assertEqual(q.claims, {})

    def test_claims(self) -> None:
        (self.q / "differentials").write_text("# counts\n0001-a.patch\t17\n")
        self.assertEqual(self.read().claims, {"0001-a.patch": 17})
        for bad, why in (("0001-a.patch\tseven\n", "not 'PATCH<TAB>COUNT'"),
                         ("0002-b.patch\t3\n", "0002-b.patch is not in the series"),
                         ("0001-a.patch\t3\n0001-a.patch\t4\n", "listed twice")):
            (self.q / "differentials").write_text(bad)
            self.refused(why)

    def test_missing_and_stray_patches(self) -> None:
        (self.q / "series").write_text("0001-a.patch\n0002-b.patch\n")
        self.refused("names 0002-b.patch, which does not exist")
        (self.q / "series").write_text("0001-a.patch\n")
        (self.q / "0003-c.patch").write_text(PATCH)
        self.refused("0003-c.patch is not in .*/series")

    def test_series_file(self) -> None:
        (self.q / "series").write_text("# nothing\n")
        self.refused("lists no patches")
        (self.q / "series").write_text("0001-a.patch -p0\n")
        self.refused("options after a patch name are not supported")
        (self.q / "series").unlink()
        self.refused("no quilt 'series' file")

    def test_subject_and_blocks(self) -> None:
        (self.q / "0001-a.patch").write_text(PATCH.replace("Do a thing", "x" * 76))
        self.refused("subject longer than 75 characters")
        (self.q / "0001-a.patch").write_text(
            PATCH.replace("Because it helps.", "[base 6.12]\nOn 6.12.\n[end]"))
        self.refused(r"a \[base \.\.\.\] block")

    def test_cover_letter(self) -> None:
        (self.q / "cover-letter").write_text("The series\n\nText.\n")
        self.refused("must start with 'Subject: ...' and a blank line")

    def test_no_queue(self) -> None:
        shutil.rmtree(self.q)
        self.refused("no patch queue")

    def test_cc_lines(self) -> None:
        (self.series / "cc").write_text("# people\nA Tester <a@example.org>  # ran it\n")
        self.assertEqual(queue.read_cc(self.series), ["A Tester <a@example.org>"])
        (self.series / "cc").write_text("A Tester <a@example.org>\nnot an address\n")
        with self.assertRaisesRegex(Fatal, r"cc:2: not 'Name <address>  # why'"):
            queue.read_cc(self.series)


class LayoutTest(ScratchTest):
    def test_every_queue_file_is_known(self) -> None:
        """A queue holds only what read_queue reads: nothing it would
        silently ignore."""
        for name in (queue.LTS, queue.MAINLINE):
            folder = queue.queue_dir(name)
            known = {"series", "cover-letter", "differentials"}
            for f in folder.iterdir():
                self.assertTrue(f.suffix == ".patch" or f.name in known, f)
        self.assertEqual(sorted(p.name for p in paths.SERIES.iterdir()),
                         sorted(["6.12", "mainline", "cc"]))
