# SPDX-License-Identifier: GPL-2.0
"""The steps of "scripts/teo check" (all tests) and of the extended check.

Each step is a command of the tooling run as a child, under
strace -e trace=execve so that the dependency audit (deps.audit) can
check every program it executed; a failed step does not stop the others.
"""

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence, Tuple

from teotool import deps, fetch, paths, process
from teotool.ui import Fatal, note


@dataclass(frozen=True)
class Step:
    """A step: its name in the output and its command line."""
    name: str
    argv: Tuple[str, ...]
    # LeakSanitizer cannot work under ptrace: a step that runs only what
    # an earlier, traced step built may run untraced.
    traced: bool = True


def _teo(*args: str) -> Tuple[str, ...]:
    return (str(paths.ENTRY), *args)


STEPS: Tuple[Step, ...] = (
    Step("deps --lint", _teo("deps", "--lint")),
    Step("test-tools", _teo("test-tools")),
    # One KUnit kernel, with KASAN and UBSAN: the suites are the same
    # with and without the sanitizers, and the sanitizers add checks.
    Step("kunit --sanitizers", _teo("kunit", "--sanitizers")),
    # Its W=1 C=2 build reuses the KUnit build folder.
    Step("style", _teo("style")),
    Step("replay check", _teo("replay", "check")),
    Step("replay leaks", _teo("replay", "leaks"), traced=False),
    Step("kselftest", _teo("kselftest")),
    Step("series check", _teo("series", "check")),
)

STRACE = ("strace", "-f", "-z", "-qq", "--seccomp-bpf", "-s", "4096",
          "-e", "trace=execve", "-e", "signal=none")


def _log_name(number: int, step: Step) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in step.name).strip("-")
    return f"{number:02d}-{slug}.strace"


def run_step(number: int, step: Step, exec_dir: Path) -> bool:
    """Run a step (traced into exec_dir); whether it passed."""
    argv: Sequence[str] = step.argv
    if step.traced:
        argv = [*STRACE, "-o", str(exec_dir / _log_name(number, step)), *argv]
    else:
        note("(not traced for the audit: it runs the lab that the step"
             " before it built)")
    return process.run(argv, env=process.debian_env()) == 0


def ensure_deps() -> None:
    """Install what is missing when we can; otherwise say what to install."""
    if deps.install(check_only=False) != 0:
        raise Fatal("scripts/deps.sh could not provide every command")


def run_checks(steps: Sequence[Step] = STEPS) -> None:
    """Run every step, report each, fail naming the failed ones."""
    start = time.monotonic()
    ensure_deps()
    exec_dir = paths.check_dir()
    shutil.rmtree(exec_dir, ignore_errors=True)
    exec_dir.mkdir(parents=True)
    failed: List[str] = []
    for number, step in enumerate(steps, 1):
        note(f"=== {step.name}")
        t0 = time.monotonic()
        if run_step(number, step, exec_dir):
            note(f"=== {step.name}: ok ({time.monotonic() - t0:.0f} s;"
                 f" {time.monotonic() - start:.0f} s so far)")
        else:
            note(f"=== {step.name}: FAILED")
            failed.append(step.name)
    note("=== deps --audit (every program the steps ran)")
    clean, report = deps.audit(exec_dir)
    for line in report:
        print(line, flush=True)
    if clean:
        note("=== deps --audit: ok")
    else:
        note("=== deps --audit: FAILED")
        failed.append("deps --audit")
    if failed:
        raise Fatal("failed steps: " + ", ".join(failed))
    note(f"all checks passed in {time.monotonic() - start:.0f} s")


def run_extended() -> None:
    """Everything of run_checks, then the series on the newest mainline
    source Debian ships (TEO_MAINLINE_PKG=linux-source-X.Y picks one)."""
    start = time.monotonic()
    run_checks()
    note("=== series check on mainline")
    pkg = os.environ.get("TEO_MAINLINE_PKG")
    mainline = fetch.fetch(pkg) if pkg else fetch.newest()
    env = process.debian_env({"KERNEL_SRC": str(mainline)})
    if process.run(_teo("series", "check"), env=env) != 0:
        raise Fatal(f"=== series check on mainline ({mainline}): FAILED")
    note("=== mutants (every mutant fails the KUnit cases it names)")
    if process.run(_teo("mutants"), env=process.debian_env()) != 0:
        raise Fatal("=== mutants: FAILED")
    # The gate checks that each listed miss still misses; this checks
    # that its line still says what the lab measures today.
    note("=== replay misses --check (known-misses is today's draft)")
    if process.run(_teo("replay", "misses", "--check"), env=process.debian_env()) != 0:
        raise Fatal("=== replay misses --check: FAILED")
    note(f"all extended checks passed in {time.monotonic() - start:.0f} s")
