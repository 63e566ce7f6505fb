# SPDX-License-Identifier: GPL-2.0
"""scripts/teo run: bad options are one line before anything is built,
the sessions each case lays out, and the lab tables of --record."""

import argparse
import unittest
from pathlib import Path
from typing import List

from teotool import cli, vmbench
from teotool.testing import TEO, ScratchTest


def parse(argv: List[str]) -> argparse.Namespace:
    return cli.build_parser().parse_args(["run", *argv])


class BadInputTest(ScratchTest):
    def test_bad_options(self) -> None:
        for pattern, args in (
                ("--cases cost runs this repository's kernel and the base tree's itself",
                 ["--cases", "cost", "--as-is"]),
                ("--cases: unknown case 'nosuch'; known: main idle-trap ring interval cost",
                 ["--cases", "ring,nosuch"]),
                ("--cases: empty list", ["--cases", ","]),
                ("--ring-work-us: 'x' is not a non-negative whole number",
                 ["--cases", "ring", "--", "--ring-work-us", "x"]),
                ("--cost and --record both use the kernel's tracing",
                 ["--", "--cost", "--record"]),
                ("--report, --lab-platform, --lab-govs and --hz are not for the guest",
                 ["--", "--report", "/tmp"]),
                ("unknown argument 'foo'", ["foo"])):
            with self.subTest(args=args):
                self.assertBadInput(2, pattern, [TEO, "run", *args])


class PlanTest(unittest.TestCase):
    def test_default(self) -> None:
        p = vmbench.plan(parse([]))
        self.assertEqual([s.name for s in p.sessions], ["main", "idle-trap"])
        main, idle = p.sessions
        self.assertEqual(main.folder, Path("."))
        self.assertEqual(main.vm, ["--hz", "250", "--profile", "i5-10600K"])
        self.assertEqual(main.bench, ["--governors", "teo,menu", "--runs", "3",
                                      "--fio-runtime", "20", "--idle-runtime", "60",
                                      "--no-report", "--ceiling-states", "1/1"])
        self.assertEqual(idle.vm, ["--hz", "250", "--profile", "mt8196"])
        self.assertEqual(idle.bench[-2:], ["--workloads", "idle"])
        self.assertEqual(p.kernels, [["--hz", "250", "--profile", "i5-10600K"]])
        self.assertFalse(p.programs)

    def test_ring(self) -> None:
        p = vmbench.plan(parse(["--cases", "ring", "--hz", "1000", "--", "--ring-runtime", "2"]))
        big, plat = p.sessions
        self.assertEqual(big.vm, ["--hz", "1000", "--states", vmbench.MT8195_BIG])
        self.assertEqual(big.folder, Path("ring-mt8195-big"))
        self.assertEqual(plat.vm, ["--hz", "1000", "--profile", "i5-10600K"])
        self.assertEqual(plat.folder, Path("ring-i5-10600k"))
        self.assertEqual(big.bench[-4:], ["--workloads", "ring", "--ring-runtime", "2"])
        self.assertTrue(p.programs)

    def test_cost(self) -> None:
        p = vmbench.plan(parse(["--cases", "cost", "--record", "--states", "poll,1/1,50/150"]))
        ours, base = p.sessions
        self.assertEqual(p.cost, [ours, base])
        self.assertNotIn("--as-is", ours.vm)
        self.assertIn("--as-is", base.vm)
        self.assertIn("--cost", ours.bench)
        self.assertNotIn("--record", ours.bench, "the profiler and trace-cmd share tracing")
        self.assertEqual(len(p.kernels), 2)

    def test_record_tables(self) -> None:
        p = vmbench.plan(parse(["--record", "--cases", "main,idle-trap,interval",
                                "--profile", "rk3399"]))
        self.assertEqual([Path(s.table).name for s in p.sessions],
                         ["rk3399.plat", "mt8196.plat", "rk3399.plat"])
        self.assertEqual(p.sessions[0].lab_govs, {})

    def test_as_is_lab_govs(self) -> None:
        p = vmbench.plan(parse(["--as-is", "--cases", "interval"]))
        self.assertEqual(p.sessions[0].lab_govs, {"teo": "teo-base"})
        self.assertIn("--as-is", p.sessions[0].vm)


class TablesTest(ScratchTest):
    def test_states_plat(self) -> None:
        self.assertEqual(vmbench.states_plat("poll,1/1,185/740").splitlines(), [
            "name states", "title cpuidle-emu states=poll,1/1,185/740",
            "state POLL 0 0 poll", "state S1 1 1", "state S2 185 740"])
        self.assertEqual(vmbench.states_plat(vmbench.MT8195_BIG, "mt8195-big").splitlines(),
                         ["name mt8195-big", f"title cpuidle-emu states={vmbench.MT8195_BIG}",
                          "state S0 1 1", "state S1 185 740", "state S2 250 1000"])

    def test_poll_added(self) -> None:
        """cpuidle-emu gives Intel client profiles a POLL state that some lab
        tables leave out; Arm profiles have none."""
        src = self.tmp / "emu.c"
        src.write_text('\t{ "alder-lake", true, emu_adl },\n\t{ "rk3399", false, emu_rk },\n')
        self.assertTrue(vmbench.adds_poll("Alder-Lake", src))
        self.assertFalse(vmbench.adds_poll("rk3399", src))
        table = self.tmp / "alder-lake.plat"
        table.write_text("name alder-lake\nstate C1 1 1\nstate C6 220 600\n")
        copy = vmbench.table_with_poll(str(table), "alder-lake", self.tmp)
        self.assertEqual(Path(copy).read_text(),
                         "name alder-lake\nstate POLL 0 0 poll\nstate C1 1 1\nstate C6 220 600\n")
        rk = self.tmp / "rk3399.plat"
        rk.write_text("state WFI 1 1\n")
        self.assertEqual(vmbench.table_with_poll(str(rk), "rk3399", self.tmp), str(rk))

    def test_profile_table(self) -> None:
        self.assertTrue(vmbench.lab_table_of_profile("i5-10600K").endswith("i5-10600k.plat"))


if __name__ == "__main__":
    unittest.main()
