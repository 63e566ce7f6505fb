# SPDX-License-Identifier: GPL-2.0
"""The mutation check's reading of the mutants' headers and of kunit.py's
results, its verdicts, and its refusal of bad input before anything is
copied or built."""

import json
import unittest

from teotool import mutants, paths
from teotool.testing import TEO, ScratchTest
from teotool.ui import Fatal, UsageError

RESULTS = {
    "name": "KUnit Test Group", "test_cases": [],
    "sub_groups": [
        {"name": "teo", "test_cases": [{"name": "teo_a", "status": "PASS"},
                                       {"name": "teo_b", "status": "FAIL"}],
         "sub_groups": [{"name": "teo_deep",
                         "test_cases": [{"name": "teo_c", "status": "SKIP"},
                                        {"name": "teo_b", "status": "FAIL"}]}]},
    ],
}


class HeaderTest(ScratchTest):
    def test_every_mutant_names_its_cases(self) -> None:
        patches = mutants.patches([])
        self.assertTrue(patches)
        for patch in patches:
            with self.subTest(mutant=patch.stem):
                self.assertTrue(mutants.wanted_cases(patch))

    def test_header_only(self) -> None:
        patch = self.tmp / "m.patch"
        patch.write_text("Mutant: m\nKUnit: teo_a, teo_b,teo_c\n\n"
                         "--- a/x\n+++ b/x\nKUnit: not_a_header\n")
        self.assertEqual(mutants.wanted_cases(patch), ["teo_a", "teo_b", "teo_c"])
        patch.write_text("Mutant: m\n\nKUnit: teo_a\n")
        self.assertEqual(mutants.wanted_cases(patch), [])


class ResultsTest(ScratchTest):
    def test_failed_cases(self) -> None:
        results = self.tmp / "r.json"
        results.write_text(json.dumps(RESULTS))
        self.assertEqual(mutants.failed_cases(results), ["teo_b", "teo_c"])
        results.write_text("{")
        with self.assertRaisesRegex(Fatal, "not kunit.py's JSON results"):
            mutants.failed_cases(results)

    def test_verdict(self) -> None:
        self.assertEqual(mutants.verdict(["teo_b"], ["teo_b", "teo_c"]), "killed")
        self.assertEqual(mutants.verdict(["teo_b", "teo_a"], ["teo_b"]), "SURVIVED")
        self.assertEqual(mutants.verdict(["none"], []), "claims-no-case")
        self.assertEqual(mutants.verdict(["none", "teo_a"], []), "SURVIVED")


class InputTest(ScratchTest):
    def test_names(self) -> None:
        first = sorted(paths.TEO_MUTANTS.glob("*.patch"))[0]
        self.assertEqual(mutants.patches([first.stem]), [first])
        for name in ("nosuch", "../teo-mutants/" + first.stem):
            with self.subTest(name=name), self.assertRaisesRegex(UsageError, "no mutant"):
                mutants.patches([name])

    def test_command_line(self) -> None:
        self.assertBadInput(2, "no mutant .*/nosuch.patch", [TEO, "mutants", "nosuch"])
        self.assertBadInput(2, "unknown argument '--bogus'", [TEO, "mutants", "--bogus"])
        self.assertHelp("claims-no-case", [TEO, "mutants", "--help"])


if __name__ == "__main__":
    unittest.main()
