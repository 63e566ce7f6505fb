# SPDX-License-Identifier: GPL-2.0
"""The workloads' output read into metrics, and the workload programs of
tools/teo-bench: built into a scratch cache, their argument errors, the
JSON they print."""

import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path
from typing import Any, Dict, List

from teotool import paths, workloads
from teotool.testing import ScratchTest
from teotool.ui import Fatal

FIO = {"jobs": [{"error": 0, "read": {"iops": 649.34999, "clat_ns": {"percentile": {
    "50.000000": 1368064, "99.000000": 4014079.9}}}}]}


class ParseTest(unittest.TestCase):
    def test_fio(self) -> None:
        """IOPS and us with one decimal, rounded as the bash benchmark's jq
        did."""
        r = workloads.parse_fio("fio-3.33 note\n" + json.dumps(FIO), "/dev/vda")
        self.assertEqual((r.metric, r.extras), ("649.3", [("p50", "1368.1"), ("p99", "4014.1")]))
        whole: Dict[str, Any] = json.loads(json.dumps(FIO))
        whole["jobs"][0]["read"]["iops"] = 700.04
        self.assertEqual(workloads.parse_fio(json.dumps(whole), "x").metric, "700")

    def test_fio_error(self) -> None:
        bad: Dict[str, Any] = json.loads(json.dumps(FIO))
        bad["jobs"][0]["error"] = 5
        for text in (json.dumps(bad), "{}", '{"jobs": []}'):
            with self.subTest(text=text):
                with self.assertRaisesRegex(Fatal, "fio on /dev/x: no result or an error"):
                    workloads.parse_fio(text, "/dev/x")
        with self.assertRaisesRegex(Fatal, "not JSON"):
            workloads.parse_fio("{ nope", "/dev/x")

    def test_hackbench(self) -> None:
        text = "Running in process mode with 4 groups\nTime: 1.234\nTime: 1.5\n"
        self.assertEqual(workloads.parse_hackbench(text), "1.5")
        with self.assertRaisesRegex(Fatal, "no 'Time:' line"):
            workloads.parse_hackbench("Running\n")

    def test_cyclictest(self) -> None:
        doc = {"thread": {"0": {"cycles": 100, "avg": 10.0, "max": 99,
                                "histogram": {"5": 50, "9": 49, "30": 1}},
                          "1": {"cycles": 102, "avg": 20.0, "max": 300,
                                "histogram": {"5": 100}}}}
        r = workloads.parse_cyclictest(json.dumps(doc))
        # avg (10 * 100 + 20 * 102) / 202 = 15.05; p99 needs 199.98 of the
        # 202 samples (bucket 30), p99.9 201.8 (beyond the histogram).
        self.assertEqual(r.metric, "15")
        self.assertEqual(r.extras, [("p99", "30"), ("p99.9", ">10000"), ("max", "300")])
        doc["thread"]["1"]["cycles"] = 100  # type: ignore[index]
        r = workloads.parse_cyclictest(json.dumps(doc))
        self.assertEqual(r.extras[0], ("p99", "9"))
        with self.assertRaisesRegex(Fatal, "no latency in cyclictest's JSON output"):
            workloads.parse_cyclictest('{"thread": {}}')

    def test_idle(self) -> None:
        r = workloads.idle_metric([(0, 0, 0, 0), (120, 25, 0, 0), (3, 975, 0, 0)], 1, 60)
        self.assertEqual((r.metric, r.extras), ("2.50", [("entries/s", "2.0")]))

    def test_ring(self) -> None:
        r = workloads.parse_ring('{"program": "teo-ring", "laps_per_s": 1388.809,'
                                 ' "us_per_hop": 360.021}')
        self.assertEqual((r.metric, r.extras), ("1388.8", [("us/hop", "360.0")]))
        with self.assertRaisesRegex(Fatal, "teo-ring: no laps_per_s"):
            workloads.parse_ring('{"laps": 3}')

    def test_interval(self) -> None:
        doc = {"wakeups_per_s": 2131.295, "lat_avg_us": 197.431, "lat_max_us": 283.5,
               "lat_hist_us": {"3": 98, "40": 1, "90": 1}, "lat_overflow": 0}
        r = workloads.parse_interval(json.dumps(doc))
        self.assertEqual((r.metric, r.extras),
                         ("2131.3", [("avg", "197.4"), ("p99", "40"), ("max", "283.5")]))
        doc["lat_overflow"] = 5
        self.assertEqual(workloads.parse_interval(json.dumps(doc)).extras[1], ("p99", ">10000"))
        with self.assertRaisesRegex(Fatal, "teo-interval: no wakeups_per_s"):
            workloads.parse_interval('{"wakeups": 3}')

    def test_cases(self) -> None:
        s = workloads.Settings(ring_work_us=(10, 100), interval_us=(20,), interval_qos=(None, 0))
        names = [c.name for c in workloads.cases(["fio", "ring", "interval", "idle"], s)]
        self.assertEqual(names, ["fio", "ring-10us", "ring-100us", "interval-20us",
                                 "interval-20us-qos0", "idle"])
        c = workloads.cases(["interval"], s)[1]
        self.assertEqual((c.family, c.param, c.qos), ("interval", 20, 0))
        self.assertEqual(workloads.unit(c, "C1"), "wakeups/s (higher is better)")
        self.assertEqual([workloads.qos_of(x.name) for x in workloads.cases(["interval"], s)],
                         [None, 0])
        self.assertIsNone(workloads.qos_of("ring-10us"))
        self.assertEqual(workloads.unit(workloads.Case("idle", "idle"), "WFI"),
                         "% of idle time in WFI (lower is better)")


