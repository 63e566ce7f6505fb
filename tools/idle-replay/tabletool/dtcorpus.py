# SPDX-License-Identifier: GPL-2.0
"""Every board of the tree to tables: the boards that reference idle
states, preprocessed in batches and read by parallel workers, and one
table per board and distinct CPU table, named after the file that shaped
it."""

import concurrent.futures
import multiprocessing
import os
import re
import shutil
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from tabletool.dtcheck import Verdict, check_board
from tabletool.dtidle import CpuTable, DtDrivers, cpu_list, dt_board, dt_drivers
from tabletool.dts import Tree
from tabletool.errors import DtsError, ExtractError
from tabletool.plat import State, Table
from tabletool.preprocess import DtFiles, cpp_batch

BATCH = 24  # boards per cpp run

# What one board gives: its CPU tables and why some CPUs get none.
BoardTables = Tuple[List[CpuTable], List[str]]


class BoardResult(NamedTuple):
    board: str
    tables: Optional[BoardTables]  # None if it failed
    error: Optional[str]           # why it failed to preprocess or parse
    check: Optional[Verdict]       # --check-dtc's verdict where it does not pass


class DtResult(NamedTuple):
    tables: List[Table]
    rejects: List[str]                # CPUs without a table, and why
    skipped: List[Tuple[str, str]]    # (board, why it failed)
    checks: List[Tuple[str, Verdict]]  # (board, verdict) of --check-dtc
    boards: int                       # boards read


class Job(NamedTuple):
    """What the workers share (set before the pool forks)."""
    src: str
    files: DtFiles
    drivers: DtDrivers
    state_max: int
    check_dtc: bool


_JOB: List[Job] = []


def board_tables(src: str, files: DtFiles, board: str, text: str, drivers: DtDrivers,
                 state_max: int) -> BoardTables:
    """Read one preprocessed board (a plain, picklable result)."""
    return dt_board(Tree(src, files, board, text), board, drivers, state_max)


def work_batch(boards: Sequence[str]) -> List[BoardResult]:
    """Preprocess and read some boards."""
    job = _JOB[0]
    macros = {b: job.files.macros(b) for b in boards}
    out = []
    for b, (text, err) in cpp_batch(job.src, boards, macros).items():
        res = None
        check = None
        if text is not None and not err:
            try:
                res = board_tables(job.src, job.files, b, text, job.drivers, job.state_max)
            except DtsError as e:
                err = f"parse: {e}"
        if res is not None and job.check_dtc:
            assert text is not None
            check = check_board(job.src, job.files, b, text, res[0], job.drivers,
                                job.state_max)
        out.append(BoardResult(b, res, err, check))
    return out


def extract_dt(src: str, state_max: int, jobs: int, check_dtc: bool, max_skipped: float,
               log: Callable[[str], None]) -> DtResult:
    """Tables of every board."""
    t0 = time.monotonic()
    files = DtFiles(src)
    boards = files.boards()
    candidates = [b for b in boards if files.uses_states(b)]
    log(f"device tree: {len(boards)} boards, {len(candidates)} reference idle states "
        f"(scanned in {time.monotonic() - t0:.1f} s)")
    if not candidates:
        return DtResult([], [], [], [], 0)
    if shutil.which("cpp") is None:
        raise ExtractError("cpp not found: install the Debian package cpp")
    if check_dtc and shutil.which("dtc") is None:
        raise ExtractError("dtc not found (--check-dtc): install the Debian package "
                           "device-tree-compiler")
    drivers = dt_drivers(src)
    _JOB[:] = [Job(src, files, drivers, state_max, check_dtc)]
    for b in candidates:
        files.macros(b)  # fill the cache before forking
    batches = [candidates[i:i + BATCH] for i in range(0, len(candidates), BATCH)]
    results: List[BoardResult] = []
    t0 = time.monotonic()
    if jobs > 1 and len(batches) > 1:
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            for part in pool.map(work_batch, batches):
                results.extend(part)
    else:
        for batch in batches:
            results.extend(work_batch(batch))
    log(f"device tree: preprocessed and parsed in {time.monotonic() - t0:.1f} s "
        f"({jobs} job(s))")
    results.sort(key=lambda r: r.board)
    skipped = []
    checks = []
    for r in results:
        if r.error:
            skipped.append((r.board, r.error))
        if r.check:
            checks.append((r.board, r.check))
    if len(skipped) * 100.0 > max_skipped * len(candidates):
        raise ExtractError(f"{len(skipped)} of {len(candidates)} device trees failed to "
                           f"preprocess or parse (more than {max_skipped:g}%); first: "
                           f"{skipped[0][0]}: {skipped[0][1]}")
    tables, rejects = dt_tables([(r.board, r.tables) for r in results
                                 if not r.error and r.tables is not None])
    return DtResult(tables, rejects, skipped, checks, len(candidates))


