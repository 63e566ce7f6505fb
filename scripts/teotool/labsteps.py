# SPDX-License-Identifier: GPL-2.0
"""What each step of a chain of governors changes in the lab's report.

A patch series is a chain of governor sources: the base tree's teo, then
the teo.c after each patch.  `scripts/teo replay report --gov pNN=...`
runs them all on the corpus and writes results.tsv, one row per
(scenario, table, governor).  This module compares each governor of a
chain with the one before it on every (scenario, table) both ran, and
counts the runs where the step changed what users feel beyond fixed
thresholds: the work done in a closed loop, the energy per unit of work
in an open one (where every governor serves the same work), the miss
ratio and the added wakeup latency.  The counts and the median change
of the runs counted are the numbers a patch's message quotes; this is
their one owner.
"""

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from teotool import stats
from teotool.ui import Fatal

# A relative change of work or energy beyond this fraction counts.
RELATIVE = 0.01
# A change of the miss ratio beyond this many percentage points counts.
MISS_POINTS = 0.5
# A change of the mean added latency counts beyond this fraction and
# this many microseconds together.
LATENCY_RELATIVE = 0.05
LATENCY_US = 1.0

METRICS = ("work", "energy", "miss", "latency")
COLUMNS = ("old", "new", "family", "metric", "runs", "up", "down",
           "median_up", "median_down")

Key = Tuple[str, str]


@dataclass
class Change:
    """The runs of one family and metric, and the changes beyond the
    metric's threshold among them: % of the old value for work and
    energy, points for misses, us for latency."""
    runs: int = 0
    ups: List[float] = field(default_factory=list)
    downs: List[float] = field(default_factory=list)

    def add(self, delta: Optional[float]) -> None:
        self.runs += 1
        if delta is None:
            return
        (self.ups if delta > 0 else self.downs).append(delta)

    def row(self) -> Tuple[str, str, str, str]:
        return (str(len(self.ups)), str(len(self.downs)),
                _fmt(self.ups), _fmt(self.downs))


def _fmt(values: Sequence[float]) -> str:
    return f"{stats.median(values):.1f}" if values else "-"


def _number(value: str) -> Optional[float]:
    try:
        return float(value)
    except ValueError:
        return None


def read_results(path: Path) -> Dict[Key, Dict[str, Dict[str, str]]]:
    """results.tsv as {(scenario, platform): {governor: row}}."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as err:
        raise Fatal(f"cannot read {path}: {err.strerror}") from None
    need = {"scenario", "family", "loop", "platform", "governor", "work_per_s",
            "energy_pct", "miss_pct", "lat_mean_us"}
    if not rows or not need <= set(rows[0]):
        raise Fatal(f"{path} is not the lab's results.tsv (scripts/teo replay report)")
    found: Dict[Key, Dict[str, Dict[str, str]]] = {}
    for r in rows:
        found.setdefault((r["scenario"], r["platform"]), {})[r["governor"]] = r
    return found


def _relative(old: Optional[float], new: Optional[float]) -> Optional[float]:
    """The change in %, None when within RELATIVE or not measured."""
    if not old or new is None or abs(new / old - 1) <= RELATIVE:
        return None
    return 100 * (new / old - 1)


def _miss(old: Optional[float], new: Optional[float]) -> Optional[float]:
    if old is None or new is None or abs(new - old) <= MISS_POINTS:
        return None
    return new - old


def _latency(old: Optional[float], new: Optional[float]) -> Optional[float]:
    if old is None or new is None:
        return None
    if abs(new - old) <= max(LATENCY_US, LATENCY_RELATIVE * old):
        return None
    return new - old


def step(results: Dict[Key, Dict[str, Dict[str, str]]], old: str,
         new: str) -> Dict[Tuple[str, str], Change]:
    """{(family, metric): Change} from governor old to governor new."""
    changes: Dict[Tuple[str, str], Change] = {}
    for govs in results.values():
        if old not in govs or new not in govs:
            continue
        a, b = govs[old], govs[new]
        family = a["family"]

        def take(metric: str, delta: Optional[float]) -> None:
            changes.setdefault((family, metric), Change()).add(delta)

        if a["loop"] == "closed":
            take("work", _relative(_number(a["work_per_s"]), _number(b["work_per_s"])))
        else:
            take("energy", _relative(_number(a["energy_pct"]), _number(b["energy_pct"])))
        take("miss", _miss(_number(a["miss_pct"]), _number(b["miss_pct"])))
        take("latency", _latency(_number(a["lat_mean_us"]), _number(b["lat_mean_us"])))
    return changes


def chain(results: Dict[Key, Dict[str, Dict[str, str]]],
          labels: Sequence[str]) -> List[Tuple[str, str, Dict[Tuple[str, str], Change]]]:
    """Each step of the chain of labels, with its changes."""
    known = {g for govs in results.values() for g in govs}
    missing = [label for label in labels if label not in known]
    if missing:
        raise Fatal(f"results.tsv has no governor {missing[0]} (it has:"
                    f" {', '.join(sorted(known))})")
    return [(a, b, step(results, a, b)) for a, b in zip(labels, labels[1:])]


def rows(steps: Iterable[Tuple[str, str, Dict[Tuple[str, str], Change]]]) -> List[Tuple[str, ...]]:
    """The table of COLUMNS: one row per step, family and metric with a
    change, and a row "all" per step and metric."""
    out: List[Tuple[str, ...]] = []
    for old, new, changes in steps:
        for metric in METRICS:
            total = Change()
            for (family, m), c in sorted(changes.items()):
                if m != metric:
                    continue
                total.runs += c.runs
                total.ups += c.ups
                total.downs += c.downs
                if c.ups or c.downs:
                    out.append((old, new, family, metric, str(c.runs), *c.row()))
            if total.runs:
                out.append((old, new, "all", metric, str(total.runs), *total.row()))
    return out