class ProgramsTest(ScratchTest):
    """teo-ring and teo-interval, built once into a scratch cache."""

    folder: Path

    @classmethod
    def setUpClass(cls) -> None:
        if not shutil.which("gcc") or not shutil.which("make"):
            raise unittest.SkipTest("no gcc or make (build-essential) to build tools/teo-bench")
        cls.cache = Path(os.environ.get("TMPDIR", "/tmp")) / f"teo-bench-test.{os.getpid()}"
        cls.folder = workloads.build_programs(cache=cls.cache)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.cache, ignore_errors=True)

    def program(self, name: str, *args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([str(self.folder / name), *args], capture_output=True,
                              text=True, timeout=60, check=False)

    def test_cached(self) -> None:
        """Built once per version of the sources, in a folder named by them."""
        self.assertEqual(self.folder.name, workloads.programs_key())
        self.assertEqual(workloads.build_programs(cache=self.cache), self.folder)

    def test_argument_errors(self) -> None:
        cases: List[List[str]] = [
            ["teo-ring", "--threads", "1", "error: --threads: 1 is outside 2..256"],
            ["teo-ring", "--threads", "x", "error: --threads: 'x' is not a whole number"],
            ["teo-ring", "--threads", "999", "error: --threads: 999 is outside 2..256"],
            ["teo-ring", "--work-us", "-5", "error: --work-us: '-5' is not a whole number"],
            ["teo-ring", "--runtime", "0", "error: --runtime: 0 s is not above 0"],
            ["teo-ring", "--runtime", "1e9", "error: --runtime: 1e9 s is not above 0 and at most 3600"],
            ["teo-ring", "--runtime", "error: --runtime needs a value"],
            ["teo-ring", "--bogus", "error: unknown option '--bogus'"],
            ["teo-interval", "--interval-us", "0", "error: --interval-us: 0 is outside 1..1000000"],
            ["teo-interval", "--pm-qos", "0x10", "error: --pm-qos: '0x10' is not a whole number"],
            ["teo-interval", "--runtime", "abc", "error: --runtime: 'abc' is not a number of seconds"],
            ["teo-interval", "5", "error: unknown option '5'"],
        ]
        for *argv, want in cases:
            with self.subTest(argv=argv):
                run = self.program(*argv)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertEqual(run.stdout, "")
                self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
                self.assertIn(f"{argv[0]}: {want}", run.stderr)

    def test_too_many_threads(self) -> None:
        cpus = len(os.sched_getaffinity(0))
        if cpus >= 256:
            self.skipTest("this machine has 256 CPUs")
        run = self.program("teo-ring", "--threads", str(cpus + 1))
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"this process may use {cpus}", run.stderr)

    def test_help(self) -> None:
        for name in workloads.PROGRAMS:
            run = self.program(name, "--help")
            self.assertEqual(run.returncode, 0)
            self.assertTrue(run.stdout.startswith(f"usage: {name}"))

    def test_ring(self) -> None:
        """A short ring: its JSON is what the benchmark reads."""
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: no ring")
        run = self.program("teo-ring", "--threads", "2", "--work-us", "0", "--runtime", "0.2")
        self.assertEqual(run.returncode, 0, run.stderr)
        doc = json.loads(run.stdout)
        self.assertEqual(doc["threads"], 2)
        self.assertEqual(doc["hops"], 2 * doc["laps"])
        workloads.parse_ring(run.stdout)

    def test_interval(self) -> None:
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: no waker and sleeper")
        run = self.program("teo-interval", "--interval-us", "50", "--runtime", "0.2")
        self.assertEqual(run.returncode, 0, run.stderr)
        doc = json.loads(run.stdout)
        self.assertIsNone(doc["pm_qos_us"])
        self.assertEqual(sum(doc["lat_hist_us"].values()) + doc["lat_overflow"], doc["wakeups"])
        workloads.parse_interval(run.stdout)

    def test_interval_pm_qos(self) -> None:
        """--pm-qos needs /dev/cpu_dma_latency: one line if it cannot open it."""
        if os.access("/dev/cpu_dma_latency", os.W_OK):
            run = self.program("teo-interval", "--pm-qos", "0", "--runtime", "0.1")
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(json.loads(run.stdout)["pm_qos_us"], 0)
        else:
            run = self.program("teo-interval", "--pm-qos", "0", "--runtime", "0.1")
            self.assertEqual(run.returncode, 1)
            self.assertIn("cannot set a PM QoS limit: /dev/cpu_dma_latency", run.stderr)

    def test_build_error(self) -> None:
        """A source that does not compile: one line, and no folder left."""
        src = self.tmp / "src"
        shutil.copytree(paths.TEO_BENCH, src)
        (src / "ring.c").write_text("this is not C\n")
        with self.assertRaisesRegex(Fatal, "the workload programs of .* did not build"):
            workloads.build_programs(src, self.tmp / "cache")
        self.assertEqual(list((self.tmp / "cache").iterdir()), [])


if __name__ == "__main__":
    unittest.main()
