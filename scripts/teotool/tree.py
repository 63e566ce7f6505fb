# SPDX-License-Identifier: GPL-2.0
"""The base tree, the checks of KERNEL_SRC, and the private overlay copy.

The base tree is never modified: a private copy hard-links its unchanged
files and replaces the ones the overlay and the upstream edits touch.
Each base has a cache slot, paths.trees()/<key>, holding src/ (the copy)
and the build folders beside it.
"""

import filecmp
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import List, Optional, Tuple, Union

from teotool import deps, disk, paths, process, queue
from teotool.ui import Fatal, note

Version = Tuple[int, int, int]


def kernel_version(tree: Path) -> Optional[Version]:
    """VERSION, PATCHLEVEL and SUBLEVEL of the tree's top-level Makefile."""
    try:
        text = (tree / "Makefile").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = {}
    for name in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
        m = re.search(rf"^{name} = ([0-9]*)$", text, re.M)
        found[name] = m.group(1) if m else ""
    if not found["VERSION"] or not found["PATCHLEVEL"]:
        return None
    return (int(found["VERSION"]), int(found["PATCHLEVEL"]),
            int(found["SUBLEVEL"] or 0))


def version_text(version: Version) -> str:
    return ".".join(str(v) for v in version)


def check_kernel_src(src: str) -> Path:
    """The folder KERNEL_SRC names, or a one-line error; absolute, with
    its symbolic links kept (as the cache key has always named it)."""
    path = Path(src)
    if not path.exists():
        raise Fatal(f"KERNEL_SRC={src} does not exist")
    if not path.is_dir():
        raise Fatal(f"KERNEL_SRC={src} is a file, not a kernel source folder")
    if not os.access(path, os.R_OK | os.X_OK):
        raise Fatal(f"KERNEL_SRC={src} is not readable by {process._user(os.geteuid())}")
    return Path(os.path.abspath(path))


def check_kernel_tree(src: Path) -> Version:
    """Fail unless src is a clean kernel tree the overlay can go onto."""
    check_kernel_src(str(src))
    version = kernel_version(src)
    if version is None:
        raise Fatal(f"KERNEL_SRC={src} is not a kernel tree (no top-level"
                    " Makefile with VERSION/PATCHLEVEL)")
    ver = version_text(version)
    if not (src / paths.GOVERNORS / "Makefile").is_file() or \
            not (src / paths.KUNIT_PY).is_file():
        raise Fatal(f"KERNEL_SRC={src} (version {ver}) lacks"
                    " drivers/cpuidle/governors or tools/testing/kunit")
    if version[:2] < paths.MIN_BASE:
        need = ".".join(str(v) for v in paths.MIN_BASE)
        raise Fatal(f"KERNEL_SRC={src} is Linux {ver}; the overlay needs {need} or later")
    if (src / ".config").exists() or (src / "include" / "config").is_dir():
        raise Fatal(f"KERNEL_SRC={src} has build artifacts (.config); kunit.py"
                    " needs a clean tree: point at a clean checkout (this tool"
                    " never cleans yours)")
    return version


def tree_key(src: Path) -> str:
    """The name of the cache slot for base tree src and this repository.

    The repository is part of the key: two work trees sharing one cache
    must not share a private tree, or each one's sync of the overlay
    lands in the other's build (seen: a KUnit run of one work tree built
    another's teo_kunit.c, which the other had synced between the first
    one's sync and its build).  ccache still shares the compile results:
    it hashes paths relative to the build folder (CCACHE_BASEDIR), and
    every slot is laid out alike."""
    version = kernel_version(src)
    assert version is not None
    digest = hashlib.sha1(f"{src}\n{paths.REPO}".encode()).hexdigest()[:8]
    return f"linux-{version_text(version)}-{digest}"


# --- the default base ------------------------------------------------------

