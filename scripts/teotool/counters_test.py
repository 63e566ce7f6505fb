# SPDX-License-Identifier: GPL-2.0
"""The machine's counters read from a made-up sysfs: idle states summed
over CPUs, their table, RAPL zones and their wrap."""

from pathlib import Path
from typing import Dict

from teotool import counters
from teotool.testing import ScratchTest


def write_tree(root: Path, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


class IdleCountersTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        self.cpu = self.tmp / "cpu"
        files = {"cpufreq/policy0/x": "1", "cpuidle/current_driver": "cpuidle_emu\n"}
        for cpu, base in ((0, 100), (1, 1000)):
            for s, (name, lat, res) in enumerate((("POLL", 0, 0), ("C1", 1, 1),
                                                  ("C2 deep", 120, 360))):
                d = f"cpu{cpu}/cpuidle/state{s}/"
                files.update({d + "name": f"{name}\n", d + "usage": f"{base + s}\n",
                              d + "time": f"{10 * (base + s)}\n", d + "above": "1\n",
                              d + "below": f"{s}\n", d + "latency": f"{lat}\n",
                              d + "residency": f"{res}\n", d + "disable": "0\n",
                              d + "desc": "CPUIDLE CORE POLL IDLE\n" if s == 0 else "ACPI\n"})
        # A third CPU with one state only, and a missing counter.
        files["cpu2/cpuidle/state0/usage"] = "7\n"
        files["cpu1/cpuidle/state2/disable"] = "1\n"
        files["cpu0/cpuidle/state2/disable"] = "1\n"
        write_tree(self.cpu, files)

    def test_snapshot(self) -> None:
        self.assertEqual(counters.snapshot(self.cpu),
                         [(1107, 11000, 2, 0), (1102, 11020, 2, 2), (1104, 11040, 2, 4)])

    def test_delta(self) -> None:
        before = counters.snapshot(self.cpu)
        (self.cpu / "cpu0/cpuidle/state1/usage").write_text("151\n")
        (self.cpu / "cpu0/cpuidle/state3").mkdir()
        (self.cpu / "cpu0/cpuidle/state3/usage").write_text("5\n")
        self.assertEqual(counters.delta(before, counters.snapshot(self.cpu)),
                         [(0, 0, 0, 0), (50, 0, 0, 0), (0, 0, 0, 0), (5, 0, 0, 0)])

    def test_names(self) -> None:
        names = counters.state_names(self.cpu)
        self.assertEqual(names, ["POLL", "C1", "C2_deep"])
        self.assertEqual(counters.shallow_index(names), 1)
        self.assertEqual(counters.shallow_index(["WFI", "cpuoff"]), 0)
        self.assertEqual(counters.shallow_index(["POLL"]), 0)

    def test_platform_table(self) -> None:
        table = counters.platform_table(counters.states(self.cpu), "6.12.1", "cpuidle_emu",
                                        "cpuidle_emu profile=x")
        self.assertEqual(table.splitlines()[1:], [
            "name recorded", "title cpuidle_emu profile=x", "state POLL 0 0 poll",
            "state C1 1 1", "state C2_deep 120 360 off"])

    def test_latency_lines(self) -> None:
        self.assertEqual(counters.latency_lines(self.cpu),
                         ["state0/latency:0", "state1/latency:1", "state2/latency:120",
                          "state0/residency:0", "state1/residency:1", "state2/residency:360"])

    def test_no_cpuidle(self) -> None:
        self.assertEqual(counters.snapshot(self.tmp / "none"), [])
        self.assertEqual(counters.state_names(self.tmp / "none"), [])


class HzTest(ScratchTest):
    def test_hz(self) -> None:
        (self.tmp / "config-6.1.0-1-amd64").write_text("CONFIG_HZ_250=y\nCONFIG_HZ=250\n")
        self.assertEqual(counters.kernel_hz("6.1.0-1-amd64", None, self.tmp), "250")
        self.assertEqual(counters.kernel_hz("6.1.0-1-amd64", "1000", self.tmp), "1000")
        self.assertEqual(counters.kernel_hz("other", None, self.tmp), "unknown")


class EnergyTest(ScratchTest):
    def test_rapl_zones(self) -> None:
        write_tree(self.tmp, {"intel-rapl:0/name": "package-0\n",
                              "intel-rapl:0/energy_uj": "5\n",
                              "intel-rapl:0:0/name": "core\n",
                              "intel-rapl:0:0/energy_uj": "5\n",
                              "intel-rapl:1/name": "package-1\n",
                              "intel-rapl:1/energy_uj": "5\n",
                              "intel-rapl-mmio:0/name": "package-0\n"})
        self.assertEqual([z.name for z in counters.rapl_zones(self.tmp)],
                         ["intel-rapl:0", "intel-rapl:1"])
        energy = counters.Energy(in_vm=False, powercap=self.tmp)
        self.assertEqual(energy.how, "rapl")
        self.assertEqual(energy.why, "package energy from RAPL (intel-rapl:0 intel-rapl:1)")

    def test_wrap(self) -> None:
        """A counter that wrapped counts from its range."""
        self.assertEqual(counters.rapl_joules([100, 2_000_000], [300, 500_000],
                                              [0, 10_000_000]), 8.5002)

    def test_turbostat(self) -> None:
        self.assertEqual(counters.turbostat_joules("Pkg_J\n1.50\n2.25\n\nPkg_J\n1.00\n"), 4.75)

    def test_in_vm(self) -> None:
        energy = counters.Energy(in_vm=True)
        self.assertEqual(energy.how, "none")
        self.assertIn("inside the test VM", energy.why)
        self.assertIsNone(energy.stop())
