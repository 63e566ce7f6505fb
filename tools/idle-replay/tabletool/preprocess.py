# SPDX-License-Identifier: GPL-2.0
"""The device-tree sources of the tree and their preprocessing: the
boards of arm64, arm and riscv, which of them may reference idle states
(their include closure), and cpp run as the kernel's dtc rule runs it,
several boards in one run."""

import os
import re
import subprocess
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

from tabletool.csource import read_text

DT_ARCHES = ("arm64", "arm", "riscv")
INCLUDE_PREFIXES = "scripts/dtc/include-prefixes"
INC_RE = re.compile(r'^[ \t]*(#[ \t]*include|/include/)[ \t]*([<"])([^>"]+)[>"]', re.M)
DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
SPLIT = "__idle_extract_board_end__"
# As the kernel's cmd_dtc runs cpp (dtc_cpp_flags of scripts/Makefile.dtbs).
CPP_ARGS = ["-nostdinc", "-I", INCLUDE_PREFIXES, "-undef", "-D__DTS__",
            "-x", "assembler-with-cpp"]

# A board preprocessed: (text, None) or (None, why cpp failed).
Cpp = Tuple[Optional[str], Optional[str]]


class DtFiles:
    """The .dts/.dtsi/.h files of the tree: includes, macros, state users."""

    def __init__(self, src: str) -> None:
        self.src = src
        # rel -> (includes, defines, mentions idle states)
        self.info: Dict[str, Tuple[List[str], Set[str], bool]] = {}
        self._isfile: Dict[str, bool] = {}
        # scripts/dtc/include-prefixes/X are symlinks into the tree.
        self.prefixes = {}
        top = os.path.join(src, INCLUDE_PREFIXES)
        for e in sorted(os.listdir(top)) if os.path.isdir(top) else []:
            p = os.path.join(top, e)
            if os.path.islink(p):
                self.prefixes[e] = os.path.normpath(os.path.join(INCLUDE_PREFIXES,
                                                                 os.readlink(p)))

    def canon(self, rel: str) -> str:
        """A tree-relative path without include-prefixes/ detours."""
        rel = os.path.normpath(rel)
        if rel.startswith(INCLUDE_PREFIXES + "/"):
            first, _, rest = rel[len(INCLUDE_PREFIXES) + 1:].partition("/")
            if first in self.prefixes:
                rel = os.path.normpath(os.path.join(self.prefixes[first], rest))
        return rel

    def isfile(self, rel: str) -> bool:
        if rel not in self._isfile:
            self._isfile[rel] = os.path.isfile(os.path.join(self.src, rel))
        return self._isfile[rel]

    def resolve(self, cur: str, kind: str, quote: str, name: str) -> Optional[str]:
        """The file an include in cur names, as cpp (or dtc) finds it."""
        dirs = []
        if quote == '"' or kind == "/include/":
            dirs.append(os.path.dirname(cur))
        dirs.append(INCLUDE_PREFIXES)
        for d in dirs:
            p = self.canon(os.path.join(d, name))
            if self.isfile(p):
                return p
        return None

    def file(self, rel: str) -> Tuple[List[str], Set[str], bool]:
        if rel not in self.info:
            try:
                text = read_text(os.path.join(self.src, rel))
            except OSError:
                text = ""
            incs = []
            for m in INC_RE.finditer(text) if "include" in text else ():
                r = self.resolve(rel, m.group(1).replace(" ", "").replace("\t", ""),
                                 m.group(2), m.group(3))
                if r:
                    incs.append(r)
            self.info[rel] = (incs,
                              set(DEFINE_RE.findall(text)) if "define" in text else set(),
                              "cpu-idle-states" in text or "domain-idle-states" in text)
        return self.info[rel]

    def closure(self, rel: str) -> List[str]:
        """All files rel includes, itself first (an over-approximation)."""
        seen = {}
        todo = [rel]
        while todo:
            r = todo.pop()
            if r in seen:
                continue
            seen[r] = True
            todo.extend(reversed(self.file(r)[0]))
        return list(seen)

    def boards(self) -> List[str]:
        out = []
        for arch in DT_ARCHES:
            top = os.path.join(self.src, "arch", arch, "boot/dts")
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith(".dts"):
                        out.append(os.path.relpath(os.path.join(dirpath, f), self.src))
        return sorted(out)

    def uses_states(self, board: str) -> bool:
        return any(self.file(r)[2] for r in self.closure(board))

    def macros(self, board: str) -> List[str]:
        names: Set[str] = set()
        for r in self.closure(board):
            names |= self.file(r)[1]
        return sorted(names)


def cpp_one(src: str, board: str) -> Cpp:
    """Preprocess one board as the kernel's dtc rule does: (text, error)."""
    r = subprocess.run(["cpp"] + CPP_ARGS + [board], cwd=src, capture_output=True,
                       text=True, errors="replace", check=False)
    if r.returncode:
        lines = [ln for ln in r.stderr.splitlines() if "error" in ln] or r.stderr.splitlines()
        return None, "cpp: " + (lines[0].strip() if lines else f"exit {r.returncode}")
    return r.stdout, None


def cpp_batch(src: str, boards: Sequence[str],
              macros: Mapping[str, Sequence[str]]) -> Dict[str, Cpp]:
    """Preprocess several boards in one cpp run: each board is included from
    a wrapper and every macro its files may define is #undef'd after it, so
    that the next board starts from a clean slate (include guards too).
    Returns {board: (text, error)}; on any error, falls back to one run per
    board."""
    if len(boards) > 1:
        parts = []
        for b in boards:
            parts.append(f'#include "{b}"\n{SPLIT}\n')
            parts.extend(f"#undef {name}\n" for name in macros[b])
        r = subprocess.run(["cpp"] + CPP_ARGS + ["-"], cwd=src, input="".join(parts),
                           capture_output=True, text=True, errors="replace", check=False)
        pieces = r.stdout.split(SPLIT)
        if r.returncode == 0 and len(pieces) == len(boards) + 1:
            return {b: (pieces[i], None) for i, b in enumerate(boards)}
    return {b: cpp_one(src, b) for b in boards}


def strip_markers(text: str) -> str:
    """cpp output without its line markers and blank lines: what two runs
    over the same board must agree on."""
    return "\n".join(ln for ln in text.splitlines()
                     if ln.strip() and not re.match(r'#\s*\d+\s+"', ln))
