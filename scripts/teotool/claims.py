# SPDX-License-Identifier: GPL-2.0
"""What the series says about the governor's decisions, checked by the
replay lab on the base it is exported to.

For every patch that changes teo.c or teo.h, the lab compares the
governor before the patch with the one after it over the whole corpus and
a set of random tables (scripts/teo replay diff --counts, one build of the
lab for the whole chain).  A message claiming no functional change while
decisions diverge is refused; so is a count in the queue's differentials
file that is not the lab's, or one the message does not state.  A patch
the file does not list gets a note with the count to write.
"""

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from teotool import paths, process, queue, seriesrepo
from teotool.ui import Fatal, note

# Words that claim that teo decides as before.
NO_CHANGE = re.compile(r"no functional change|not change what teo decides"
                       r"|same state and tick decision", re.I)
GOVERNOR_FILES = [f"{paths.GOVERNORS}/teo.c", f"{paths.GOVERNORS}/teo.h"]


@dataclass(frozen=True)
class Counts:
    """One differential of the lab: scenario runs and random tables."""
    runs: int
    decisions: int
    divergent: int
    random_decisions: int
    random_divergent: int

    @property
    def total(self) -> int:
        return self.divergent + self.random_divergent

    @property
    def all_decisions(self) -> int:
        return self.decisions + self.random_decisions


@dataclass(frozen=True)
class Step:
    """A patch that changes the governor, and its teo.c after it."""
    patch: queue.Patch
    source: Path


def governor_steps(repo: Path, q: queue.Queue, commits: Sequence[str],
                   work: Path) -> List[Step]:
    """The patches that change the governor, each with its sources."""
    steps = []
    before = seriesrepo.BASE_REF
    for number, (p, rev) in enumerate(zip(q.patches, commits), 1):
        if seriesrepo.changed(repo, before, rev, GOVERNOR_FILES):
            folder = work / f"p{number:02d}"
            steps.append(Step(p, seriesrepo.extract_governor(repo, rev, folder)))
        before = rev
    return steps


def read_counts(tsv: Path) -> List[Counts]:
    """The rows of scripts/teo replay diff --counts (the lab's own table)."""
    try:
        with open(tsv, encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as err:
        raise Fatal(f"cannot read the lab's counts {tsv}: {err.strerror}") from None
    try:
        return [Counts(int(r["runs"]), int(r["decisions"]), int(r["divergent"]),
                       int(r["random_decisions"]), int(r["random_divergent"]))
                for r in rows]
    except (KeyError, TypeError, ValueError):
        raise Fatal(f"{tsv} is not the lab's table of counts") from None


def differentials(base: Path, chain: Sequence[Path], tsv: Path,
                  log: Path) -> List[Counts]:
    """The lab's differential of each source of chain with the next."""
    env = process.debian_env({"KERNEL_SRC": str(base)})
    with open(log, "w", encoding="utf-8") as out:
        status = process.run([paths.ENTRY, "replay", "diff", "--counts", tsv,
                              *chain], env=env, stdout=out, stderr=out)
    if status != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-5:]
        raise Fatal("scripts/teo replay diff failed (the series makes no claim"
                    f" it cannot check): {' / '.join(tail)}")
    counts = read_counts(tsv)
    if len(counts) != len(chain) - 1:
        raise Fatal(f"the lab wrote {len(counts)} rows of counts to {tsv}"
                    f" for {len(chain) - 1} pairs")
    return counts


def states_count(message: str, count: int) -> bool:
    return re.search(rf"(?<![\d.,]){count:,}(?![\d,])|(?<![\d.,]){count}(?!\d)",
                     message) is not None


def check_step(q: queue.Queue, p: queue.Patch, got: Counts,
               base_name: str) -> Optional[str]:
    """The problem with a patch's claims, or None; a missing entry only
    gets a note."""
    where = f"{q.name}/{p.name}"
    if got.total and NO_CHANGE.search(p.message):
        return (f"{where} claims no functional change, but on Linux {base_name}"
                f" its governor decides differently from the one before it in"
                f" {got.total} cases ({got.runs} scenario runs plus random"
                " tables; scripts/teo replay diff)")
    want = q.claims.get(p.name)
    if want is None:
        if got.total:
            note(f"{where}: {q.folder.name}/differentials has no entry; the"
                 f" lab counts {got.total} divergent cases on Linux {base_name}")
        return None
    if want != got.total:
        return (f"{q.folder.name}/differentials says {want} for {p.name}, but"
                f" on Linux {base_name} the lab counts {got.total} divergent"
                " cases (scripts/teo replay diff)")
    if got.total and not states_count(p.message, got.total):
        return f"{where}: its message does not state its differential count {got.total}"
    return None


def judge(q: queue.Queue, steps: Sequence[Step], base: Path, base_name: str,
          work: Path) -> Tuple[Dict[str, Counts], Optional[Counts]]:
    """Run the lab over the chain base teo, each step's, base teo again:
    the counts per patch name, and the whole series against the base
    (None when no patch changes the governor)."""
    if not steps:
        return {}, None
    base_teo = base / paths.GOVERNORS / "teo.c"
    chain = [base_teo, *(s.source for s in steps), base_teo]
    counts = differentials(base, chain, work / "differentials.tsv",
                           work / "differentials.log")
    per_patch = {s.patch.name: c for s, c in zip(steps, counts)}
    problems = [why for s in steps
                if (why := check_step(q, s.patch, per_patch[s.patch.name],
                                      base_name))]
    for s in steps:
        c = per_patch[s.patch.name]
        note(f"{q.name}/{s.patch.name}: {c.total} divergent cases ({c.runs}"
             f" scenario runs plus random tables, {c.all_decisions} decisions)")
    if problems:
        raise Fatal(problems[0])
    return per_patch, counts[-1]