def _unpack_debian_base() -> Path:
    """Unpack Debian's source package into the cache (under the lock)."""
    dest = paths.debian_base()
    if (dest / ".teo-unpacked").is_file():
        return dest
    tarball = paths.DEBIAN_TARBALL
    if not tarball.is_file():
        if os.geteuid() != 0:
            raise Fatal(f"{tarball} is missing: run 'apt-get install"
                        f" {paths.DEBIAN_PKG}' as root, or set KERNEL_SRC")
        note(f"installing {paths.DEBIAN_PKG} with apt-get")
        if process.run(["apt-get", "install", "-y", "-q", paths.DEBIAN_PKG],
                       env=process.debian_env()) != 0:
            raise Fatal(f"apt-get install {paths.DEBIAN_PKG} failed")
    disk.need_space(paths.cache(), 2048)
    note(f"unpacking {tarball} (once)")
    with tempfile.TemporaryDirectory(prefix="unpack.", dir=dest.parent) as tmp:
        if process.run(["tar", "-xJf", tarball, "-C", tmp]) != 0:
            raise Fatal(f"could not unpack {tarball}")
        unpacked = Path(tmp) / paths.DEBIAN_PKG
        if not unpacked.is_dir():
            raise Fatal(f"{tarball} does not contain {paths.DEBIAN_PKG}/")
        shutil.rmtree(dest, ignore_errors=True)
        unpacked.rename(dest)
    (dest / ".teo-unpacked").touch()
    return dest


def base_tree() -> Path:
    """The base tree: KERNEL_SRC, else Debian's package unpacked once."""
    src = paths.kernel_src()
    if src:
        base = check_kernel_src(src)
        check_kernel_tree(base)
        disk.need_cache()
        return base
    disk.need_cache()
    dest = paths.debian_base()
    if (dest / ".teo-unpacked").is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with process.BuildLock():
        return _unpack_debian_base()


# --- the private copy -----------------------------------------------------

def link_copy(src: Path, dst: Path) -> None:
    """Copy tree src to dst, hard-linking files where the file system
    allows (one file system), else copying."""
    dst.mkdir(parents=True, exist_ok=True)
    mode = "-al"
    probe = dst / ".link-test"
    try:
        os.link(src / "Makefile", probe)
    except OSError:
        note(f"{src} is on another file system: copying it (slower)")
        mode = "-a"
    probe.unlink(missing_ok=True)
    entries = [e for e in sorted(src.iterdir())
               if e.name not in (".git", ".teo-unpacked")]
    if entries and process.run(["cp", mode, *entries, str(dst) + "/"]) != 0:
        raise Fatal(f"could not copy {src} to {dst}")


def unshare(path: Path) -> None:
    """Replace a hard link with a private copy, so the base never changes."""
    if path.is_file():
        tmp = path.with_name(path.name + ".teo-tmp")
        shutil.copy2(path, tmp)
        os.replace(tmp, path)


def upstream_edits(version: Version) -> str:
    """The series' changes to upstream files (Kconfig, Makefiles,
    MAINTAINERS, documentation) for a base: those of its patch queue, in
    the queue's order (two of them change the same lines of MAINTAINERS
    and only apply in that order)."""
    return queue.read_queue(queue.queue_name(version)).upstream_diff()


def edit_targets(diff: str) -> List[str]:
    """The files a unified diff changes, as in-tree paths."""
    return re.findall(r"^\+\+\+ b/(\S+)", diff, re.M)


def apply_edits(tree: Path, version: Version) -> None:
    """Apply the upstream edits to tree; on a mismatch name the files."""
    diff = upstream_edits(version)
    if not diff:
        return
    targets = edit_targets(diff)
    for target in targets:
        unshare(tree / target)
    patch: List[Union[str, Path]] = ["patch", "-s", "-p1", "-d", tree, "--fuzz=0",
                                     "--forward"]
    if process.output(patch + ["--dry-run"], stdin=diff).returncode != 0:
        raise Fatal(f"the upstream edits of the queue {queue.queue_name(version)}"
                    f" do not apply to {' '.join(sorted(set(targets)))} of Linux"
                    f" {version_text(version)}")
    done = process.output(patch + ["--no-backup-if-mismatch"], stdin=diff)
    if done.returncode != 0:
        raise Fatal(f"patch failed: {done.stdout}{done.stderr}".strip())


def _files(folder: Path) -> List[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and not p.is_symlink())


