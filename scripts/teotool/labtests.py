# SPDX-License-Identifier: GPL-2.0
"""The tests of the replay lab that "scripts/teo replay check" runs after
its gates, on the binaries it built: bad files are named with their line,
odd tables run as the kernel would run them, the converter writes the
expected traces, --per-state adds up, several --scenario options select
the union, governor sources build with their own gov.h, the lab leaks
nothing, the overhead playback decides alike, the driver never waits for
the kernel build lock, and a differential of a source with itself finds
nothing.

Each test adds one PASS or FAIL line to a Results.
"""

import csv
import difflib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Set

from teotool import lab, paths, process
from teotool.ui import Fatal

LAB = paths.IDLE_REPLAY
BAD = paths.LAB_TESTS / "bad"
DATA = paths.LAB_TESTS / "data"
# LeakSanitizer on, with an exit status of its own for its reports.
LEAK_ENV = {"ASAN_OPTIONS": "exitcode=86:detect_leaks=1"}


@dataclass
class Results:
    """PASS and FAIL lines, counted."""
    passed: int = 0
    failed: int = 0

    def count(self, ok: bool) -> None:
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def add(self, ok: bool, text: str) -> None:
        self.count(ok)
        print(f"{'PASS' if ok else 'FAIL'} {text}", flush=True)


@dataclass
class Context:
    """What the tests run on: the trees, the corpus options, the check's
    build folder (idle-replay, idle-replay-asan) and its output folder."""
    trees: lab.Trees
    data: List[str]
    build: Path
    dir: Path
    results: Results = field(default_factory=Results)

    @property
    def fast(self) -> Path:
        return self.build / "idle-replay"

    @property
    def asan(self) -> Path:
        return self.build / "idle-replay-asan"


def _run(argv: Sequence[object], env: Optional[Mapping[str, str]] = None,
         cwd: Optional[Path] = None) -> "subprocess.CompletedProcess[str]":
    """Run a short lab command; its status, stdout and stderr."""
    return process.output([str(a) for a in argv], cwd=cwd, env=process.debian_env(env))


def _rel(path: Path) -> str:
    return str(path.relative_to(LAB)) if LAB in path.parents else str(path)


def _first(path: Path, prefix: str) -> str:
    """The rest of the first line of path that starts with prefix, or ""."""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(prefix):
            return line[len(prefix):]
    return ""


# --- input files ---------------------------------------------------------------

def check_bad_file(ctx: Context, path: Path, want: str) -> None:
    """validate must fail with exactly one line "idle-replay: FILE:WANT..."
    (want: the file's "# expect: LINE: reason")."""
    run = _run([ctx.fast, "validate", path])
    err = run.stderr.rstrip("\n")
    if run.returncode == 1 and err.startswith(f"idle-replay: {path}:{want}") and "\n" not in err:
        ctx.results.add(True, f"bad input rejected: {_rel(path)}:{want}")
    else:
        ctx.results.add(False, f"bad input {path}: wanted one line '{path}:{want}', got exit"
                        f" {run.returncode}: {err}")


def bad_files(ctx: Context) -> None:
    for ext in ("plat", "trace", "costs"):
        for path in sorted(BAD.glob(f"*.{ext}")):
            want = _first(path, "# expect: ")
            if not want:
                want = Path(f"{path}.expect").read_text(encoding="utf-8").rstrip("\n")
            check_bad_file(ctx, path, want)
    # A path with a space is named as it is.
    spaced = ctx.dir / "with space" / "bad file.plat"
    spaced.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(BAD / "negative.plat", spaced)
    check_bad_file(ctx, spaced, _first(BAD / "negative.plat", "# expect: "))


def odd_tables(ctx: Context) -> None:
    """Tables the kernel would run although they break the lab's old
    rules: validate takes them and says what it made of them."""
    for path in sorted(DATA.glob("*.plat")):
        want = _first(path, "# note: ")
        run = _run([ctx.fast, "validate", path])
        ok = run.returncode == 0 and want in run.stdout + run.stderr
        ctx.results.add(ok, f"table run as the kernel would: {_rel(path)} ({want})")


# --- the converter ---------------------------------------------------------------

