# SPDX-License-Identifier: GPL-2.0
"""The governor's cost: the function profiler's files read, summed over
the CPUs, and the tables of one kernel and of two."""

import contextlib
import os
import unittest
from pathlib import Path
from typing import Iterator, List

from teotool import cost
from teotool.testing import ScratchTest
from teotool.ui import Fatal

# trace_stat/functionN as 6.12 prints it (function_stat_show): the time
# is trace_print_graph_duration's, whose ns shrink with the us digits.
STAT0 = """  Function                               Hit    Time            Avg             s^2
  --------                               ---    ----            ---             ---
  cpuidle_select                       12000    6000.500 us     0.500 us        0.010 us
  tick_nohz_get_sleep_length            9000    123456.7 us     13.717 us       0.100 us
"""
STAT1 = """  Function                               Hit    Time            Avg             s^2
  --------                               ---    ----            ---             ---
  cpuidle_select                        3000    1500.250 us     0.500 us        0.010 us
  do_idle                                 10    5.000 us        0.500 us        0.000 us
"""
NO_GRAPH = """  Function                               Hit
  --------                               ---
  cpuidle_select                       12000
"""


class ParseTest(unittest.TestCase):
    def test_rows(self) -> None:
        self.assertEqual(cost.parse_function_stat(STAT0),
                         {"cpuidle_select": (12000, 6000500.0),
                          "tick_nohz_get_sleep_length": (9000, 123456700.0)})

    def test_no_times(self) -> None:
        self.assertEqual(cost.parse_function_stat(NO_GRAPH), {"cpuidle_select": (12000, None)})


class ProfilerTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        (self.tmp / "trace_stat").mkdir()
        (self.tmp / "function_profile_enabled").write_text("0\n")
        (self.tmp / "set_ftrace_filter").write_text("")
        self.write(STAT0, STAT1)
        self.quiet: List[str] = []

    def write(self, stat0: str, stat1: str) -> None:
        (self.tmp / "trace_stat" / "function0").write_text(stat0)
        (self.tmp / "trace_stat" / "function1").write_text(stat1)

    @contextlib.contextmanager
    def quiet_path(self) -> Iterator[None]:
        self.quiet.append("in")
        yield
        self.quiet.append((self.tmp / "function_profile_enabled").read_text().strip())

    def test_profile(self) -> None:
        """Switched on once, with the idle path quiet; per run the
        difference of the counters, summed over the CPUs."""
        p = cost.Profiler(self.tmp, self.quiet_path)
        p.setup()
        self.assertEqual((self.tmp / "set_ftrace_filter").read_text(),
                         "cpuidle_select tick_nohz_get_sleep_length\n")
        self.assertEqual(self.quiet, ["in", "1"])
        p.start()
        self.write(STAT0.replace("12000    6000.500", "12010    6010.500"), STAT1)
        got = p.stop()
        self.assertEqual(got["cpuidle_select"], (10, 10000.0))
        self.assertEqual(got["tick_nohz_get_sleep_length"], (0, 0.0))
        self.assertEqual(p.totals()["cpuidle_select"], (15010, 7510750.0))
        self.assertEqual((self.tmp / "function_profile_enabled").read_text(), "1\n")
        p.close()
        self.assertEqual(self.quiet, ["in", "1", "in", "0"])
        self.assertEqual((self.tmp / "set_ftrace_filter").read_text(), "\n")

    def test_no_graph_tracer(self) -> None:
        (self.tmp / "trace_stat" / "function1").write_text(NO_GRAPH)
        p = cost.Profiler(self.tmp, self.quiet_path)
        with self.assertRaisesRegex(Fatal, "needs CONFIG_FUNCTION_GRAPH_TRACER"):
            p.start()

    def test_no_profiler(self) -> None:
        (self.tmp / "function_profile_enabled").unlink()
        with self.assertRaisesRegex(Fatal, "this kernel has no function profiler"):
            cost.Profiler(self.tmp)


def spinners() -> int:
    """Children of this process running cost.SPIN (from /proc: no ps)."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"sched_setaffinity" in cmdline:
            count += 1
    return count


class QuietTest(unittest.TestCase):
    def test_quiet_idle_path(self) -> None:
        """Inside, this process stays on one CPU and every other CPU runs a
        spinner; after it, the affinity is back and the spinners are gone."""
        mine = os.sched_getaffinity(0)
        with cost.quiet_idle_path():
            self.assertEqual(os.sched_getaffinity(0), {min(mine)})
            self.assertEqual(spinners(), len(mine) - 1)
        self.assertEqual(os.sched_getaffinity(0), mine)
        self.assertEqual(spinners(), 0)


def samples(kernel_scale: float) -> List[cost.Sample]:
    out = []
    for run, seconds in ((1, 2.0), (2, 4.0), (3, 2.0)):
        for gov, scale in (("teo", 1.0), ("menu", 2.0)):
            out.append(cost.Sample("interval-20us", gov, run, "cpuidle_select",
                                   1000 * run, 500_000 * run * scale * kernel_scale, seconds))
            out.append(cost.Sample("interval-20us", gov, run, "tick_nohz_get_sleep_length",
                                   400, 400_000 * scale, seconds))
    return out


class TablesTest(ScratchTest):
    def test_file_round_trip(self) -> None:
        path = self.tmp / cost.FILE
        path.write_text(cost.HEADER + "\n" + "".join(s.row() + "\n" for s in samples(1)))
        self.assertEqual(cost.read_samples(path), samples(1))
        path.write_text(cost.HEADER + "\nx\ty\n")
        with self.assertRaisesRegex(Fatal, "cost.tsv:2: not a line of cost.tsv"):
            cost.read_samples(path)

    def test_medians(self) -> None:
        m = cost.medians(samples(1))
        c = m[("interval-20us", "teo", "cpuidle_select")]
        # calls/s of the runs 500, 500, 1500; ns per call 500 each; us/s
        # 250, 250, 750.
        self.assertEqual((c.runs, c.calls_per_s, c.ns_per_call, c.us_per_s),
                         (3, 500.0, 500.0, 250.0))

    def test_compare(self) -> None:
        tsv, table = cost.compare(samples(1), samples(3))
        self.assertEqual(tsv.splitlines()[0], cost.COMPARE_HEADER)
        self.assertIn("ours\tinterval-20us\tteo\tcpuidle_select\t3\t500.000\t500.000\t250.000",
                      tsv)
        self.assertIn("base\tinterval-20us\tteo\tcpuidle_select\t3\t500.000\t1500.000\t750.000",
                      tsv)
        line = next(x for x in table.splitlines() if x.strip().startswith("cpuidle_select"))
        # teo 500 ns, menu 1000, base teo 1500, base menu 3000.
        self.assertEqual(line.split()[1:], ["ns/call", "500.0", "1000.0", "1500.0", "3000.0",
                                            "0.50x", "0.33x", "0.50x"])
        self.assertIn("only\nratios mean something", table)

    def test_missing_column(self) -> None:
        _, table = cost.compare(samples(1), [])
        line = next(x for x in table.splitlines() if x.strip().startswith("cpuidle_select"))
        self.assertEqual(line.split()[1:], ["ns/call", "500.0", "1000.0", "-", "-",
                                            "0.50x", "-", "-"])

    def test_bench_section(self) -> None:
        text = cost.bench_section(samples(1))
        self.assertIn("  interval-20us        teo       cpuidle_select                    500.0"
                      "     500.0     250.0", text)


if __name__ == "__main__":
    unittest.main()
