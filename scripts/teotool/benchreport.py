# SPDX-License-Identifier: GPL-2.0
"""The benchmark's results folder and its summary.

runs.tsv has one line per run: workload, governor, run, metric, unit,
extra numbers ("k=v,k=v" or "-"), then per idle state its usage, time
(us), above and below over the run, summed over the CPUs.  The summary
gives per workload and governor the runs sorted, their median, the
medians of the extra numbers, the idle statistics over all runs, and
each governor against the first: the median difference and whether it
exceeds the run-to-run spread (an exact Mann-Whitney test); the numbers
come from stats.  With recordings (record/) it adds the replay lab's
prediction of each recorded run next to the kernel's counters
(benchlab), with cost.tsv the governor's own cost (cost).
residency.dat and its plot hold the idle time per state.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from teotool import benchlab, cost, counters, deps, process, stats, workloads
from teotool.ui import Fatal, UsageError, note

RUNS = "runs.tsv"
FIXED = ("workload", "governor", "run", "metric", "unit", "extra")
CEILING = "ceiling"
NOREC = "-norec"

FOOTER = """
median = of the runs; entries, above%, below%, miss and the idle time
per state are over all runs: above = too deep, below = too shallow, as
the kernel counts them; miss = (above + below) / entries; deep% = the
deepest state's share of idle time.  "The runs do not overlap" means
every run of one governor beat every run of the other: with 3+3 runs
that is the strongest result possible (p=0.10); use more runs (-n 5:
p=0.008) before calling a small difference real.
"""


@dataclass
class Run:
    """One line of runs.tsv."""
    workload: str
    governor: str
    run: str
    metric: str
    unit: str
    extras: List[Tuple[str, str]] = field(default_factory=list)
    counts: List[counters.Counts] = field(default_factory=list)


def header(names: Sequence[str]) -> str:
    cols = list(FIXED)
    for s in names:
        cols += [f"{s}_usage", f"{s}_time_us", f"{s}_above", f"{s}_below"]
    return "\t".join(cols) + "\n"


def extras_text(extras: Sequence[Tuple[str, str]]) -> str:
    return ",".join(f"{k}={v}" for k, v in extras) or "-"


def row(r: Run) -> str:
    cells = [r.workload, r.governor, r.run, r.metric, r.unit, extras_text(r.extras)]
    for c in r.counts:
        cells += [str(x) for x in c]
    return "\t".join(cells) + "\n"


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        try:
            return int(float(text))
        except ValueError:
            return 0


def read_runs(path: Path) -> Tuple[List[str], List[Run]]:
    """The state names and the runs of a runs.tsv."""
    lines = path.read_text().splitlines()
    if not lines:
        raise Fatal(f"{path} is empty")
    names = [c[:-len("_usage")] for c in lines[0].split("\t")[6:] if c.endswith("_usage")]
    runs = []
    for line in lines[1:]:
        if not line:
            continue
        f = line.split("\t")
        f += [""] * (6 + 4 * len(names) - len(f))
        extras = []
        if f[5] not in ("-", ""):
            for kv in f[5].split(","):
                k, _, v = kv.partition("=")
                extras.append((k, v.split("=")[0]))
        counts = [tuple(_int(x) for x in f[6 + 4 * s:10 + 4 * s]) for s in range(len(names))]
        runs.append(Run(f[0], f[1], f[2], f[3], f[4], extras, counts))  # type: ignore[arg-type]
    return names, runs


def _value(text: str) -> float:
    """A printed value as a number (an overflow, ">10000", as its bound)."""
    try:
        return float(text.lstrip(stats.OVERFLOW_PREFIX) or 0)
    except ValueError:
        return 0.0


def verdict(g: str, g0: str, b: Sequence[float], a: Sequence[float], higher: bool,
            noun: str = "run") -> str:
    """The line that says how @g's values (@b: runs, or boot medians with
    @noun "boot") compare with @g0's (@a): the median change, and whether
    every value of one beat every value of the other (exact Mann-Whitney)."""
    d = stats.relative_change(stats.median(b), stats.median(a))
    u, p = stats.mann_whitney(b, a)
    n1, n2 = len(b), len(a)
    if n1 < 2 or n2 < 2:
        word = f"one {noun} each: no spread to compare against"
    elif stats.disjoint(u, n1, n2):
        word = (f"the {noun}s do not overlap: {g} is"
                f" {'better,' if (u > 0) == higher else 'worse,'} beyond the"
                f" {noun}-to-{noun} spread")
    else:
        word = f"the {noun}s overlap: within the {noun}-to-{noun} noise"
    return (f"  {g} vs {g0}: median {d:+.1f} %; {word} (Mann-Whitney U={u:g} of {n1 * n2},"
            f" exact two-sided p={p:.2f}, {n1}+{n2} {noun}s)\n")


def _verdict(g: str, g0: str, vals: Sequence[str], vals0: Sequence[str], higher: bool) -> str:
    return verdict(g, g0, [_value(v) for v in vals], [_value(v) for v in vals0], higher)


def summarize(names: Sequence[str], runs: Sequence[Run]) -> Tuple[str, str]:
    """The summary text and residency.dat of the runs."""
    ns = len(names)
    order: List[Tuple[str, str]] = []
    workloads: List[str] = []
    unit: Dict[str, str] = {}
    vals: Dict[Tuple[str, str], List[str]] = {}
    keys: Dict[str, List[str]] = {}
    extra: Dict[Tuple[str, str, str], List[str]] = {}
    sums: Dict[Tuple[str, str], List[List[int]]] = {}
    for r in runs:
        key = (r.workload, r.governor)
        if key not in vals:
            order.append(key)
            vals[key] = []
            sums[key] = [[0, 0, 0, 0] for _ in range(ns)]
        if r.workload not in workloads:
            workloads.append(r.workload)
        if r.governor != CEILING:
            unit[r.workload] = r.unit
        vals[key].append(r.metric)
        for k, v in r.extras:
            if k not in keys.setdefault(r.workload, []):
                keys[r.workload].append(k)
            extra.setdefault((r.workload, r.governor, k), []).append(v)
        for s in range(ns):
            for i in range(4):
                sums[key][s][i] += r.counts[s][i] if s < len(r.counts) else 0
    out = []
    dat = ["case" + "".join(f" {n}" for n in names)]
    for wl in workloads:
        higher = "higher is better" in unit.get(wl, "")
        out.append(f"\n{wl}: {unit.get(wl, '')}\n")
        out.append(f"  {'governor':<8} {'runs (sorted)':<32} {'median':>9} {'entries':>9}"
                   f" {'above%':>7} {'below%':>7} {'miss':>6} {'deep%':>6}  idle time per state (%)\n")
        g0 = ""
        govs: List[str] = []
        norec: List[str] = []
        for key in order:
            if key[0] != wl:
                continue
            g = key[1]
            if g.endswith(NOREC):
                norec.append(g)
            elif g != CEILING:
                if not g0:
                    g0 = g
                else:
                    govs.append(g)
            st = sums[key]
            u = sum(x[0] for x in st)
            t = sum(x[1] for x in st)
            a = sum(x[2] for x in st)
            b = sum(x[3] for x in st)
            shares = [100 * x[1] / t if t else 0.0 for x in st]
            res = "".join(f" {names[s]} {shares[s]:.1f}" for s in range(ns))
            if g != CEILING:
                dat.append(f"{wl}/{g}" + "".join(f" {x:.2f}" for x in shares))
            deep = shares[-1] if ns else 0.0
            runs_text = " ".join(stats.sorted_values(vals[key]))
            med = stats.median_text(vals[key])
            if g == CEILING:
                out.append(f"  {g:<8} {runs_text:<32} {med:>9}  (the one-state table:"
                           " no idle statistics)\n")
            else:
                out.append(f"  {g:<8} {runs_text:<32} {med:>9} {u:>9d}"
                           f" {100 * a / u if u else 0:>6.2f}% {100 * b / u if u else 0:>6.2f}%"
                           f" {(a + b) / u if u else 0:>6.3f} {deep:>5.1f}% {res}\n")
            line = "".join(f" {k} {stats.median_text(extra[(wl, g, k)])}"
                           for k in keys.get(wl, []) if (wl, g, k) in extra)
            if line:
                out.append(f"  {'':<8} median of runs:{line}\n")
        for g in govs:
            out.append(_verdict(g, g0, vals[(wl, g)], vals[(wl, g0)], higher))
        if norec:
            out.append("  the cost of recording (--record-overhead: recorded runs vs the"
                       " same runs unrecorded):\n")
        for g in norec:
            plain = g[:-len(NOREC)]
            if (wl, plain) in vals:
                out.append(_verdict(plain, g, vals[(wl, plain)], vals[(wl, g)], higher))
        if (wl, CEILING) in vals:
            c = stats.median_text(vals[(wl, CEILING)])
            cv = _value(c)

            def ratio(gov: str) -> str:
                return f"{(stats.median([_value(v) for v in vals[(wl, gov)]]) / cv if cv else 0):.2f}x"
            line = f" {g0} {ratio(g0)}" if g0 else ""
            line += "".join(f", {g} {ratio(g)}" for g in govs)
            out.append(f"  against the ceiling (median {c}):{line}\n")
        if wl == "timer-io" or wl == "idle":
            line = ""
            for key in order:
                if key[0] != wl or key[1] == CEILING:
                    continue
                t = sum(x[1] for x in sums[key])
                line += f" {key[1]} {100 * sums[key][-1][1] / t if t and ns else 0:.1f} %"
            out.append(f"  deepest state ({names[-1] if ns else ''}) share of idle time:{line}\n")
    out.append(FOOTER)
    return "".join(out), "\n".join(dat) + "\n"


# --- the replay lab's prediction of recorded runs --------------------------

@dataclass
class LabOptions:
    """--lab-platform, --lab-govs and --hz of --report."""
    platform: str = ""
    govs: Dict[str, str] = field(default_factory=dict)
    hz: str = ""


HZ_CHOICES = ("100", "250", "300", "1000")


def lab_options(platform: str, govs: str, hz: str) -> LabOptions:
    """The options checked, or a usage error."""
    mapping: Dict[str, str] = {}
    for kv in [x for x in govs.split(",") if x]:
        if not re.match(r"^[a-z0-9_-]+=[A-Za-z0-9._-]+$", kv):
            raise UsageError(f"--lab-govs: '{kv}' is not KERNEL_GOVERNOR=LAB_LABEL")
        k, v = kv.split("=", 1)
        mapping.setdefault(k, v)
    if hz and hz not in HZ_CHOICES:
        raise UsageError(f"--hz: '{hz}' is not one of the kernel's choices 100, 250, 300, 1000")
    if ("/" in platform or platform.endswith(".plat")) and not Path(platform).is_file():
        raise UsageError(f"--lab-platform: no such file: '{platform}'")
    return LabOptions(platform, mapping, hz)


def _table_is_file(table: str) -> bool:
    return "/" in table or table.endswith(".plat")


def lab_precheck(folder: Path, opts: LabOptions) -> None:
    """The recordings of folder checked before anything is printed or
    built: each is trace-cmd report text with idle events, and there is
    a table to replay them on."""
    rec = folder / "record"
    if not rec.is_dir():
        return
    found = sorted(rec.glob("*.txt"))
    if not found:
        raise Fatal(f"{rec} holds no recording (*.txt): nothing to replay")
    for f in found:
        text = f.read_text(errors="replace")
        if not text:
            raise Fatal(f"{f}: empty recording")
        if not re.search(r" cpu_idle: .*state=", text):
            raise Fatal(f"{f}: not a trace-cmd report of a run: no cpu_idle event")
    table = opts.platform or str(folder / "platform.plat")
    if _table_is_file(table) and not Path(table).is_file():
        raise Fatal(f"no lab table for the recordings: {table} is missing (give --lab-platform)")


def _state_lines(table: Path) -> List[str]:
    try:
        text = table.read_text()
    except OSError:
        return []
    return [" ".join(line.split()[2:4]) for line in text.splitlines()
            if line.split()[:1] == ["state"]]


def _setup_hz(folder: Path) -> str:
    try:
        text = (folder / "setup.txt").read_text()
    except OSError:
        return ""
    m = re.search(r"^hz: ([0-9]+)$", text, re.M)
    return m.group(1) if m else ""


# (workload, governor, run) -> lab label and per state (usage, time, above, below)
Predictions = Dict[Tuple[str, str, str], Tuple[str, List[Tuple[float, float, float, float]]]]


def lab_section(folder: Path, names: Sequence[str], runs: Sequence[Run],
                opts: LabOptions) -> str:
    """Replay every recording of folder in the lab; the prediction next
    to the kernel's counters for the same runs ("" without recordings)."""
    rec = folder / "record"
    if not rec.is_dir():
        return ""
    table = opts.platform or str(folder / "platform.plat")
    hz = opts.hz or _setup_hz(folder)
    if not hz:
        hz = "250"
        note(f"the recorded kernel's HZ is not in {folder}/setup.txt: replaying at"
             " HZ=250 (give --hz)")
    the_lab = benchlab.Lab(rec / "lab.log")
    govs = the_lab.governors()
    labels = [g.label for g in govs]
    if opts.platform and (folder / "platform.plat").is_file():
        mine, theirs = _state_lines(Path(table)), _state_lines(folder / "platform.plat")
        if mine and mine != theirs:
            note(f"warning: the lab table {table} differs from the states the kernel"
                 f" registered ({folder}/platform.plat)")
    predictions: Predictions = {}
    tsv = []
    for r in runs:
        f = rec / f"{r.workload}-{r.governor}-{r.run}.txt"
        if not f.is_file():
            continue
        label = benchlab.label_for(r.governor, opts.govs, govs)
        if label and label not in labels:
            raise Fatal(f"--lab-govs: the lab has no governor '{label}' (it has:"
                        f" {' '.join(labels)})")
        if not label:
            note(f"{f.stem}: the lab has no governor for '{r.governor}' (--lab-govs):"
                 " not replayed")
            continue
        stem = f.with_suffix("")
        trace = stem.with_suffix(".trace")
        the_lab.convert(f, trace, table, hz)
        qos = workloads.qos_of(r.workload)
        if qos is not None:
            trace.write_text(benchlab.with_qos(trace.read_text(), qos * 1000))
        doc = the_lab.run(trace, table, label, stem.with_suffix(".lab"),
                          stem.with_suffix(".json"))
        states = benchlab.states_of(doc, label, trace)
        predictions[(r.workload, r.governor, r.run)] = (label, states)
        for s, (u, t, a, b) in enumerate(states):
            tsv.append("\t".join([r.workload, r.governor, r.run, label, str(s),
                                  *(stats.number_text(x) for x in (u, t, a, b))]))
    (rec / "lab.tsv").write_text("".join(line + "\n" for line in tsv))
    if not predictions:
        raise Fatal(f"no recording in {rec} matches a run of {folder}/{RUNS}")
    title = table
    if _table_is_file(table):
        m = re.search(r"^name (.*)$", Path(table).read_text(), re.M)
        if m:
            title = m.group(1)
    return lab_table(names, runs, predictions, title, hz)


