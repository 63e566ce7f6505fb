# SPDX-License-Identifier: GPL-2.0
"""The boards, their include closure, and cpp: a batch of boards gives
each board what a run of its own gives."""

import os
import unittest

from tabletool.preprocess import DtFiles, cpp_batch, cpp_one, strip_markers
from tabletool.testing import FAKE_TREE, ScratchTest, missing

ACME = "arch/arm64/boot/dts/acme/"


class FilesTest(ScratchTest):
    def test_fake_tree(self) -> None:
        files = DtFiles(str(FAKE_TREE))
        boards = files.boards()
        self.assertEqual(boards, [ACME + b for b in (
            "acme-board-a.dts", "acme-board-b.dts", "acme-board-c.dts", "acme-broken.dts",
            "acme-nostates.dts", "acme-odd.dts", "acme-spin.dts")])
        self.assertTrue(all(files.uses_states(b) for b in boards))
        self.assertEqual(files.closure(ACME + "acme-board-c.dts"), [
            ACME + "acme-board-c.dts", ACME + "acme-soc.dtsi", "include/dt-bindings/acme-idle.h",
            ACME + "acme-common.dtsi", ACME + "acme-leds.dtsi"])
        self.assertEqual(files.macros(ACME + "acme-board-a.dts"),
                         ["ACME_CLUSTER_WAKEUP_US", "_DT_BINDINGS_ACME_IDLE_H"])
        self.assertEqual(files.canon("scripts/dtc/include-prefixes/arm64/acme/../acme/x.dtsi"),
                         ACME + "x.dtsi")

    def test_boards_without_states(self) -> None:
        self.write("arch/arm/boot/dts/plain.dts", '#include "missing.dtsi"\n/ { };\n')
        self.write("arch/riscv/boot/dts/v/idle.dts", '/include/ "s.dtsi"\n')
        self.write("arch/riscv/boot/dts/v/s.dtsi", "/ { cpus { c { cpu-idle-states = <&x>; }; "
                   "}; };\n")
        self.write("arch/x86/boot/dts/other.dts", "/ { cpu-idle-states; };\n")
        files = DtFiles(str(self.tmp))
        self.assertEqual(files.boards(), ["arch/arm/boot/dts/plain.dts",
                                          "arch/riscv/boot/dts/v/idle.dts"])
        self.assertFalse(files.uses_states("arch/arm/boot/dts/plain.dts"))
        self.assertTrue(files.uses_states("arch/riscv/boot/dts/v/idle.dts"))


class CppTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        why = missing("cpp", "cpp")
        if why:
            self.skipTest(why)

    def test_batch_gives_each_board_its_own_run(self) -> None:
        """A macro or include guard of one board does not reach the next."""
        self.write("scripts/dtc/include-prefixes/dt-bindings/lat.h",
                   "#ifndef LAT_H\n#define LAT_H\n#define SHARED 7\n#endif\n")
        self.write("b/one.dts", "#include <dt-bindings/lat.h>\n#define LAT 5\n"
                   "/ { a = <LAT SHARED>; };\n")
        self.write("b/two.dts", "#include <dt-bindings/lat.h>\n/ { b = <LAT SHARED>; };\n")
        files = DtFiles(str(self.tmp))
        boards = ["b/one.dts", "b/two.dts"]
        batch = cpp_batch(str(self.tmp), boards, {b: files.macros(b) for b in boards})
        for b in boards:
            with self.subTest(board=b):
                text, err = batch[b]
                alone, err_alone = cpp_one(str(self.tmp), b)
                self.assertIsNone(err)
                self.assertIsNone(err_alone)
                self.assertEqual(strip_markers(text or ""), strip_markers(alone or ""))
        self.assertIn("<5 7>", batch["b/one.dts"][0] or "")
        self.assertIn("<LAT 7>", batch["b/two.dts"][0] or "")
        self.assertIn('# 1 "b/two.dts"', batch["b/two.dts"][0] or "")

    def test_a_failing_board(self) -> None:
        self.write("b/good.dts", "/ { a = <1>; };\n")
        self.write("b/bad.dts", '#include "nowhere.h"\n')
        batch = cpp_batch(str(self.tmp), ["b/good.dts", "b/bad.dts"],
                          {"b/good.dts": [], "b/bad.dts": []})
        self.assertIsNone(batch["b/good.dts"][1])
        text, err = batch["b/bad.dts"]
        self.assertIsNone(text)
        self.assertRegex(err or "", r"^cpp: b/bad.dts:1:\d+: fatal error: nowhere.h")

    def test_cpp_as_the_kernel_runs_it(self) -> None:
        """No system headers, no predefined macros but __DTS__."""
        self.write("b/x.dts", "#ifdef __DTS__\nyes\n#endif\n#ifdef linux\nlinux\n#endif\n"
                   "#ifdef __x86_64__\nx86\n#endif\n")
        text, _ = cpp_one(str(self.tmp), "b/x.dts")
        self.assertEqual(strip_markers(text or ""), "yes")
        self.write("b/sys.dts", "#include <stdio.h>\n")
        _, err = cpp_one(str(self.tmp), os.path.join("b", "sys.dts"))
        self.assertIn("stdio.h", err or "")


if __name__ == "__main__":
    unittest.main()
