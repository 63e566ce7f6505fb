# SPDX-License-Identifier: GPL-2.0
"""What the DT cpuidle drivers register, on short inline boards."""

import unittest
from typing import List, Optional, Tuple

from tabletool.dtidle import (CpuTable, DtDriver, DtDrivers, compress_lines, cpu_driver,
                              cpu_list, dt_board, dt_drivers)
from tabletool.dts import Tree
from tabletool.errors import DtsError
from tabletool.plat import State
from tabletool.preprocess import DtFiles
from tabletool.testing import FAKE_TREE

WFI = State("WFI", 1, 1, origin="drivers/cpuidle/cpuidle-psci.c:11")
PSCI = DtDriver("cpuidle-psci", "arm,idle-state", WFI, True)
QCOM = DtDriver("cpuidle-qcom-spm", "qcom,idle-state-spc", WFI, False)
ARM = DtDriver("cpuidle-arm", "arm,idle-state", WFI, True)
BL = DtDriver("cpuidle-big_little", "arm,idle-state", WFI, True)
DRIVERS = DtDrivers({"psci": PSCI, "qcom-spm": QCOM, "arm": ARM, "big_little": BL},
                    {"acme,smp"}, {"acme,bl-board"})

STATES = """
	idle-states {
		S1: s1 { compatible = "arm,idle-state"; wakeup-latency-us = <30>;
			 entry-latency-us = <1>; exit-latency-us = <1>; min-residency-us = <100>; };
		S2: s2 { compatible = "arm,idle-state"; entry-latency-us = <200>;
			 exit-latency-us = <300>; min-residency-us = <2000>; };
		S3: s3 { compatible = "arm,idle-state"; entry-latency-us = <1>;
			 exit-latency-us = <1>; min-residency-us = <9>; status = "disabled"; };
		Q1: q1 { compatible = "qcom,idle-state-spc"; wakeup-latency-us = <5>;
			 min-residency-us = <50>; };
		NR: nr { compatible = "arm,idle-state"; wakeup-latency-us = <5>; };
		NE: ne { compatible = "arm,idle-state"; exit-latency-us = <5>;
			 min-residency-us = <50>; };
	};
	PD: pd { #power-domain-cells = <0>; domain-idle-states = <&S2>; };
"""


def board(cpus: str, arch: str = "arm64", drivers: DtDrivers = DRIVERS,
          state_max: int = 10) -> "tuple[list[CpuTable], list[str]]":
    """dt_board() of a board with the states above and the CPUs given."""
    text = f'/ {{ compatible = "acme,board";\n{STATES}\n\tcpus {{\n{cpus}\n\t}};\n}};\n'
    name = f"arch/{arch}/boot/dts/acme/b.dts"
    tree = Tree(str(FAKE_TREE), DtFiles(str(FAKE_TREE)), name, text)
    return dt_board(tree, name, drivers, state_max)


def numbers(per_cpu: "list[CpuTable]") -> "list[tuple[str, str, list[tuple[str, int, int]]]]":
    return [(c.cpu, c.driver, [(s.name, s.exit_us, s.res_us) for s in c.states])
            for c in per_cpu]


