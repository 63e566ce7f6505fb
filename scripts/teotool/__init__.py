# SPDX-License-Identifier: GPL-2.0
"""The teo tooling: the modules behind scripts/teo.

One concern per module, as in the kernel's tools/testing/kunit/:

  cli        the argparse entry point (scripts/teo)
  ui         messages and the two kinds of error (bad input, bad environment)
  paths      every path and name the tooling uses, in one place
  process    process groups, signals, the machine-wide build lock,
             heartbeats
  disk       free space and writable folders
  tree       the base tree, KERNEL_SRC checks, the private overlay copy
  fetch      newer Debian kernel source packages (the mainline tree)
  deps       scripts/deps.list: install, check, and the exec audit
  kunit      the KUnit runner
  style      checkpatch, kernel-doc, W=1/sparse, shellcheck, mypy, unit tests
  reports    the one matcher of kernel reports (BUG, WARNING, KASAN ...)
  stats      medians, percentiles, Mann-Whitney, TVD
  states     idle-state lists as cpuidle-emu takes them
  checks     the steps of "scripts/teo check"
  vm         the test VM: its options, QEMU's command line, the guest run
  vmbuild    the test VM's kernel, module and initramfs, with their stamps
  kselftest  the cpuidle-teo kselftests in the test VM
  faulttest  the fault test on the debug kernel in the test VM
  lab        the replay lab: its trees, governor sources, build and corpus
  replay     "scripts/teo replay": the lab's commands
  labcheck   "scripts/teo replay check": the gates, contract and trace gate
  labtests   the lab's tests that the check runs after its gates
  mutants    "scripts/teo mutants": the KUnit mutation check
  testing    helpers of the unit tests

Each module has its unit tests beside it in NAME_test.py, run with
"scripts/teo test-tools" (python3 -m unittest underneath).
"""
