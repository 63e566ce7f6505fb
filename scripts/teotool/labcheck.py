# SPDX-License-Identifier: GPL-2.0
"""The check of the replay lab, "scripts/teo replay check" (part of
"scripts/teo check"): the gates of the corpus, the randomized contract
check of every governor under ASan/UBSan and the trace gate, side by
side; then the lab's tests (labtests) and the negative tests of the gates
(tools/idle-replay/tests/gates.sh, bash, run through tests/tooling.sh).

Every result is one PASS or FAIL line; the check ends with "N passed,
N failed (S s)" and fails if one failed.
"""

import re
import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

from teotool import lab, labtests, paths, process
from teotool.labtests import Context
from teotool.ui import Fatal, note

FUZZ_DECISIONS = 1000000
FUZZ_SEED = 1
# Governors whose contract violations fail the check: ours (teo-traced
# is ours with its trace events recording) and the lab's own policies.
# The baselines' are findings to report, not failures of ours.
MUST_PASS = ("oracle", "ref-shallow", "ref-fit", "teo", "teo-traced")
# Leaks are no part of the contract (labtests.no_leaks checks the lab's),
# and LeakSanitizer aborts under ptrace: "scripts/teo check" runs the
# check under strace.
CONTRACT_ENV = {"ASAN_OPTIONS": "exitcode=86:detect_leaks=0",
                "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=0"}
NO_LEAKS_ENV = {"ASAN_OPTIONS": "detect_leaks=0"}

# The lines of the gates' log worth showing.
_GATE_LINES = re.compile(r"^(DIVERGENCE|- BELOW|- NOT LISTED|- STALE|- NO MUTANT"
                         r"|- NO DIVERGENCE|- TARGET|- \.\.\.|\*\*(PASSED|FAILED)"
                         r"|Targets missed|Mean over|gates:)")
_FINDINGS = re.compile(r"runtime error|ERROR: AddressSanitizer|ERROR: LeakSanitizer")


