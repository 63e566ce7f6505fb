# SPDX-License-Identifier: GPL-2.0
"""The governor's own cost, in the running kernel: the kernel's function
profiler (CONFIG_FUNCTION_PROFILER with the function graph tracer) counts
the calls of the governor's entry, cpuidle_select(), and of the sleep-length
query, tick_nohz_get_sleep_length(), and the time spent in them, during
each run of the benchmark (bench --cost).

cost.tsv of a results folder holds, per run and function, the calls and
their time summed over the CPUs; the summary gives per case and governor
the medians of calls per second, ns per call and us per second.  "scripts/
teo run --cases cost" runs that on this repository's kernel and on the
base tree's (--as-is) and sets teo against menu and against the base
tree's teo (compare()).  Under QEMU TCG the times are the emulator's, not
a machine's: only the ratios are worth reading, and the tables say so.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import (Callable, ContextManager, Dict, Iterable, Iterator, List, Optional,
                    Sequence, Tuple)

from teotool import stats
from teotool.ui import Fatal

FUNCTIONS = ("cpuidle_select", "tick_nohz_get_sleep_length")
FILE = "cost.tsv"
HEADER = "workload\tgovernor\trun\tfunction\tcalls\ttime_ns\tseconds"

_ROW = re.compile(r"^\s*(\S+)\s+([0-9]+)(?:\s+([0-9]+(?:\.[0-9]*)?) us)?")


def parse_function_stat(text: str) -> Dict[str, Tuple[int, Optional[float]]]:
    """A trace_stat/functionN file: calls and time in ns of each function
    (time None where the kernel has no function graph tracer to time them)."""
    found: Dict[str, Tuple[int, Optional[float]]] = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m or m.group(1) in ("Function",):
            continue
        found[m.group(1)] = (int(m.group(2)),
                             None if m.group(3) is None else float(m.group(3)) * 1000)
    return found


@dataclass(frozen=True)
class Sample:
    """One function's calls and time over one run, summed over the CPUs."""
    workload: str
    governor: str
    run: int
    function: str
    calls: int
    time_ns: float
    seconds: float

    def row(self) -> str:
        return (f"{self.workload}\t{self.governor}\t{self.run}\t{self.function}"
                f"\t{self.calls}\t{self.time_ns:.0f}\t{self.seconds:.3f}")


# A spinner for each CPU but this one while ftrace patches the idle path
# (quiet_idle_path).
SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nprint(flush=True)\nwhile True:\n    pass\n"


@contextlib.contextmanager
def quiet_idle_path() -> Iterator[None]:
    """Keep every CPU but the one this process stays on busy in user space
    while the kernel rewrites the first instruction of cpuidle_select and
    tick_nohz_get_sleep_length, so that no CPU runs the idle path then.
    Under QEMU TCG a CPU that ran one of them while ftrace patched it hit
    the patch's int3 after the patch was done, and the guest oopsed."""
    mine = os.sched_getaffinity(0)
    here = min(mine)
    os.sched_setaffinity(0, {here})
    spinners: List["subprocess.Popen[bytes]"] = []
    try:
        for cpu in sorted(mine - {here}):
            spinners.append(subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)],
                                             stdout=subprocess.PIPE, start_new_session=True))
        for proc in spinners:
            assert proc.stdout is not None
            proc.stdout.readline()
        yield
    finally:
        for proc in spinners:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.sched_setaffinity(0, mine)


