# SPDX-License-Identifier: GPL-2.0
"""KERNEL_SRC checks, the cache key, the order of the upstream edits and
the overlay sync, on small fake trees."""

import hashlib
import os
import unittest
from pathlib import Path
from unittest import mock

from teotool import paths, queue, tree
from teotool.testing import ScratchTest
from teotool.ui import Fatal


def fake_tree(root: Path, version: str = "6.12.5") -> Path:
    major, minor, sub = version.split(".")
    root.mkdir(parents=True)
    (root / "Makefile").write_text(f"# SPDX\nVERSION = {major}\nPATCHLEVEL = {minor}\n"
                                   f"SUBLEVEL = {sub}\nEXTRAVERSION =\n")
    (root / paths.GOVERNORS).mkdir(parents=True)
    (root / paths.GOVERNORS / "Makefile").write_text("obj-y += menu.o\n")
    (root / paths.KUNIT_PY).parent.mkdir(parents=True)
    (root / paths.KUNIT_PY).write_text("")
    return root


class KernelSrcTest(ScratchTest):
    def check(self, src: Path, pattern: str) -> None:
        with self.assertRaisesRegex(Fatal, pattern):
            tree.check_kernel_tree(tree.check_kernel_src(str(src)))

    def test_version(self) -> None:
        self.assertEqual(tree.kernel_version(fake_tree(self.tmp / "t", "6.13.0")), (6, 13, 0))
        self.assertIsNone(tree.kernel_version(self.tmp))

    def test_missing(self) -> None:
        self.check(self.tmp / "none", "does not exist")

    def test_a_file(self) -> None:
        (self.tmp / "f").write_text("")
        self.check(self.tmp / "f", "is a file, not a kernel source folder")

    def test_not_a_kernel_tree(self) -> None:
        self.check(self.tmp, "is not a kernel tree")

    def test_lacks_cpuidle(self) -> None:
        t = fake_tree(self.tmp / "t")
        (t / paths.GOVERNORS / "Makefile").unlink()
        self.check(t, r"\(version 6.12.5\) lacks drivers/cpuidle/governors")

    def test_too_old(self) -> None:
        self.check(fake_tree(self.tmp / "t", "6.11.9"), "is Linux 6.11.9; the overlay needs 6.12")

    def test_not_clean(self) -> None:
        t = fake_tree(self.tmp / "t")
        (t / ".config").write_text("")
        self.check(t, r"has build artifacts \(.config\)")

    def test_good(self) -> None:
        self.assertEqual(tree.check_kernel_tree(fake_tree(self.tmp / "t", "7.3.1")), (7, 3, 1))

    def test_key_names_version_base_and_repository(self) -> None:
        t = fake_tree(self.tmp / "t")
        digest = hashlib.sha1(f"{t}\n{paths.REPO}".encode()).hexdigest()[:8]
        self.assertEqual(tree.tree_key(t), f"linux-6.12.5-{digest}")
        with mock.patch.object(paths, "REPO", self.tmp / "another-work-tree"):
            self.assertNotEqual(tree.tree_key(t), f"linux-6.12.5-{digest}")

    def test_path_keeps_symbolic_links(self) -> None:
        """The key hashes the path as given (made absolute), as `cd && pwd` did."""
        t = fake_tree(self.tmp / "t")
        os.symlink(t, self.tmp / "link")
        self.assertEqual(tree.check_kernel_src(str(self.tmp / "link")), self.tmp / "link")


class EditsTest(unittest.TestCase):
    def test_the_queue_order_and_only_upstream_files(self) -> None:
        diff = tree.upstream_edits((6, 12, 118))
        targets = tree.edit_targets(diff)
        self.assertTrue(targets)
        self.assertFalse([t for t in targets if queue.overlay_path_of(t)])
        # The trace patch's Makefile line comes before the selftests'
        # MAINTAINERS line, which comes before the documentation's: two
        # edits of the same lines of MAINTAINERS only apply in that order.
        self.assertLess(diff.index("CFLAGS_teo.o"),
                        diff.index("+F:\ttools/testing/selftests/cpuidle-teo/"))
        self.assertLess(diff.index("+F:\ttools/testing/selftests/cpuidle-teo/"),
                        diff.index("+F:\tDocumentation/admin-guide/pm/teo.rst"))

    def test_targets(self) -> None:
        self.assertEqual(tree.edit_targets("--- a/MAINTAINERS\n+++ b/MAINTAINERS\n"),
                         ["MAINTAINERS"])


class OverlayTest(ScratchTest):
    def test_sync_copies_what_differs_and_keeps_the_rest(self) -> None:
        t = self.tmp / "t"
        tree.sync_overlay(t)
        self.assertEqual(tree.overlay_changes(t), [])
        teo_c = t / paths.GOVERNORS / "teo.c"
        before = teo_c.stat().st_mtime_ns
        stale = t / "tools/testing/selftests/cpuidle-teo/dropped.sh"
        stale.write_text("")
        teo_h = t / paths.GOVERNORS / "teo.h"
        teo_h.write_text("changed")
        actions = sorted((a, str(p.relative_to(t) if a == "remove" else p.relative_to(paths.REPO)))
                         for a, p, _ in tree.overlay_changes(t))
        self.assertEqual(actions, [("copy", f"{paths.GOVERNORS}/teo.h"),
                                   ("remove", "tools/testing/selftests/cpuidle-teo/dropped.sh")])
        tree.sync_overlay(t)
        self.assertFalse(stale.exists())
        self.assertEqual(teo_h.read_bytes(), (paths.REPO / paths.GOVERNORS / "teo.h").read_bytes())
        self.assertEqual(teo_c.stat().st_mtime_ns, before, "an unchanged file was touched")

    def test_sync_never_writes_through_a_hard_link(self) -> None:
        base = self.tmp / "base.c"
        base.write_text("the base's teo.c")
        t = self.tmp / "t"
        (t / paths.GOVERNORS).mkdir(parents=True)
        os.link(base, t / paths.GOVERNORS / "teo.c")
        tree.sync_overlay(t)
        self.assertEqual(base.read_text(), "the base's teo.c")

    def test_stamp_changes_with_an_edit_or_the_base(self) -> None:
        a = tree.tree_stamp(Path("/a"), (6, 12, 1), False)
        self.assertNotEqual(a, tree.tree_stamp(Path("/b"), (6, 12, 1), False))
        self.assertNotEqual(a, tree.tree_stamp(Path("/a"), (6, 12, 1), True))
        self.assertEqual(a, tree.tree_stamp(Path("/a"), (6, 12, 1), False))


class LinkCopyTest(ScratchTest):
    def test_hard_links_and_skips(self) -> None:
        src = fake_tree(self.tmp / "src")
        (src / ".git").mkdir()
        (src / ".teo-unpacked").touch()
        tree.link_copy(src, self.tmp / "dst")
        self.assertEqual((self.tmp / "dst" / "Makefile").stat().st_ino, (src / "Makefile").stat().st_ino)
        self.assertFalse((self.tmp / "dst" / ".git").exists())
        self.assertFalse((self.tmp / "dst" / ".teo-unpacked").exists())
        tree.unshare(self.tmp / "dst" / "Makefile")
        self.assertNotEqual((self.tmp / "dst" / "Makefile").stat().st_ino,
                            (src / "Makefile").stat().st_ino)


if __name__ == "__main__":
    unittest.main()