def lab_table(names: Sequence[str], runs: Sequence[Run], predictions: Predictions,
              table: str, hz: str) -> str:
    """Per workload and governor, each state's kernel counters over the
    recorded runs beside the lab's, and the model error."""
    ns = len(names)
    kernel = {(r.workload, r.governor, r.run): r.counts for r in runs}
    order: List[Tuple[str, str]] = []
    runs_of: Dict[Tuple[str, str], List[str]] = {}
    for (w, g, r) in predictions:
        if (w, g) not in runs_of:
            order.append((w, g))
            runs_of[(w, g)] = []
        if r not in runs_of[(w, g)]:
            runs_of[(w, g)].append(r)
    out = ["\nLab prediction vs kernel: each recorded run replayed in the replay lab\n",
           f"(table {table}, HZ={hz}), counters summed over the CPUs and the recorded runs\n"]
    rows = []
    for w, g in order:
        rl = runs_of[(w, g)]
        label = predictions[(w, g, rl[0])][0]
        nls = max(len(predictions[(w, g, r)][1]) for r in rl)
        n = max(ns, nls)
        k = [[0, 0, 0, 0] for _ in range(n)]
        lab_sum = [[0.0, 0.0, 0.0, 0.0] for _ in range(n)]
        for r in rl:
            kc = kernel.get((w, g, r), [])
            for s in range(min(ns, len(kc))):
                for i in range(4):
                    k[s][i] += kc[s][i]
            for s, st in enumerate(predictions[(w, g, r)][1]):
                for i in range(4):
                    lab_sum[s][i] += st[i]
        KU = sum(x[0] for x in k)
        KT = sum(x[1] for x in k)
        KM = sum(x[2] + x[3] for x in k)
        LU = sum(x[0] for x in lab_sum)
        LT = sum(x[1] for x in lab_sum)
        LM = sum(x[2] + x[3] for x in lab_sum)
        out.append(f"\n{w}, {g} (lab: {label}; {len(rl)} recorded run{'' if len(rl) == 1 else 's'})\n")
        out.append(f"  {'':<12} {'usage':>21} {'time share %':>15} {'above':>17} {'below':>17}\n")
        out.append(f"  {'state':<12} {'kernel':>10} {'lab':>10} {'kernel':>7} {'lab':>7}"
                   f" {'kernel':>8} {'lab':>8} {'kernel':>8} {'lab':>8}\n")
        for s in range(n):
            name = names[s] if s < ns else f"state{s}"
            out.append(f"  {name:<12} {k[s][0]:>10d} {int(lab_sum[s][0]):>10d}"
                       f" {100 * k[s][1] / KT if KT else 0:>7.1f}"
                       f" {100 * lab_sum[s][1] / LT if LT else 0:>7.1f}"
                       f" {k[s][2]:>8d} {int(lab_sum[s][2]):>8d} {k[s][3]:>8d}"
                       f" {int(lab_sum[s][3]):>8d}\n")
        km = KM / KU if KU else 0.0
        lm = LM / LU if LU else 0.0
        d = stats.tvd([x[1] for x in k], [x[1] for x in lab_sum])
        out.append(f"  {'all':<12} {KU:>10d} {int(LU):>10d}  miss (above + below) / usage:"
                   f" kernel {km:.3f}, lab {lm:.3f}\n")
        per = ""
        for r in rl:
            kc = kernel.get((w, g, r), [])
            a1 = [kc[s][1] if s < len(kc) else 0 for s in range(n)]
            lab_run = predictions[(w, g, r)][1]
            b1 = [lab_run[s][1] if s < len(lab_run) else 0.0 for s in range(n)]
            per += f" {stats.tvd(a1, b1):.1f}"
        out.append(f"  model error: TVD of the time shares {d:.1f} % (per run:{per}), miss ratio"
                   f" lab - kernel {lm - km:+.3f}, entries lab / kernel"
                   f" {LU / KU if KU else 0:.2f}\n")
        rows.append(f"  {w:<10} {g:<8} {label:<10} {len(rl):>4d} {KU:>9d} {int(LU):>9d}"
                    f" {km:>7.3f} {lm:>7.3f} {d:>6.1f} {lm - km:>+8.3f}\n")
    out.append("\nModel error per workload and governor (TVD: total variation distance of\n")
    out.append("the time shares per state, 0 = same, 100 = disjoint; miss = (above + below) / usage)\n")
    out.append(f"  {'workload':<10} {'kernel':<8} {'lab':<10} {'runs':>4} {'entries':>9} {'lab':>9}"
               f" {'miss':>7} {'lab':>7} {'TVD %':>6} {'miss +-':>8}\n")
    out += rows
    return "".join(out)


