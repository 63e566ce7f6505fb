# SPDX-License-Identifier: GPL-2.0
"""scripts/teo compare: one governor on several kernels, boot by boot.

Each results folder of scripts/teo bench (its runs.tsv) holds the runs of
one boot.  In the VM the runs of one boot agree with each other much
better than boots of the same kernel do, so a comparison of two kernels
by their runs, each kernel booted once, can call the difference between
two boots a difference between the kernels.  This compares boots: per
workload and kernel label, the median of each boot's runs, the median of
those boot medians, and against the first label the change of that median
and the exact Mann-Whitney test over the boot medians.  Only "the boots
do not overlap" calls a difference real.  --tsv writes the numbers, one
line per workload and label.
"""

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from teotool import benchreport, stats
from teotool.ui import Fatal, UsageError

DESCRIPTION = """\
Compare one governor's results on several kernels (or trees, or settings),
boot by boot.  Each SIDE is LABEL=DIR[,DIR...]: a label and the results
folders of scripts/teo bench (the bench/ folder of a session of
scripts/teo run, holding runs.tsv), one folder per boot.  Per workload the
comparison prints each boot's median, the median of the boot medians, and
for each label against the first the change of that median and whether
the boots overlap (exact two-sided Mann-Whitney test over the boot
medians: 2+2 boots can do no better than p=0.33, 3+3 than p=0.10).

In the VM the runs of one boot agree far better than boots of the same
kernel do (20 % between two boots of one kernel has been seen), so boot
each kernel two or more times, interleaved, before calling a difference
between kernels real.  Governors compared inside one boot (the summary of
scripts/teo run) do not need this.

Example, two trees booted three times each:
  scripts/teo compare old=a1/bench,a2/bench,a3/bench new=b1/bench,b2/bench,b3/bench
"""

TSV_HEADER = ("workload", "label", "unit", "boots", "boot_medians", "median",
              "change_pct", "u", "p", "disjoint")


@dataclass
class Side:
    """A label and its results folders, one per boot."""
    label: str
    folders: List[Path]


@dataclass
class Row:
    """One label's boots of one workload, against the first label."""
    workload: str
    label: str
    unit: str
    boot_medians: List[float]
    median: float
    change_pct: float = 0.0
    # Against the first label (Mann-Whitney over the boot medians).
    u: float = 0.0
    p: float = 1.0
    disjoint: bool = False
    reference: bool = True


def parse_side(text: str) -> Side:
    """LABEL=DIR[,DIR...] as a Side."""
    label, sep, dirs = text.partition("=")
    if not sep or not label or not dirs:
        raise UsageError(f"'{text}' is not LABEL=DIR[,DIR...]")
    names = dirs.split(",")
    if not all(names):
        raise UsageError(f"'{text}': an empty folder name")
    return Side(label, [Path(d) for d in names])


def _metric(text: str, where: Path) -> float:
    try:
        return float(text.lstrip(stats.OVERFLOW_PREFIX))
    except ValueError:
        raise Fatal(f"{where}: metric '{text}' is not a number") from None


def boot_runs(folder: Path, governor: str) -> Dict[str, Tuple[str, List[float]]]:
    """Per workload the unit and the metrics of one boot's runs of @governor."""
    tsv = folder / benchreport.RUNS
    if not tsv.is_file():
        raise Fatal(f"no {benchreport.RUNS} in {folder}")
    _, runs = benchreport.read_runs(tsv)
    out: Dict[str, Tuple[str, List[float]]] = {}
    for r in runs:
        if r.governor == governor:
            out.setdefault(r.workload, (r.unit, []))[1].append(_metric(r.metric, tsv))
    return out


def compare(sides: Sequence[Side], governor: str) -> List[Row]:
    """The rows of every workload that every boot of every side ran."""
    boots = [[boot_runs(f, governor) for f in s.folders] for s in sides]
    common = [w for w in boots[0][0] if all(w in b for side in boots for b in side)]
    if not common:
        raise Fatal(f"no workload that every folder ran with governor '{governor}'")
    rows: List[Row] = []
    for wl in common:
        unit = boots[0][0][wl][0]
        ref: List[float] = []
        for i, (side, side_boots) in enumerate(zip(sides, boots)):
            meds = [stats.median(b[wl][1]) for b in side_boots]
            row = Row(wl, side.label, unit, meds, stats.median(meds))
            if i == 0:
                ref = meds
            else:
                row.reference = False
                row.change_pct = stats.relative_change(row.median, stats.median(ref))
                row.u, row.p = stats.mann_whitney(meds, ref)
                row.disjoint = stats.disjoint(row.u, len(meds), len(ref))
            rows.append(row)
    return rows


def text(rows: Sequence[Row], governor: str) -> str:
    """The comparison as the user reads it: per workload each label's
    boots, then each label against the first."""
    out: List[str] = []
    workloads: List[str] = []
    for r in rows:
        if r.workload not in workloads:
            workloads.append(r.workload)
    for wl in workloads:
        block = [r for r in rows if r.workload == wl]
        ref = block[0]
        out.append(f"\n{wl}: {ref.unit}, {governor}, median of each boot's runs\n")
        for r in block:
            meds = " ".join(f"{m:g}" for m in sorted(r.boot_medians))
            out.append(f"  {r.label:<12} boots: {meds}  median {r.median:g}\n")
        higher = "higher is better" in ref.unit
        out.extend(benchreport.verdict(r.label, ref.label, r.boot_medians,
                                       ref.boot_medians, higher, "boot") for r in block[1:])
    return "".join(out)


def tsv(rows: Sequence[Row]) -> str:
    """The comparison, one line per workload and label."""
    lines = ["\t".join(TSV_HEADER)]
    for r in rows:
        lines.append("\t".join([
            r.workload, r.label, r.unit, str(len(r.boot_medians)),
            ",".join(f"{m:g}" for m in r.boot_medians), f"{r.median:g}",
            "-" if r.reference else f"{r.change_pct:.2f}",
            "-" if r.reference else f"{r.u:g}",
            "-" if r.reference else f"{r.p:.4f}",
            "-" if r.reference else str(int(r.disjoint))]))
    return "\n".join(lines) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sides", nargs="+", metavar="LABEL=DIR[,DIR...]",
                   help="a label and its results folders, one per boot; the first"
                   " label is the reference")
    p.add_argument("--governor", default="teo",
                   help="the governor compared (default: %(default)s)")
    p.add_argument("--tsv", metavar="FILE", help="also write the numbers to FILE")


def main(args: argparse.Namespace) -> int:
    """scripts/teo compare."""
    sides = [parse_side(s) for s in args.sides]
    if len(sides) < 2:
        raise UsageError("give two or more LABEL=DIR[,DIR...]")
    labels = [s.label for s in sides]
    for label in labels:
        if labels.count(label) > 1:
            raise UsageError(f"label '{label}' given twice")
    for s in sides:
        for f in s.folders:
            if not f.is_dir():
                raise UsageError(f"{s.label}: '{f}' is not a folder")
    rows = compare(sides, args.governor)
    if args.tsv:
        try:
            Path(args.tsv).write_text(tsv(rows))
        except OSError as err:
            raise Fatal(f"cannot write {args.tsv}: {err.strerror}") from None
    print(text(rows, args.governor), end="")
    return 0
