# SPDX-License-Identifier: GPL-2.0
"""The cover letter of an exported series: the queue's own text, then
what was measured on this base, written by the programs that measured it.

The replay lab writes its medians per scenario family, and its choice of
the best baseline, to families.tsv; this module only lays them out.  The
VM section quotes the newest benchmark summary of scripts/teo run whose
guest ran this base, if one is newer than the governor.  The letter's
text before the shortlog stays short enough to be read: at most
PROSE_MAX lines of prose and LINES_MAX lines in all.
"""

import csv
import datetime
import re
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from teotool import paths, process
from teotool.ui import Fatal

PROSE_MAX = 60
LINES_MAX = 120
PLACEHOLDER = re.compile(r"\*\*\*|placeholder|TODO|FIXME|EDITME")


def wrap(text: str) -> str:
    """A paragraph wrapped at 72 columns."""
    return textwrap.fill(" ".join(text.split()), width=72) + "\n"


def size(text: str) -> Tuple[int, int]:
    """Lines of prose and lines in all of a letter's text; a paragraph
    whose first line is indented by two spaces is a table, not prose."""
    prose = total = 0
    in_para = table = False
    for line in text.rstrip("\n").split("\n"):
        total += 1
        if not line:
            in_para = False
            continue
        if not in_para:
            table = line.startswith("  ") and not line.startswith("   ")
        in_para = True
        if not table:
            prose += 1
    return prose, total


def check_size(text: str) -> None:
    prose, total = size(text)
    if prose > PROSE_MAX or total > LINES_MAX:
        raise Fatal(f"the cover letter would have {prose} lines of prose and"
                    f" {total} in all before the shortlog (at most {PROSE_MAX}"
                    f" and {LINES_MAX}): shorten the queue's cover-letter")


def check_placeholders(text: str) -> None:
    m = PLACEHOLDER.search(text)
    if m:
        line = text[text.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0]
        raise Fatal(f"the cover letter would carry a placeholder: {line}")


# --- the lab's families ----------------------------------------------------

