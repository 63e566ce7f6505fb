# SPDX-License-Identifier: GPL-2.0
"""Free space and writable folders, checked before anything is written."""

import os
from pathlib import Path

from teotool import paths
from teotool.ui import Fatal


def free_mib(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize // (1024 * 1024)


def need_space(folder: Path, want_mib: int) -> None:
    """Create folder if needed; fail unless want_mib MiB are free there."""
    folder.mkdir(parents=True, exist_ok=True)
    have = free_mib(folder)
    if have < want_mib:
        raise Fatal(f"only {have} MiB free under {folder}, need {want_mib} MiB;"
                    " free some space or set TEO_CACHE to a larger disk")


def existing_parent(path: Path) -> Path:
    """The nearest existing path at or above path."""
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def need_writable_dir(folder: Path, what: str = "") -> None:
    """Fail unless folder exists and is writable or can be created.
    Creates nothing."""
    what = what or str(folder)
    p = existing_parent(folder)
    if folder.exists() and not folder.is_dir():
        raise Fatal(f"{what} is not a folder")
    if not p.is_dir():
        raise Fatal(f"{what} cannot be created: {p} is not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise Fatal(f"{what} is not writable (no write permission on {p});"
                    " choose another folder")


def need_cache() -> Path:
    """The cache folder, created, or a one-line error: nothing can be
    unpacked or built without it."""
    cache = paths.cache()
    what = f"the cache folder TEO_CACHE={cache}"
    need_writable_dir(cache, what)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    if not cache.is_dir() or not os.access(cache, os.W_OK):
        raise Fatal(f"{what} is not writable (read-only file system?);"
                    " choose another folder")
    return cache