class Profiler:
    """The function profiler of tracefs, limited to FUNCTIONS: switched
    on once for all runs (each switch patches the idle path, see
    quiet_idle_path), each run's calls and time the difference of its
    cumulative counters."""

    def __init__(self, tracefs: Path,
                 quiet: Callable[[], ContextManager[None]] = quiet_idle_path) -> None:
        self.tracefs = tracefs
        self.quiet = quiet
        self.enabled = tracefs / "function_profile_enabled"
        self.filter = tracefs / "set_ftrace_filter"
        if not self.enabled.is_file() or not self.filter.is_file():
            raise Fatal(f"--cost: this kernel has no function profiler (no {self.enabled};"
                        " it needs CONFIG_FUNCTION_PROFILER and CONFIG_FUNCTION_GRAPH_TRACER)")
        self.active = False
        self.before: Dict[str, Tuple[int, float]] = {}

    def setup(self) -> None:
        """Profile FUNCTIONS only, from now on."""
        self.active = True
        try:
            self.filter.write_text(" ".join(FUNCTIONS) + "\n")
            listed = self.filter.read_text().split()
        except OSError as err:
            raise Fatal(f"--cost: cannot set {self.filter}: {err.strerror}") from None
        missing = [f for f in FUNCTIONS if f not in listed]
        if missing:
            raise Fatal(f"--cost: this kernel cannot trace {' '.join(missing)}")
        with self.quiet():
            self.enabled.write_text("1\n")

    def totals(self) -> Dict[str, Tuple[int, float]]:
        """Calls and time in ns of each function since setup, summed over
        the CPUs."""
        sums = {f: [0, 0.0] for f in FUNCTIONS}
        for stat in sorted((self.tracefs / "trace_stat").glob("function[0-9]*")):
            for name, (calls, ns) in parse_function_stat(stat.read_text()).items():
                if name not in sums:
                    continue
                if ns is None:
                    raise Fatal("--cost: the function profiler gives no times (the"
                                " kernel needs CONFIG_FUNCTION_GRAPH_TRACER)")
                sums[name][0] += calls
                sums[name][1] += ns
        return {f: (int(v[0]), float(v[1])) for f, v in sums.items()}

    def start(self) -> None:
        self.before = self.totals()

    def stop(self) -> Dict[str, Tuple[int, float]]:
        """Calls and time in ns of each function since start()."""
        now = self.totals()
        return {f: (now[f][0] - self.before[f][0], now[f][1] - self.before[f][1])
                for f in FUNCTIONS}

    def close(self) -> None:
        """Leave the profiler off and the filter empty."""
        if not self.active:
            return
        with contextlib.suppress(OSError), self.quiet():
            self.enabled.write_text("0\n")
        with contextlib.suppress(OSError):
            self.filter.write_text("\n")