def _same_file(want: Path, got: Path) -> bool:
    """Whether got has want's contents; if not, the difference on stderr."""
    try:
        a = want.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        b = got.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except OSError as err:
        print(f"{err.filename}: {err.strerror}", file=sys.stderr)
        return False
    if a == b:
        return True
    sys.stderr.writelines(difflib.unified_diff(a, b, str(want), str(got)))
    return False


def converter(ctx: Context) -> None:
    for src in sorted(DATA.glob("*.txt")):
        name = src.stem
        out = ctx.dir / f"{name}.trace"
        ok = _run([ctx.fast, "convert", src, out]).returncode == 0 and \
            _same_file(DATA / f"{name}.trace", out) and \
            _run([ctx.fast, "run", "--trace", out, "--platform", "rk3399"]).returncode == 0
        ctx.results.add(ok, f"converter: {name}.txt gives tests/data/{name}.trace, which replays")

    # A VM's recording with --platform: the ends of polling (time limit,
    # nothing to do, no handler) are no arrivals.
    out = ctx.dir / "trace-cmd-vm.poll-trace"
    run = _run([ctx.fast, "convert", "--platform", paths.LAB_PLATFORMS / "i5-10600k.plat",
                DATA / "trace-cmd-vm.txt", out])
    (ctx.dir / "poll.err").write_text(run.stderr, encoding="utf-8")
    ok = run.returncode == 0 and _same_file(DATA / "trace-cmd-vm.poll-trace", out) and \
        " 11 ends of polling left out" in run.stderr
    ctx.results.add(ok, "converter: with --platform a poll's time-limit exits are left out"
                    " (tests/data/trace-cmd-vm.poll-trace)")

    out = ctx.dir / "bad.trace"
    run = _run([ctx.fast, "convert", BAD / "perf-bad-cpu.txt", out])
    (ctx.dir / "bad.err").write_text(run.stderr, encoding="utf-8")
    ok = run.returncode != 0 and not out.exists() and \
        not out.with_name(out.name + ".tmp").exists() and \
        "perf-bad-cpu.txt:2: cpu 999 out of range" in run.stderr
    ctx.results.add(ok, "converter: bad input named with its line, nothing written")


# --- run --per-state -----------------------------------------------------------------

def per_state_verdict(run: Any) -> bool:
    """From the JSON of a run (run --json): every governor has a row per
    state, and its states' usage adds up to its entries (its decisions but
    for the periods still open at the end)."""
    try:
        govs = {g["label"]: g for g in run["governors"]}
        ok = {"oracle", "teo"} <= set(govs)
        for gov in govs.values():
            usage = sum(int(s["usage"]) for s in gov["states"])
            ok = ok and len(gov["states"]) == 3 and gov["decisions"] - 2 <= usage <= \
                gov["decisions"]
        return ok
    except (KeyError, TypeError, ValueError):
        return False


def per_state(ctx: Context) -> None:
    out = ctx.dir / "per-state.json"
    run = _run([ctx.fast, "run", "--trace", DATA / "trace-cmd.trace", "--platform", "rk3399",
                "--gov", "teo", "--per-state", "--json", out])
    (ctx.dir / "per-state.out").write_text(run.stdout + run.stderr, encoding="utf-8")
    try:
        found = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        found = None
    ok = run.returncode == 0 and per_state_verdict(found)
    ctx.results.add(ok, "run --per-state: usage, time, above and below per governor and"
                    " state, adding up to its entries")


# --- several --scenario options ------------------------------------------------------

def _scenarios_of(results: Path) -> Set[str]:
    """The scenario column of a report's results.tsv (empty if none)."""
    try:
        with open(results, encoding="utf-8") as f:
            return {row.get("scenario") or "" for row in csv.DictReader(f, delimiter="\t")}
    except OSError:
        return set()


