# SPDX-License-Identifier: GPL-2.0
"""The VM fault test: stress the idle path of the debug kernel (vm.py
--debug) with tools/cpuidle-emu/faulttest-guest.sh and fail on any
kernel report.

It is the extended check, not a step of "teo check": a cold debug kernel
build takes about 20-25 minutes on 2 cores.
"""

import argparse
import dataclasses
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import List, Optional

from teotool import deps, paths, reports, vm
from teotool.ui import Fatal, UsageError, note

DESCRIPTION = """\
Build the debug VM kernel ('teo vm --debug': lockdep, KASAN, RCU and
idle-path checks, objtool noinstr validation of vmlinux and of the
cpuidle-emu module) and run tools/cpuidle-emu/faulttest-guest.sh in it:

  1. under fio randread on the guest's disk, in a loop until fio ends:
     take each CPU but CPU 0 offline, switch the cpuidle governor (teo,
     menu, ladder in turn), disable one idle state on every CPU, bring the
     CPU back, enable the state again;
  2. with the guest idle, unload and reload cpuidle-emu with other tables.

Fails when an operation fails, when fio fails or reports an error, or when
the kernel log or console has a BUG, WARNING, Oops, lockdep, KASAN or
UBSAN report, a suspicious-RCU or RCU-stall report, a soft lockup or a
hung task.  This is the extended check (not in 'teo check'): a cold
debug kernel build takes about 20-25 minutes on 2 cores."""

EPILOG = "Environment: KERNEL_SRC, TEO_CACHE (see 'teo tree --help'), TEO_LOCK"

_SUMMARY = re.compile(r"^faulttest: (phase|done)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.add_argument("--fio-runtime", metavar="S", default="120",
                   help="seconds of IO for phase 1 (default 120)")
    p.add_argument("--reloads", metavar="N", default="5",
                   help="driver reloads in phase 2 (default 5)")
    p.add_argument("--smp", metavar="N", default="3", help="virtual CPUs (default 3)")
    p.add_argument("--profile", metavar="NAME", default=vm.DEFAULT_PROFILE,
                   help=f"emulated platform (default {vm.DEFAULT_PROFILE})")
    p.add_argument("--out", metavar="DIR",
                   help="keep the run folder there (default: the cache)")


def check_args(args: argparse.Namespace) -> "tuple[int, int]":
    """(fio seconds, reloads), or a usage error."""
    if not re.fullmatch(r"[0-9]+", args.fio_runtime) or int(args.fio_runtime) == 0:
        raise UsageError(f"--fio-runtime: '{args.fio_runtime}' is not a positive number")
    if not re.fullmatch(r"[0-9]+", args.reloads):
        raise UsageError(f"--reloads: '{args.reloads}' is not a number")
    if len(args.fio_runtime) > 6:
        raise UsageError(f"--fio-runtime: '{args.fio_runtime}' is too large")
    if len(args.reloads) > 4:
        raise UsageError(f"--reloads: '{args.reloads}' is too large")
    if args.smp == "1":
        raise UsageError("--smp: 1 CPU cannot be hotplugged; use 2 or more")
    return int(args.fio_runtime), int(args.reloads)


def kernel_reports(files: List[Path]) -> List[str]:
    """The report lines of the kernel log and the console (for what the
    log lost), each once."""
    seen: List[str] = []
    for path in files:
        if not path.is_file():
            continue
        for report in reports.scan(path):
            line = report.line.rstrip("\r")
            if line not in seen:
                seen.append(line)
    return seen


def check_out(out: Optional[str]) -> None:
    """The run folder is emptied first: a given one only when it is new,
    empty or a run folder of an earlier run, never someone's other files."""
    if out and os.path.isdir(out) and os.listdir(out) and \
            not os.path.exists(os.path.join(out, "vm-cmd")):
        raise UsageError(f"--out: '{out}' holds other files; give a new or empty folder")


def _run_dir(out: Optional[str], default: Path) -> Path:
    """A fresh run folder (see check_out)."""
    run = Path(out) if out else default
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    return run.resolve()


def main(args: argparse.Namespace) -> int:
    """teo faulttest."""
    fio_s, reloads = check_args(args)
    # OPTION=VALUE: a value may start with a dash.
    vm_args = ["--debug", f"--smp={args.smp}", f"--profile={args.profile}"]
    if args.out is not None:
        vm_args.append(f"--out={args.out}")
    opts = vm.from_args(vm.namespace(*vm_args))
    check_out(args.out)
    deps.need_cmd("fio", "jq")
    start = time.monotonic()
    images = vm.build(opts)
    built = time.monotonic()

    run = _run_dir(args.out, images.slot / "vm-faulttest")
    opts = dataclasses.replace(
        opts, out=run, timeout_s=fio_s * 3 + reloads * 30 + 900,
        command=["bash", str(paths.FAULTTEST_GUEST), str(fio_s), str(reloads)])
    status = vm.boot_and_run(opts, images)
    ran = time.monotonic()
    if status == vm.VM_FAILED:
        raise Fatal(f"the VM failed; see {run}/console.log")

    found = kernel_reports([run / "dmesg", run / "console.log"])
    stdout = (run / "stdout").read_text(encoding="utf-8", errors="replace")
    summary = [line for line in stdout.splitlines() if _SUMMARY.match(line)]
    note(f"build {built - start:.0f} s, VM run {ran - built:.0f} s; folder {run}")
    if found:
        sys.stderr.write("".join(line + "\n" for line in found))
        raise Fatal(f"the debug kernel reported the lines above (full log: {run}/dmesg,"
                    f" {run}/console.log)")
    if status != 0:
        raise Fatal(f"the fault test failed in the guest (exit {status}); see {run}/stderr")
    if not summary:
        raise Fatal(f"the guest printed no result; see {run}/stdout")
    print("\n".join(summary))
    lines = len((run / "dmesg").read_text(encoding="utf-8", errors="replace").splitlines())
    print(f"fault test: passed, no kernel report in {lines} lines of kernel log", flush=True)
    return 0
