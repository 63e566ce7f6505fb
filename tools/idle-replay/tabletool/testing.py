# SPDX-License-Identifier: GPL-2.0
"""Helpers of the unit tests (NAME_test.py): the fake kernel tree, scratch
folders, and extract-tables.py run as a user runs it."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Union

LAB = Path(__file__).resolve().parent.parent
ENTRY = LAB / "extract-tables.py"
DATA = LAB / "tests" / "extract"
FAKE_TREE = DATA / "tree"       # only the files and lines the extractor reads
EXPECTED = DATA / "expected"    # what the extractor writes from it
DEBIAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
NOBODY = 65534


def missing(cmd: str, package: str) -> Optional[str]:
    """Why a test that needs cmd is skipped, None if cmd is there."""
    if shutil.which(cmd, path=DEBIAN_PATH) is None:
        return f"{cmd} is not installed (Debian package {package})"
    return None


def listing(folder: Path) -> "dict[str, str]":
    """The files of a folder and their contents."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


class ScratchTest(unittest.TestCase):
    """A test with a scratch folder self.tmp, removed after."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tabletool-test."))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        # Open to the unprivileged user some tests run the extractor as.
        self.tmp.chmod(0o755)

    def write(self, rel: str, text: str) -> Path:
        """A file under the scratch folder (its folders made)."""
        path = self.tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def spoilt_tree(self, rel: str, old: str, new: str) -> Path:
        """A copy of the fake tree with old replaced by new in file rel."""
        copy = self.tmp / "spoilt"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(FAKE_TREE, copy, symlinks=True)
        path = copy / rel
        text = path.read_text(encoding="utf-8")
        self.assertIn(old, text, f"the fake tree's {rel} changed: fix the test")
        path.write_text(text.replace(old, new), encoding="utf-8")
        return copy

    def extract(self, argv: Sequence[Union[str, Path]], path: str = DEBIAN_PATH,
                prefix: Sequence[str] = ()) -> "subprocess.CompletedProcess[str]":
        """extract-tables.py run with argv by this interpreter (prefix: a
        command to run it under, such as setpriv)."""
        cmd: List[str] = [*prefix, sys.executable, str(ENTRY), *[str(a) for a in argv]]
        env: Mapping[str, str] = dict(os.environ, PATH=path)
        return subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=300, check=False)

    def assertFails(self, pattern: str, argv: Sequence[Union[str, Path]], out: Path,
                    path: str = DEBIAN_PATH, prefix: Sequence[str] = ()) -> None:
        """The extractor exits 1 with one line on stderr that matches
        pattern, nothing on stdout, and leaves neither OUTDIR nor a
        temporary folder beside it."""
        run = self.extract(["-q", *argv, out], path, prefix)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertRegex(run.stderr, pattern)
        self.assertEqual(run.stdout, "")
        self.assertFalse(out.exists(), f"it created {out}")
        self.assertEqual(leftovers(out), [])


def leftovers(out: Path) -> List[str]:
    """Temporary folders of an extraction into out left beside it."""
    if not out.parent.is_dir():
        return []
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))