def _lines(path: Path) -> List[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _show(lines: Sequence[str], indent: str = "  ") -> None:
    for line in lines:
        print(f"{indent}{line}")


# --- the gates -----------------------------------------------------------------

def gates_command(ctx: Context) -> lab.Command:
    """The gates of the corpus: one pass of every scenario on every table.
    The targets are a gate: each family target our teo misses must be a
    documented miss, as every miss of the regression gate is, and the mean
    over the families must be met."""
    return lab.Command((str(ctx.fast), "check", "--jobs", str(lab.JOBS), *ctx.data,
                        "--gates", str(paths.LAB_GATES),
                        "--known-misses", str(paths.LAB_KNOWN_MISSES), "--targets",
                        "--intended", str(paths.LAB_INTENDED),
                        "--kunit", str(paths.REPO / paths.KUNIT_SUITE),
                        "--mutants", str(paths.TEO_MUTANTS)),
                       ctx.dir / "gates.log")


def gates_result(ctx: Context, cmd: lab.Command, status: int) -> None:
    lines = _lines(cmd.log)
    _show([line for line in lines if _GATE_LINES.search(line)][:60])
    if not any(line.startswith("gates: ") for line in lines):
        _show(lines[-5:])
        status = 1
    ctx.results.add(status == 0, "gates: oracle, targets against every baseline and"
                    " against the best one, each miss documented, intended differences"
                    f" and their mutants (log: {cmd.log})")


# --- the contract ------------------------------------------------------------------

def contract_commands(ctx: Context) -> List[lab.Command]:
    """Every governor of the ASan build, a million random decisions each."""
    return [lab.Command((str(ctx.asan), "fuzz", "--gov", gov.label, "--decisions",
                         str(FUZZ_DECISIONS), "--seed", str(FUZZ_SEED),
                         "--must-pass", ",".join(MUST_PASS)),
                        ctx.dir / f"fuzz-{gov.label}.log", CONTRACT_ENV)
            for gov in lab.governors(ctx.asan, NO_LEAKS_ENV)]


def own_sanitizer_errors(lines: Sequence[str]) -> List[str]:
    """UBSan reports name the source file; ours and the lab's must have none."""
    ours = (str(paths.REPO / "drivers"), str(paths.IDLE_REPLAY))
    return [line for line in lines
            if "runtime error" in line and any(o in line for o in ours)]


def contract_result(ctx: Context, cmds: Sequence[lab.Command], status: Sequence[int]) -> None:
    """A violation of ours or the oracle's, or a sanitizer report from our
    code, fails; the baselines' findings are shown.  No governor to check
    fails too."""
    bad = not cmds
    for cmd, rc in zip(cmds, status):
        gov = cmd.argv[cmd.argv.index("--gov") + 1]
        lines = _lines(cmd.log)
        _show([line for line in lines[1:] if not re.match(r"    |SUMMARY|=", line)][:24])
        _show([line for line in lines if _FINDINGS.search(line)][:10], "    ")
        if gov in MUST_PASS:
            if own_sanitizer_errors(lines):
                rc = rc or 1
            if rc:
                bad = True
                print(f"  {gov}: exit {rc} (a violation of ours or the oracle's)")
        elif rc:
            print(f"  baseline {gov}: exit {rc}, findings above (not a failure of ours)")
    ctx.results.add(not bad, "contract check of every governor under ASan/UBSan (logs:"
                    f" {ctx.dir}/fuzz-*.log)")


# --- the trace gate ----------------------------------------------------------------

def trace_command(ctx: Context) -> lab.Command:
    """The trace events change no decision: our teo.c with its trace calls
    compiled out (teo) and with them recording (teo-traced, the twin) must
    decide alike at every step of every scenario on every table and of the
    random cases, and every event of the twin must tell what it decided."""
    return lab.Command((str(ctx.fast), "diff", "--diff", "teo,teo-traced", "--events",
                        *ctx.data, "--out", str(ctx.dir / "trace-gate.tsv")),
                       ctx.dir / "trace-gate.log")


def event_counts(counts: Dict[str, int]) -> List[int]:
    """The decisions checked against their events and the inconsistent
    ones, from the lab's table of counts."""
    if "events_decisions" in counts and "events_inconsistent" in counts:
        return [counts["events_decisions"], counts["events_inconsistent"]]
    raise Fatal("the lab's table of counts has no events_decisions and"
                " events_inconsistent columns")


def trace_result(ctx: Context, cmd: lab.Command, status: int) -> None:
    lines = _lines(cmd.log)
    _show(lab.grep_after(lines, r"^DIVERGENCE", 6, 40))
    for line in lines:
        if re.match(r"  (teo_select|teo_update|first)", line):
            print(line)
    try:
        counts = lab.read_counts(ctx.dir / "trace-gate.tsv")
        runs, dec = counts["runs"], counts["decisions"]
        div = counts["divergent"] + counts["random_divergent"]
        events, bad = event_counts(counts)
    except (Fatal, KeyError):
        _show(lines[-5:])
        ctx.results.add(False, "trace events: the differential teo vs teo-traced wrote no"
                        f" counts (log: {cmd.log})")
        return
    ok = status == 0 and div == 0 and bad == 0
    ctx.results.add(ok, f"trace events change no decision: teo vs teo-traced over {runs} runs"
                    f" and the random tables, {dec} decisions, {div} divergent; {events}"
                    f" decisions checked against their events, {bad} inconsistent"
                    f" (log: {cmd.log})")


# --- the negative tests of the gates (bash) ------------------------------------------

def gate_tests(ctx: Context, lab_dir: Path = paths.IDLE_REPLAY) -> None:
    """tools/idle-replay/tests/gates.sh (of lab_dir) through
    tests/tooling.sh, which records each result in a table this counts (it
    prints them itself)."""
    table = ctx.dir / "gate-tests.tsv"
    table.write_text("", encoding="utf-8")
    env = {"TEO_REPO": str(paths.REPO), "TEO_LAB": str(lab_dir),
           "TEO_LAB_GATES": str(paths.LAB_GATES),
           "TEO_LAB_KUNIT": str(paths.REPO / paths.KUNIT_SUITE),
           "TEO_LAB_BASE": str(ctx.trees.base),
           "TEO_LAB_MAINLINE": str(ctx.trees.mainline or ""), "TEO_RESULTS": str(table)}
    status = process.run_logged(["bash", paths.LAB_TESTS / "tooling.sh", ctx.build, ctx.dir,
                                 *ctx.data], ctx.dir / "gate-tests.log",
                                env=process.debian_env(env), echo=sys.stdout)
    for row in _lines(table):
        ctx.results.count(row.split("\t", 1)[0] == "0")
    if status != 0:
        ctx.results.add(False, f"the negative tests of the gates stopped early (exit {status})")


# --- the commands ------------------------------------------------------------------

def _fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def run() -> bool:
    """The whole check; whether everything passed."""
    start = time.monotonic()
    trees = lab.find_trees(fetch_mainline=True)
    data = lab.corpus(trees)
    mutants = tuple(lab.mutant_sources())
    build = lab.Lab(trees, mutants=mutants).build("idle-replay", "idle-replay-asan")
    note(f"built the lab ({time.monotonic() - start:.0f} s)")
    ctx = Context(trees, data, build, _fresh(paths.replay_check()))
    # The contract check under ASan and the trace gate beside the gates'
    # two processes.
    gates, trace = gates_command(ctx), trace_command(ctx)
    try:
        contract = contract_commands(ctx)
    except Fatal as err:
        print(f"  {err}", flush=True)
        contract = []
    status = lab.run_lanes([[gates], contract, [trace]], parallel=3)
    gates_result(ctx, gates, status[0][0])
    contract_result(ctx, contract, status[1])
    trace_result(ctx, trace, status[2][0])
    note(f"gates, contract check and trace gate done ({time.monotonic() - start:.0f} s)")
    labtests.run_all(ctx)
    gate_tests(ctx)
    print(f"{ctx.results.passed} passed, {ctx.results.failed} failed"
          f" ({time.monotonic() - start:.0f} s)", flush=True)
    return ctx.results.failed == 0


def leaks() -> bool:
    """Only the leak check, on the check's build; whether it passed."""
    if labtests.traced():
        raise Fatal("leaks: this process is traced, and LeakSanitizer cannot run under ptrace")
    trees = lab.find_trees(fetch_mainline=False)
    # The check's build (its key names the mutants): nothing to rebuild
    # after a check, so this untraced step runs only what a traced one built.
    build = lab.Lab(trees, mutants=tuple(lab.mutant_sources())).build("idle-replay-asan")
    ctx = Context(trees, [], build, _fresh(paths.replay_check("leaks")))
    labtests.no_leaks(ctx)
    return ctx.results.failed == 0
