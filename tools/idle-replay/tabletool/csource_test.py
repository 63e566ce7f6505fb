# SPDX-License-Identifier: GPL-2.0
"""The C reader on short inline sources: constant expressions as C
evaluates them, comments blanked without moving anything, macros, enums,
initializer fields."""

import unittest

from tabletool.csource import (CFile, MacroSet, c_fields, c_flag, c_string, eval_c_int,
                               match_brace, runtime_updates, split_top, strip_c_comments)
from tabletool.errors import ExtractError

SOURCE = """\
/* A driver: two macros, an enum, a table. */
#define DEEP_EXIT	(2 * BASE)
#define BASE		0x10 // hex
#define WFI_STATE(p) { .exit_latency = 1, .power_usage = p, \\
	.name = "WFI" }
enum { S_WFI, S_RET = 4, S_DEEP, S_BAD = unknown_thing, S_AFTER };

static struct cpuidle_state acme_states[] = {
	WFI_STATE(7),
	{ .name = "a, b } c", .exit_latency = DEEP_EXIT, /* , } */
	  .flags = CPUIDLE_FLAG_OFF | CPUIDLE_FLAG_TIMER_STOP },
};

static void acme_fixup(void)
{
	acme_states[1].exit_latency = read_fw();
	other[0].flags |= CPUIDLE_FLAG_OFF;
}
"""


class EvalTest(unittest.TestCase):
    def test_c_arithmetic(self) -> None:
        cases = {"42": 42, "0x2A": 42, "052": 42, "0": 0, "10UL": 10, "0x10u": 16,
                 "'A'": 65, "'\\n'": 110, "1 << 4 | 1": 17, "~0 & 0xff": 255,
                 "-7 / 2": -3, "7 / -2": -3, "-7 % 3": 2, "(3 + 4) * 2": 14, "100 ^ 1": 101}
        for expr, want in cases.items():
            with self.subTest(expr=expr):
                self.assertEqual(eval_c_int(expr), want)

    def test_symbols(self) -> None:
        symbols = {"A": "B + 1", "B": "0x10", "LOOP": "LOOP"}
        self.assertEqual(eval_c_int("A * 2", symbols), 34)
        with self.assertRaisesRegex(ValueError, "macro nesting too deep"):
            eval_c_int("LOOP", symbols)

    def test_not_constant(self) -> None:
        cases = {"FOO + 1": "unknown symbol FOO", "1 / 0": "division by zero",
                 "5 % 0": "division by zero", "f(1)": "unknown symbol f",
                 "1 +": "not a constant expression", "2 ** 3": "not a constant expression",
                 "1.5": "not a constant expression"}
        for expr, why in cases.items():
            with self.subTest(expr=expr), self.assertRaisesRegex(ValueError, why):
                eval_c_int(expr)


class TextTest(unittest.TestCase):
    def test_comments_blanked_in_place(self) -> None:
        text = 'a /* x\ny */ b // c "d"\n"/* kept */" \'/\' e'
        clean = strip_c_comments(text)
        self.assertEqual(len(clean), len(text))
        self.assertEqual(clean.count("\n"), text.count("\n"))
        self.assertEqual(clean.split(), ["a", "b", '"/*', 'kept', '*/"', "'/'", "e"])

    def test_split_and_fields(self) -> None:
        text = '{ .a = f(1, 2), .b = "x, y", .c = { 3, 4 } , }'
        pieces = split_top(text, 1, len(text) - 1)
        self.assertEqual([p for p, _ in pieces], [".a = f(1, 2)", '.b = "x, y"', ".c = { 3, 4 }"])
        self.assertEqual([text[o:o + 4] for _, o in pieces], [".a =", ".b =", ".c ="])
        fields = c_fields(text, 1, len(text) - 1)
        self.assertEqual(fields["a"], ("f(1, 2)", text.index("f(1")))
        self.assertEqual(c_string(fields["b"][0]), "x, y")
        self.assertIsNone(c_string(fields["a"][0]))
        self.assertIsNone(c_string(None))

    def test_flags(self) -> None:
        self.assertTrue(c_flag("MWAIT2flg(0x20) | CPUIDLE_FLAG_OFF", "CPUIDLE_FLAG_OFF"))
        self.assertFalse(c_flag("CPUIDLE_FLAG_OFF_X", "CPUIDLE_FLAG_OFF"))
        self.assertFalse(c_flag(None, "CPUIDLE_FLAG_OFF"))

    def test_braces(self) -> None:
        text = 'x { "}" { } \'}\' } y'
        self.assertEqual(match_brace(text, 2), len(text) - 3)
        with self.assertRaisesRegex(ExtractError, "unbalanced braces after offset 0"):
            match_brace("{ {", 0)


