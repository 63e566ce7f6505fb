# SPDX-License-Identifier: GPL-2.0
"""The steps of "check": each command exists, one KUnit kernel, every
step traced but the leak check, and the log names the audit reads."""

import unittest

from teotool import checks, paths


class StepsTest(unittest.TestCase):
    def test_each_step_runs_a_command_of_the_repository(self) -> None:
        for step in checks.STEPS:
            with self.subTest(step=step.name):
                self.assertTrue(step.argv[0].startswith(str(paths.SCRIPTS)))

    def test_one_kunit_kernel(self) -> None:
        kunit = [s for s in checks.STEPS if "kunit" in s.argv]
        self.assertEqual([s.argv[1:] for s in kunit], [("kunit", "--sanitizers")])

    def test_style_after_kunit(self) -> None:
        """style's W=1 C=2 build reuses the KUnit build folder."""
        names = [s.name for s in checks.STEPS]
        self.assertLess(names.index("kunit --sanitizers"), names.index("style"))

    def test_only_the_leak_check_is_untraced(self) -> None:
        self.assertEqual([s.name for s in checks.STEPS if not s.traced], ["replay leaks"])

    def test_log_names_are_distinct(self) -> None:
        names = [checks._log_name(i, s) for i, s in enumerate(checks.STEPS, 1)]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(names[0], "01-deps---lint.strace")


if __name__ == "__main__":
    unittest.main()
