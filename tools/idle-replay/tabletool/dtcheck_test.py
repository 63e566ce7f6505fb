# SPDX-License-Identifier: GPL-2.0
"""--check-dtc passes where dtc agrees and fails where it does not."""

import unittest
from pathlib import Path
from typing import List, Optional

from tabletool.dtcheck import Verdict, check_board, report
from tabletool.dtcorpus import board_tables
from tabletool.dtidle import CpuTable, dt_drivers
from tabletool.errors import ExtractError
from tabletool.preprocess import DtFiles, cpp_one
from tabletool.testing import FAKE_TREE, ScratchTest, missing

BOARD_A = "arch/arm64/boot/dts/acme/acme-board-a.dts"
BOARD_B = "arch/arm64/boot/dts/acme/acme-board-b.dts"


class CheckTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        why = missing("cpp", "cpp") or missing("dtc", "device-tree-compiler")
        if why:
            self.skipTest(why)

    def check(self, board: str, read: Optional[str] = None, tree: Path = FAKE_TREE,
              text_edit: str = "") -> Optional[Verdict]:
        """check_board() of board with the tables the reader finds in
        board read (the board itself by default)."""
        src = str(tree)
        files = DtFiles(src)
        drivers = dt_drivers(src)
        text, err = cpp_one(src, board)
        self.assertIsNone(err)
        assert text is not None
        other, _ = cpp_one(src, read or board)
        per_cpu: List[CpuTable] = board_tables(src, files, read or board, other or "",
                                               drivers, 10)[0]
        return check_board(src, files, board, text + text_edit, per_cpu, drivers, 10)

    def test_agrees(self) -> None:
        for board in (BOARD_A, BOARD_B, "arch/arm64/boot/dts/acme/acme-odd.dts"):
            with self.subTest(board=board):
                self.assertIsNone(self.check(board))

    def test_reader_differs(self) -> None:
        kind, why = self.check(BOARD_A, read=BOARD_B) or ("", "")
        self.assertEqual(kind, "differs")
        self.assertRegex(why, r"^parser \[\('cpu@0', 'cpuidle-psci', \[\('WFI', 1, 1\), "
                         r"\('cpu-sleep', 120, 500\).* != dtc \[\('cpu@0', 'cpuidle-psci', "
                         r"\[\('WFI', 1, 1\), \('cpu-sleep', 120, 300\)")

    def test_batch_differs(self) -> None:
        self.assertEqual(self.check(BOARD_A, text_edit="/ { extra; };\n"),
                         ("differs", "the batched cpp output differs from a single cpp run"))

    def test_dtc_cannot_compile(self) -> None:
        """A reference nobody reads: the reader takes it, dtc does not."""
        tree = self.spoilt_tree(BOARD_A, '"acme,soc";\n};', '"acme,soc";\n};\n'
                                "&cpu0 { x = <&nowhere>; };")
        kind, why = self.check(BOARD_A, tree=tree) or ("", "")
        self.assertEqual(kind, "unchecked")
        self.assertRegex(why, "^dtc: .*nowhere")


class ReportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.said: List[str] = []

    def test_clean(self) -> None:
        report([], [("b.dts", "parse: x")], self.said.append, self.said.append)
        self.assertEqual(self.said, ["check-dtc: every board the parser read and dtc compiles "
                                     "gives the same tables (1 skipped board(s) not checked)"])

    def test_unchecked_is_a_warning(self) -> None:
        report([("a.dts", ("unchecked", "dtc: syntax error")), ("c.dts", ("unchecked", "x"))],
               [], self.said.append, self.said.append)
        self.assertEqual(self.said[0], "check-dtc: this dtc cannot compile 2 board(s) the parser "
                         "read (first: a.dts: dtc: syntax error); they are not checked")

    def test_differs_fails(self) -> None:
        checks = [(f"b{i}.dts", ("differs", "parser [] != dtc []")) for i in range(25)]
        with self.assertRaisesRegex(ExtractError, "^check-dtc: 25 board\\(s\\) differ between "
                                    "the parser and dtc$"):
            report(checks, [], self.said.append, self.said.append)
        self.assertEqual(len(self.said), 20)  # the first twenty named
        self.assertEqual(self.said[0], "check-dtc: b0.dts: parser [] != dtc []")


if __name__ == "__main__":
    unittest.main()