class CFileTest(unittest.TestCase):
    def setUp(self) -> None:
        self.cf = CFile("/no/such/tree", "drivers/cpuidle/cpuidle-acme.c", SOURCE)

    def test_defines_and_enum(self) -> None:
        d = self.cf.defines
        self.assertEqual(d["DEEP_EXIT"], "(2 * BASE)")
        self.assertEqual(d["BASE"], "0x10")
        self.assertEqual((d["S_WFI"], d["S_RET"], d["S_DEEP"]), ("0", "4", "5"))
        # An enumerator the reader cannot evaluate ends the enum's constants.
        self.assertNotIn("S_BAD", d)
        self.assertNotIn("S_AFTER", d)
        self.assertEqual(self.cf.fmacros["WFI_STATE"][0], ["p"])

    def test_eval_names_the_place(self) -> None:
        pos = self.cf.text.index("DEEP_EXIT,")
        self.assertEqual(self.cf.eval("DEEP_EXIT", pos, "exit latency"), 32)
        with self.assertRaisesRegex(ExtractError, r"^drivers/cpuidle/cpuidle-acme.c:10: cannot "
                                    r"evaluate exit latency 'NOPE' \(unknown symbol NOPE\)$"):
            self.cf.eval("NOPE", pos, "exit latency")
        with self.assertRaisesRegex(ExtractError, "^drivers/cpuidle/cpuidle-acme.c: cannot"):
            self.cf.eval("NOPE", None, "exit latency")

    def test_initializers_and_functions(self) -> None:
        (m, a, b), = self.cf.find_init(r"\bstatic\s+struct\s+cpuidle_state\s+(\w+)\[\]\s*=\s*\{")
        self.assertEqual(m.group(1), "acme_states")
        self.assertEqual([p.split()[0] for p, _ in split_top(self.cf.text, a, b)],
                         ["WFI_STATE(7)", "{"])
        self.assertEqual(self.cf.function_at(self.cf.text.index("read_fw")), "acme_fixup")
        self.assertIsNone(self.cf.function_at(0))
        body = self.cf.body_of("acme_fixup")
        self.assertIsNotNone(body)
        self.assertIn("read_fw", body or "")
        self.assertIsNone(self.cf.body_of("no_such_function"))

    def test_runtime_updates(self) -> None:
        self.assertEqual(runtime_updates(self.cf, ["acme_states"]),
                         {"acme_states": [(1, "exit_latency", "=", "read_fw()", 16,
                                           "acme_fixup")]})

    def test_macro_expansion(self) -> None:
        macros = MacroSet([self.cf])
        self.assertEqual(macros.expand("WFI_STATE(7)"),
                         '{ .exit_latency = 1, .power_usage = 7,   \t.name = "WFI" }')
        self.assertEqual(macros.expand("DEEP_EXIT"), "(2 * BASE)")
        self.assertEqual(macros.expand("{ .a = 1 }"), "{ .a = 1 }")
        self.assertEqual(macros.expand("UNKNOWN(1)"), "UNKNOWN(1)")


if __name__ == "__main__":
    unittest.main()
