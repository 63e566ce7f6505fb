# SPDX-License-Identifier: GPL-2.0
"""The intel_idle.c reader on short inline sources, and on the fake tree."""

import re
import unittest

from tabletool import kernel
from tabletool.csource import CFile
from tabletool.errors import ExtractError
from tabletool.intel import (changes_tables, check_intel_model, extract_intel, intel_model_fixups,
                             intel_table_states, intel_users)
from tabletool.kernel import STATE_ARRAY
from tabletool.plat import State
from tabletool.testing import FAKE_TREE

POLL = State("POLL", 0, 0, poll=True, origin="drivers/cpuidle/poll_state.c:4 init")

TABLES = """\
static struct cpuidle_state gold_cstates[] __initdata = {
	{ .name = "C1", .exit_latency = 1, .target_residency = 1, .enter = &intel_idle, },
	{ .name = "C1E", .flags = CPUIDLE_FLAG_UNUSABLE, .exit_latency = 2,
	  .target_residency = 4, .enter = &intel_idle, },
	{ .name = "C6", .flags = MWAIT2flg(0x20) | CPUIDLE_FLAG_OFF, .exit_latency = 0x50,
	  .target_residency = 200 * 2, .enter_s2idle = intel_idle_s2idle, },
	{ .name = "C8", .exit_latency = 900, .target_residency = 1800, .enter = &intel_idle, },
	{ .enter = NULL },
	{ .name = "C10", .exit_latency = 1, .target_residency = 1, .enter = &intel_idle, },
};

static struct cpuidle_state lean_cstates[] = {
	{ .name = "C1", .exit_latency = 1, .enter = &intel_idle, },
	{ .enter = NULL }
};

static const struct idle_cpu idle_cpu_gold __initconst = {
	.state_table = gold_cstates,
	.use_acpi = true,
};

static const struct x86_cpu_id intel_idle_ids[] __initconst = {
	X86_MATCH_VFM(INTEL_GOLD,	&idle_cpu_gold),
	X86_MATCH_INTEL_FAM6_MODEL(GOLD_X,	&idle_cpu_gold),
	{}
};

static void __init lean_table_update(void)
{
	cpuidle_state_table = lean_cstates;
}

static void __init gold_fixup(void)
{
	gold_cstates[2].flags |= CPUIDLE_FLAG_UNUSABLE;
}

static void __init intel_idle_init_cstates_icpu(struct cpuidle_driver *drv)
{
	switch (boot_cpu_data.x86_vfm) {
	case INTEL_LEAN:
	case INTEL_LEAN_X:
		lean_table_update();
		break;
	case INTEL_GOLD:
		gold_fixup();
		pr_debug("gold\\n");
		break;
	}
}
"""


def tables(cf: CFile) -> "dict[str, tuple[int, int]]":
    return {m.group(1): (a, b) for m, a, b in cf.find_init(STATE_ARRAY)}


