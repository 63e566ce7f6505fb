# SPDX-License-Identifier: GPL-2.0
"""The KUnit runner's pieces: the QEMU wrapper, the command line, and the
verdict on kunit.py's output and the kernel log."""

import os
import re
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from teotool import kunit, paths
from teotool.testing import ScratchTest
from teotool.ui import Fatal


class QemuWrapperTest(ScratchTest):
    def test_drops_kvm_and_hvf_keeps_the_rest(self) -> None:
        """kunit.py of Linux 6.15 and later asks QEMU for KVM first; the
        wrapper passes every other argument through and leaves TCG."""
        with mock.patch.dict(os.environ, {"TEO_CACHE": str(self.tmp / "kq")}):
            folder = kunit.qemu_dir()
        wrapper = (folder / "qemu-system-x86_64").read_text()
        self.assertRegex(wrapper, r'(?m)^exec /\S*/qemu-system-x86_64 "\$@"$')
        echo = self.tmp / "echo.sh"
        echo.write_text(re.sub(r"(?m)^exec .*$", 'printf "[%s]" "$@"', wrapper))
        got = subprocess.run(["sh", str(echo), "-nodefaults", "-append", "a b", "-accel", "kvm",
                              "-accel", "hvf", "-accel", "tcg", "-bios", "qboot.rom"],
                             capture_output=True, text=True, check=True).stdout
        self.assertEqual(got, "[-nodefaults][-append][a b][-accel][tcg][-bios][qboot.rom]")


class ArgsTest(unittest.TestCase):
    def test_sanitizers_only_in_their_variant(self) -> None:
        src, build = Path("/src"), Path("/b")
        plain = kunit.kunit_args(src, build, kunit.PLAIN, Path("/j"))
        sanitized = kunit.kunit_args(src, build, kunit.SANITIZERS, Path("/j"))
        self.assertNotIn("--kconfig_add=CONFIG_KASAN=y", plain)
        self.assertIn("--kconfig_add=CONFIG_KASAN=y", sanitized)
        self.assertIn("--kconfig_add=CONFIG_UBSAN=y", sanitized)
        for args in (plain, sanitized):
            self.assertIn("--arch=x86_64", args)
            self.assertIn("--kernel_args=trace_event=power:teo_select,power:teo_update", args)
            self.assertIn("--kconfig_add=CONFIG_FTRACE=y", args)
        self.assertNotEqual(kunit.PLAIN.build_dir(src), kunit.SANITIZERS.build_dir(src))

    def test_slim_config_leaves_out_only_what_nothing_asks_for(self) -> None:
        """Both variants leave out the unused layers, and no line left out
        is one the .kunitconfig, tracing or the sanitizers turn on."""
        src, build = Path("/src"), Path("/b")
        for variant in (kunit.PLAIN, kunit.SANITIZERS):
            args = kunit.kunit_args(src, build, variant, Path("/j"))
            self.assertIn("--kconfig_add=# CONFIG_ACPI is not set", args)
            self.assertIn("--kconfig_add=CONFIG_EXPERT=y", args)
        off = {m.group(1) for line in kunit.SLIM_CONFIG
               for m in [re.fullmatch(r"# (CONFIG_\w+) is not set", line)] if m}
        self.assertEqual(len(off), len(kunit.SLIM_CONFIG) - 1)
        wanted = (paths.REPO / paths.KUNITCONFIG).read_text().splitlines() + \
            list(kunit.TRACE_CONFIG + kunit.SANITIZER_CONFIG)
        on = {line.split("=", 1)[0] for line in wanted if line.startswith("CONFIG_")}
        self.assertIn("CONFIG_CPU_IDLE", on)
        self.assertFalse(off & on)


class VerdictTest(ScratchTest):
    GOOD = "[06:01:02] Testing complete. Ran 127 tests: passed: 127\n"

    def test_summary(self) -> None:
        self.assertEqual(kunit.summary_of("x\n" + self.GOOD),
                         "Testing complete. Ran 127 tests: passed: 127")

    def test_failures_crashes_skips_no_tests(self) -> None:
        for text, message in (
                ("nothing", "no test summary"),
                ("Testing complete. Ran 0 tests\n", "ran no tests"),
                ("Testing complete. Ran 5 tests: passed: 4, failed: 1\n", "failed: 1"),
                ("Testing complete. Ran 5 tests: passed: 4, crashed: 1\n", "crashed: 1"),
                ("Testing complete. Ran 5 tests: passed: 4, skipped: 1\n", "skipped: 1"),
                ("Testing complete. Ran 5 tests: passed: 5, errors: 2\n", "errors: 2")):
            with self.subTest(text=text), self.assertRaisesRegex(Fatal, message):
                kunit.summary_of(text)

    def test_last_summary_counts(self) -> None:
        with self.assertRaisesRegex(Fatal, "failed: 1"):
            kunit.summary_of(self.GOOD + "Testing complete. Ran 127 tests: passed: 126, failed: 1\n")

    def test_kernel_log(self) -> None:
        log = self.tmp / "test.log"
        with self.assertRaisesRegex(Fatal, "left no kernel log"):
            kunit.check_kernel_log(log)
        log.write_text("[    1.0] ok 1 teo\n")
        kunit.check_kernel_log(log)
        log.write_text("[    1.0] ok 1 teo\n[    1.1] UBSAN: shift-out-of-bounds in teo.c:1:2\n")
        with self.assertRaisesRegex(Fatal, "has the 1 reports above"):
            kunit.check_kernel_log(log)


if __name__ == "__main__":
    unittest.main()