def read_families(tsv: Path) -> List[Dict[str, str]]:
    """The rows of the lab's families.tsv, as the lab wrote them."""
    try:
        with open(tsv, encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as err:
        raise Fatal(f"cannot read the lab's {tsv}: {err.strerror}") from None
    if not rows:
        raise Fatal(f"the lab's {tsv} has no rows")
    return rows


# --- the VM section --------------------------------------------------------

def governor_changed_at() -> int:
    """When teo.c or teo.h last changed: the last commit touching them, or
    the files' own times when they have uncommitted edits (a fresh
    checkout's file times say nothing)."""
    gov = [f"{paths.GOVERNORS}/teo.c", f"{paths.GOVERNORS}/teo.h"]
    log = process.output(["git", "-C", str(paths.REPO), "log", "-1", "--format=%ct",
                          "--", *gov])
    latest = int(log.stdout.strip() or 0) if log.returncode == 0 else 0
    if process.output(["git", "-C", str(paths.REPO), "diff", "--quiet", "HEAD",
                       "--", *gov]).returncode == 0:
        return latest
    for rel in gov:
        try:
            latest = max(latest, int((paths.REPO / rel).stat().st_mtime))
        except OSError:
            pass
    return latest


def _setup(folder: Path) -> Dict[str, str]:
    fields = {}
    try:
        for line in (folder / "setup.txt").read_text(encoding="utf-8").splitlines():
            key, sep, value = line.partition(": ")
            if sep:
                fields[key] = value
    except OSError:
        pass
    return fields


def _when(date: str) -> int:
    try:
        return int(datetime.datetime.fromisoformat(date.replace("Z", "+00:00"))
                   .timestamp())
    except ValueError:
        run = process.output(["date", "-d", date, "+%s"])
        return int(run.stdout.strip()) if run.returncode == 0 else 0


def newest_vm_run(release: str, results: Sequence[Path],
                  since: int) -> Tuple[Optional[Path], bool]:
    """The newest benchmark folder newer than since whose guest ran this
    release (True), else the newest on another base (False)."""
    found: Optional[Path] = None
    other: Optional[Path] = None
    for folder in sorted(results):
        bench = folder / "bench"
        setup = _setup(bench)
        if not (bench / "summary.txt").is_file() or "date" not in setup:
            continue
        if _when(setup["date"]) < since:
            continue
        kernel = setup.get("kernel", "").split(",")[0]
        if kernel == release:
            found = folder
        elif kernel:
            other = folder
    return (found, True) if found else (other, False)


def vm_section(base_name: str, release: str) -> str:
    results = list(paths.vm_bench_results().glob("[0-9]*"))
    folder, same = newest_vm_run(release, results, governor_changed_at())
    if folder is None:
        return wrap(f"No workload benchmark in the test VM has run on Linux"
                    f" {base_name} since the last change to the governor"
                    " (scripts/teo run with this base), so this letter"
                    " quotes none.")
    setup = _setup(folder / "bench")
    kernel = setup.get("kernel", "").split(",")[0]
    title = (folder / "title").read_text(encoding="utf-8").strip() \
        if (folder / "title").is_file() else "teo vs menu"
    if same:
        intro = (f"Workloads in a QEMU guest on Linux {base_name} with an"
                 " emulated cpuidle driver,")
    else:
        intro = (f"No workload benchmark in the test VM has run on Linux"
                 f" {base_name} since the last change to the governor.  The"
                 f" newest one ran the same governor on Linux {kernel}, not on"
                 " this base; it is quoted as that:")
    summary = (folder / "bench" / "summary.txt").read_text(encoding="utf-8")
    return wrap(f"{intro} {title} ({setup['date']}):") + "\n" + summary.lstrip("\n")


def lab_section(families: Path, base_name: str) -> str:
    """The lab's medians per scenario family for our teo and this base's
    teo and menu, and the family's best baseline, as the lab wrote them
    to families.tsv."""
    rows = read_families(families)
    try:
        by = {(r["family"], r["governor"]): r for r in rows}
        fams = list(dict.fromkeys(r["family"] for r in rows))
    except KeyError:
        raise Fatal(f"the lab's {families} lacks the family or governor column") from None
    series = ".".join(base_name.split("-")[0].split(".")[:2])
    cols = ["teo", f"teo-{series}", f"menu-{series}"]
    missing = [g for g in cols if (fams[0], g) not in by]
    if missing:
        raise Fatal(f"the lab's {families} has no rows for {' '.join(missing)}")
    text = wrap("Measured on this base in the replay lab (a simulation: the"
                " unmodified governor sources on simulated idle timelines of"
                " every idle-state table of the kernel tree).  Medians per"
                " scenario family: in closed loops the work done in % of the"
                " best baseline's (the teo and menu of this tree and of the"
                " newest mainline one), energy in % of the yardstick, and miss"
                " = above + below in % of idle entries; \"teo\" is the"
                " series' governor, the others are this base's:")
    lines = [("  family " + "".join(f"  {g:^18}" for g in cols)).rstrip(),
             "         " + "".join("    work energy miss" for _ in cols)]
    for fam in fams:
        lines.append(f"  {fam:<7}" + "".join(f"  {_cells(by[(fam, g)])}" for g in cols))
    best = ", ".join(f"{fam} {by[(fam, 'teo')].get('best_energy_baseline', '-')}"
                     for fam in fams)
    return (text + "\n" + "\n".join(lines) + "\n\n"
            + wrap(f"The best baseline per family (the lowest median energy): {best}."))


def _cells(row: Dict[str, str]) -> str:
    def num(key: str, fmt: str) -> str:
        value = row.get(key, "-")
        return "-" if value in ("", "-") else format(float(value), fmt)
    return (f"{num('work_pct_best_baseline', '.1f'):>6}"
            f" {num('energy_pct', '.1f'):>6} {num('miss_pct', '.1f'):>4}")
