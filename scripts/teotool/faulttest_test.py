# SPDX-License-Identifier: GPL-2.0
"""The fault test's bad input and its reading of the kernel log and the
console."""

import unittest

from teotool import faulttest
from teotool.testing import TEO, ScratchTest


class BadInputTest(ScratchTest):
    def test_each_stops_before_anything(self) -> None:
        (self.tmp / "mine").mkdir()
        (self.tmp / "mine" / "notes.txt").write_text("keep me")
        for pattern, args in (
                ("--fio-runtime: '0' is not a positive number", ["--fio-runtime", "0"]),
                ("--fio-runtime: 'x' is not a positive number", ["--fio-runtime", "x"]),
                ("--fio-runtime: '1234567' is too large", ["--fio-runtime", "1234567"]),
                ("--reloads: '-1' is not a number", ["--reloads=-1"]),
                ("--smp: 1 CPU cannot be hotplugged", ["--smp", "1"]),
                ("--smp: 9 is above 8", ["--smp", "9"]),
                ("unknown profile 'x'", ["--profile", "x"]),
                (f"--out: '{self.tmp}/mine' holds other files", ["--out", f"{self.tmp}/mine"]),
                ("--out '/sys/x' is under /dev, /proc or /sys", ["--out", "/sys/x"])):
            with self.subTest(args=args):
                self.assertBadInput(2, pattern, [TEO, "faulttest", *args])
        self.assertEqual((self.tmp / "mine" / "notes.txt").read_text(), "keep me")


class ReportsTest(ScratchTest):
    def test_log_and_console_once_each(self) -> None:
        dmesg, console = self.tmp / "dmesg", self.tmp / "console.log"
        splat = "[   40.1] WARNING: suspicious RCU usage"
        dmesg.write_text(f"[    1.0] boot\n{splat}\n")
        console.write_text(f"{splat}\r\n[   41.0] BUG: sleeping function called from"
                           " invalid context at kernel/cpu.c:1\r\n")
        found = faulttest.kernel_reports([dmesg, console, self.tmp / "missing"])
        self.assertEqual(found, [splat, "[   41.0] BUG: sleeping function called from"
                                 " invalid context at kernel/cpu.c:1"])

    def test_clean(self) -> None:
        (self.tmp / "dmesg").write_text("[    1.0] lockdep: fine\n[ 2.0] hung_task: on\n")
        self.assertEqual(faulttest.kernel_reports([self.tmp / "dmesg"]), [])


if __name__ == "__main__":
    unittest.main()
