# SPDX-License-Identifier: GPL-2.0
"""OUTDIR is replaced whole or left as it was."""

import os
import unittest

from tabletool.errors import ExtractError
from tabletool.outdir import install_outdir, prepare_outdir
from tabletool.testing import ScratchTest


class OutdirTest(ScratchTest):
    def test_new_and_replaced(self) -> None:
        out = self.tmp / "out"
        for contents in ("first", "second"):
            tmp = prepare_outdir(str(out))
            self.assertEqual(os.path.dirname(tmp), str(self.tmp))
            self.assertTrue(os.path.basename(tmp).startswith(".out."))
            with open(os.path.join(tmp, "INDEX"), "w", encoding="utf-8") as f:
                f.write(contents)
            install_outdir(tmp, str(out))
            self.assertEqual((out / "INDEX").read_text(), contents)
            self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["out"])

    def test_mode_follows_the_umask(self) -> None:
        old = os.umask(0o027)
        try:
            tmp = prepare_outdir(str(self.tmp / "out"))
            install_outdir(tmp, str(self.tmp / "out"))
        finally:
            os.umask(old)
        self.assertEqual((self.tmp / "out").stat().st_mode & 0o777, 0o750)

    def test_refused(self) -> None:
        self.write("afile", "")
        self.write("notes/readme", "")
        self.write("mixed/INDEX", "")
        self.write("mixed/x.plat", "")
        self.write("mixed/readme", "")
        cases = {"afile": "OUTDIR .*/afile exists and is not a directory",
                 "notes": "OUTDIR .*/notes exists, is not empty and holds no INDEX: refusing "
                 "to replace it",
                 "mixed": "OUTDIR .*/mixed holds files other than INDEX and \\*.plat: refusing "
                 "to replace it",
                 "afile/out": "cannot create OUTDIR .*/afile/out: .*/afile is not a directory",
                 "none/out": "cannot create OUTDIR .*/none/out: .*/none is not a directory"}
        for rel, why in cases.items():
            with self.subTest(outdir=rel), self.assertRaisesRegex(ExtractError, why):
                prepare_outdir(str(self.tmp / rel))
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["afile", "mixed", "notes"])

    def test_an_earlier_extraction_may_be_replaced(self) -> None:
        self.write("out/INDEX", "")
        self.write("out/a.plat", "")
        tmp = prepare_outdir(str(self.tmp / "out"))
        install_outdir(tmp, str(self.tmp / "out"))
        self.assertEqual(list((self.tmp / "out").iterdir()), [])


if __name__ == "__main__":
    unittest.main()
