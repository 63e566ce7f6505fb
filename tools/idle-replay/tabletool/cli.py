# SPDX-License-Identifier: GPL-2.0
"""The command line of extract-tables.py: options, the order of the
readers, the files written and what is said about them."""

import argparse
import os
import shutil
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence

from tabletool import dtcheck, kernel
from tabletool.drivers import extract_drivers
from tabletool.dtcorpus import extract_dt
from tabletool.errors import ExtractError
from tabletool.intel import extract_intel
from tabletool.naming import group_tables
from tabletool.outdir import install_outdir, prepare_outdir
from tabletool.plat import index_text, lab_rule_breaks, plat_text

PROG = "extract-tables"
# Boards that fail to preprocess or parse are skipped; more than this share
# of them means the tool, not a board, is broken.
MAX_SKIPPED_PERCENT = 3.0


def warn(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="extract-tables.py",
        description="Write every idle-state table a kernel tree knows (intel_idle, the "
        "static tables of drivers/cpuidle, the device trees of arm64/arm/riscv) as "
        "idle-replay .plat files, one per distinct table, with an INDEX of their sources.",
        epilog="KERNEL_SRC is only read.  OUTDIR is written through a temporary directory "
        "beside it and renamed into place, so a failure leaves it as it was; an existing "
        "OUTDIR is replaced only if it holds nothing but INDEX and *.plat.  Needs cpp "
        "(Debian package cpp); --check-dtc also needs dtc (device-tree-compiler).  "
        "Exit status: 0 done, 1 error, 2 usage.")
    p.add_argument("kernel_src", metavar="KERNEL_SRC", help="kernel source tree to read")
    p.add_argument("outdir", metavar="OUTDIR", help="directory to write (created or replaced)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel device-tree workers (default: the number of CPUs)")
    p.add_argument("--check-dtc", action="store_true",
                   help="also compile every board with cpp and dtc one by one and check that "
                   "dtc's tree gives the same tables (slow; a self-test of the parser)")
    p.add_argument("--max-skipped", type=float, default=MAX_SKIPPED_PERCENT, metavar="PERCENT",
                   help="fail if more than this share of the device trees that use idle "
                   f"states cannot be preprocessed or parsed (default {MAX_SKIPPED_PERCENT:g})")
    p.add_argument("-q", "--quiet", action="store_true", help="print only warnings and errors")
    return p.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    src = args.kernel_src
    log: Callable[[str], None] = ((lambda m: None) if args.quiet
                                  else (lambda m: print(f"{PROG}: {m}")))
    kernel.check_tree(src)
    if args.jobs < 1:
        raise ExtractError("--jobs needs a positive number")
    tmp: Optional[str] = prepare_outdir(args.outdir)
    t0 = time.monotonic()
    try:
        assert tmp is not None
        version = kernel.kernel_version(src)
        state_max = kernel.state_max_of(src)
        poll = kernel.poll_state_of(src)
        kernel.check_core_flags(src)
        intel = extract_intel(src, state_max, poll)
        drv, drv_skipped = extract_drivers(src, poll)
        dt = extract_dt(src, state_max, args.jobs, args.check_dtc, args.max_skipped, log)
        named = group_tables(intel + drv + dt.tables)
        counts = (f"{len(intel)} intel_idle arrays, {len(drv)} drivers/cpuidle tables, "
                  f"{len(dt.tables)} device-tree (board, CPU group) tables")
        for name, group in named:
            with open(os.path.join(tmp, name + ".plat"), "w", encoding="utf-8") as f:
                f.write(plat_text(name, group, version, state_max))
        with open(os.path.join(tmp, "INDEX"), "w", encoding="utf-8") as f:
            f.write(index_text(named, version, counts, dt.rejects, dt.skipped, drv_skipped,
                               state_max))
        install_outdir(tmp, args.outdir)
        tmp = None
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    kinds = {k: len({n for n, g in named if g[0].kind == k}) for k in ("intel", "drv", "dt")}
    log(f"Linux {version}: {len(named)} distinct tables (intel_idle {kinds['intel']}, "
        f"drivers/cpuidle {kinds['drv']}, device tree {kinds['dt']}) in "
        f"{time.monotonic() - t0:.1f} s -> {args.outdir}")
    breaking = [n for n, g in named if lab_rule_breaks(g[0].states, state_max)]
    if breaking:
        warn(f"{len(breaking)} table(s) break a lab rule (see INDEX): {' '.join(breaking)}")
    if dt.skipped:
        reasons: Dict[str, int] = {}
        for _, why in dt.skipped:
            reasons[why.split(":")[0]] = reasons.get(why.split(":")[0], 0) + 1
        warn(f"skipped {len(dt.skipped)} of {dt.boards} device tree(s) ("
             + ", ".join(f"{k} failed: {v}" for k, v in sorted(reasons.items())) + "): see INDEX")
    if args.check_dtc:
        dtcheck.report(dt.checks, dt.skipped, log, warn)
    return 0


def run(argv: List[str]) -> int:
    """main with its errors as one line and an exit status."""
    try:
        return main(argv)
    except ExtractError as e:
        warn(str(e))
        return 1
    except KeyboardInterrupt:
        return 130