def scenario_union(ctx: Context) -> None:
    """Two --scenario options, a family and a scenario of another family,
    select the scenarios of both; a name the lab does not have is refused
    in one line naming it, even beside a good one, and the --out
    folder it made is gone again; so is a second --scenario to run (one timeline)."""
    try:
        known = lab.listing(ctx.fast).scenarios
    except Fatal as err:
        print(f"  {err}", flush=True)
        known = ()
    want = {name for name, family in known if family == "S4" or name == "s2-desktop-idle"}
    out = ctx.dir / "two-scenarios"
    shutil.rmtree(out, ignore_errors=True)
    run = _run([ctx.fast, "report", "--out", out, "--scenario", "S4",
                "--scenario", "s2-desktop-idle", "--platform", "rk3399"])
    got = _scenarios_of(out / "results.tsv")
    ok = run.returncode == 0 and len(want) > 2 and got == want
    ctx.results.add(ok, "report --scenario S4 --scenario s2-desktop-idle replays both:"
                    f" {' '.join(sorted(got)) or 'nothing'}")

    out = ctx.dir / "unknown-scenario"
    shutil.rmtree(out, ignore_errors=True)
    run = _run([ctx.fast, "report", "--out", out, "--scenario", "s4-nosuch",
                "--scenario", "S4", "--platform", "rk3399"])
    ok = run.returncode == 1 and run.stderr == "idle-replay: error: no scenario or family" \
        " 's4-nosuch' (see 'idle-replay list')\n" and not out.exists()
    run = _run([ctx.fast, "run", "--scenario", "s2-desktop-idle", "--scenario", "s4-fio-nvme"])
    ok = ok and run.returncode == 1 and run.stdout == "" and \
        run.stderr == "idle-replay: error: run takes one --scenario (one timeline), not 2\n"
    ctx.results.add(ok, "an unknown --scenario beside a good one is named in one line,"
                    " no --out folder left; run refuses a second --scenario")


# --- governor sources ----------------------------------------------------------------

def governor_builds(ctx: Context) -> None:
    """A missing kernel API is named; a file registering nothing is named;
    a quoted #include finds the gov.h next to the source (so each tree's
    governors use their own tree's gov.h)."""
    base_only = lab.Lab(lab.Trees(ctx.trees.base))
    run = _run(base_only.make(ctx.build, "probe", f"SRC={BAD / 'needs-missing-api.c'}",
                              "LABEL=probe"))
    ok = run.returncode != 0 and "needs kernel API the shim lacks: function" \
        " tick_nohz_get_next_hrtimer()" in run.stdout + run.stderr
    ctx.results.add(ok, "a governor needing an API the shim lacks fails to build, naming it")

    govh = paths.LAB_TESTS / "govh"
    ok = _run(base_only.make(ctx.build, "probe", f"SRC={govh / 'probe.c'}",
                             "LABEL=govh")).returncode == 0
    ok = ok and _mentions(ctx.build / "probe" / "gov-govh.o.d", govh / "gov.h")
    try:
        govs = [g for g in lab.governors(ctx.fast) if g.role in ("base", "mainline")]
    except Fatal as err:
        print(f"  {err}", flush=True)
        govs = []
    ok = ok and bool(govs)
    for gov in govs:
        ok = ok and _mentions(ctx.build / "fast" / f"gov-{gov.label}.o.d",
                              Path(gov.source).parent / "gov.h")
    ctx.results.add(ok, "each governor builds with the gov.h next to it (base and mainline"
                    " trees' own)")

    quiet = BAD / "registers-nothing.c"
    nothing = ctx.build / "nothing"
    built = lab.Lab(lab.Trees(ctx.trees.base), extra=(("quiet", quiet),))
    run = _run(built.make(nothing, str(nothing / "idle-replay")))
    out = run.stdout + run.stderr
    if run.returncode == 0:
        run = _run([nothing / "idle-replay", "list"])
        out += run.stdout + run.stderr
    ok = run.returncode != 0 and f"governor 'quiet' ({quiet}) registered nothing" in out
    ctx.results.add(ok, "a --gov file that registers no governor is named at start-up")


def _mentions(path: Path, what: Path) -> bool:
    try:
        return str(what) in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


# --- leaks, overhead, the lock, the differential -----------------------------------------

def traced(status: Path = Path("/proc/self/status")) -> bool:
    """Whether this process is traced (strace, gdb): LeakSanitizer needs to
    stop and inspect the process and gives up with a fatal error then."""
    text = status.read_text(encoding="ascii", errors="replace")
    m = re.search(r"^TracerPid:\s*([0-9]+)", text, re.M)
    return bool(m and m.group(1) != "0")


