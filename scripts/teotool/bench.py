# SPDX-License-Identifier: GPL-2.0
"""scripts/teo bench: the A/B workload benchmark of cpuidle governors on
this machine (bare metal as root, or inside the test VM).

Each workload runs N times under each governor, the governors taking
turns (teo, menu, teo, menu ...), switched through sysfs; per run the
workload's metric and the per-state deltas of the kernel's idle counters
go to runs.tsv, and the summary (benchreport) compares the governors.
Every option is checked before anything is built, locked or changed; the
machine is left as it was (governor, null_blk device, idle driver,
tracing), however the run ends.
"""

import argparse
import contextlib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from teotool import (benchreport, cost, counters, deps, disk, paths, process, record,
                     states, workloads)
from teotool.benchreport import Run
from teotool.ui import Fatal, UsageError, note

DESCRIPTION = """\
Run workloads N times under each named cpuidle governor, switching through
/sys/devices/system/cpu/cpuidle/current_governor, and record per run the
workload's metrics and the per-state deltas of usage, time, above and
below summed over all CPUs (and the package energy where the machine has
RAPL).  Runs alternate between the governors (teo, menu, teo, menu ...).
Then print a summary per workload and governor: the runs sorted, their
median, the latency percentiles, the idle-miss ratio (above + below) /
usage, the share of idle time per state, and whether the difference
between the governors exceeds the run-to-run spread; plot the idle time
per state (residency.svg/.png).

Workloads:
  fio         fio randread 4k, psync, direct, iodepth=1 on --fio-dev for
              --fio-runtime s: intercept-heavy (the device's interrupts are
              not timers the governor can see); metric: IOPS, with the
              completion latency p50/p99 (from fio's JSON output)
  timer-io    the same fio job on a null_blk device (configfs) whose
              completions come from an hrtimer after --timer-delay-us
              (irqmode=2): timer-driven IO; metric: IOPS, and the deepest
              state's share of idle time
  hackbench   hackbench -g 4 -l 500; metric: seconds
  cyclictest  cyclictest --laptop (the PM QoS limit stays off), one thread
              per CPU, interval 1000 us, --cyclictest-runtime s, with
              --json and a 1 us histogram; metric: average wakeup latency
              (us), with p99, p99.9 and the maximum
  idle        nothing runs for --idle-runtime s (not in the default set):
              metric: the share of idle time in the shallowest halting
              state (the "idle trap": WFI on Arm tables, C1 on Intel ones)
  ring        teo-ring (tools/teo-bench): a token passed around
              --ring-threads threads, one pinned to each CPU, through
              pipes, with W us of busy work per hop, for each W of
              --ring-work-us (cases ring-10us, ring-100us): what testers
              measure as "ping-pong"; metric: laps per second, with us
              per hop (not in the default set)
  interval    teo-interval (tools/teo-bench): a waker wakes a sleeper on
              another CPU through a pipe every I us, for each I of
              --interval-us, with no PM QoS limit and with a limit of 0
              held on /dev/cpu_dma_latency (--interval-qos; cases
              interval-20us, interval-20us-qos0); metric: wakeups per
              second achieved, with the wakeup latency's average, p99
              and maximum in us (not in the default set)

Needs root and a cpuidle driver.  On bare metal it holds the machine-wide
build lock while it measures, so that no kernel build shares the machine;
it changes only the current governor (restored at exit, also on Ctrl-C),
and for timer-io creates a null_blk device (removed at exit).  Package
energy comes from RAPL (/sys/class/powercap) or, failing that, turbostat;
the summary says when neither is there.  teo-ring and teo-interval are
built with Debian's gcc into $TEO_CACHE/teo-bench once per version of
their sources.
Files in the results folder: setup.txt, runs.tsv (one line per run),
summary.txt, residency.dat, residency.svg and residency.png; with
--record also platform.plat (the registered states as a table of the
replay lab) and record/ (per run the trace-cmd report text, and after
--report the lab's timeline .trace, its replay .lab and the lab's
numbers .json); with --cost, cost.tsv.  TEO_TRACE_CMD names another
trace-cmd binary."""

GOVERNOR_NAME = re.compile(r"^[a-z0-9_-]+$")
# Characters hackbench's options never need: the arguments are split on
# white space, never given to a shell.
HACKBENCH_ARG = re.compile(r"^[-a-zA-Z0-9 =._]*$")


# An option: its names, its default (None: a flag), its metavar, its help.
Option = Tuple[Tuple[str, ...], Optional[str], str, str]

