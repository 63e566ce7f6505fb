# SPDX-License-Identifier: GPL-2.0
"""The device-tree reader on short inline sources: merging as dtc merges,
values, references, positions, and malformed input (one DtsError naming
file and line)."""

import re
import unittest

from tabletool.dts import Node, Tree, parse_value
from tabletool.errors import DtsError
from tabletool.preprocess import DtFiles
from tabletool.testing import ScratchTest

BOARD = "arch/arm64/boot/dts/zeta/zeta.dts"

# As cpp leaves a board: line markers name the files the lines come from.
MERGED = """\
# 1 "arch/arm64/boot/dts/zeta/zeta.dts"
/dts-v1/;
# 1 "arch/arm64/boot/dts/zeta/zeta-soc.dtsi" 1
/ {
	cpus {
		c0: cpu@0 { lat = <10>; gone = <1>; };
		spare: cpu@9 { lat = <99>; };
	};
	/omit-if-no-ref/ states {
		s1: s1 { lat: latency = <(2 * 5) 0x20 'a'>; };
	};
};
# 3 "arch/arm64/boot/dts/zeta/zeta.dts" 2
&c0 { /delete-property/ gone; lat = <11>; };
&{/cpus} { /delete-node/ cpu@9; };
&{s1/} { extra; };
/delete-node/ &s1;
/ { states { s1: s1 { latency = <7>; }; }; };
"""


class TreeTest(ScratchTest):
    def tree(self, text: str) -> Tree:
        return Tree(str(self.tmp), DtFiles(str(self.tmp)), BOARD, text)

    def node(self, tree: Tree, path: str) -> Node:
        node = tree.root
        for part in path.strip("/").split("/"):
            node = node.children[part]
        return node

    def test_merged_as_dtc_merges(self) -> None:
        tree = self.tree(MERGED)
        self.assertEqual(list(tree.root.children), ["cpus", "states"])
        self.assertEqual(list(self.node(tree, "/cpus").children), ["cpu@0"])
        c0 = self.node(tree, "/cpus/cpu@0")
        self.assertEqual(tree.cells(c0, "lat"), [11])
        self.assertFalse(tree.has(c0, "gone"))
        s1 = self.node(tree, "/states/s1")
        self.assertEqual(tree.cells(s1, "latency"), [7])
        self.assertFalse(tree.has(s1, "extra"), "the deleted s1's property came back")
        self.assertIs(tree.deref(("ref", "s1")), s1)  # the label of the live node
        self.assertIsNone(tree.deref(("ref", "spare")))
        self.assertIs(tree.deref(("path", "/cpus/cpu@0")), c0)
        self.assertIs(tree.deref(("path", "c0")), c0)

    def test_positions(self) -> None:
        tree = self.tree(MERGED)
        c0 = self.node(tree, "/cpus/cpu@0")
        self.assertEqual(tree.prop_where(c0, "lat"), "arch/arm64/boot/dts/zeta/zeta.dts:3")
        self.assertIsNone(tree.prop_where(c0, "gone"))
        pos = tree.prop_pos(c0, "lat")
        self.assertIsNotNone(pos)
        self.assertEqual(tree.where(pos or 0), "arch/arm64/boot/dts/zeta/zeta.dts:3")
        tree = self.tree("/ { a = <1>; };")
        self.assertEqual(tree.prop_where(tree.root, "a"), BOARD + ":?")

    def test_phandle_numbers(self) -> None:
        """As dtc -O dts writes references."""
        tree = self.tree("/ { a { phandle = <0x01>; }; b { x = <0x01 0x02>; "
                         "c { linux,phandle = <2>; }; }; };")
        b = self.node(tree, "/b")
        cells = tree.cells(b, "x") or []
        self.assertEqual([tree.deref(c) for c in cells],
                         [self.node(tree, "/a"), self.node(tree, "/b/c")])
        self.assertIsNone(tree.deref(3))

    def test_include(self) -> None:
        self.write("arch/arm64/boot/dts/zeta/part.dtsi", "/ { from-include = \"yes\"; };\n")
        tree = self.tree('# 1 "' + BOARD + '"\n/dts-v1/;\n/include/ "part.dtsi"\n'
                         "/ { after = <1>; };\n")
        self.assertEqual(tree.strings(tree.root, "from-include"), ["yes"])
        self.assertEqual(tree.prop_where(tree.root, "from-include"),
                         "arch/arm64/boot/dts/zeta/part.dtsi:1")
        self.assertEqual(tree.prop_where(tree.root, "after"), BOARD + ":3")
        with self.assertRaisesRegex(DtsError, '^arch/arm64/boot/dts/zeta/zeta.dts:2: '
                                    '/include/ "none.dtsi" not found$'):
            self.tree('# 1 "' + BOARD + '"\n\n/include/ "none.dtsi"\n')

    def test_malformed(self) -> None:
        cases = {"/ { a = <1>; }; };": ":1: unbalanced '}'",
                 "/ { a { b = <1>; };": ": unterminated node",
                 "/ { a = <1> };": ":1: expected ';' after 'a = <1>'",
                 "/ { a b { }; };": ":1: cannot parse node header 'a b'",
                 "&nobody { };": ":1: label or path &nobody not found",
                 "/ { }; junk;": ":1: unexpected 'junk' at top level",
                 "/ { a = <1 2; };": ":1: unterminated '<'",
                 "/ { a = <x>; };": r":1: cannot evaluate 'x' \(unknown symbol x\)"}
        for text, why in cases.items():
            pattern = "^" + re.escape(BOARD) + why
            with self.subTest(dts=text), self.assertRaisesRegex(DtsError, pattern):
                tree = self.tree('# 1 "' + BOARD + '"\n' + text)
                tree.cells(tree.root, "a")
                tree.cells(tree.root.children.get("a", tree.root), "b")


class ValueTest(unittest.TestCase):
    def test_strings_and_cells(self) -> None:
        strings, cells = parse_value('"a\\tb", "c", lbl: <1 (2 + 3) &x &{/p/q} \'A\'>, '
                                     '[00 0a], /bits/ 8 <0x1ff>, &ref', "f:1")
        self.assertEqual(strings, ["a\tb", "c", "ref"])
        self.assertEqual(cells, [1, 5, ("ref", "x"), ("path", "/p/q"), 65, 0xff])

    def test_empty_and_label_inside(self) -> None:
        self.assertEqual(parse_value("", "f:1"), ([], []))
        self.assertEqual(parse_value("<a: 1 b: 2>", "f:1"), ([], [1, 2]))

    def test_malformed(self) -> None:
        for text, why in (('"open', "bad string"), ("<1", "unterminated '<'"),
                          ("[00", "unterminated '\\['"), ("& x", "bad reference"),
                          ("<&>", "bad reference in cells"), ("<1 - 2>", "cannot parse cells"),
                          ("?", "cannot parse value near '\\?'"),
                          ("[0g]", "bad byte string"), ("/bits/ <1>", "/bits/ without a width"),
                          ("<&{/a 1>", "unterminated '&{' in cells")):
            with self.subTest(value=text), self.assertRaisesRegex(DtsError, "^f:9: " + why):
                parse_value(text, "f:9")


if __name__ == "__main__":
    unittest.main()
