# SPDX-License-Identifier: GPL-2.0
"""The patch series, as quilt patch queues: one queue per base.

series/6.12/ holds the series for the 6.12 LTS tree and series/mainline/
the one for the newest mainline tree Debian ships.  Each is a quilt queue
that git understands too (git quiltimport, git apply):

  series           quilt's list of the patches, in order
  NNNN-name.patch  "Subject: ..." and the message, a line "---", then the
                   diff (git format-patch output without the author, date
                   and sign-off, which the export adds)
  cover-letter     "Subject: ..." and the cover letter's own text
  differentials    "NNNN-name.patch<TAB>N" for each patch that changes the
                   governor: the number of divergent decisions its message
                   states, which the export checks against the replay lab

series/cc, shared by both queues, lists people on Cc for the whole series.

The overlay (paths.OVERLAY_PATHS) is what the tooling builds and tests;
each queue, applied to its base, must lay in exactly the overlay's files.
The queue's changes to upstream files (Kconfig, Makefiles, MAINTAINERS,
documentation) are what tree.prepare() applies under the overlay.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from teotool import paths
from teotool.ui import Fatal

# Version of a kernel tree: (VERSION, PATCHLEVEL, SUBLEVEL).
Version = Tuple[int, int, int]

LTS = "6.12"
MAINLINE = "mainline"
SUBJECT_MAX = 75
_DIFF_START = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)
_CC_LINE = re.compile(r"^[^<>#]+ <[^<>@\s]+@[^<>\s]+>\s*(#.*)?$")


def queue_name(version: Version) -> str:
    """The queue for a base: the LTS one for 6.12.y, else mainline's."""
    return LTS if version[:2] == (6, 12) else MAINLINE


def queue_dir(name: str, series: Optional[Path] = None) -> Path:
    return (series or paths.SERIES) / name


@dataclass(frozen=True)
class FileDiff:
    """One file's part of a patch: from its "diff --git" line on."""
    path: str
    text: str


@dataclass
class Patch:
    """A patch of a queue: its file name, subject, message and diff."""
    name: str
    subject: str
    message: str
    files: List[FileDiff] = field(default_factory=list)

    def diff(self) -> str:
        return "".join(f.text for f in self.files)

    def text(self) -> str:
        """The patch as the queue stores it."""
        return f"Subject: {self.subject}\n\n{self.message.rstrip()}\n---\n{self.diff()}"

    def touches(self, prefix: str) -> bool:
        return any(f.path == prefix or f.path.startswith(prefix.rstrip("/") + "/")
                   for f in self.files)


def overlay_path_of(path: str) -> Optional[str]:
    """The overlay path a file is, or lies in; None for an upstream file."""
    for p in paths.OVERLAY_PATHS:
        if path == p or path.startswith(p + "/"):
            return p
    return None


def parse_patch(name: str, text: str) -> Patch:
    """Split a queue patch into subject, message and per-file diffs; a
    malformed one is refused with one line naming it."""
    lines = text.split("\n")
    if not lines[0].startswith("Subject: "):
        raise Fatal(f"{name}: the first line is not 'Subject: ...'")
    subject = lines[0][len("Subject: "):].strip()
    if len(lines) < 2 or lines[1] != "":
        raise Fatal(f"{name}: no blank line after the subject")
    m = _DIFF_START.search(text)
    if not m:
        raise Fatal(f"{name}: no 'diff --git' part")
    head = text[:m.start()]
    if not head.endswith("\n---\n"):
        raise Fatal(f"{name}: the message must end with a line '---' right"
                    " before the diff")
    message = head[len(lines[0]) + 2:-len("---\n")].rstrip() + "\n"
    starts = [x.start() for x in _DIFF_START.finditer(text)] + [len(text)]
    files = []
    for a, b in zip(starts, starts[1:]):
        part = text[a:b]
        hm = _DIFF_START.match(part)
        assert hm is not None
        files.append(FileDiff(hm.group(2), part))
    return Patch(name, subject, message, files)