def _same(a: Path, b: Path) -> bool:
    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def overlay_changes(tree: Path) -> List[Tuple[str, Path, Optional[Path]]]:
    """What makes tree's copies of the overlay equal to the repository's:
    ("copy", from, to) per file that differs, ("remove", file, None) per
    file of our folders that the repository dropped."""
    changes: List[Tuple[str, Path, Optional[Path]]] = []
    for rel in paths.OVERLAY_PATHS:
        ours, theirs = paths.REPO / rel, tree / rel
        if ours.is_dir():
            # The folder is ours alone: drop the files we no longer have.
            if theirs.is_dir():
                changes += [("remove", theirs / f, None) for f in _files(theirs)
                            if not (ours / f).exists()]
            changes += [("copy", ours / f, theirs / f) for f in _files(ours)
                        if not _same(ours / f, theirs / f)]
        elif ours.exists() and not _same(ours, theirs):
            changes.append(("copy", ours, theirs))
    return changes


def sync_overlay(tree: Path) -> None:
    """Update tree's overlay files, touching only those that differ, so
    that rebuilds stay incremental."""
    for action, src, dst in overlay_changes(tree):
        if action == "remove":
            src.unlink(missing_ok=True)
            continue
        assert dst is not None
        dst.parent.mkdir(parents=True, exist_ok=True)
        # Never write through a hard link into the base tree.
        dst.unlink(missing_ok=True)
        shutil.copyfile(src, dst)
        shutil.copymode(src, dst)


def tree_stamp(base: Path, version: Version, as_is: bool) -> str:
    """Everything that decides the private copy besides the overlay files,
    which are synced on every call."""
    h = hashlib.sha1()
    if as_is:
        h.update(f"as-is base={base} {version_text(version)}\n".encode())
        return h.hexdigest()
    h.update(f"base={base}\n{version_text(version)}\n".encode())
    h.update(upstream_edits(version).encode())
    h.update(("\n".join(paths.OVERLAY_PATHS) + "\n").encode())
    return h.hexdigest()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _make_copy(base: Path, slot: Path, version: Version, as_is: bool) -> None:
    """A fresh private copy in slot/src, swapped in only when complete."""
    disk.need_space(paths.cache(), 1024)
    note(f"preparing a private copy of Linux {version_text(version)} from {base}")
    slot.mkdir(parents=True, exist_ok=True)
    new = Path(tempfile.mkdtemp(prefix="src.new.", dir=slot))
    try:
        new.chmod(0o755)
        link_copy(base, new)
        if not as_is:
            try:
                apply_edits(new, version)
            except Fatal as err:
                raise Fatal(f"{err}: the base does not take the series' edits;"
                            f" the cache and {base} are unchanged") from None
            sync_overlay(new)
        old = slot / "src.old"
        shutil.rmtree(old, ignore_errors=True)
        if (slot / "src").is_dir():
            (slot / "src").rename(old)
        new.rename(slot / "src")
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(new, ignore_errors=True)


def prepare(refresh: bool = False, as_is: bool = False) -> Path:
    """The cache slot of the base tree with the overlay laid on it (or,
    as_is, the base alone), made or brought up to date."""
    deps.need_cmd("patch", "tar", "xz", "cp")
    # The base first, then the cache: a wrong KERNEL_SRC creates nothing.
    base = base_tree()
    version = check_kernel_tree(base)
    paths.trees().mkdir(parents=True, exist_ok=True)
    slot = paths.trees() / tree_key(base)
    if as_is:
        slot = slot.with_name(slot.name + "-as-is")
    stamp = tree_stamp(base, version, as_is)

    def current() -> bool:
        return not refresh and _read(slot / "src.stamp") == stamp

    # Nothing to change: no need to wait for builds.
    if current() and (as_is or not overlay_changes(slot / "src")):
        return slot
    # Builds may be reading the private tree: change it only under the lock.
    with process.BuildLock():
        if not current():
            _make_copy(base, slot, version, as_is)
            (slot / "src.stamp").write_text(stamp + "\n", encoding="utf-8")
            (slot / "base").write_text(f"{base}\n", encoding="utf-8")
        elif not as_is:
            sync_overlay(slot / "src")
    return slot

