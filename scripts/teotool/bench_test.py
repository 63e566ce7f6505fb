# SPDX-License-Identifier: GPL-2.0
"""scripts/teo bench: every bad option is one line and changes nothing
(no cache, no lock, no governor switched); good ones pass --check-args."""

import unittest
from typing import List, Tuple

from teotool import bench, benchreport
from teotool.testing import TEO, ScratchTest

# (pattern of the one line, arguments); all exit 2
BAD: List[Tuple[str, List[str]]] = [
    ("--runs: '0' is not a positive whole number", ["-n", "0"]),
    ("--runs: '00' is not a positive whole number", ["--runs", "00"]),
    ("--fio-runtime: '1234567' is too large", ["--fio-runtime", "1234567"]),
    ("--idle-runtime: '1.5' is not a positive whole number", ["--idle-runtime", "1.5"]),
    ("unknown workload 'x'; known: fio timer-io", ["-w", "fio,x"]),
    ("--workloads: empty list", ["-w", ""]),
    ("--governors: empty list", ["-g", ""]),
    ("'ceiling' is the name of the --ceiling-states runs", ["-g", "teo,ceiling"]),
    ("--governors: 'Teo!' is not a governor name", ["-g", "Teo!"]),
    ("--governors: 'teo-norec' is not a governor name", ["-g", "teo-norec"]),
    (r"--ceiling-states '1/2/3': want \[poll,\]LAT/RES", ["--ceiling-states", "1/2/3"]),
    ("--hackbench-args: 'a;b' has characters", ["--hackbench-args", "a;b"]),
    ("--fio-dev: 'sda' is not under /dev", ["--fio-dev", "sda"]),
    ("--cost and --record both use the kernel's tracing", ["--cost", "--record"]),
    ("--ring-work-us: 'x' is not a non-negative whole number", ["--ring-work-us", "10,x"]),
    ("--ring-work-us: '10,,100' is not a comma-separated list", ["--ring-work-us", "10,,100"]),
    ("--ring-work-us: '10,10' names a value twice", ["--ring-work-us", "10,10"]),
    ("--interval-us: '0' is not a positive whole number", ["--interval-us", "0"]),
    ("--interval-qos: 'foo' is neither 'none' nor a number", ["--interval-qos", "none,foo"]),
    ("--interval-qos: '0' is given twice", ["--interval-qos", "0,0"]),
    ("--ring-threads: a ring needs 2 threads or more", ["--ring-threads", "1"]),
    ("--ring-runtime: '0' is not a positive", ["-w", "ring", "--ring-runtime", "0"]),
    ("--lab-platform, --lab-govs and --hz go with --report DIR", ["--hz", "250"]),
    ("unknown argument '--bogus'", ["--bogus"]),
    ("unknown argument 'fio'", ["fio"]),
]


class BadInputTest(ScratchTest):
    def test_bad_options(self) -> None:
        for pattern, args in BAD:
            with self.subTest(args=args):
                self.assertBadInput(2, pattern, [TEO, "bench", *args])

    def test_out_not_writable(self) -> None:
        (self.tmp / "file").write_text("")
        self.assertBadInput(1, f"--out {self.tmp}/file/out cannot be created: {self.tmp}/file"
                            " is not a folder", [TEO, "bench", "--out", self.tmp / "file" / "out"])


class CheckArgsTest(ScratchTest):
    def test_good(self) -> None:
        for args in (["-w", "ring,interval", "--ring-work-us", "0,10", "--interval-qos", "none"],
                     ["--hackbench-args", "-g 4 -l 500", "-g", "teo,menu,ladder"],
                     ["--hackbench-args=-l 10", "--cost", "-w", "interval", "-n", "5"]):
            with self.subTest(args=args):
                run = self.run_cmd([TEO, "bench", "--check-args", *args])
                self.assertEqual((run.returncode, run.stdout, run.stderr), (0, "", ""))
                self.assertFalse((self.tmp / "cache").exists())

    def test_cases_of_the_options(self) -> None:
        o = bench.check_args(["-w", "ring,interval", "--ring-work-us", "10",
                              "--interval-us", "5,50", "--interval-qos", "0"])
        self.assertEqual([c.name for c in o.cases],
                         ["ring-10us", "interval-5us-qos0", "interval-50us-qos0"])
        self.assertEqual(o.governors, ["teo", "menu"])

    def test_join_values(self) -> None:
        self.assertEqual(bench.join_values(["--hackbench-args", "-g 4", "-n", "3", "--cost",
                                            "--", "-g", "x"]),
                         ["--hackbench-args=-g 4", "-n=3", "--cost", "--", "-g", "x"])


class RunLineTest(unittest.TestCase):
    def test_line(self) -> None:
        r = benchreport.Run("fio", "teo", "2", "649.3", "IOPS (higher is better)",
                            [("p50", "1368.1")], [(10, 1999, 1, 0), (30, 5000000, 0, 3)])
        self.assertEqual(bench.run_line(r, ["C1", "C2"]),
                         "fio        teo     run 2: 649.3 IOPS (p50=1368.1); C1 10/1ms/1/0"
                         " C2 30/5000ms/0/3; miss 0.100")


if __name__ == "__main__":
    unittest.main()