def read_samples(path: Path) -> List[Sample]:
    """The samples of a cost.tsv."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if n == 1 or not line.strip():
            continue
        f = line.split("\t")
        try:
            out.append(Sample(f[0], f[1], int(f[2]), f[3], int(f[4]), float(f[5]), float(f[6])))
        except (IndexError, ValueError):
            raise Fatal(f"{path}:{n}: not a line of cost.tsv") from None
    return out


@dataclass(frozen=True)
class Cost:
    """Medians over the runs of one case, governor and function."""
    runs: int
    calls_per_s: float
    ns_per_call: float
    us_per_s: float


def medians(samples: Iterable[Sample]) -> Dict[Tuple[str, str, str], Cost]:
    """(workload, governor, function) -> the medians of its runs."""
    groups: Dict[Tuple[str, str, str], List[Sample]] = {}
    for s in samples:
        groups.setdefault((s.workload, s.governor, s.function), []).append(s)
    out = {}
    for key, runs in groups.items():
        out[key] = Cost(len(runs),
                        stats.median([s.calls / s.seconds if s.seconds else 0.0 for s in runs]),
                        stats.median([s.time_ns / s.calls if s.calls else 0.0 for s in runs]),
                        stats.median([s.time_ns / 1000 / s.seconds if s.seconds else 0.0
                                      for s in runs]))
    return out


def _order(samples: Sequence[Sample], attr: str) -> List[str]:
    seen: List[str] = []
    for s in samples:
        value = str(getattr(s, attr))
        if value not in seen:
            seen.append(value)
    return seen


def bench_section(samples: Sequence[Sample]) -> str:
    """The summary's table of one results folder's cost.tsv."""
    m = medians(samples)
    lines = ["", "Governor cost: the kernel's function profiler during each run, summed over",
             "the CPUs, medians of the runs (in the test VM, under QEMU TCG, the times",
             "are the emulator's: only ratios mean something)",
             f"  {'workload':<20} {'governor':<9} {'function':<28} {'calls/s':>10}"
             f" {'ns/call':>9} {'us/s':>9}"]
    for w in _order(samples, "workload"):
        for g in _order(samples, "governor"):
            for f in FUNCTIONS:
                c = m.get((w, g, f))
                if c:
                    lines.append(f"  {w:<20} {g:<9} {f:<28} {c.calls_per_s:>10.1f}"
                                 f" {c.ns_per_call:>9.1f} {c.us_per_s:>9.1f}")
    return "\n".join(lines) + "\n"


# The columns of the comparison: (kernel, governor) and their names.
COLUMNS = (("ours", "teo", "teo"), ("ours", "menu", "menu"),
           ("base", "teo", "base teo"), ("base", "menu", "base menu"))
# Ratios: (numerator column, denominator column, heading).
RATIOS = ((0, 1, "teo/menu"), (0, 2, "teo/base teo"), (2, 3, "base teo/menu"))
METRICS = (("ns/call", "ns_per_call"), ("calls/s", "calls_per_s"), ("us/s", "us_per_s"))
COMPARE_HEADER = "kernel\tworkload\tgovernor\tfunction\truns\tcalls_per_s\tns_per_call\tus_per_s"


def compare(ours: Sequence[Sample], base: Sequence[Sample]) -> Tuple[str, str]:
    """This repository's kernel against the base tree's: a TSV of the
    medians per kernel, case, governor and function, and a table of them
    with teo's ratios against menu of the same kernel and against the
    base tree's teo."""
    med = {"ours": medians(ours), "base": medians(base)}
    rows = [COMPARE_HEADER]
    for kernel in ("ours", "base"):
        for (w, g, f), c in med[kernel].items():
            rows.append(f"{kernel}\t{w}\t{g}\t{f}\t{c.runs}\t{c.calls_per_s:.3f}"
                        f"\t{c.ns_per_call:.3f}\t{c.us_per_s:.3f}")
    lines = ["Governor cost in the guest kernel: the function profiler's calls and time",
             "of cpuidle_select (the governor's entry) and tick_nohz_get_sleep_length",
             "(the sleep-length query), summed over the CPUs, medians of the runs;",
             "teo and menu of this repository's kernel, base teo and menu of the base",
             "tree's (--as-is).  Under QEMU TCG the times are the emulator's: only",
             "ratios mean something.  us/s = calls/s x ns/call: the CPU time the",
             "function takes per second."]
    workloads = _order(list(ours) + list(base), "workload")
    for w in workloads:
        lines += ["", f"{w}:",
                  f"  {'function':<28} {'':<8}" + "".join(f" {name:>10}" for _, _, name in COLUMNS)
                  + "".join(f" {head:>14}" for _, _, head in RATIOS)]
        for f in FUNCTIONS:
            for label, attr in METRICS:
                values: List[Optional[float]] = []
                for kernel, gov, _ in COLUMNS:
                    found = med[kernel].get((w, gov, f))
                    values.append(None if found is None else float(getattr(found, attr)))
                cells = "".join(f" {'-' if v is None else f'{v:.1f}':>10}" for v in values)
                ratios = ""
                for a, b, _ in RATIOS:
                    va, vb = values[a], values[b]
                    text = f"{va / vb:.2f}x" if va is not None and vb else "-"
                    ratios += f" {text:>14}"
                name = f if label == METRICS[0][0] else ""
                lines.append(f"  {name:<28} {label:<8}{cells}{ratios}")
    return "\n".join(rows) + "\n", "\n".join(lines) + "\n"
