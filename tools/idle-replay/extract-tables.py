#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Extract every idle-state table a kernel tree knows into idle-replay .plat files.

usage: extract-tables.py [--help] [-j N] [--check-dtc] [--max-skipped PERCENT] [-q]
                         KERNEL_SRC OUTDIR

Reads the kernel tree KERNEL_SRC (never writes to it) and writes one .plat
file per distinct table into OUTDIR, plus OUTDIR/INDEX.  The tables come from

  intel_idle    every static struct cpuidle_state array of
                drivers/idle/intel_idle.c, behind the polling state the
                driver registers first (cpuidle_poll_state_init())
  drivers       the static tables of drivers/cpuidle/*.c (pseries, tegra,
                exynos, kirkwood, ...), with each state's power_usage (mW)
                where the driver gives it for two halting states or more
                and it does not rise with depth
  device tree   the idle states of every CPU of every board under
                arch/{arm64,arm,riscv}/boot/dts, behind the WFI state the
                DT cpuidle drivers add as state 0

Tables with the same numbers (exit latency, target residency, polling,
default-off, power_usage, state by state) are written once; INDEX names every source
that yielded each one.  The output depends only on the tree, so it can be
cached by the tree's identity.  See the lab README, "Platform files".
"""

import os
import sys

# The package beside this file, without __pycache__ folders in the tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tabletool import cli  # noqa: E402 (the package is found through the path above)

if __name__ == "__main__":
    sys.exit(cli.run(sys.argv[1:]))
