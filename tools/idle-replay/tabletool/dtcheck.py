# SPDX-License-Identifier: GPL-2.0
"""--check-dtc: each board preprocessed alone and compiled by dtc, held
against what the batched cpp run and the reader gave.

dtc writes the board back as source (-O dts): one flat tree in which dtc
itself has merged the nodes, applied the deletions and /include/,
evaluated the expressions and turned every reference into a phandle
number.  The same reader reads that, and the idle-state logic must find
the same tables in it: what is hard in the source (labels, paths,
overrides, deletions, arithmetic) is done by dtc on one side and by the
reader on the other."""

import os
import subprocess
from typing import Callable, List, Optional, Sequence, Tuple

from tabletool.dtidle import CpuTable, DtDrivers, dt_board
from tabletool.dts import Tree
from tabletool.errors import DtsError, ExtractError
from tabletool.preprocess import INCLUDE_PREFIXES, DtFiles, cpp_one, strip_markers

# What --check-dtc compares: per CPU its name, driver and (state, exit
# latency, target residency).
Compared = List[Tuple[str, str, List[Tuple[str, int, int]]]]
# A board that does not pass: ('unchecked' | 'differs', why).
Verdict = Tuple[str, str]


def compared(per_cpu: Sequence[CpuTable]) -> Compared:
    return [(c.cpu, c.driver, [(s.name, s.exit_us, s.res_us) for s in c.states])
            for c in per_cpu]


def dtc_board(src: str, files: DtFiles, board: str, text: str, drivers: DtDrivers,
              state_max: int) -> Compared:
    """The tables of a preprocessed board as dtc compiles it."""
    r = subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dts",
                        "-i", os.path.dirname(board), "-i", INCLUDE_PREFIXES, "-o", "-", "-"],
                       cwd=src, input=text.encode(), capture_output=True, check=False)
    if r.returncode:
        raise DtsError("dtc: " + (r.stderr.decode(errors="replace").strip().splitlines()
                                  or ["failed"])[0])
    tree = Tree(src, files, board, r.stdout.decode(errors="replace"))
    return compared(dt_board(tree, board, drivers, state_max)[0])


def check_board(src: str, files: DtFiles, board: str, text: str, per_cpu: Sequence[CpuTable],
                drivers: DtDrivers, state_max: int) -> Optional[Verdict]:
    """--check-dtc for one board: None if cpp alone and dtc give what the
    batch and the reader gave (per_cpu), else a verdict."""
    single, err = cpp_one(src, board)
    if err or single is None:
        return ("differs", f"a single cpp run fails ({err})")
    if strip_markers(single) != strip_markers(text):
        return ("differs", "the batched cpp output differs from a single cpp run")
    try:
        theirs = dtc_board(src, files, board, single, drivers, state_max)
    except DtsError as e:
        return ("unchecked", str(e))
    ours = compared(per_cpu)
    return None if ours == theirs else ("differs", f"parser {ours} != dtc {theirs}")


def report(checks: Sequence[Tuple[str, Verdict]], skipped: Sequence[Tuple[str, str]],
           log: Callable[[str], None], warn: Callable[[str], None]) -> None:
    """Summary of --check-dtc; fails if any board differs."""
    differs = [(b, why) for b, (kind, why) in checks if kind == "differs"]
    unchecked = [(b, why) for b, (kind, why) in checks if kind == "unchecked"]
    for b, why in differs[:20]:
        warn(f"check-dtc: {b}: {why}")
    if unchecked:
        warn(f"check-dtc: this dtc cannot compile {len(unchecked)} board(s) the parser read "
             f"(first: {unchecked[0][0]}: {unchecked[0][1]}); they are not checked")
    if differs:
        raise ExtractError(f"check-dtc: {len(differs)} board(s) differ between the parser "
                           "and dtc")
    log("check-dtc: every board the parser read and dtc compiles gives the same tables"
        + (f" ({len(skipped)} skipped board(s) not checked)" if skipped else ""))