class CpuGroup:
    """The CPUs of one board that get the same table."""

    def __init__(self, first: CpuTable) -> None:
        self.first = first  # its driver, states, notes and shaper stand for all
        self.cpus: List[str] = []
        self.cores: List[str] = []
        self.caps: List[Optional[int]] = []

    def add(self, c: CpuTable) -> None:
        self.cpus.append(c.cpu)
        self.cores.append(c.core)
        self.caps.append(c.capacity)


def dt_tables(results: Sequence[Tuple[str, BoardTables]]) -> Tuple[List[Table], List[str]]:
    """Board results -> Table objects (one per board and distinct CPU table)."""
    tables = []
    rejects = []
    for board, (per_cpu, board_rejects) in results:
        for r in board_rejects:
            rejects.append(f"{board}: {r}")
        groups: Dict[Tuple[Tuple[str, int, int], ...], CpuGroup] = {}
        for c in per_cpu:
            key = tuple((s.name, s.exit_us, s.res_us) for s in c.states)
            groups.setdefault(key, CpuGroup(c)).add(c)
        quals = cluster_names(list(groups.values()))
        for g, qual in zip(groups.values(), quals):
            first = g.first
            def_file = (first.shaper or board).rpartition(":")[0] or board
            stem = os.path.splitext(os.path.basename(def_file))[0]
            pref = "dt-" + stem + ("-" + qual if qual else "")
            bstem = os.path.splitext(os.path.basename(board))[0]
            alt = "dt-" + bstem + ("-" + qual if qual else "")
            states = [State(s.name, s.exit_us, s.res_us, origin=s.origin) for s in first.states]
            cpus = cpu_list(g.cpus)
            src = first.states[1].origin.split(" ")[0] if len(first.states) > 1 else board
            title = f"DT {stem}" + (f" {qual}" if qual else "") + f" ({first.driver})"
            cores = " ".join(sorted(set(g.cores)))
            tables.append(Table("dt", pref, title, f"{src} {board} {cpus}", states,
                                [f"board {board}, CPUs {cpus} ({cores}), {first.driver}"],
                                first.notes, sort_key=(pref, def_file, board), alt_name=alt))
    return tables, rejects


def cluster_names(groups: Sequence[CpuGroup]) -> List[str]:
    """Names for the distinct tables of one board's CPUs: little/mid/big
    by capacity, else by core, else by first CPU."""
    if len(groups) < 2:
        return [""] * len(groups)
    caps = [max((c or 0) for c in g.caps) for g in groups]
    if all(c for c in caps) and len(set(caps)) == len(caps) and len(caps) <= 3:
        words = ["little", "big"] if len(caps) == 2 else ["little", "mid", "big"]
        order = sorted(range(len(caps)), key=lambda i: caps[i])
        names = [""] * len(groups)
        for w, i in zip(words, order):
            names[i] = w
        return names
    cores = ["-".join(sorted(set(g.cores))) for g in groups]
    if all(cores) and len(set(cores)) == len(cores):
        return [re.sub(r"[^A-Za-z0-9.+-]", "-", c) for c in cores]
    return ["cpu" + g.cpus[0].replace("cpu@", "").replace("@", "") for g in groups]
