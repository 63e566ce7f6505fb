# SPDX-License-Identifier: GPL-2.0
"""The report matcher knows each kind of kernel report by the exact text
the kernel prints, and nothing else looks like one."""

import unittest

from teotool import reports

# A line of each kind, as the kernel prints it (printk formats of 6.12 and
# 7.3: lib/bug.c, kernel/panic.c, arch/x86/kernel/dumpstack.c, mm/kasan,
# lib/ubsan.c, kernel/locking/lockdep.c, kernel/rcu/tree_stall.h,
# kernel/rcu/tree_exp.h, kernel/watchdog.c, kernel/hung_task.c).
REPORTS = [
    ("BUG", "[    1.234567] BUG: kernel NULL pointer dereference, address: 0000000000000000"),
    ("BUG", "[    1.2] BUG: sleeping function called from invalid context at kernel/sched/core.c:1"),
    ("BUG", "kernel BUG at mm/slub.c:435!"),
    ("WARNING", "[    2.0] WARNING: CPU: 0 PID: 1 at drivers/cpuidle/governors/teo.c:321 teo_select+0x1/0x2"),
    ("Oops", "[    2.1] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP"),
    ("Oops", "Oops: 0002 [#1] PREEMPT SMP KASAN NOPTI"),
    ("general protection fault", "general protection fault: 0000 [#1] SMP"),
    ("Kernel panic", "[    3.0] Kernel panic - not syncing: Fatal exception"),
    ("KASAN", "[    4.0] BUG: KASAN: slab-out-of-bounds in teo_update+0x10/0x20"),
    ("KASAN", "KASAN: null-ptr-deref in range [0x0000000000000000-0x0000000000000007]"),
    ("UBSAN", "[    5.0] UBSAN: shift-out-of-bounds in drivers/cpuidle/governors/teo.c:200:12"),
    ("lockdep", "WARNING: possible circular locking dependency detected"),
    ("lockdep", "WARNING: possible recursive locking detected"),
    ("lockdep", "WARNING: inconsistent lock state"),
    ("lockdep", "DEBUG_LOCKS_WARN_ON(1)"),
    ("suspicious RCU usage", "WARNING: suspicious RCU usage"),
    ("RCU stall", "rcu: INFO: rcu_preempt self-detected stall on CPU"),
    ("RCU stall", "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:"),
    ("RCU stall", "rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-... }"),
    ("RCU stall", "INFO: rcu_tasks detected stalls on tasks:"),
    ("soft lockup", "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [fio:123]"),
    ("hard lockup", "CPU1: Watchdog detected hard LOCKUP on cpu 1"),
    ("hung task", "INFO: task kworker/0:1:42 blocked for more than 120 seconds."),
    ("hung task", "INFO: task fio:77 blocked in I/O wait for more than 122 seconds."),
    ("Unable to handle kernel", "Unable to handle kernel NULL pointer dereference at virtual address 0"),
]

# Lines that mention the words but are no report.
QUIET = [
    "[    0.1] kasan: KernelAddressSanitizer initialized (generic)",
    "    ok 12 teo_select_warns_nothing",
    "CONFIG_DEBUG_BUG: set",
    "DEBUG: the state's residency",
    "# Subtest: teo_warning_free",
    "[    0.0] rcu: Hierarchical RCU implementation.",
    "[    0.0] rcu: RCU CPU stall warnings timeout set to 21 (rcu_cpu_stall_timeout).",
    "[    0.5] hung_task: detecting blocked tasks every 120 s",
    "Oopsie: nothing happened",
    "KUnit: the test ran",
]


class MatcherTest(unittest.TestCase):
    def test_each_kind(self) -> None:
        for kind, line in REPORTS:
            with self.subTest(line=line):
                self.assertEqual(reports.kind_of(line), kind)

    def test_no_false_alarm(self) -> None:
        for line in QUIET:
            with self.subTest(line=line):
                self.assertEqual(reports.kind_of(line), "")

    def test_find_numbers_lines(self) -> None:
        found = reports.find(["boot\n", REPORTS[0][1] + "\n", "fine\n", REPORTS[3][1] + "\n"])
        self.assertEqual([(r.lineno, r.kind) for r in found], [(2, "BUG"), (4, "WARNING")])


if __name__ == "__main__":
    unittest.main()
