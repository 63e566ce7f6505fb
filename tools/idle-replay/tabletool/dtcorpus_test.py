# SPDX-License-Identifier: GPL-2.0
"""Every board to tables: the same with one worker or two, the skipped
boards and their limit, and the names of a board's CPU groups."""

import unittest
from typing import List, Optional

from tabletool.dtcorpus import CpuGroup, cluster_names, dt_tables, extract_dt
from tabletool.dtidle import CpuTable
from tabletool.errors import ExtractError
from tabletool.plat import State
from tabletool.testing import FAKE_TREE, ScratchTest, missing


def cpu(name: str, core: str, cap: Optional[int], exit_us: int,
        shaper: str = "arch/arm64/boot/dts/v/soc.dtsi:40") -> CpuTable:
    states = [State("WFI", 1, 1, origin="psci.c:1"),
              State("sleep", exit_us, 100, origin=f"{shaper[:-3]}:3-4 wakeup-latency-us")]
    return CpuTable(name, core, cap, "cpuidle-psci", states, [], shaper)


def groups(*cpus: CpuTable) -> List[CpuGroup]:
    out: dict[int, CpuGroup] = {}
    for c in cpus:
        out.setdefault(c.states[1].exit_us, CpuGroup(c)).add(c)
    return list(out.values())


class NamesTest(unittest.TestCase):
    def test_by_capacity(self) -> None:
        self.assertEqual(cluster_names(groups(cpu("cpu@0", "a55", 400, 10),
                                              cpu("cpu@100", "a76", 1024, 20))),
                         ["little", "big"])
        self.assertEqual(cluster_names(groups(cpu("cpu@0", "a", 1024, 10),
                                              cpu("cpu@1", "b", 200, 20),
                                              cpu("cpu@2", "c", 600, 30))),
                         ["big", "little", "mid"])

    def test_by_core_then_by_cpu(self) -> None:
        self.assertEqual(cluster_names(groups(cpu("cpu@0", "cortex-a53", None, 10),
                                              cpu("cpu@1", "cortex_a72", None, 20))),
                         ["cortex-a53", "cortex-a72"])
        self.assertEqual(cluster_names(groups(cpu("cpu@0", "a53", 400, 10),
                                              cpu("cpu@1", "a53", 400, 20))),
                         ["cpu0", "cpu1"])
        self.assertEqual(cluster_names(groups(cpu("cpu@0", "a53", 400, 10))), [""])

    def test_tables_of_a_board(self) -> None:
        board = "arch/arm64/boot/dts/v/board.dts"
        tables, rejects = dt_tables([(board, ([cpu("cpu@0", "a55", 400, 10),
                                               cpu("cpu@1", "a55", 400, 10),
                                               cpu("cpu@100", "a76", 1024, 20)],
                                              ["cpu@200: no idle states"]))])
        self.assertEqual(rejects, [board + ": cpu@200: no idle states"])
        little, big = tables
        self.assertEqual((little.pref_name, little.alt_name, little.title),
                         ("dt-soc-little", "dt-board-little", "DT soc little (cpuidle-psci)"))
        self.assertEqual(little.source, "arch/arm64/boot/dts/v/soc.dtsi:3-4 " + board +
                         " cpu@{0,1}")
        self.assertEqual(little.head, [f"board {board}, CPUs cpu@{{0,1}} (a55), cpuidle-psci"])
        self.assertEqual(big.pref_name, "dt-soc-big")


class ExtractTest(ScratchTest):
    def test_workers_and_limit(self) -> None:
        why = missing("cpp", "cpp")
        if why:
            self.skipTest(why)
        said: List[str] = []
        one = extract_dt(str(FAKE_TREE), 10, 1, False, 20, said.append)
        two = extract_dt(str(FAKE_TREE), 10, 2, False, 20, said.append)
        self.assertEqual([(t.pref_name, t.source) for t in one.tables],
                         [(t.pref_name, t.source) for t in two.tables])
        self.assertEqual(one.skipped, [("arch/arm64/boot/dts/acme/acme-broken.dts",
                                        "parse: arch/arm64/boot/dts/acme/acme-broken.dts:7: "
                                        "label or path &no_such_label not found")])
        self.assertEqual((one.boards, one.checks), (7, []))
        self.assertEqual(one.rejects, two.rejects)
        self.assertRegex(said[0], r"^device tree: 7 boards, 7 reference idle states")
        with self.assertRaisesRegex(ExtractError, "^1 of 7 device trees failed to preprocess "
                                    r"or parse \(more than 10%\); first: .*acme-broken.dts"):
            extract_dt(str(FAKE_TREE), 10, 1, False, 10, said.append)

    def test_no_board_uses_states(self) -> None:
        """Nothing to preprocess: cpp is not needed."""
        self.write("arch/arm64/boot/dts/v/plain.dts", "/ { };\n")
        result = extract_dt(str(self.tmp), 10, 2, True, 3, lambda m: None)
        self.assertEqual(result, ([], [], [], [], 0))


if __name__ == "__main__":
    unittest.main()
