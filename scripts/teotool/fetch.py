# SPDX-License-Identifier: GPL-2.0
"""Newer kernel source packages from Debian unstable or experimental (the
mainline tree of the linux-pm series), fetched into the cache without
touching the system's apt configuration, and unpacked once into
paths.cache()/base/linux-source-X.Y."""

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from teotool import deps, disk, paths, process
from teotool.ui import Fatal, UsageError, note

NEWEST_MAX_AGE_S = 86400
PACKAGE = re.compile(r"^linux-source-[0-9]+\.[0-9]+$")
_SKIP_SUITE = re.compile(r"-(security|updates|backports|proposed-updates)$")
_SUITES = ("sid", "unstable", "experimental", "testing", "stable", "trixie",
           "bookworm", "forky")


def check_package(name: str) -> str:
    if not PACKAGE.match(name):
        raise UsageError(f"'{name}' is not a package name of the form linux-source-X.Y")
    return name


def _source_files(etc: Path) -> List[Path]:
    files = [etc / "sources.list"]
    files += sorted((etc / "sources.list.d").glob("*.list"))
    files += sorted((etc / "sources.list.d").glob("*.sources"))
    return [f for f in files if f.is_file() and os.access(f, os.R_OK)]


def _one_line_entries(text: str) -> Iterator[Tuple[str, str]]:
    """(URI, suite) of "deb [options] URI SUITE COMPONENT..." lines."""
    for line in text.splitlines():
        f = line.split("#", 1)[0].split()
        if not f or f[0] not in ("deb", "deb-src"):
            continue
        i = 1
        if i < len(f) and f[i].startswith("["):
            while i < len(f) and not f[i].endswith("]"):
                i += 1
            i += 1
        if i < len(f):
            yield f[i], f[i + 1] if i + 1 < len(f) else ""


def _deb822_entries(text: str) -> Iterator[Tuple[str, str]]:
    """(URI, suite) of the enabled "Types: deb" stanzas of a .sources file."""
    for stanza in re.split(r"\n[ \t]*\n", text):
        fields = {}
        for line in stanza.splitlines():
            if line.lstrip().startswith("#") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            fields[key.strip()] = value.split()
        if "deb" in fields.get("Types", []) and \
                fields.get("Enabled", ["yes"])[:1] != ["no"]:
            for uri in fields.get("URIs", []):
                for suite in fields.get("Suites", []):
                    yield uri, suite


def _codename() -> str:
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        return ""
    m = re.search(r"^VERSION_CODENAME=\"?([^\"\n]*)\"?$", text, re.M)
    return m.group(1) if m else ""


def debian_mirror(etc: Optional[Path] = None) -> Optional[str]:
    """The Debian archive of this machine's apt sources: the entry for the
    release it runs (VERSION_CODENAME), else the first for sid, unstable,
    testing, stable or a named release; security and update suites hold
    no source packages.  TEO_DEBIAN_MIRROR overrides it."""
    if os.environ.get("TEO_DEBIAN_MIRROR"):
        return os.environ["TEO_DEBIAN_MIRROR"].rstrip("/")
    etc = etc or Path(os.environ.get("TEO_APT_ETC") or "/etc/apt")
    want = _codename()
    exact = other = ""
    for f in _source_files(etc):
        text = f.read_text(encoding="utf-8", errors="replace")
        entries = _deb822_entries(text) if f.suffix == ".sources" else _one_line_entries(text)
        for uri, suite in entries:
            if _SKIP_SUITE.search(suite):
                continue
            if want and suite == want and not exact:
                exact = uri
            elif suite in _SUITES and not other:
                other = uri
    found = exact or other
    return found.rstrip("/") if found else None