# --- the plot and the whole report -----------------------------------------

GNUPLOT = """set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel "share of idle time (%)"
set title "Idle time per state, per workload and governor"
set xtics rotate by -30 noenhanced
set key outside right noenhanced
set grid ytics
plot for [i=2:{ncol}] "{dat}" using i:xtic(1) title columnheader(i)
"""


def plot(folder: Path) -> None:
    """residency.svg and .png from residency.dat (gnuplot, if there)."""
    if not deps.which("gnuplot"):
        note("no gnuplot: no plot")
        return
    dat = folder / "residency.dat"
    ncol = len(dat.read_text().splitlines()[0].split())
    gp = folder / "residency.gp"
    gp.write_text(GNUPLOT.format(ncol=ncol, dat=dat))
    for kind in ("svg", "png"):
        run = process.output(["gnuplot", "-e", f"set terminal {kind} size 960,540;"
                              f" set output '{folder}/residency.{kind}'", gp])
        if run.returncode != 0:
            note(f"gnuplot ({kind}) failed")


def report(folder: Path, opts: LabOptions, do_plot: bool = True) -> str:
    """Write summary.txt (and residency.dat, the plot) of a results
    folder; the text printed for it: the energy line of setup.txt, then
    the summary."""
    if not folder.is_dir():
        raise UsageError(f"--report: '{folder}' is not a folder")
    if not (folder / RUNS).is_file():
        raise Fatal(f"no {RUNS} in {folder}")
    lab_precheck(folder, opts)
    names, runs = read_runs(folder / RUNS)
    text, dat = summarize(names, runs)
    (folder / "residency.dat").write_text(dat)
    if (folder / cost.FILE).is_file():
        text += cost.bench_section(cost.read_samples(folder / cost.FILE))
    text += lab_section(folder, names, runs, opts)
    (folder / "summary.txt").write_text(text)
    printed = ""
    try:
        m = re.search(r"^energy:.*$", (folder / "setup.txt").read_text(), re.M)
        if m:
            printed = m.group(0) + "\n"
    except OSError:
        pass
    if do_plot:
        plot(folder)
    if (folder / "residency.svg").is_file():
        note(f"plot: {folder}/residency.svg")
    return printed + text