OPTIONS: Tuple[Option, ...] = (
    (("-g", "--governors"), "teo,menu", "LIST",
     "comma-separated governors (default %(default)s)"),
    (("-n", "--runs"), "3", "N", "runs per governor and workload (default %(default)s)"),
    (("-w", "--workloads"), ",".join(workloads.DEFAULT_FAMILIES), "LIST",
     f"comma-separated, from: {','.join(workloads.FAMILIES)} (default %(default)s)"),
    (("--fio-dev",), "", "DEV", "block device for fio: read only, never written (default"
     " /dev/vda inside the VM; required on bare metal)"),
    (("--fio-runtime",), "20", "S", "seconds per fio run (default %(default)s)"),
    (("--timer-delay-us",), "50000", "US", "null_blk completion delay (default %(default)s)"),
    (("--timer-runtime",), "5", "S", "seconds per timer-io run (default %(default)s)"),
    (("--hackbench-args",), workloads.HACKBENCH_ARGS, "ARGS", '(default "%(default)s")'),
    (("--cyclictest-runtime",), "10", "S", "seconds per cyclictest run (default %(default)s)"),
    (("--idle-runtime",), "60", "S", "seconds per idle run (default %(default)s)"),
    (("--ring-threads",), "", "N", "threads of the ring, at least 2 (default: one per CPU)"),
    (("--ring-work-us",), "10,100", "LIST",
     "us of busy work per hop, one case each (default %(default)s)"),
    (("--ring-runtime",), "10", "S", "seconds per ring run (default %(default)s)"),
    (("--interval-us",), "5,20,50", "LIST", "us between the interval workload's wakeups,"
     " one case each (default %(default)s)"),
    (("--interval-qos",), "none,0", "LIST", "PM QoS limits (us) of the interval cases,"
     " 'none' for no limit (default %(default)s)"),
    (("--interval-runtime",), "5", "S", "seconds per interval run (default %(default)s)"),
    (("--cost",), None, "", "measure the governor's own cost: the kernel's function profiler"
     " counts the calls of cpuidle_select and tick_nohz_get_sleep_length and their time"
     " during each run (cost.tsv; the kernel needs CONFIG_FUNCTION_PROFILER and"
     " CONFIG_FUNCTION_GRAPH_TRACER, as the test VM's has)"),
    (("--ceiling-states",), "", "LIST", "in the test VM only: after each round of fio runs,"
     " reload cpuidle-emu with this state list (e.g. 1/1: one state with no exit-latency"
     " cost) and run fio once more as the \"ceiling\"; the summary gives each governor's"
     " IOPS against it"),
    (("--record",), None, "", "record every run with trace-cmd (power:cpu_idle, irq, IPI,"
     " timer and sched_switch events, and power:teo_* where the kernel has them) into"
     " record/WORKLOAD-GOVERNOR-RUN.txt (trace-cmd report text, cut to the run); the"
     " report then replays each recording in the replay lab and sets the lab's prediction"
     " beside the kernel's counters (\"Lab prediction vs kernel\")"),
    (("--record-overhead",), None, "", "--record, and after each round the same runs again"
     " unrecorded, as governors GOV-norec: the summary's \"GOV-norec vs ...\" lines give"
     " the recording's cost in the same session"),
    (("-o", "--out"), "", "DIR", "results folder (default $TEO_CACHE/bench/DATE)"),
    (("--no-plot",), None, "", "skip the plot (make it later with --report)"),
    (("--no-report",), None, "", "skip the summary and the plot"),
    (("--report",), "", "DIR", "only summarize and plot the runs in DIR (and replay its"
     " recordings in the lab)"),
    (("--lab-platform",), "", "NAME|FILE", "with --report: the lab's table to replay the"
     " recordings on (default: DIR/platform.plat, the table the kernel registered)"),
    (("--lab-govs",), "", "MAP", "with --report: lab governor per kernel governor, e.g."
     " teo=teo-base (default teo=teo, this repository's teo.c, and menu=menu-base, the"
     " base tree's menu.c: menu-X.Y in 'scripts/teo replay list')"),
    (("--hz",), "", "N", "with --report: the recorded kernel's HZ, when setup.txt does not"
     " say it"),
    (("--check-args",), None, "", "only check the options (scripts/teo run does, on the"
     " host, before it builds anything)"),
)


