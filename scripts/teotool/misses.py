# SPDX-License-Identifier: GPL-2.0
"""The documented misses (tools/idle-replay/known-misses), drafted from a
report.

Each line of that file names one target our teo misses and its cause in
words.  The gate (idle-replay check) tells whether each listed miss still
misses, not whether its words still hold: numbers copied by hand from one
report go stale as soon as the governor or the lab changes, and a cause can
name a scenario or a best baseline that no longer is one.  Here the lines
of the per-table targets are written from the report's machine-readable
tables instead, so the report stays the one owner of every number in them:

  results.tsv  every run: ours, the baselines and the rule mutants (ours
               with one rule of intended-differences reverted)
  misses.tsv   every miss of the targets, listed or not
  tables.tsv   each table's states, in index order, with their exit latency

Two kinds of line are drafted: 'table-energy' (a family's mean energy on
one table more than the bound above a baseline's) and 'work' (a closed
loop on one table below the best baseline's work less the bound).  The
lines of the family medians weigh the whole corpus and are written by
hand; they are kept as they are.  The header's comments are kept too.
"""

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from teotool.ui import Fatal

Row = Dict[str, str]
Key = Tuple[str, str, str, str]

BASELINE_ROLES = ("base", "mainline")
DRAFTED = ("table-energy", "work")
# Beyond this share of the best baseline's work the oracle's is worth naming.
ORACLE_NOTE = 1.1
# The marker of a line whose cause the draft cannot write.
UNWRITTEN = "CAUSE NOT WRITTEN:"


def read_tsv(path: Path, need: Sequence[str], what: str) -> List[Row]:
    """The rows of a tab-separated table with a header naming need."""
    try:
        with open(path, encoding="utf-8") as f:
            reader = csv.DictReader(f, delimiter="\t")
            rows = list(reader)
    except OSError as err:
        raise Fatal(f"cannot read {path}: {err.strerror}") from None
    if not set(need) <= set(reader.fieldnames or ()):
        raise Fatal(f"{path} is not the lab's {what} (scripts/teo replay report)")
    return rows


@dataclass(frozen=True)
class State:
    index: int
    name: str
    exit_us: str


@dataclass
class Report:
    """What the draft needs of one report folder; roles maps each
    governor's label to its role, in the order the rows name them."""
    runs: Dict[Tuple[str, str], Dict[str, Row]]
    misses: List[Key]
    states: Dict[str, List[State]]
    roles: Dict[str, str]

    @classmethod
    def read(cls, folder: Path) -> "Report":
        runs: Dict[Tuple[str, str], Dict[str, Row]] = {}
        roles: Dict[str, str] = {}
        for r in read_tsv(folder / "results.tsv",
                          ("scenario", "family", "loop", "platform", "governor", "role",
                           "energy_pct", "work_pct", "items", "above_pct", "below_pct",
                           "lat_mean_us", "state_shares"), "results.tsv"):
            runs.setdefault((r["scenario"], r["platform"]), {})[r["governor"]] = r
            roles.setdefault(r["governor"], r["role"])
        misses = [(r["where"], r["table"], r["baseline"], r["metric"])
                  for r in read_tsv(folder / "misses.tsv",
                                    ("where", "table", "baseline", "metric"), "misses.tsv")]
        states: Dict[str, List[State]] = {}
        for r in read_tsv(folder / "tables.tsv",
                          ("table", "state", "name", "exit_latency_us"), "tables.tsv"):
            states.setdefault(r["table"], []).append(
                State(int(r["state"]), r["name"], r["exit_latency_us"]))
        return cls(runs, misses, states, roles)

    def baselines(self) -> List[str]:
        """The baselines' labels, in the order of the report's rows."""
        return [label for label, role in self.roles.items() if role in BASELINE_ROLES]


@dataclass(frozen=True)
class Bounds:
    """The per-table bounds of gates.conf: energy in % above the baseline
    (by role and kind) and work in % below the best baseline."""
    energy: Dict[Tuple[str, str], float]
    work: float

    @classmethod
    def read(cls, path: Path) -> "Bounds":
        energy: Dict[Tuple[str, str], float] = {}
        work: Optional[float] = None
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise Fatal(f"cannot read {path}: {err.strerror}") from None
        for line in lines:
            words = line.split("#", 1)[0].split()
            if len(words) == 5 and words[0] in BASELINE_ROLES:
                energy[(words[0], words[1])] = float(words[4])
            elif len(words) == 3 and words[:2] == ["work", "best"]:
                work = float(words[2])
        if work is None or not energy:
            raise Fatal(f"{path}: no table or work bounds found")
        return cls(energy, work)

    def table_energy(self, role: str, label: str) -> float:
        kind = label.split("-", 1)[0]
        if (role, kind) not in self.energy:
            raise Fatal(f"gates.conf has no bound for the {role} {kind}")
        return self.energy[(role, kind)]


