# SPDX-License-Identifier: GPL-2.0
"""OUTDIR, written whole or not at all: the files go to a temporary
directory beside it, renamed into place at the end; an existing OUTDIR is
replaced only if it holds nothing but what an extraction writes."""

import os
import shutil
import tempfile

from tabletool.errors import ExtractError


def prepare_outdir(outdir: str) -> str:
    """Check OUTDIR can be (re)placed; returns a temp dir beside it."""
    parent = os.path.dirname(os.path.abspath(outdir)) or "."
    if os.path.exists(outdir):
        if not os.path.isdir(outdir):
            raise ExtractError(f"OUTDIR {outdir} exists and is not a directory")
        entries = os.listdir(outdir)
        if entries and "INDEX" not in entries:
            raise ExtractError(f"OUTDIR {outdir} exists, is not empty and holds no INDEX: "
                               "refusing to replace it")
        if entries and not all(e == "INDEX" or e.endswith(".plat") for e in entries):
            raise ExtractError(f"OUTDIR {outdir} holds files other than INDEX and *.plat: "
                               "refusing to replace it")
    if not os.path.isdir(parent):
        raise ExtractError(f"cannot create OUTDIR {outdir}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ExtractError(f"cannot create OUTDIR {outdir}: {parent} is not writable")
    try:
        return tempfile.mkdtemp(prefix="." + os.path.basename(os.path.abspath(outdir)) + ".",
                                dir=parent)
    except OSError as e:
        raise ExtractError(f"cannot create OUTDIR {outdir}: {e.strerror}") from None


def install_outdir(tmp: str, outdir: str) -> None:
    """Rename the finished temp dir to OUTDIR (mkdtemp made it 0700)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    old = None
    if os.path.exists(outdir):
        old = tmp + ".old"
        os.rename(outdir, old)
    os.rename(tmp, outdir)
    if old:
        shutil.rmtree(old)
