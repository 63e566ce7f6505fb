# SPDX-License-Identifier: GPL-2.0
"""scripts/teo run: the main job.  Build the patched kernel and the
emulated idle driver ("scripts/teo vm"), boot the VM and run the
benchmark ("scripts/teo bench") inside it, in sessions (--cases), then
summarize each on the host and write the results folder.

A session is one boot: a table of idle states, the benchmark's options,
a results subfolder and a title.  Every option, the benchmark's among
them, is checked before anything is built or booted.
"""

import argparse
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from teotool import bench, benchreport, cost, deps, disk, paths, process, states, workloads
from teotool.ui import Fatal, UsageError, note

VM_GOVERNORS = ("teo", "menu", "ladder")
CASES = ("main", "idle-trap", "ring", "interval", "cost")
DEFAULT_CASES = "main,idle-trap"
# The big cores of a MediaTek MT8195 (Cortex-A78): WFI, cpu-off and
# cluster-off; the ring runs on it besides the main platform.
MT8195_BIG = "1/1,185/740,250/1000"
IDLE_TRAP_PROFILE = "mt8196"

DESCRIPTION = """\
Build the kernel and the emulated idle driver (scripts/teo vm), boot the
VM and run the benchmark (scripts/teo bench) inside it, in sessions
(--cases):

  main       on the emulated platform (--profile): fio randread on a virtio
             disk with QEMU's null-co backend and a fixed completion latency
             (intercept-heavy: the completion interrupt is no timer of the
             guest's), each round followed by the same fio run on a one-state
             1/1 us table (the ceiling: no exit-latency cost, no wrong
             choice possible); fio on null_blk with hrtimer completions
             (timer-driven IO); hackbench; cyclictest --laptop
  idle-trap  a fully idle guest on the mt8196 table (WFI 1/1, two deep
             states, s2idle with an "infinite" residency) for --idle-runtime
             seconds per run: the share of idle time in WFI per governor
  ring       the ring ("ping-pong": a token passed around one thread per
             vCPU through pipes, 10 and 100 us of work per hop; laps per
             second and us per hop), once on the big cores of an MT8195
             (states 1/1,185/740,250/1000) and once on the emulated
             platform (--profile or --states): two boots
  interval   a waker wakes a sleeper on the other vCPU through a pipe every
             5, 20 and 50 us, with no PM QoS limit and with a limit of 0
             (wakeups per second achieved, wakeup latency) on the emulated
             platform
  cost       the governor's own cost in the guest kernel: the function
             profiler's ns per call and calls per second of cpuidle_select
             and tick_nohz_get_sleep_length while the interval workload
             runs, for teo and menu of this repository's kernel and of the
             base tree's (--as-is): two boots and two kernels; reported as
             ratios against menu and the base teo (TCG times are not
             hardware times)

Prints the runs and per session the comparison (medians, fio completion
latency p50/p99, cyclictest p99/p99.9, IOPS against the ceiling, the
deepest state's share for timer IO, the WFI share when idle, and whether
each difference exceeds the run-to-run spread), and writes it with a plot
of the idle time per state to the results folder: the main session's in
the folder itself (bench/, title), each other session's in a subfolder
(idle-trap/, ring-mt8195-big/, ring-PLATFORM/, interval/, cost-ours/,
cost-base/ and cost.tsv); summary.txt holds every session's summary.

Options after -- go to the benchmark (scripts/teo bench --help) in every
session as they are (checked before anything is built), e.g. -- --runs 5
--ring-runtime 20.  Time: about 8 min for main and 6 min for idle-trap
with the defaults, plus the kernel build the first time (12-16 min with a
cold ccache; cost builds the base tree's kernel too).  Disk: about 3 GiB
for the tree and the build.
Environment: KERNEL_SRC, TEO_CACHE, TEO_LOCK, TEO_LAB_PLATFORMS (another
folder of the lab's .plat tables)."""