def _num(row: Row, column: str) -> float:
    try:
        return float(row[column])
    except ValueError:
        raise Fatal(f"results.tsv: {row['scenario']} on {row['platform']},"
                    f" {row['governor']}: {column} is not a number") from None


def dominant(row: Row) -> Tuple[str, float]:
    """The state a run spent most of its idle time in, and its share."""
    best = ("-", -1.0)
    for part in row["state_shares"].split(";"):
        name, _, share = part.rpartition("=")
        if name and float(share) > best[1]:
            best = (name, float(share))
    return best


def _state(states: Sequence[State], name: str) -> Optional[State]:
    return next((s for s in states if s.name == name), None)


def _mutants_meeting(mutants: Sequence[str], meets: Callable[[str], bool]) -> List[str]:
    return [m for m in mutants if meets(f"mutant-{m}")]


def _attribution(mutants: Sequence[str], meets: Callable[[str], bool],
                 base_teo: Optional[str]) -> str:
    """Which single rule reverted meets the target, if any."""
    found = _mutants_meeting(mutants, meets)
    if len(found) == 1:
        return f"the mutant {found[0]} meets the target"
    if found:
        return f"each of the mutants {', '.join(found)} meets the target"
    if base_teo and not meets(base_teo):
        return f"{base_teo} misses it too, and no rule reverted alone meets the target"
    return "no rule reverted alone meets the target"


class Drafter:
    """The causes of one report, against the bounds and the mutants."""

    def __init__(self, report: Report, bounds: Bounds, mutants: Sequence[str]):
        self.report = report
        self.bounds = bounds
        self.mutants = mutants
        self.baselines = report.baselines()
        self.base_teo = next((b for b in self.baselines if b.startswith("teo-")
                              and self._role(b) == "base"), None)
        absent = [m for m in mutants if f"mutant-{m}" not in report.roles]
        if absent:
            raise Fatal(f"the report has no run of mutant-{absent[0]}: the draft needs one"
                        " report with every rule mutant (scripts/teo replay misses)")

    def _role(self, label: str) -> str:
        if label not in self.report.roles:
            raise Fatal(f"results.tsv has no governor {label}")
        return self.report.roles[label]

    def _family_runs(self, family: str, table: str) -> List[Dict[str, Row]]:
        return [govs for (_, platform), govs in sorted(self.report.runs.items())
                if platform == table and next(iter(govs.values()))["family"] == family]

    def table_energy(self, family: str, table: str, baseline: str) -> str:
        runs = self._family_runs(family, table)
        if not runs:
            raise Fatal(f"misses.tsv names {family} on {table}, which results.tsv lacks")

        def mean(label: str) -> float:
            return sum(_num(g[label], "energy_pct") for g in runs) / len(runs)

        limit = mean(baseline) * (1 + self.bounds.table_energy(
            self._role(baseline), baseline) / 100)
        worst = max(runs, key=lambda g: _num(g["teo"], "energy_pct")
                    - _num(g[baseline], "energy_pct"))
        ours, base = worst["teo"], worst[baseline]
        unit = "of the oracle" if ours["loop"] == "open" else "per item"
        energy = f"{_num(ours, 'energy_pct'):.1f} vs {_num(base, 'energy_pct'):.1f} % {unit}"
        head = f"mostly {ours['scenario']} ({energy})" if len(runs) > 1 else energy
        work = (f", work {_num(ours, 'work_pct'):.1f} vs {_num(base, 'work_pct'):.1f} %"
                if ours["loop"] == "closed" else "")
        return (f"{head}: {self._shares(table, ours, base, baseline)}; misses above"
                f" {_num(ours, 'above_pct'):.1f} vs {_num(base, 'above_pct'):.1f} %,"
                f" below {_num(ours, 'below_pct'):.1f} vs {_num(base, 'below_pct'):.1f} %"
                f"{work}; "
                + _attribution(self.mutants, lambda label: mean(label) <= limit,
                               self.base_teo if baseline != self.base_teo else None))

    def _shares(self, table: str, ours: Row, base: Row, baseline: str) -> str:
        (o_name, o_share), (b_name, b_share) = dominant(ours), dominant(base)
        if o_name == b_name:
            return f"both sit mostly in {o_name} ({o_share:.0f} vs {b_share:.0f} %)"
        states = self.report.states.get(table, [])
        o_state, b_state = _state(states, o_name), _state(states, b_name)
        text = (f"ours sits {o_share:.0f} % in {o_name} where {baseline} sits"
                f" {b_share:.0f} % in {b_name}")
        if o_state and b_state:
            text += ": ours goes deeper" if o_state.index > b_state.index else \
                ": ours stays shallower"
        return text

    def work(self, scenario: str, table: str) -> str:
        found = self.report.runs.get((scenario, table))
        if not found:
            raise Fatal(f"misses.tsv names {scenario} on {table}, which results.tsv lacks")
        govs: Dict[str, Row] = found

        def items(label: str) -> float:
            return _num(govs[label], "items")

        best = max(self.baselines, key=items)
        floor = items(best) * (1 - self.bounds.work / 100)
        ours, base = govs["teo"], govs[best]
        text = (f"ours does {100 * items('teo') / items(best):.1f} % of {best}'s work: "
                + self._exits(table, ours, base, best)
                + f"; added latency {_num(ours, 'lat_mean_us'):.1f} vs"
                f" {_num(base, 'lat_mean_us'):.1f} us mean")
        others = [b for b in self.baselines if b != best and items(b) < floor]
        if others:
            text += f"; missed by {', '.join(others)} too"
        if "oracle" in govs and items("oracle") >= ORACLE_NOTE * items(best):
            text += f"; the oracle does {items('oracle') / items(best):.1f}x {best}'s work"
        return text + "; " + _attribution(self.mutants, lambda label: items(label) >= floor,
                                          None)

    def _exits(self, table: str, ours: Row, base: Row, best: str) -> str:
        (o_name, o_share), (b_name, b_share) = dominant(ours), dominant(base)
        states = self.report.states.get(table, [])
        o_state, b_state = _state(states, o_name), _state(states, b_name)

        def exit_of(state: Optional[State]) -> str:
            return f" (exit {state.exit_us} us)" if state else ""

        if o_name == b_name:
            return (f"both sit mostly in {o_name}{exit_of(o_state)}, ours {o_share:.0f} %"
                    f" of the time and {best} {b_share:.0f} %")
        where = (f"{o_share:.0f} % in {o_name}{exit_of(o_state)} where {best} sits"
                 f" {b_share:.0f} % in {b_name}{exit_of(b_state)}")
        if o_state and b_state and o_state.index < b_state.index:
            return f"although it sits shallower: {where}"
        return f"it sits {where}"

    def cause(self, key: Key) -> Optional[str]:
        where, table, baseline, metric = key
        if metric == "table-energy":
            return self.table_energy(where, table, baseline)
        if metric == "work":
            return self.work(where, table)
        return None


