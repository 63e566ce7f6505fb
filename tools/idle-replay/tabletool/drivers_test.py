# SPDX-License-Identifier: GPL-2.0
"""The readers of the static tables of drivers/cpuidle on short inline
drivers, and on the fake tree."""

import unittest

from tabletool.csource import CFile, MacroSet
from tabletool.drivers import (drv_name, drv_state, drv_states_of_driver, drv_table_states,
                               extract_drivers)
from tabletool.errors import ExtractError
from tabletool.kernel import DRIVER_INIT, poll_state_of
from tabletool.plat import State
from tabletool.testing import FAKE_TREE, ScratchTest

POLL = State("POLL", 0, 0, poll=True, origin="drivers/cpuidle/poll_state.c:4 init")

DRIVER = """\
#define LP_STATE(lat, res, mw) { .exit_latency = lat, .target_residency = res, \\
	.power_usage = mw, .name = "LP" }
enum { ST_A = 1, ST_B };

static struct cpuidle_driver zeta_driver = {
	.name = "zeta",
	.states[ST_A] = LP_STATE(10, 20, UINT_MAX),
	.states[ST_B] = {
		.exit_latency = 30, .target_residency = 60, .power_usage = 2,
		.flags = CPUIDLE_FLAG_UNUSABLE, .name = "Deep",
	},
	.state_count = 3,
};

static struct cpuidle_driver eta_driver = {
	.states = {
		[1] = { .exit_latency = 5, .target_residency = 9, .name = "One" },
		{ .exit_latency = 6, .target_residency = 12, .power_usage = -1, .name = "Two" },
	},
};

static int zeta_init(void)
{
	cpuidle_poll_state_init(&zeta_driver);
	return 0;
}
"""


class DriverTest(unittest.TestCase):
    def setUp(self) -> None:
        self.cf = CFile("/no/such/tree", "drivers/cpuidle/cpuidle-zeta.c", DRIVER)
        self.macros = MacroSet([self.cf])
        self.found = {m.group(1): drv_states_of_driver(self.cf, self.macros, a, b)
                      for m, a, b in self.cf.find_init(DRIVER_INIT)}

    def test_initializers(self) -> None:
        items, count = self.found["zeta_driver"]
        self.assertEqual(sorted(items), [1, 2])
        self.assertEqual(count, 3)
        self.assertEqual(items[1][0], "LP_STATE(10, 20, UINT_MAX)")
        items, count = self.found["eta_driver"]
        self.assertEqual(sorted(items), [1, 2])  # a designator, then the next index
        self.assertIsNone(count)

    def test_states(self) -> None:
        items, count = self.found["zeta_driver"]
        states, names, head = drv_table_states(self.cf, self.macros, "zeta_driver", items,
                                               count, False, POLL)
        self.assertEqual([(s.name, s.exit_us, s.res_us, s.poll, s.off, s.mw) for s in states],
                         [("POLL", 0, 0, True, False, None), ("LP", 10, 20, False, False, None),
                          ("Deep", 30, 60, False, True, 2)])
        self.assertEqual(states[0].origin,
                         "cpuidle_poll_state_init() in drivers/cpuidle/cpuidle-zeta.c:24")
        self.assertEqual(states[1].origin, "drivers/cpuidle/cpuidle-zeta.c:7")
        self.assertEqual(names, {1: "LP", 2: "Deep"})
        self.assertEqual(head, [])

    def test_a_state_without_initializer(self) -> None:
        cf = CFile("/no/such/tree", "drivers/cpuidle/cpuidle-eta.c",
                   DRIVER.replace("cpuidle_poll_state_init", "other_init"))
        items, count = self.found["eta_driver"]
        states, _, head = drv_table_states(cf, MacroSet([cf]), "eta_driver", items, count, False,
                                           POLL)
        self.assertEqual([(s.name, s.mw) for s in states], [("One", None), ("Two", None)])
        self.assertEqual(head, ["state 0 of eta_driver has no initializer"])

    def test_unreadable(self) -> None:
        pos = self.cf.text.index("LP_STATE(10")
        with self.assertRaisesRegex(ExtractError, r"^drivers/cpuidle/cpuidle-zeta.c:7: cannot "
                                    r"read state 1 of zeta_driver \('WHAT_STATE'\)$"):
            drv_state(self.cf, self.macros, "WHAT_STATE", pos, 1, "zeta_driver")
        with self.assertRaisesRegex(ExtractError, r"cpuidle-zeta.c:7: cannot evaluate "
                                    r"exit_latency 'x' \(unknown symbol x\)"):
            drv_state(self.cf, self.macros, "LP_STATE(x, 1, 1)", pos, 1, "zeta_driver")
        self.assertIsNone(drv_state(self.cf, self.macros, "{ }", pos, 1, "zeta_driver"))

    def test_names(self) -> None:
        self.assertEqual(drv_name("acme", "acme_idle_driver", False), "drv-acme")
        self.assertEqual(drv_name("acme", "acme_lp_driver", True), "drv-acme-lp")
        self.assertEqual(drv_name("acme", "acme_lpar_states", True), "drv-acme-lpar")
        self.assertEqual(drv_name("big_little", "bl_idle_cstates", True), "drv-big-little-bl")


class FakeTreeTest(ScratchTest):
    def test_tables(self) -> None:
        src = str(FAKE_TREE)
        tables, skipped = extract_drivers(src, poll_state_of(src))
        got = {t.pref_name: [(s.name, s.exit_us, s.res_us, s.mw) for s in t.states]
               for t in tables}
        self.assertEqual(got, {
            "drv-acme": [("WFI", 1, 1, None), ("Deep-Sleep", 30, 90, None)],
            "drv-acme-lp": [("WFI", 1, 1, 400), ("Retention", 40, 300, 100), ("Off", 900, 2000, 0)],
            "drv-acme-lpar": [("snooze", 0, 0, None), ("nap", 8, 80, None)]})
        self.assertEqual(skipped, [])
        notes = {t.pref_name: t.notes for t in tables}
        self.assertEqual(notes["drv-acme"], ["power_usage 5 mW of Deep-Sleep alone gives no "
                                             "ratio between states: not used"])

    def test_skipped_and_dt_fed_drivers(self) -> None:
        self.write("arch/arm/include/asm/cpuidle.h", "")
        self.write("drivers/cpuidle/cpuidle-powernv.c", "static struct cpuidle_state x[] = {};")
        self.write("drivers/cpuidle/cpuidle-dt.c", """\
static struct cpuidle_driver dt_idle_driver = {
	.states[0] = { .exit_latency = 1, .target_residency = 1, .name = "WFI" },
};
static int dt_probe(void) { return dt_init_idle_driver(&dt_idle_driver, m, 1); }
""")
        tables, skipped = extract_drivers(str(self.tmp), POLL)
        self.assertEqual(tables, [])
        self.assertEqual(skipped, ["drivers/cpuidle/cpuidle-powernv.c: its states come from "
                                   "the firmware's device tree (ibm,cpu-idle-state-*)"])


if __name__ == "__main__":
    unittest.main()
