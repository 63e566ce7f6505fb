# SPDX-License-Identifier: GPL-2.0
"""deps.list and the exec audit.  The audit must catch the failure that
once broke CI on a new machine: with rsync left out of a copy of
deps.list, a run that executed /usr/bin/rsync (the kselftest install
does) fails, naming rsync; a program found in no package fails too; with
the real list both pass or fail as they should.  These ask the machine's
apt and dpkg, as the audit does."""

import shutil
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from teotool import deps, paths
from teotool.testing import ScratchTest
from teotool.ui import Fatal


class ListTest(unittest.TestCase):
    def test_every_command_once(self) -> None:
        cmds = [c for _, cs in deps.read_list() for c in cs]
        self.assertEqual(len(cmds), len(set(cmds)))

    def test_package_of(self) -> None:
        self.assertEqual(deps.package_of("qemu-system-x86_64"), "qemu-system-x86")
        self.assertEqual(deps.package_of("mypy"), "mypy")
        self.assertIsNone(deps.package_of("no-such-command"))

    def test_every_needed_command_is_listed(self) -> None:
        listed = {c for _, cs in deps.read_list() for c in cs}
        needed = deps.needed_commands()
        self.assertIn("qemu-system-x86_64", needed, "the Python need_cmd calls are read")
        self.assertEqual(needed - listed, set())

    def test_missing_command_names_its_package(self) -> None:
        with mock.patch.object(deps, "which", return_value=None):
            with self.assertRaisesRegex(Fatal, "'trace-cmd' not found: it comes from the Debian"
                                        " package trace-cmd; run 'scripts/deps.sh' as root"):
                deps.need_cmd("trace-cmd")
            with self.assertRaisesRegex(Fatal, "names no package for it"):
                deps.need_cmd("no-such-command")


class AuditTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        rsync = shutil.which("rsync", path=paths.DEBIAN_PATH)
        if not rsync:
            self.fail("rsync is not installed; run scripts/deps.sh first")
        self.rsync = rsync
        self.no_rsync = self.tmp / "no-rsync.list"
        self.no_rsync.write_text("".join(
            line + "\n" for line in paths.DEPS_LIST.read_text().splitlines()
            if not line.startswith("rsync")))

    def audit(self, programs: List[str], deps_list: Path = paths.DEPS_LIST,
              strace: bool = False) -> "tuple[bool, str]":
        logs = self.tmp / "logs"
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir()
        if strace:
            (logs / "01-selftest.strace").write_text("".join(
                f'4242  execve("{p}", ["x"], 0x7ffd) = 0\n' for p in programs))
        else:
            (logs / "01-selftest.execs").write_text("".join(p + "\n" for p in programs))
        clean, report = deps.audit(logs, deps_list)
        return clean, "\n".join(report)

    def test_unlisted_package_fails_naming_it(self) -> None:
        clean, report = self.audit([self.rsync], self.no_rsync)
        self.assertFalse(clean)
        self.assertIn("from package rsync, which", report)

    def test_listed_package_passes(self) -> None:
        clean, report = self.audit([self.rsync])
        self.assertTrue(clean, report)
        self.assertIn("exec audit: 1 distinct", report)

    def test_program_in_no_package_fails(self) -> None:
        clean, report = self.audit(["/opt/by-hand/tool"])
        self.assertFalse(clean)
        self.assertIn("no Debian package provides", report)

    def test_diverted_path_passes(self) -> None:
        """dpkg reports /bin/sh as diverted; its owner is dash."""
        clean, report = self.audit(["/bin/sh"])
        self.assertTrue(clean, report)
        self.assertIn("exec audit: 1 distinct", report)

    def test_optional_program_is_named(self) -> None:
        clean, report = self.audit(["/usr/bin/gpgconf"])
        self.assertTrue(clean, report)
        self.assertIn("optional (apt-key", report)

    def test_builds_own_programs_pass(self) -> None:
        """A build's own program, by a relative path, next to a system one."""
        clean, report = self.audit([self.rsync, "scripts/basic/fixdep",
                                    "./tools/objtool/objtool"], strace=True)
        self.assertTrue(clean, report)
        self.assertIn("exec audit: 1 distinct", report)

    def test_first_step_is_named(self) -> None:
        logs = self.tmp / "logs"
        logs.mkdir()
        (logs / "02-b.execs").write_text("/usr/bin/x\n")
        (logs / "01-a.execs").write_text("/usr/bin/x\n/usr/bin/y\n")
        self.assertEqual(deps.executed_programs(logs), [("01-a", "/usr/bin/x"), ("01-a", "/usr/bin/y")])

    def test_no_logs(self) -> None:
        (self.tmp / "logs").mkdir()
        with self.assertRaisesRegex(Fatal, "no executed programs recorded"):
            deps.audit(self.tmp / "logs")
        with self.assertRaisesRegex(Fatal, "is not a folder"):
            deps.audit(self.tmp / "none")


if __name__ == "__main__":
    unittest.main()
