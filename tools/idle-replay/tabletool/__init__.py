# SPDX-License-Identifier: GPL-2.0
"""The modules behind tools/idle-replay/extract-tables.py, one concern
each:

  cli         the command line: options, the order of the readers, output
  errors      the two kinds of failure (the run's, one board's)
  kernel      facts of the tree every reader relies on
  csource     enough C for static initializers and constant expressions
  intel       the reader of drivers/idle/intel_idle.c
  drivers     the readers of the static tables of drivers/cpuidle/*.c
  preprocess  the boards, their includes, cpp as the kernel's dtc rule
  dts         the device-tree reader
  dtidle      what the DT cpuidle drivers register for each CPU
  dtcorpus    every board to tables, in parallel
  dtcheck     --check-dtc: dtc's tree against the reader's
  naming      dedup by contents and the names of the distinct tables
  plat        states, tables, the lab's rules, the .plat and INDEX text
  outdir      OUTDIR written whole or not at all

Each module's unit tests are beside it in NAME_test.py, run by
"scripts/teo test-tools"; the fake kernel tree they read is
tools/idle-replay/tests/extract/tree.
"""