def add_options(p: argparse.ArgumentParser, options: Sequence[Option]) -> None:
    """Declare options; their values are strings, checked afterwards."""
    for names, default, metavar, text in options:
        if default is None:
            p.add_argument(*names, action="store_true", help=text)
        else:
            p.add_argument(*names, default=default, metavar=metavar, help=text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of "scripts/teo bench"; values are checked by options()."""
    add_options(p, OPTIONS)


def value_options() -> List[str]:
    """The option strings of the benchmark that take a value."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    return [o for a in p._actions if a.nargs is None for o in a.option_strings]


def join_values(argv: Sequence[str]) -> List[str]:
    """argv with each value joined to its option ("--hackbench-args=-g 4"),
    so that a value starting with "-" (hackbench's own options) stays a
    value; argparse would take "-g 4 -l 500" for -g (--governors)."""
    takes = value_options()
    out: List[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--":
            return out + list(argv[i:])
        if argv[i] in takes and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


@dataclass
class Options:
    """The benchmark's options, checked."""
    governors: List[str]
    runs: int
    families: List[str]
    settings: workloads.Settings
    ceiling: str = ""
    record: bool = False
    record_overhead: bool = False
    cost: bool = False
    out: Optional[Path] = None
    plot: bool = True
    report: bool = True
    cases: List[workloads.Case] = field(default_factory=list)


def _count(opt: str, text: str, low: int = 1) -> int:
    """A whole number of at most six digits, positive unless low is 0."""
    if not re.match(r"^[0-9]+$", text) or (low and (text == "0" or text.startswith("00"))):
        word = "positive" if low else "non-negative"
        raise UsageError(f"{opt}: '{text}' is not a {word} whole number")
    if len(text) > 6:
        raise UsageError(f"{opt}: '{text}' is too large")
    return int(text, 10)


def _list(opt: str, text: str, low: int) -> Tuple[int, ...]:
    items = text.split(",")
    if not text or not all(items):
        raise UsageError(f"{opt}: '{text}' is not a comma-separated list of numbers")
    values = tuple(_count(opt, x, low) for x in items)
    if len(set(values)) != len(values):
        raise UsageError(f"{opt}: '{text}' names a value twice")
    return values


def _qos_list(text: str) -> Tuple[Optional[int], ...]:
    values: List[Optional[int]] = []
    for item in text.split(","):
        if item == "none":
            values.append(None)
        elif re.match(r"^[0-9]{1,9}$", item):
            values.append(int(item))
        else:
            raise UsageError(f"--interval-qos: '{item}' is neither 'none' nor a number of us")
        if values.count(values[-1]) > 1:
            raise UsageError(f"--interval-qos: '{item}' is given twice")
    return tuple(values)


def options(args: argparse.Namespace) -> Options:
    """Check every option (one usage error for the first bad one); nothing
    is built, locked or changed."""
    runs = _count("--runs", args.runs)
    s = workloads.Settings(
        fio_runtime=_count("--fio-runtime", args.fio_runtime),
        timer_delay_us=_count("--timer-delay-us", args.timer_delay_us),
        timer_runtime=_count("--timer-runtime", args.timer_runtime),
        cyclictest_runtime=_count("--cyclictest-runtime", args.cyclictest_runtime),
        idle_runtime=_count("--idle-runtime", args.idle_runtime),
        ring_runtime=_count("--ring-runtime", args.ring_runtime),
        interval_runtime=_count("--interval-runtime", args.interval_runtime),
        ring_work_us=_list("--ring-work-us", args.ring_work_us, 0),
        interval_us=_list("--interval-us", args.interval_us, 1),
        interval_qos=_qos_list(args.interval_qos),
        hackbench_args=args.hackbench_args, fio_dev=args.fio_dev)
    if args.ring_threads:
        s.ring_threads = _count("--ring-threads", args.ring_threads)
        if s.ring_threads < 2:
            raise UsageError("--ring-threads: a ring needs 2 threads or more")
    if not args.workloads:
        raise UsageError("--workloads: empty list")
    families = args.workloads.split(",")
    for w in families:
        if w not in workloads.FAMILIES:
            raise UsageError(f"unknown workload '{w}'; known: {' '.join(workloads.FAMILIES)}")
    if not args.governors:
        raise UsageError("--governors: empty list")
    governors = args.governors.split(",")
    for g in governors:
        if g == benchreport.CEILING:
            raise UsageError("'ceiling' is the name of the --ceiling-states runs, not a governor")
        if not GOVERNOR_NAME.match(g) or g.endswith(benchreport.NOREC):
            raise UsageError(f"--governors: '{g}' is not a governor name")
    if args.ceiling_states:
        states.parse(args.ceiling_states, "--ceiling-states")
    if not HACKBENCH_ARG.match(args.hackbench_args):
        raise UsageError(f"--hackbench-args: '{args.hackbench_args}' has characters"
                         " hackbench options never have")
    if args.fio_dev and not args.fio_dev.startswith("/dev/"):
        raise UsageError(f"--fio-dev: '{args.fio_dev}' is not under /dev")
    record_on = args.record or args.record_overhead
    if args.cost and record_on:
        raise UsageError("--cost and --record both use the kernel's tracing: run them apart")
    if args.out:
        disk.need_writable_dir(Path(args.out), f"--out {args.out}")
    opts = Options(governors, runs, families, s, args.ceiling_states, record_on,
                   args.record_overhead, args.cost, Path(args.out) if args.out else None,
                   not args.no_plot, not args.no_report)
    opts.cases = workloads.cases(families, s)
    return opts


def check_args(argv: Sequence[str]) -> Options:
    """The options of a bench command line, checked (for scripts/teo run,
    which passes them to the benchmark in the guest)."""
    # cli imports this module: its parser class is taken when needed.
    from teotool import cli
    p = cli.Parser(prog="teo bench", allow_abbrev=False)
    add_arguments(p)
    args = p.parse_args(join_values(argv))
    if args.report or args.lab_platform or args.lab_govs or args.hz:
        raise UsageError("--report, --lab-platform, --lab-govs and --hz are not for the guest")
    return options(args)


# --- the machine ---------------------------------------------------------------

def in_vm() -> bool:
    """Whether this runs in the test VM (scripts/teo vm says so)."""
    return bool(os.environ.get("TEO_IN_VM"))


def read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def set_governor(name: str, cpuidle: Path = counters.CPUIDLE_SYS) -> None:
    try:
        (cpuidle / "current_governor").write_text(f"{name}\n")
    except OSError:
        pass
    if read(cpuidle / "current_governor") != name:
        raise Fatal(f"could not switch to governor {name}")


def emu_reload(args: str) -> None:
    """Reload the emulated idle driver with module arguments args (VM only)."""
    if process.run(["busybox", "rmmod", "cpuidle_emu"]) != 0:
        raise Fatal("cannot unload cpuidle_emu")
    if process.run(["busybox", "insmod", os.environ.get("TEO_EMU_KO", ""), *args.split()]) != 0:
        raise Fatal(f"cannot load cpuidle-emu with {args}")


def check_machine(o: Options) -> str:
    """Fail unless this machine can run the benchmark; the idle driver."""
    if o.record:
        record.check()
    if os.geteuid() != 0:
        raise Fatal("must be run as root (it switches governors through sysfs)")
    avail = counters.CPUIDLE_SYS / "available_governors"
    if not os.access(avail, os.R_OK):
        raise Fatal(f"this kernel has no cpuidle (no {avail})")
    have = read(avail).split()
    for g in o.governors:
        if g not in have:
            raise Fatal(f"unknown governor '{g}'; this kernel has: {' '.join(have)}")
    driver = read(counters.CPUIDLE_SYS / "current_driver") or "none"
    if driver == "none":
        raise Fatal("no cpuidle driver on this machine (current_driver is none): nothing"
                    " to compare; use scripts/teo run")
    if o.ceiling:
        if not os.environ.get("TEO_EMU_KO") or driver != "cpuidle_emu":
            raise Fatal("--ceiling-states needs the emulated idle driver of the test VM"
                        " (scripts/teo vm sets TEO_EMU_KO)")
        deps.need_cmd("busybox")
    fams = set(o.families)
    if fams & {"fio", "timer-io"}:
        deps.need_cmd("fio")
    if "fio" in fams:
        if not o.settings.fio_dev:
            if not in_vm():
                raise Fatal("--fio-dev is required on bare metal (a block device fio may read)")
            o.settings.fio_dev = "/dev/vda"
        if not Path(o.settings.fio_dev).is_block_device():
            raise Fatal(f"{o.settings.fio_dev} is not a block device")
    if "hackbench" in fams:
        deps.need_cmd("hackbench")
    if "cyclictest" in fams:
        deps.need_cmd("cyclictest")
    if fams & {"ring", "interval"}:
        cpus = len(os.sched_getaffinity(0))
        if cpus < 2 or o.settings.ring_threads > cpus:
            raise Fatal(f"the ring and interval workloads need"
                        f" {max(2, o.settings.ring_threads)} CPUs, this machine has {cpus}")
    return driver


# --- measuring -----------------------------------------------------------------

class Bench:
    """One benchmark run: the machine's state, the results folder, what
    records and profiles the runs."""

    def __init__(self, o: Options, out: Path, driver: str, names: List[str]) -> None:
        self.o = o
        self.out = out
        self.driver = driver
        self.names = names
        self.shallow = counters.shallow_index(names)
        self.energy: Optional[counters.Energy] = None
        self.recorder: Optional[record.Recorder] = None
        self.profiler: Optional[cost.Profiler] = None
        self.emu_args = os.environ.get("TEO_EMU_ARGS", "")
        self.emu_current = self.emu_args
        self.timer_dev = ""

    def unit(self, case: workloads.Case) -> str:
        return workloads.unit(case, self.names[self.shallow] if self.names else "")

    def setup_text(self) -> str:
        o, s = self.o, self.o.settings
        emu = f" ({self.emu_args})" if self.emu_args else ""
        qos = ",".join("none" if q is None else str(q) for q in s.interval_qos)
        lines = [f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
                 f"kernel: {os.uname().release}, {len(os.sched_getaffinity(0))} CPUs,"
                 f" driver {self.driver}{emu}",
                 f"states: {' '.join(self.names)}",
                 *counters.latency_lines(),
                 f"governors: {','.join(o.governors)}; runs: {o.runs}; workloads:"
                 f" {','.join(o.families)}",
                 f"fio: {s.fio_dev or 'none'}, {s.fio_runtime}s; timer-io:"
                 f" {s.timer_delay_us} us, {s.timer_runtime}s",
                 f"hackbench: {s.hackbench_args}; cyclictest: {s.cyclictest_runtime}s;"
                 f" idle: {s.idle_runtime}s",
                 f"ring: {s.ring_threads or 'one per CPU'} threads, work"
                 f" {','.join(map(str, s.ring_work_us))} us per hop, {s.ring_runtime}s;"
                 f" interval: {','.join(map(str, s.interval_us))} us, PM QoS {qos},"
                 f" {s.interval_runtime}s",
                 f"ceiling: {o.ceiling or 'none'}",
                 f"energy: {self.energy.why if self.energy else ''}",
                 f"hz: {counters.kernel_hz(os.uname().release, os.environ.get('TEO_KERNEL_HZ'))}"]
        if self.recorder:
            lines.append(f"record: {self.recorder.describe()}")
        if self.profiler:
            lines.append(f"cost: the function profiler on {' '.join(cost.FUNCTIONS)}")
        return "\n".join(lines) + "\n"

    def measure(self, case: workloads.Case, gov: str, run: int) -> None:
        """One run of case under gov; appends to runs.tsv (and cost.tsv)."""
        o = self.o
        ceiling = gov == benchreport.CEILING
        if ceiling:
            emu_reload(f"states={o.ceiling}")
            self.emu_current = f"states={o.ceiling}"
        else:
            set_governor(gov[:-len(benchreport.NOREC)] if gov.endswith(benchreport.NOREC)
                         else gov)
        recorder = None if ceiling or gov.endswith(benchreport.NOREC) else self.recorder
        name = f"{case.name}-{gov}-{run}"
        if recorder:
            recorder.start(name)
        time.sleep(1)
        before = counters.snapshot()
        if recorder:
            recorder.mark(f"start {case.name} {gov} {run}")
        assert self.energy is not None
        self.energy.start(self.out)
        if self.profiler:
            self.profiler.start()
        t0 = time.monotonic()
        result = workloads.run(case, o.settings, self.timer_dev)
        seconds = time.monotonic() - t0
        profile = self.profiler.stop() if self.profiler else {}
        joules = self.energy.stop()
        if recorder:
            recorder.mark(f"stop {case.name} {gov} {run}")
        after = counters.snapshot()
        if recorder:
            recorder.stop()
        if ceiling:
            emu_reload(self.emu_args)
            self.emu_current = self.emu_args
            counts = [(0, 0, 0, 0)] * len(self.names)
        else:
            counts = counters.delta(before, after)[:len(self.names)]
            counts += [(0, 0, 0, 0)] * (len(self.names) - len(counts))
        if case.family == "idle":
            result = workloads.idle_metric(counts, self.shallow, o.settings.idle_runtime)
        if joules is not None:
            result.extras.append(("J", f"{joules:.1f}"))
        r = Run(case.name, gov, str(run), result.metric, self.unit(case), result.extras, counts)
        with open(self.out / benchreport.RUNS, "a") as f:
            f.write(benchreport.row(r))
        if profile:
            with open(self.out / cost.FILE, "a") as f:
                for fn, (calls, ns) in profile.items():
                    f.write(cost.Sample(case.name, gov, run, fn, calls, ns, seconds).row() + "\n")
        print(run_line(r, self.names), flush=True)

    def restore(self, governor: str) -> None:
        """The idle driver and the governor as they were."""
        if self.o.ceiling and self.emu_current != self.emu_args:
            emu_reload(self.emu_args)
        with contextlib.suppress(OSError):
            (counters.CPUIDLE_SYS / "current_governor").write_text(f"{governor}\n")

    def rounds(self) -> None:
        o = self.o
        for case in o.cases:
            with contextlib.ExitStack() as stack:
                if case.family == "timer-io":
                    dev = stack.enter_context(workloads.null_blk(o.settings.timer_delay_us))
                    if not dev:
                        note("timer-io: no null_blk with configfs here"
                             " (CONFIG_BLK_DEV_NULL_BLK, CONFIG_CONFIGFS_FS); skipped")
                        continue
                    self.timer_dev = dev
                for r in range(1, o.runs + 1):
                    for g in o.governors:
                        self.measure(case, g, r)
                    if o.record_overhead:
                        for g in o.governors:
                            self.measure(case, g + benchreport.NOREC, r)
                    if case.family == "fio" and o.ceiling:
                        self.measure(case, benchreport.CEILING, r)


def run_line(r: Run, names: Sequence[str]) -> str:
    """A run's line on stdout: metric, then per state usage/time/above/below."""
    extra = benchreport.extras_text(r.extras)
    line = (f"{r.workload:<10} {r.governor:<7} run {r.run}: {r.metric}"
            f" {r.unit.split(' ')[0]}{'' if extra == '-' else f' ({extra})'};")
    tu = ta = 0
    for name, (u, t, a, b) in zip(names, r.counts):
        line += f" {name} {u}/{int(t / 1000)}ms/{a}/{b}"
        tu += u
        ta += a + b
    return line + f"; miss {ta / tu if tu else 0:.3f}"


def measure(o: Options, driver: str) -> Path:
    """Every run of the benchmark; the results folder."""
    out = o.out or paths.bench_results() / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    if set(o.families) & {"ring", "interval"}:
        o.settings.programs = workloads.build_programs()
    o.settings.scratch = out
    governor = read(counters.CPUIDLE_SYS / "current_governor")
    names = counters.state_names()
    b = Bench(o, out, driver, names)
    with contextlib.ExitStack() as stack:
        stack.callback(b.restore, governor)
        b.energy = counters.Energy(in_vm())
        stack.callback(b.energy.close)
        if o.record:
            b.recorder = record.Recorder(out)
            stack.callback(b.recorder.close)
            title = driver + (f" {b.emu_args}" if b.emu_args else "")
            (out / "platform.plat").write_text(counters.platform_table(
                counters.states(), os.uname().release, driver, title))
        if o.cost:
            b.profiler = cost.Profiler(record.find_tracefs())
            stack.callback(b.profiler.close)
            b.profiler.setup()
            (out / cost.FILE).write_text(cost.HEADER + "\n")
        (out / benchreport.RUNS).write_text(benchreport.header(names))
        (out / "setup.txt").write_text(b.setup_text())
        note(f"results in {out}; states: {' '.join(names)}")
        note(f"energy: {b.energy.why}")
        print("per run: metric; per state usage/time/above/below deltas over all CPUs",
              flush=True)
        b.rounds()
    return out


def report_only(args: argparse.Namespace) -> int:
    opts = benchreport.lab_options(args.lab_platform, args.lab_govs, args.hz)
    print(benchreport.report(Path(args.report), opts, not args.no_plot), end="", flush=True)
    return 0


def main(args: argparse.Namespace) -> int:
    """scripts/teo bench."""
    if args.report:
        return report_only(args)
    if args.lab_platform or args.lab_govs or args.hz:
        raise UsageError("--lab-platform, --lab-govs and --hz go with --report DIR")
    o = options(args)
    if args.check_args:
        return 0
    driver = check_machine(o)
    if in_vm():
        # scripts/teo vm holds the build lock for the whole guest run.
        out = measure(o, driver)
    else:
        with process.BuildLock():
            out = measure(o, driver)
    if o.report:
        print(benchreport.report(out, benchreport.LabOptions(), o.plot), end="", flush=True)
    return 0