class TableTest(unittest.TestCase):
    def setUp(self) -> None:
        self.cf = CFile("/no/such/tree", "drivers/idle/intel_idle.c", TABLES)

    def test_what_the_driver_registers(self) -> None:
        a, b = tables(self.cf)["gold_cstates"]
        states, names, head, notes = intel_table_states(self.cf, "gold_cstates", a, b, POLL, 9)
        self.assertEqual([(s.name, s.exit_us, s.res_us, s.poll, s.off) for s in states],
                         [("POLL", 0, 0, True, False), ("C1", 1, 1, False, False),
                          ("C6", 80, 400, False, True), ("C8", 900, 1800, False, False)])
        self.assertEqual(states[0].origin,
                         "added by cpuidle_poll_state_init() (drivers/cpuidle/poll_state.c:4)")
        self.assertEqual(states[2].origin, "drivers/idle/intel_idle.c:5")
        self.assertEqual(names, ["C1", "C1E", "C6", "C8"])
        self.assertEqual(head, ["C1E (drivers/idle/intel_idle.c:3) is flagged "
                                "CPUIDLE_FLAG_UNUSABLE: not registered"])
        self.assertEqual(notes, [])

    def test_max_cstate(self) -> None:
        a, b = tables(self.cf)["gold_cstates"]
        states, _, _, notes = intel_table_states(self.cf, "gold_cstates", a, b, POLL, 2)
        self.assertEqual([s.name for s in states], ["POLL", "C1"])
        self.assertEqual(notes, ["gold_cstates has entries beyond index 1; intel_idle stops "
                                 "there (max_cstate), C6 and later are not registered"])

    def test_an_entry_without_numbers(self) -> None:
        a, b = tables(self.cf)["lean_cstates"]
        with self.assertRaisesRegex(ExtractError, "^drivers/idle/intel_idle.c:13: lean_cstates "
                                    "entry C1 lacks .exit_latency or .target_residency$"):
            intel_table_states(self.cf, "lean_cstates", a, b, POLL, 9)

    def test_models_and_fixups(self) -> None:
        fixups = intel_model_fixups(self.cf)
        self.assertEqual(fixups, {"INTEL_LEAN": ["lean_table_update"],
                                  "INTEL_LEAN_X": ["lean_table_update"],
                                  "INTEL_GOLD": ["gold_fixup", "pr_debug"]})
        self.assertEqual(intel_users(self.cf, fixups),
                         {"gold_cstates": (["INTEL_GOLD", "GOLD_X"], ["INTEL_GOLD", "GOLD_X"],
                                           None),
                          "lean_cstates": (["INTEL_LEAN", "INTEL_LEAN_X"], [],
                                           "lean_table_update")})
        self.assertTrue(changes_tables(self.cf, "gold_fixup"))
        self.assertFalse(changes_tables(self.cf, "lean_table_update"))
        self.assertFalse(changes_tables(self.cf, "pr_debug"))

    def test_the_registration_model(self) -> None:
        """A tree whose driver registers differently stops the extraction."""
        with self.assertRaisesRegex(ExtractError, "cannot confirm that "
                                    "intel_idle_cpuidle_driver_init.. is defined"):
            check_intel_model(self.cf)
        good = CFile(str(FAKE_TREE), kernel.INTEL)
        check_intel_model(good)
        for old, fact in (("CPUIDLE_STATE_MAX - 1", "max_cstate defaults to"),
                          ("cstate + 1 > max_cstate", "intel_idle stops at entry max_cstate"),
                          ("continue;", "states flagged CPUIDLE_FLAG_UNUSABLE are skipped"),
                          ("!cpuidle_state_table[cstate].enter_s2idle", "a table ends at")):
            with self.subTest(fact=fact):
                cf = CFile("/no/such/tree", kernel.INTEL, good.text.replace(old, "x"))
                with self.assertRaisesRegex(ExtractError, re.escape(fact)):
                    check_intel_model(cf)


class FakeTreeTest(unittest.TestCase):
    def test_tables(self) -> None:
        src = str(FAKE_TREE)
        got = {t.pref_name: t for t in extract_intel(src, 10, kernel.poll_state_of(src))}
        self.assertEqual(sorted(got), ["intel-alpha", "intel-alpha2", "intel-brk", "intel-many"])
        alpha = got["intel-alpha"]
        self.assertEqual(alpha.title, "Intel alpha: INTEL_ALPHA INTEL_ALPHA_X")
        self.assertEqual(alpha.head[0], "CPU models: INTEL_ALPHA INTEL_ALPHA_X")
        self.assertIn("at run time alpha_idle_state_table_update() "
                      "(drivers/idle/intel_idle.c:113) may set C6 .exit_latency = 90", alpha.head)
        self.assertIn("on INTEL_ALPHA_X, alpha_idle_state_table_update() may change this table "
                      "first (it reads the hardware)", alpha.head)
        self.assertEqual(got["intel-alpha2"].title, "Intel alpha2: no CPU model uses it")
        self.assertEqual(len(got["intel-many"].states), 10)


if __name__ == "__main__":
    unittest.main()
