# SPDX-License-Identifier: GPL-2.0
"""Helpers of the unit tests (NAME_test.py): commands run as a user runs
them, in a scratch folder with its own cache and lock."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

from teotool import paths

TEO = str(paths.ENTRY)
SCRIPTS = paths.SCRIPTS
NOBODY = 65534


class ScratchTest(unittest.TestCase):
    """A test with a scratch folder self.tmp (mode 755, removed after)."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="teo-test."))
        self.tmp.chmod(0o755)

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def env(self, extra: Optional[Mapping[str, str]] = None) -> "dict[str, str]":
        """A fresh, empty cache and lock; a KERNEL_SRC that does not exist."""
        env = dict(os.environ, PATH=paths.DEBIAN_PATH,
                   TEO_CACHE=str(self.tmp / "cache"), TEO_LOCK=str(self.tmp / "lock"),
                   KERNEL_SRC=str(self.tmp / "no-such-tree"))
        env.update(extra or {})
        return env

    def run_cmd(self, argv: Sequence[Union[str, Path]],
                env: Optional[Mapping[str, str]] = None,
                timeout: float = 120) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([str(a) for a in argv], env=self.env(env),
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)

    def assertBadInput(self, status: int, pattern: str,
                       argv: Sequence[Union[str, Path]],
                       env: Optional[Mapping[str, str]] = None) -> None:
        """argv exits with status, prints exactly one line on stderr that
        matches the regular expression pattern, nothing on stdout, and
        creates neither the cache nor the lock (nothing was built or
        locked)."""
        shutil.rmtree(self.tmp / "cache", ignore_errors=True)
        (self.tmp / "lock").unlink(missing_ok=True)
        run = self.run_cmd(argv, env)
        self.assertEqual(run.returncode, status, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertEqual(run.stdout, "")
        self.assertRegex(run.stderr, pattern)
        self.assertFalse((self.tmp / "cache").exists(), "it created the cache")
        self.assertFalse((self.tmp / "lock").exists(), "it created the lock")

    def assertHelp(self, pattern: str, argv: Sequence[Union[str, Path]]) -> None:
        """--help prints help and does nothing else: no dependency check,
        no cache, no lock, and it works with a PATH of /usr/bin:/bin."""
        run = self.run_cmd(argv, {"PATH": "/usr/bin:/bin"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(pattern, run.stdout)
        self.assertEqual(run.stderr, "")
        self.assertFalse((self.tmp / "cache").exists())
        self.assertFalse((self.tmp / "lock").exists())


def is_root() -> bool:
    return os.geteuid() == 0


def grep(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.M) is not None
