# SPDX-License-Identifier: GPL-2.0
"""The kselftest runner's verdict on run_kselftest.sh's output and the
guest's kernel log, and its bad input."""

import io
import unittest
from contextlib import redirect_stderr, redirect_stdout

from teotool import kselftest
from teotool.testing import TEO, ScratchTest

PASSED = """\
TAP version 13
1..2
# timeout set to 45
# selftests: cpuidle-teo: gov_switch
# ok 1 switch
ok 1 selftests: cpuidle-teo: gov_switch
# selftests: cpuidle-teo: gov_qos
ok 2 selftests: cpuidle-teo: gov_qos
"""

SKIPPED = """\
# selftests: cpuidle-teo: gov_switch
# 1..0 # SKIP cannot write current_governor: Read-only file system
ok 1 selftests: cpuidle-teo: gov_switch # SKIP
# selftests: cpuidle-teo: gov_qos
# 1..0 # SKIP cannot write current_governor: Read-only file system
ok 2 selftests: cpuidle-teo: gov_qos # SKIP
"""

MIXED = """\
# ok 1 a subtest that passed
# not ok 2 a subtest that failed
not ok 1 selftests: cpuidle-teo: gov_switch # exit=1
ok 2 selftests: cpuidle-teo: gov_qos
# 1..0 # SKIP no trace events
ok 3 selftests: cpuidle-teo: teo_trace # SKIP
"""


def judged(text: str, restricted: "str | None" = None) -> "tuple[bool, str]":
    err = io.StringIO()
    with redirect_stderr(err):
        ok = kselftest.judge(kselftest.tally(text), restricted)
    return ok, err.getvalue()


class TallyTest(unittest.TestCase):
    def test_counts_only_top_level_results(self) -> None:
        t = kselftest.tally(MIXED)
        self.assertEqual(t.passed, ["cpuidle-teo: gov_qos"])
        self.assertEqual(t.failed, ["cpuidle-teo: gov_switch # exit=1"])
        self.assertEqual(t.skipped, ["cpuidle-teo: teo_trace # SKIP"])
        self.assertEqual(t.skip_lines, ["# 1..0 # SKIP no trace events",
                                        "ok 3 selftests: cpuidle-teo: teo_trace # SKIP"])


class JudgeTest(unittest.TestCase):
    def test_all_passed(self) -> None:
        self.assertEqual(judged(PASSED), (True, ""))

    def test_a_skip_fails_a_full_run(self) -> None:
        ok, said = judged(SKIPPED)
        self.assertFalse(ok)
        self.assertIn("a skip is a failure here", said)
        self.assertIn("Read-only file system", said)

    def test_a_failure_fails(self) -> None:
        ok, said = judged(MIXED)
        self.assertFalse(ok)
        self.assertIn("failed: cpuidle-teo: gov_switch", said)

    def test_restricted_needs_every_test_skipped(self) -> None:
        ok, said = judged(SKIPPED, "ro-sysfs")
        self.assertTrue(ok, said)
        self.assertIn("# 1..0 # SKIP cannot write", said)
        ok, said = judged(SKIPPED + PASSED.replace("ok 1", "ok 3"), "non-root")
        self.assertFalse(ok)
        self.assertIn("passed although they must skip (non-root): cpuidle-teo: gov_switch", said)

    def test_nothing_ran(self) -> None:
        for restricted in (None, "ro-sysfs"):
            ok, said = judged("TAP version 13\n1..0\n", restricted)
            self.assertFalse(ok)
            self.assertIn("no test ran", said)


class KernelLogTest(ScratchTest):
    def test_reports_fail(self) -> None:
        dmesg = self.tmp / "dmesg"
        dmesg.write_text("[    0.1] cpuidle: using governor teo\n")
        self.assertTrue(kselftest.kernel_log_clean(dmesg))
        dmesg.write_text("[    0.1] ok\n[   12.5] WARNING: CPU: 1 PID: 9 at"
                         " drivers/cpuidle/governors/teo.c:300 teo_select+0x1/0x2\n")
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            self.assertFalse(kselftest.kernel_log_clean(dmesg))
        self.assertIn(f"{dmesg}:2: [WARNING]", out.getvalue())
        self.assertIn("has the reports above", err.getvalue())


class BadInputTest(ScratchTest):
    def test_each_stops_before_anything(self) -> None:
        for pattern, args in (
                (r"--restricted: unknown mode 'root' \(ro-sysfs or non-root\)",
                 ["--restricted", "root"]),
                ("--restricted needs a value", ["--restricted"]),
                ("unknown profile 'x'", ["--profile", "x"]),
                ("unknown profile '--x'", ["--profile=--x"]),
                ("more than 10 states", ["--states", "1/1," * 10 + "1/1"]),
                ("unknown argument 'extra'", ["extra"])):
            with self.subTest(args=args):
                self.assertBadInput(2, pattern, [TEO, "kselftest", *args])


if __name__ == "__main__":
    unittest.main()