def no_leaks(ctx: Context) -> None:
    """The lab frees what it allocates: no leak report on valid runs."""
    if traced():
        print("SKIP leak check: LeakSanitizer cannot run under ptrace (strace); scripts/teo"
              " check runs it untraced (scripts/teo replay leaks)", flush=True)
        return
    plat = paths.LAB_PLATFORMS
    runs: List[List[object]] = [
        ["validate", plat / "rk3399.plat", DATA / "perf-script.trace"],
        ["run", "--scenario", "s2-desktop-idle"],
        ["run", "--trace", DATA / "trace-cmd.trace", "--platform", "rk3399"],
        ["run", "--trace", DATA / "trace-cmd-vm.trace", "--platform", plat / "i5-10600k.plat",
         "--per-state"],
        ["convert", "--platform", plat / "i5-10600k.plat", DATA / "trace-cmd-vm.txt",
         ctx.dir / "leak.trace"],
        ["report", "--out", ctx.dir / "leak-report", "--scenario", "S4", "--platform", "rk3399"],
        ["list"],
    ]
    log = ctx.dir / "leak.log"
    ok = True
    with open(log, "w", encoding="utf-8") as f, open(os.devnull, "w", encoding="utf-8") as null:
        for args in runs:
            status = process.run([ctx.asan, *(str(a) for a in args)], stdout=null, stderr=f,
                                 env=process.debian_env(LEAK_ENV))
            ok = ok and status == 0
    ctx.results.add(ok, "no ASan/LeakSanitizer report on valid validate, run (also"
                    " --per-state), convert (--platform), report and list (log:"
                    f" {log})")
    ok = _run(["gnuplot", "plots.gp"], cwd=ctx.dir / "leak-report").returncode == 0 \
        if (ctx.dir / "leak-report").is_dir() else False
    ctx.results.add(ok, "a report of one family (S4, no S6 sweep) plots with gnuplot")


def overhead_playback(ctx: Context) -> None:
    """The overhead measurement plays back exactly what each governor
    decided (its table's playback_faithful column)."""
    table = ctx.dir / "overhead.tsv"
    run = _run([ctx.fast, "overhead", "--rounds", "1", "--tsv", table])
    try:
        rows = table.read_text(encoding="utf-8").splitlines()
        column = rows[0].split("\t").index("playback_faithful")
        faithful = [row.split("\t")[column] for row in rows[1:]]
    except (OSError, IndexError, ValueError):
        faithful = []
    ok = run.returncode == 0 and bool(faithful) and all(f == "yes" for f in faithful)
    ctx.results.add(ok, "overhead: the recorded calls play back to the same decisions")


def no_build_lock(ctx: Context, timeout_s: float = 120.0) -> None:
    """The lab builds no kernel: it must not wait for the kernel build lock."""
    lock = ctx.dir / "build.lock"
    with open(lock, "a", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with process.group([paths.ENTRY, "replay", "list"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                           env=process.debian_env({"TEO_LOCK": str(lock)})) as proc:
            try:
                ok = proc.wait(timeout=timeout_s) == 0
            except subprocess.TimeoutExpired:
                ok = False
    ctx.results.add(ok, "scripts/teo replay list runs while another process holds the kernel"
                    " build lock")


def diff_self(ctx: Context) -> None:
    """The differential of a file with itself: no divergence, and the
    table of counts the series' check reads."""
    tsv = ctx.dir / "diff-self.tsv"
    teo = ctx.trees.base / paths.GOVERNORS / "teo.c"
    run = _run([paths.ENTRY, "replay", "diff", "--counts", tsv, teo, teo])
    try:
        head, row = tsv.read_text(encoding="utf-8").splitlines()[:2]
        cells = row.split("\t")
        counts = [int(c) for c in cells[2:]]
    except (OSError, ValueError):
        head, cells, counts = "", [], []
    ok = run.returncode == 0 and len(counts) == 6 and head == \
        "old\tnew\truns\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent"
    runs = cases = 0
    if ok:
        runs, dec, div, cases, rdec, rdiv = counts
        ok = cells[:2] == [str(teo), str(teo)] and min(runs, dec, cases, rdec) > 0 and \
            div == rdiv == 0
    ctx.results.add(ok, f"replay diff of a source with itself: {runs} runs, {cases} random"
                    " cases, 0 divergent")


def run_all(ctx: Context) -> None:
    """Every test above, in this order."""
    bad_files(ctx)
    odd_tables(ctx)
    converter(ctx)
    per_state(ctx)
    scenario_union(ctx)
    governor_builds(ctx)
    no_leaks(ctx)
    overhead_playback(ctx)
    no_build_lock(ctx)
    diff_self(ctx)