class PrivateApt:
    """apt-get and apt-cache on private lists of sid and experimental."""

    def __init__(self) -> None:
        mirror = debian_mirror()
        if not mirror:
            raise Fatal("no Debian archive in /etc/apt/sources.list or"
                        " sources.list.d; set TEO_DEBIAN_MIRROR=URI")
        self.dir = paths.cache() / "apt"
        (self.dir / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (self.dir / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        (self.dir / "sources.list").write_text(
            f"deb {mirror} sid main\ndeb {mirror} experimental main\n", encoding="utf-8")
        # The machine's update hooks (appstream, packagekit ...) are for
        # its own package lists, not for these.
        (self.dir / "apt.conf").write_text(
            "#clear APT::Update::Pre-Invoke;\n#clear APT::Update::Post-Invoke;\n"
            "#clear APT::Update::Post-Invoke-Success;\n", encoding="utf-8")
        self.opts = ["-c", str(self.dir / "apt.conf"),
                     "-o", f"Dir::Etc::sourcelist={self.dir / 'sources.list'}",
                     "-o", "Dir::Etc::sourceparts=-",
                     "-o", f"Dir::State::Lists={self.dir / 'lists'}",
                     "-o", f"Dir::Cache={self.dir / 'cache'}",
                     "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"]
        note(f"looking up Debian unstable and experimental at {mirror}")
        if self.run("apt-get", "-q", "update").returncode != 0:
            raise Fatal(f"apt-get update from {mirror} failed (no network?)")

    def run(self, tool: str, *args: str, cwd: Optional[Path] = None
            ) -> "subprocess.CompletedProcess[str]":
        return process.output([tool, *self.opts, *args], cwd=cwd, env=process.debian_env())

    def newest_package(self) -> Optional[str]:
        names = [n for n in self.run("apt-cache", "pkgnames", "linux-source-").stdout.split()
                 if PACKAGE.match(n)]

        def version(name: str) -> Tuple[int, ...]:
            return tuple(int(x) for x in name[len("linux-source-"):].split("."))

        return max(names, key=version) if names else None


def _unpack(pkg: str, apt: Optional[PrivateApt]) -> PrivateApt:
    """Download and unpack pkg into the cache unless it is there."""
    dest = paths.cache() / "base" / pkg
    apt = apt or PrivateApt()
    disk.need_space(paths.cache(), 3072)
    with tempfile.TemporaryDirectory(prefix="fetch.", dir=dest.parent) as name:
        tmp = Path(name)
        if apt.run("apt-get", "-q", "download", pkg, cwd=tmp).returncode != 0:
            raise Fatal(f"{pkg} is not in Debian unstable or experimental")
        debs = sorted(tmp.glob(f"{pkg}_*.deb"))
        if not debs or process.run(["dpkg-deb", "-x", debs[0], tmp / "deb"]) != 0:
            raise Fatal(f"could not unpack the {pkg} package")
        tarballs = sorted((tmp / "deb" / "usr" / "src").glob(f"{pkg}.tar.*"))
        if not tarballs:
            raise Fatal(f"the {pkg} package holds no /usr/src/{pkg}.tar.*")
        note(f"unpacking {pkg} (once)")
        if process.run(["tar", "-xf", tarballs[0], "-C", tmp]) != 0 or \
                not (tmp / pkg).is_dir():
            raise Fatal(f"{tarballs[0].name} does not contain {pkg}/")
        shutil.rmtree(dest, ignore_errors=True)
        (tmp / pkg).rename(dest)
    (dest / ".teo-unpacked").touch()
    return apt


def recorded_newest(max_age_s: Optional[float]) -> Optional[str]:
    """The package --newest found last, if unpacked (and young enough)."""
    rec = paths.cache() / "base" / "newest"
    try:
        pkg = rec.read_text(encoding="utf-8").strip()
        age = time.time() - rec.stat().st_mtime
    except OSError:
        return None
    if not PACKAGE.match(pkg) or not (paths.cache() / "base" / pkg / ".teo-unpacked").is_file():
        return None
    if max_age_s is not None and age > max_age_s:
        return None
    return pkg


class _FetchLock:
    """One fetch at a time per cache (a private lock: this is no build)."""

    def __enter__(self) -> None:
        self.f = open(paths.cache() / "base" / ".fetch.lock", "a", encoding="utf-8")
        fcntl.flock(self.f, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        self.f.close()


def _base_dir() -> Path:
    base = paths.cache() / "base"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise Fatal(f"cannot create {base}; set TEO_CACHE to a writable folder") from None
    return base


def fetch(pkg: str) -> Path:
    """The unpacked tree of package pkg, fetched first if needed."""
    base = _base_dir() / check_package(pkg)
    deps.need_cmd("apt-get", "apt-cache", "dpkg-deb", "tar")
    with _FetchLock():
        if not (base / ".teo-unpacked").is_file():
            _unpack(pkg, None)
    return base


def newest(cached: bool = False, refresh: bool = False) -> Path:
    """The newest linux-source-X.Y of unstable and experimental; the
    answer is kept for a day.  cached: the one fetched last, never the
    network."""
    base = _base_dir()
    if cached:
        pkg = recorded_newest(None)
        if not pkg:
            raise Fatal("no mainline tree fetched yet: run 'scripts/fetch-source.sh --newest'")
        return base / pkg
    deps.need_cmd("apt-get", "apt-cache", "dpkg-deb", "tar")
    with _FetchLock():
        pkg = None if refresh else recorded_newest(NEWEST_MAX_AGE_S)
        if not pkg:
            apt = PrivateApt()
            pkg = apt.newest_package()
            if not pkg:
                raise Fatal("no linux-source-X.Y package in Debian unstable or experimental")
            if not (base / pkg / ".teo-unpacked").is_file():
                _unpack(pkg, apt)
            (base / "newest").write_text(pkg + "\n", encoding="utf-8")
    return base / pkg


def main(pkg: Optional[str], newest_: bool, cached: bool, refresh: bool,
         mirror: bool) -> str:
    """The command line's rules, then the fetch: the tree's path (with
    mirror, the archive's URI)."""
    if mirror:
        found = debian_mirror()
        if not found:
            raise Fatal("no Debian archive in"
                        f" {os.environ.get('TEO_APT_ETC') or '/etc/apt'}/sources.list"
                        " or sources.list.d; set TEO_DEBIAN_MIRROR=URI")
        return found
    if newest_ and pkg:
        raise UsageError("give a package or --newest, not both")
    if not newest_ and (cached or refresh):
        raise UsageError("--cached and --refresh go with --newest")
    if not newest_ and not pkg:
        raise UsageError("no package given")
    if pkg:
        return str(fetch(check_package(pkg)))
    return str(newest(cached, refresh))

