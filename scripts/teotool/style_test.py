# SPDX-License-Identifier: GPL-2.0
"""What the style checks look at, and the rules on the tooling's own
files: no owned bash file above 300 lines, no pointer a reader cannot
follow, one place for paths."""

import re
import unittest

from teotool import paths, style


class FilesTest(unittest.TestCase):
    def test_kernel_files(self) -> None:
        files = style.kernel_files()
        self.assertIn("drivers/cpuidle/governors/teo.c", files)
        self.assertIn("drivers/cpuidle/governors/teo_trace.h", files)
        self.assertIn("tools/cpuidle-emu/cpuidle-emu.c", files)
        self.assertFalse([f for f in files if f.startswith("tools/idle-replay")])

    def test_shell_scripts(self) -> None:
        scripts = style.shell_scripts()
        self.assertIn("scripts/deps.sh", scripts)
        self.assertIn(".ci/run", scripts)
        self.assertNotIn("scripts/teo", scripts, "scripts/teo is Python")

    def test_bash_files_at_most_300_lines(self) -> None:
        """Every bash file but the guest's (which busybox runs, where
        Python is not at hand)."""
        guest = str(paths.FAULTTEST_GUEST.relative_to(paths.REPO))
        for rel in style.shell_scripts():
            if rel == guest:
                continue
            with self.subTest(file=rel):
                self.assertLessEqual(len((paths.REPO / rel).read_text().splitlines()), 300)

    def test_no_pointers_outside_the_repository(self) -> None:
        """Files refer only to what is in the repository or public."""
        pattern = re.compile(r"issue [0-9]|seed [0-9]|background doc|teo-background|"
                             r"shared/docs|shared/seeds", re.I)
        owned = [paths.ENTRY, paths.DEPS_LIST, *paths.SCRIPTS.glob("*.sh"),
                 paths.REPO / ".ci" / "run", *paths.PACKAGE.glob("*.py")]
        for path in owned:
            if path.name == "style_test.py":  # the pattern's own text
                continue
            with self.subTest(file=str(path.relative_to(paths.REPO))):
                found = pattern.search(path.read_text())
                self.assertIsNone(found, found and found.group(0))

    def test_cache_paths_only_in_paths_module(self) -> None:
        """Every path is made in paths.py: no other module names the lock
        file, the Debian tarball or the overlay's folders."""
        for module in paths.PACKAGE.glob("*.py"):
            if module.name in ("paths.py", "style_test.py"):
                continue
            text = module.read_text()
            with self.subTest(module=module.name):
                for literal in ("/tmp/teo-kernel-build.lock", "/usr/src/linux-source",
                                '"series/6.12', '"series/mainline', '"drivers/cpuidle'):
                    self.assertFalse(literal in text, literal)


if __name__ == "__main__":
    unittest.main()
