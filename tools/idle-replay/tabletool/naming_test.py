# SPDX-License-Identifier: GPL-2.0
"""Dedup by contents and the names of the distinct tables."""

import unittest

from tabletool.naming import PLAT_NAME_MAX, fit_name, group_tables
from tabletool.plat import State, Table


def table(kind: str, name: str, source: str, *numbers: int, alt: str = "") -> Table:
    """A table of one state per number (exit latency = target residency)."""
    return Table(kind, name, name, source, [State(f"S{n}", n, n) for n in numbers],
                 alt_name=alt or None)


class FitNameTest(unittest.TestCase):
    def test_characters(self) -> None:
        self.assertEqual(fit_name("dt-sun50i h6/a+b_c.d"), "dt-sun50i-h6-a+b_c.d")

    def test_long_names_are_cut_apart(self) -> None:
        a = fit_name("dt-" + "x" * 40 + "-little")
        b = fit_name("dt-" + "x" * 40 + "-big")
        self.assertEqual(len(a), PLAT_NAME_MAX)
        self.assertEqual(len(b), PLAT_NAME_MAX)
        self.assertNotEqual(a, b)
        self.assertEqual(a[:26], b[:26])
        self.assertEqual(fit_name(a), a)


class GroupTest(unittest.TestCase):
    def test_same_numbers_one_table_named_by_the_first_kind(self) -> None:
        named = group_tables([table("dt", "dt-soc", "soc.dtsi:1 a.dts", 1, 5),
                              table("intel", "intel-skx", "intel_idle.c:9 skx", 1, 5),
                              table("drv", "drv-acme", "cpuidle-acme.c:3 acme", 1, 5)])
        self.assertEqual([(n, [t.pref_name for t in g]) for n, g in named],
                         [("intel-skx", ["intel-skx", "drv-acme", "dt-soc"])])

    def test_the_name_most_sources_share(self) -> None:
        named = group_tables([table("dt", "dt-board", "b.dts", 1, 5),
                              table("dt", "dt-soc", "soc.dtsi x.dts", 1, 5),
                              table("dt", "dt-soc", "soc.dtsi y.dts", 1, 5)])
        self.assertEqual(named[0][0], "dt-soc")
        self.assertEqual([t.source for t in named[0][1]], ["soc.dtsi x.dts", "soc.dtsi y.dts",
                                                            "b.dts"])

    def test_name_clash(self) -> None:
        """The table with more sources keeps the name; the other takes its
        alternative name, or a number."""
        named = dict(group_tables([table("dt", "dt-soc", "soc.dtsi a.dts", 1, 5, alt="dt-a"),
                                   table("dt", "dt-soc", "soc.dtsi b.dts", 1, 9, alt="dt-b"),
                                   table("dt", "dt-soc", "soc.dtsi c.dts", 1, 9, alt="dt-c"),
                                   table("drv", "drv-x", "x.c:1 x", 2),
                                   table("drv", "drv-x", "x.c:7 y", 3)]))
        self.assertEqual(sorted(named), ["drv-x", "drv-x-2", "dt-a", "dt-soc"])
        self.assertEqual(len(named["dt-soc"]), 2)
        self.assertEqual(named["dt-a"][0].source, "soc.dtsi a.dts")
        self.assertEqual(named["drv-x"][0].source, "x.c:1 x")


if __name__ == "__main__":
    unittest.main()