OPTIONS: Tuple[bench.Option, ...] = (
    (("--profile",), "i5-10600K", "NAME", "emulated platform of the main session (default"
     " %(default)s: POLL 0/0, C1 1/1, C2 120/360, C3 1034/3102 us)"),
    (("--states",), "", "LIST", "custom idle states instead, see scripts/teo vm --help"),
    (("--cases",), DEFAULT_CASES, "LIST",
     f"sessions to run: {', '.join(CASES)} (default: {DEFAULT_CASES})"),
    (("--hz",), "250", "N", "guest CONFIG_HZ: 100, 250, 300 or 1000 (default %(default)s)"),
    (("--as-is",), None, "", "run the base tree's own governors (KERNEL_SRC as it is,"
     " without this repository's overlay): for a patch under review applied to an"
     " upstream tree"),
    (("--governors",), "teo,menu", "LIST", "comma-separated (default %(default)s)"),
    (("--runs",), "3", "N", "runs per governor and workload (default %(default)s)"),
    (("--workloads",), "", "LIST", "main session's workloads, see scripts/teo bench --help"
     " (default: fio,timer-io,hackbench,cyclictest)"),
    (("--fio-runtime",), "20", "S", "seconds per fio run (default %(default)s)"),
    (("--idle-runtime",), "60", "S", "seconds per idle-trap run (default %(default)s)"),
    (("--ceiling-states",), "1/1", "L",
     "the ceiling's table (default %(default)s); \"none\" skips it"),
    (("--disk-latency",), "", "NS", "completion latency of the null-co disk (default 200000)"),
    (("--accel",), "", "MODE", "auto, kvm or tcg (scripts/teo vm --accel; default auto)"),
    (("--record",), None, "", "record every run with trace-cmd (scripts/teo bench --record)"
     " and replay the recordings in the replay lab on the emulated table (the profile's"
     " file in tools/idle-replay/platforms/, or the --states list): the summary adds"
     " \"Lab prediction vs kernel\" (not in the cost session, whose profiler would share"
     " the tracing)"),
    (("--out",), "", "DIR", "results folder (default $TEO_CACHE/vm-bench/DATE)"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    bench.add_options(p, OPTIONS)
    p.add_argument("bench_args", nargs="*", metavar="-- BENCH_OPTIONS", help=argparse.SUPPRESS)


@dataclass
class Session:
    """One boot of the VM with the benchmark in it."""
    name: str
    folder: Path
    title: str
    vm: List[str]
    bench: List[str]
    # The replay lab's table of the emulated platform (--record).
    table: str = ""
    # A --states list the table is made from, when no file has it.
    states: str = ""
    lab_govs: Dict[str, str] = field(default_factory=dict)

    @property
    def results(self) -> Path:
        return self.folder / "bench"


def lab_table_of_profile(profile: str) -> str:
    """The replay lab's table of a cpuidle-emu profile (TEO_LAB_PLATFORMS:
    another folder of .plat files)."""
    folder = Path(os.environ.get("TEO_LAB_PLATFORMS") or paths.LAB_PLATFORMS)
    f = folder / f"{profile.lower()}.plat"
    if not f.is_file():
        raise UsageError(f"--record: the replay lab has no table for profile '{profile}'"
                         f" (no {f}); use --states, or add the table")
    return str(f)


def states_plat(text: str, name: str = "states") -> str:
    """A --states list as a lab table called name, its states named as
    cpuidle-emu names them."""
    poll, table = states.parse(text)
    lines = [f"name {name}", f"title cpuidle-emu states={text}"]
    if poll:
        lines.append("state POLL 0 0 poll")
    lines += [f"state S{i + int(poll)} {lat} {res}" for i, (lat, res) in enumerate(table)]
    return "\n".join(lines) + "\n"


def adds_poll(profile: str, source: Optional[Path] = None) -> bool:
    """Whether cpuidle-emu gives profile the POLL state intel_idle always
    adds (its table entry's flag)."""
    text = (source or paths.CPUIDLE_EMU / "cpuidle-emu.c").read_text()
    return re.search(rf'^\s*\{{ "{re.escape(profile)}", true, emu_', text,
                     re.M | re.I) is not None


def table_with_poll(table: str, profile: str, folder: Path) -> str:
    """Lab table as the guest registers it: some lab tables of Intel client
    profiles (alder-lake, skylake) leave out the POLL state cpuidle-emu
    adds; then a copy with it, in folder."""
    text = Path(table).read_text()
    if not profile or not adds_poll(profile) or re.search(r"^state .* poll", text, re.M):
        return table
    out: List[str] = []
    for line in text.splitlines():
        if line.startswith("state ") and not any(x.startswith("state ") for x in out):
            out.append("state POLL 0 0 poll")
        out.append(line)
    copy = folder / f"lab-{Path(table).name}"
    copy.write_text("\n".join(out) + "\n")
    return str(copy)


def _check_vm(args: Sequence[str]) -> None:
    """scripts/teo vm's own check of its options: its one-line error is
    the error of this command, with its status."""
    status = process.run([paths.ENTRY, "vm", "--check-args", *args])
    if status != 0:
        raise SystemExit(status)


@dataclass
class Plan:
    """The sessions of a run, and what they need."""
    sessions: List[Session]
    kernels: List[List[str]]
    programs: bool
    record: bool
    hz: str
    cost: Optional[List[Session]] = None


def plan(args: argparse.Namespace) -> Plan:
    """Check every option and lay out the sessions (folders relative to
    the results folder, made absolute by run())."""
    cases = [c for c in args.cases.split(",") if c]
    if not cases:
        raise UsageError("--cases: empty list")
    for c in cases:
        if c not in CASES:
            raise UsageError(f"--cases: unknown case '{c}'; known: {' '.join(CASES)}")
    govs = args.governors.split(",")
    for g in govs:
        if g not in VM_GOVERNORS:
            raise UsageError(f"unknown governor '{g}'; the VM kernel has: {' '.join(VM_GOVERNORS)}")
    if args.ceiling_states != "none":
        states.parse(args.ceiling_states, "--ceiling-states")
    if args.states:
        states.parse(args.states, "--states")
    if "cost" in cases and args.as_is:
        raise UsageError("--cases cost runs this repository's kernel and the base tree's"
                         " itself: leave out --as-is")
    extra = list(args.bench_args)
    common = ["--governors", args.governors, "--runs", args.runs,
              "--fio-runtime", args.fio_runtime, "--idle-runtime", args.idle_runtime,
              "--no-report"]
    rec = ["--record"] if args.record else []
    main_bench = common + rec + (["--workloads", args.workloads] if args.workloads else [])
    if "fio" in (args.workloads or "fio").split(",") and args.ceiling_states != "none":
        main_bench += ["--ceiling-states", args.ceiling_states]
    main_bench += extra
    bench.check_args(main_bench)
    if args.out:
        disk.need_writable_dir(Path(args.out), f"--out {args.out}")
    vm = ["--hz", args.hz] + (["--as-is"] if args.as_is else [])
    vm += (["--disk-latency", args.disk_latency] if args.disk_latency else [])
    vm += (["--accel", args.accel] if args.accel else [])
    platform = ["--states", args.states] if args.states else ["--profile", args.profile]
    label = f"custom {args.states}" if args.states else args.profile
    _check_vm(vm + platform)
    tree = (f" of {os.environ.get('KERNEL_SRC') or 'the Debian base'} as it is"
            if args.as_is else "")
    vs = " vs ".join(govs)
    main_table = ""
    if args.record and not args.states:
        main_table = lab_table_of_profile(args.profile)
    lab_govs = {"teo": "teo-base"} if args.as_is else {}
    out = Path(".")
    sessions: List[Session] = []
    cost_sessions: List[Session] = []
    place = (args.states or args.profile).lower()
    for c in cases:
        if c == "main":
            sessions.append(Session(c, out, f"{vs}{tree} on an emulated {label}", vm + platform,
                                    main_bench, main_table, args.states, lab_govs))
        elif c == "idle-trap":
            table = lab_table_of_profile(IDLE_TRAP_PROFILE) if args.record else ""
            sessions.append(Session(
                c, out / c, f"idle trap: {', '.join(govs)}{tree} on an idle emulated"
                f" {IDLE_TRAP_PROFILE}, {args.idle_runtime} s per run",
                vm + ["--profile", IDLE_TRAP_PROFILE],
                common + rec + ["--workloads", "idle"] + extra, table, "", lab_govs))
        elif c == "ring":
            ring = common + rec + ["--workloads", "ring"] + extra
            sessions.append(Session(
                c, out / "ring-mt8195-big", f"ring: {vs}{tree} on the emulated big cores"
                f" of an MT8195 ({MT8195_BIG})", vm + ["--states", MT8195_BIG], ring,
                "", MT8195_BIG, lab_govs))
            sessions.append(Session(
                c, out / f"ring-{'states' if args.states else place}",
                f"ring: {vs}{tree} on an emulated {label}", vm + platform, ring,
                main_table, args.states, lab_govs))
        elif c == "interval":
            sessions.append(Session(
                c, out / "interval", f"short intervals: {vs}{tree} on an emulated {label}",
                vm + platform, common + rec + ["--workloads", "interval"] + extra,
                main_table, args.states, lab_govs))
        elif c == "cost":
            bench_cost = common + ["--workloads", "interval", "--cost"] + extra
            variants: List[Tuple[str, str, List[str]]] = [
                ("ours", "this repository's kernel", []),
                ("base", "the base tree's kernel as it is", ["--as-is"])]
            for kernel, whose, as_is in variants:
                s = Session(c, out / f"cost-{kernel}", f"governor cost: {vs} of {whose}"
                            f" on an emulated {label}", vm + as_is + platform, bench_cost)
                sessions.append(s)
                cost_sessions.append(s)
    for s in sessions:
        bench.check_args(s.bench)
    kernels = [vm + platform]
    if cost_sessions:
        kernels.append(vm + ["--as-is"] + platform)
    return Plan(sessions, kernels, any(s.name in ("ring", "interval", "cost") for s in sessions),
                args.record, args.hz, cost_sessions or None)


def _session(s: Session, hz: str) -> None:
    note(f"session: {s.title}; results in {s.folder}")
    s.folder.mkdir(parents=True, exist_ok=True)
    status = process.run([paths.ENTRY, "vm", *s.vm, "--out", s.folder, "--",
                          "scripts/teo", "bench", *s.bench, "--out", s.results], cwd=paths.REPO)
    if status != 0:
        raise Fatal(f"the benchmark in the VM failed (exit {status}); see {s.folder}/stderr"
                    f" and {s.folder}/console.log")
    try:
        accel = (s.folder / "accel").read_text().strip().upper() or "TCG"
    except OSError:
        accel = "TCG"
    (s.folder / "title").write_text(f"{s.title} (QEMU {accel}, 2 vCPUs, HZ={hz})\n")


def _lab_options(s: Session, out: Path, hz: str) -> benchreport.LabOptions:
    if not (s.results / "record").is_dir():
        return benchreport.LabOptions()
    table = s.table
    if s.states:
        name = "mt8195-big" if s.states == MT8195_BIG else "states"
        table = str(out / f"lab-{name}.plat")
        Path(table).write_text(states_plat(s.states, name))
    elif table and "--profile" in s.vm:
        table = table_with_poll(table, s.vm[s.vm.index("--profile") + 1], out)
    return benchreport.LabOptions(table, dict(s.lab_govs), hz)


def _link_latest(out: Path) -> None:
    latest = paths.vm_bench_results() / "latest"
    latest.parent.mkdir(parents=True, exist_ok=True)
    tmp = latest.with_name(f".latest.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(out)
    os.replace(tmp, latest)


def main(args: argparse.Namespace) -> int:
    """scripts/teo run."""
    p = plan(args)
    if deps.missing_packages():
        deps.install(check_only=False)
    if p.record:
        deps.need_cmd("trace-cmd")
    start = time.monotonic()
    note("building (cached steps are skipped)")
    for kernel in p.kernels:
        status = process.run([paths.ENTRY, "vm", "--build-only", *kernel])
        if status != 0:
            raise Fatal(f"the VM build failed (exit {status})")
    if p.programs:
        note(f"workload programs: {workloads.build_programs()}")
    built = time.monotonic()
    out = Path(args.out) if args.out else paths.vm_bench_results() / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    for s in p.sessions:
        s.folder = out / s.folder
        _session(s, p.hz)
    _link_latest(out)
    summary = open(out / "summary.txt", "w")
    with summary:
        def say(text: str) -> None:
            print(text, end="", flush=True)
            summary.write(text)
        for s in p.sessions:
            say("\n" + (s.folder / "title").read_text())
            say(benchreport.report(s.results, _lab_options(s, out, p.hz)))
        if p.cost:
            ours, base = (cost.read_samples(s.results / cost.FILE) for s in p.cost)
            tsv, table = cost.compare(ours, base)
            (out / cost.FILE).write_text(tsv)
            say("\n" + table)
    note(f"done: build {int(built - start)} s, boots and benchmarks"
         f" {int(time.monotonic() - built)} s; summary in {out}/summary.txt")
    return 0