@dataclass
class Draft:
    text: str
    drafted: int
    changed: List[Key]
    kept: int
    dropped: List[Key]
    added: List[Key]
    unwritten: List[Key]

    def stale(self) -> List[str]:
        """One line per way the old text differs from the draft."""
        found = [f"changed: {' '.join(key)}" for key in self.changed]
        found += [f"no longer missed: {' '.join(key)}" for key in self.dropped]
        found += [f"not listed: {' '.join(key)}" for key in self.added]
        return found


def _entry_key(line: str) -> Optional[Key]:
    words = line.split(None, 4)
    if not line.strip() or line.lstrip().startswith("#") or len(words) < 5:
        return None
    return (words[0], words[1], words[2], words[3])


def draft(old: str, drafter: Drafter) -> Draft:
    """known-misses text old, with each miss of the report drafted: the
    lines of misses that are gone dropped, new ones added after the last
    line of their metric (kept or dropped; else at the end), and the lines
    of the family medians kept."""
    missed = set(drafter.report.misses)
    out: List[str] = []
    done = set()
    last_of: Dict[str, int] = {}
    result = Draft("", 0, [], 0, [], [], [])
    for line in old.splitlines():
        key = _entry_key(line)
        if key is None:
            out.append(line)
            continue
        if key not in missed or key in done:
            result.dropped.append(key)
            last_of[key[3]] = len(out)
            continue
        done.add(key)
        cause = drafter.cause(key)
        if cause is None:
            out.append(line)
            result.kept += 1
        else:
            new = " ".join(key) + " " + cause
            result.drafted += 1
            if new != line:
                result.changed.append(key)
            out.append(new)
        last_of[key[3]] = len(out)
    for key in drafter.report.misses:
        if key in done:
            continue
        done.add(key)
        cause = drafter.cause(key)
        if cause is None:
            cause = f"{UNWRITTEN} a family median is written by hand"
            result.unwritten.append(key)
        result.added.append(key)
        at = last_of.get(key[3], len(out))
        out.insert(at, " ".join(key) + " " + cause)
        for metric, index in last_of.items():
            if index >= at:
                last_of[metric] = index + 1
        last_of[key[3]] = at + 1
    result.text = "\n".join(out) + "\n"
    return result


def intended_mutants(path: Path) -> List[str]:
    """The rule mutants of intended-differences, in its order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise Fatal(f"cannot read {path}: {err.strerror}") from None
    return [line.split()[0] for line in lines if line.split() and not line.startswith("#")]