class BoardTest(unittest.TestCase):
    def test_states_behind_the_drivers_wfi(self) -> None:
        per_cpu, rejects = board('cpu@0 { device_type = "cpu"; enable-method = "psci"; '
                                 'compatible = "arm,cortex-a55"; capacity-dmips-mhz = <512>; '
                                 "cpu-idle-states = <&S1 &S3 &S2>; };")
        self.assertEqual(rejects, [])
        self.assertEqual(numbers(per_cpu), [("cpu@0", "cpuidle-psci",
                                             [("WFI", 1, 1), ("s1", 30, 100), ("s2", 500, 2000)])])
        c = per_cpu[0]
        self.assertEqual((c.core, c.capacity), ("cortex-a55", 512))
        self.assertEqual(c.notes, ['s3 is skipped: status "disabled"'])
        self.assertEqual(c.states[0].origin,
                         "state 0 of cpuidle-psci (drivers/cpuidle/cpuidle-psci.c:11)")
        self.assertTrue(c.states[2].origin.endswith(
            "entry-latency-us 200 + exit-latency-us 300, min-residency-us 2000 "
            "(via cpu-idle-states)"))

    def test_power_domain_wins_index_by_index(self) -> None:
        per_cpu, _ = board('cpu@0 { device_type = "cpu"; power-domains = <&PD>; '
                           "cpu-idle-states = <&S1 &S1>; };")
        self.assertEqual(numbers(per_cpu)[0][2], [("WFI", 1, 1), ("s2", 500, 2000),
                                                  ("s1", 30, 100)])
        self.assertEqual(per_cpu[0].notes, ["the tree gives the CPUs no enable-method (their "
                                            "firmware adds it); taken as psci"])
        self.assertIn("(via domain-idle-states of pd)", per_cpu[0].states[1].origin)

    def test_state_max(self) -> None:
        per_cpu, _ = board('cpu@0 { device_type = "cpu"; cpu-idle-states = <&S1 &S2>; };',
                           state_max=2)
        self.assertEqual(numbers(per_cpu)[0][2], [("WFI", 1, 1), ("s1", 30, 100)])
        self.assertEqual(per_cpu[0].notes[-1], "s2 and later states are dropped: the driver "
                         "keeps 2 states (CPUIDLE_STATE_MAX)")

    def test_cpus_that_get_no_table(self) -> None:
        cases = [
            ('cpu@0 { cpu-idle-states = <&Q1>; };', ["cpu@0: q1 (via cpu-idle-states) is not "
                                                      '"arm,idle-state"']),
            ('cpu@0 { cpu-idle-states = <&NR>; };', ["cpu@0: nr lacks a latency or "
                                                      "min-residency-us"]),
            ('cpu@0 { cpu-idle-states = <&NE>; };', ["cpu@0: ne lacks entry-latency-us or "
                                                      "exit-latency-us"]),
            ('cpu@0 { cpu-idle-states = <&S3>; };', ["cpu@0: no available idle states"]),
            ('cpu@0 { cpu-idle-states = <&S1>; };\n'
             'cpu@1 { enable-method = "spin-table"; cpu-idle-states = <&S1>; };',
             ["cpu@1: enable-method spin-table: cpuidle-psci takes only psci CPUs",
              "cpu@0: cpuidle-psci registers no CPU when one fails"]),
            ('cpu@0 { cpu-idle-states = <&S1>; };\ncpu@1 { };',
             ["cpu@1: no idle states", "cpu@0: cpuidle-psci registers no CPU when one fails"]),
            ('cpu@0 { };', []),
            ('cpu@0 { status = "fail"; cpu-idle-states = <&NR>; };', []),
            ('l2-cache { cpu-idle-states = <&NR>; };', []),
        ]
        for cpus, rejects in cases:
            with self.subTest(cpus=cpus):
                per_cpu, got = board(cpus)
                self.assertEqual(got, rejects)
                self.assertLessEqual(len(per_cpu), 1)

    def test_not_a_number(self) -> None:
        with self.assertRaisesRegex(DtsError, "^capacity-dmips-mhz of cpu@0 is not a number$"):
            board("cpu@0 { cpu-idle-states = <&S1>; capacity-dmips-mhz = <&S1>; };")
        with self.assertRaisesRegex(DtsError, "^#power-domain-cells of pd2 is not a number$"):
            board("pd2: pd2 { #power-domain-cells = <&S1>; };\n"
                  "cpu@0 { power-domains = <&pd2>; };")

    def test_arm_drivers(self) -> None:
        per_cpu, rejects = board('cpu@0 { enable-method = "qcom,kpss-acc-v2"; '
                                 "cpu-idle-states = <&Q1>; };\n"
                                 'cpu@1 { enable-method = "qcom,kpss-acc-v2"; '
                                 "cpu-idle-states = <&S1>; };", arch="arm")
        self.assertEqual(numbers(per_cpu), [("cpu@0", "cpuidle-qcom-spm",
                                             [("WFI", 1, 1), ("q1", 5, 50)])])
        # cpuidle-qcom-spm is not all or nothing: cpu@0 keeps its table.
        self.assertEqual(rejects, ['cpu@1: s1 (via cpu-idle-states) is not '
                                   '"qcom,idle-state-spc"'])
        _, rejects = board('cpu@0 { enable-method = "acme,none"; cpu-idle-states = <&S1>; };',
                           arch="arm")
        self.assertEqual(rejects, ["cpu@0: enable-method acme,none: no DT cpuidle driver "
                                   "takes these CPUs"])
        # Without idle states there is nothing a driver could have taken.
        per_cpu, rejects = board('cpu@0 { enable-method = "acme,none"; };\n'
                                 'cpu@1 { enable-method = "psci"; cpu-idle-states = <&S1>; };',
                                 arch="arm")
        self.assertEqual(([c.cpu for c in per_cpu], rejects), (["cpu@1"], []))


class DriverChoiceTest(unittest.TestCase):
    def test_cpu_driver(self) -> None:
        cases: List[Tuple[str, Optional[str], List[str], Optional[DtDriver]]] = [
            ("arm64", None, [], PSCI), ("arm64", "spin-table", [], PSCI),
            ("arm", "psci", [], PSCI), ("arm", "qcom,gcc-msm8660", [], QCOM),
            ("arm", "acme,smp", [], ARM), ("arm", "acme,other", [], None),
            ("arm", "psci", ["acme,bl-board"], BL), ("riscv", None, [], None)]
        for arch, em, machine, want in cases:
            with self.subTest(arch=arch, method=em, machine=machine):
                self.assertIs(cpu_driver(DRIVERS, arch, em, machine), want)

    def test_fake_tree(self) -> None:
        drivers = dt_drivers(str(FAKE_TREE))
        self.assertEqual(list(drivers.by_key), ["psci"])
        psci = drivers.by_key["psci"]
        self.assertEqual((psci.label, psci.wfi.name, psci.wfi.exit_us, psci.wfi.res_us),
                         ("cpuidle-psci", "WFI", 1, 1))
        self.assertEqual(drivers.bl_machines, set())


class TextTest(unittest.TestCase):
    def test_compress_lines(self) -> None:
        self.assertEqual(compress_lines(["f:3", "f:1", None, "g:7", "f:2"]), "f:1-3 g:7")
        self.assertEqual(compress_lines(["b.dts:?"]), "b.dts:0")
        self.assertEqual(compress_lines([]), "")

    def test_cpu_list(self) -> None:
        self.assertEqual(cpu_list(["cpu@0", "cpu@1", "cpu@100"]), "cpu@{0,1,100}")
        self.assertEqual(cpu_list(["cpu@0"]), "cpu@0")
        self.assertEqual(cpu_list(["cpu@0", "core1"]), "cpu@0,core1")


if __name__ == "__main__":
    unittest.main()