def read_subject_file(path: Path) -> Tuple[str, str]:
    """Subject and text of a file starting "Subject: ..." and a blank line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise Fatal(f"cannot read {path}: {err.strerror}") from None
    first, _, rest = text.partition("\n")
    if not first.startswith("Subject: ") or not rest.startswith("\n"):
        raise Fatal(f"{path}: must start with 'Subject: ...' and a blank line")
    return first[len("Subject: "):].strip(), rest[1:]


@dataclass
class Queue:
    """A base's queue, read and checked."""
    name: str
    folder: Path
    patches: List[Patch]
    cover_subject: str
    cover_text: str
    claims: Dict[str, int]

    def patch(self, name: str) -> Patch:
        for p in self.patches:
            if p.name == name:
                return p
        raise KeyError(name)

    def upstream_diff(self) -> str:
        """The queue's changes to upstream files, in order: what a private
        tree takes under the overlay."""
        return "".join(f.text for p in self.patches for f in p.files
                       if overlay_path_of(f.path) is None)


def _series_names(folder: Path) -> List[str]:
    try:
        text = (folder / "series").read_text(encoding="utf-8")
    except OSError:
        raise Fatal(f"{folder}: no quilt 'series' file") from None
    names = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if " " in line:
            raise Fatal(f"{folder}/series: '{line}': options after a patch"
                        " name are not supported")
        names.append(line)
    if not names:
        raise Fatal(f"{folder}/series lists no patches")
    return names


def _claims(folder: Path, names: List[str]) -> Dict[str, int]:
    path = folder / "differentials"
    claims: Dict[str, int] = {}
    if not path.exists():
        return claims
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not re.fullmatch(r"0|[1-9][0-9]*", parts[1]):
            raise Fatal(f"{path}:{n}: not 'PATCH<TAB>COUNT'")
        if parts[0] not in names:
            raise Fatal(f"{path}:{n}: {parts[0]} is not in the series")
        if parts[0] in claims:
            raise Fatal(f"{path}:{n}: {parts[0]} is listed twice")
        claims[parts[0]] = int(parts[1])
    return claims


def _check_patch(p: Patch, folder: Path) -> None:
    if not p.subject:
        raise Fatal(f"{folder.name}/{p.name}: empty subject")
    if len(p.subject) > SUBJECT_MAX:
        raise Fatal(f"{folder.name}/{p.name}: subject longer than"
                    f" {SUBJECT_MAX} characters")
    if re.search(r"^\[base |^\[end\]$", p.message, re.M):
        raise Fatal(f"{folder.name}/{p.name}: a [base ...] block: each base"
                    " has its own queue, with its own text")


def read_queue(name: str, series: Optional[Path] = None) -> Queue:
    """Read and check the queue of a base; one line naming the problem."""
    folder = queue_dir(name, series)
    if not folder.is_dir():
        raise Fatal(f"no patch queue {folder}")
    names = _series_names(folder)
    if len(set(names)) != len(names):
        raise Fatal(f"{folder}/series names a patch twice")
    patches = []
    for n in names:
        try:
            text = (folder / n).read_text(encoding="utf-8")
        except OSError:
            raise Fatal(f"{folder}/series names {n}, which does not exist") from None
        patches.append(parse_patch(f"{name}/{n}", text))
        patches[-1].name = n
        _check_patch(patches[-1], folder)
    listed = set(names)
    for extra in sorted(folder.glob("*.patch")):
        if extra.name not in listed:
            raise Fatal(f"{extra} is not in {folder}/series")
    subject, text = read_subject_file(folder / "cover-letter")
    return Queue(name, folder, patches, subject, text, _claims(folder, names))


def read_cc(series: Optional[Path] = None) -> List[str]:
    """The addresses of series/cc ("Name <address>  # why" lines)."""
    path = (series or paths.SERIES) / "cc"
    if not path.exists():
        return []
    found = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if not _CC_LINE.match(raw):
            raise Fatal(f"{path}:{n}: not 'Name <address>  # why'")
        found.append(raw.split("#", 1)[0].strip())
    return found
