# SPDX-License-Identifier: GPL-2.0
"""misses on a small report written here: the drafted causes of both
kinds of line, the lines kept, dropped and added, and bad input."""

import contextlib
import io
import unittest
from pathlib import Path
from typing import Dict, List, Sequence

from teotool import misses, replay
from teotool.testing import ScratchTest
from teotool.ui import Fatal

RESULTS = ("scenario", "family", "loop", "platform", "governor", "role", "energy_pct",
           "work_pct", "items", "above_pct", "below_pct", "lat_mean_us", "state_shares")
ROLES = {"oracle": "oracle", "teo": "ours", "teo-6.12": "base", "teo-7.3": "mainline",
         "mutant-a": "extra", "mutant-b": "extra"}

GATES = """\
# role kind energy miss table
base     teo   1.0  0.5  5.0
mainline teo   1.0  0.5  5.0
work     best  1.0
"""

TABLES = ("table\tstate\tname\texit_latency_us\n"
          "t1\t0\tWFI\t1\nt1\t1\tdeep\t400\n")


def run_row(scenario: str, family: str, loop: str, gov: str, energy: float,
            items: int, shares: str, table: str = "t1") -> Dict[str, str]:
    return dict(scenario=scenario, family=family, loop=loop, platform=table, governor=gov,
                role=ROLES[gov], energy_pct=f"{energy:.3f}", work_pct=f"{items / 10:.3f}",
                items=str(items), above_pct="1.000", below_pct="2.000",
                lat_mean_us="10.000", state_shares=shares)


class DraftTest(ScratchTest):
    def report(self, rows: Sequence[Dict[str, str]], missed: Sequence[str]) -> Path:
        folder = self.tmp / "report"
        folder.mkdir(exist_ok=True)
        (folder / "results.tsv").write_text(
            "\t".join(RESULTS) + "\n"
            + "".join("\t".join(r[c] for c in RESULTS) + "\n" for r in rows),
            encoding="utf-8")
        (folder / "misses.tsv").write_text(
            "where\ttable\tbaseline\tmetric\tlisted\tmeasured\n"
            + "".join(m.replace(" ", "\t") + "\tlisted\t-\n" for m in missed),
            encoding="utf-8")
        (folder / "tables.tsv").write_text(TABLES, encoding="utf-8")
        return folder

    def drafter(self, folder: Path, mutants: Sequence[str] = ("a", "b")) -> misses.Drafter:
        gates = self.tmp / "gates.conf"
        gates.write_text(GATES, encoding="utf-8")
        return misses.Drafter(misses.Report.read(folder), misses.Bounds.read(gates), mutants)

    def ring(self) -> List[Dict[str, str]]:
        """A closed ring where ours goes deep and does half the work of the
        mainline teo; mutant a escapes, mutant b and the base teo do not."""
        return [run_row("ring", "S3", "closed", g, e, n, s) for g, e, n, s in (
            ("oracle", 90.0, 1500, "WFI=100.0"),
            ("teo", 300.0, 500, "WFI=2.0;deep=98.0"),
            ("teo-6.12", 290.0, 520, "deep=97.0;WFI=3.0"),
            ("teo-7.3", 100.0, 1000, "WFI=99.0;deep=1.0"),
            ("mutant-a", 101.0, 995, "WFI=99.0;deep=1.0"),
            ("mutant-b", 300.0, 500, "WFI=2.0;deep=98.0"))]

    def test_work_line(self) -> None:
        """The best baseline by work items, the states with their exits,
        the baselines that miss too, the oracle, and the mutant that meets
        the target."""
        d = self.drafter(self.report(self.ring(), ["ring t1 best work"]))
        self.assertEqual(
            d.cause(("ring", "t1", "best", "work")),
            "ours does 50.0 % of teo-7.3's work: it sits 98 % in deep (exit 400 us) where"
            " teo-7.3 sits 99 % in WFI (exit 1 us); added latency 10.0 vs 10.0 us mean;"
            " missed by teo-6.12 too; the oracle does 1.5x teo-7.3's work;"
            " the mutant a meets the target")

    def test_no_mutant_meets(self) -> None:
        d = self.drafter(self.report(self.ring(), []), mutants=("b",))
        self.assertTrue(str(d.cause(("ring", "t1", "best", "work"))).endswith(
            "; missed by teo-6.12 too; the oracle does 1.5x teo-7.3's work; no rule"
            " reverted alone meets the target"))

    def test_table_energy_line(self) -> None:
        """The scenario that adds most energy, shares, misses and work of
        that scenario; every mutant meeting the family mean bound named."""
        rows = self.ring() + [run_row("pipe", "S3", "closed", g, e, 1000, "WFI=100.0")
                              for g, e in (("oracle", 100.0), ("teo", 110.0),
                                           ("teo-6.12", 100.0), ("teo-7.3", 100.0),
                                           ("mutant-a", 100.0), ("mutant-b", 104.0))]
        d = self.drafter(self.report(rows, ["S3 t1 teo-7.3 table-energy"]))
        # Family means: ours 205, teo-7.3 100 (bound 105); mutant a 100.5,
        # mutant b 202.
        self.assertEqual(
            d.cause(("S3", "t1", "teo-7.3", "table-energy")),
            "mostly ring (300.0 vs 100.0 % per item): ours sits 98 % in deep where teo-7.3"
            " sits 99 % in WFI: ours goes deeper; misses above 1.0 vs 1.0 %, below 2.0 vs"
            " 2.0 %, work 50.0 vs 100.0 %; the mutant a meets the target")

    def test_table_energy_base_teo_misses_too(self) -> None:
        d = self.drafter(self.report(self.ring(), []), mutants=("b",))
        self.assertTrue(str(d.cause(("S3", "t1", "teo-7.3", "table-energy"))).endswith(
            "; teo-6.12 misses it too, and no rule reverted alone meets the target"))

    def test_draft_keeps_drops_and_adds(self) -> None:
        """Comments and median lines stay; a miss that is gone loses its
        line; a new one comes after the last line of its metric; a median
        miss without a line is marked for a hand-written cause."""
        old = ("# header\n"
               "S3 median teo-7.3 miss written by hand\n"
               "S3 median teo-7.3 energy no longer missed\n"
               "# tables\n"
               "S3 t1 teo-6.12 table-energy old words\n"
               "# work\n"
               "gone t1 best work old words\n"
               "# the end\n")
        folder = self.report(self.ring(), ["S3 median teo-7.3 miss", "ring t1 best work",
                                           "S3 median teo-6.12 energy"])
        result = misses.draft(old, self.drafter(folder))
        lines = result.text.splitlines()
        self.assertEqual(lines[:2], ["# header", "S3 median teo-7.3 miss written by hand"])
        self.assertTrue(lines[2].startswith("S3 median teo-6.12 energy " + misses.UNWRITTEN))
        self.assertEqual(lines[3:5], ["# tables", "# work"])
        self.assertTrue(lines[5].startswith("ring t1 best work ours does 50.0 %"))
        self.assertEqual(lines[6:], ["# the end"])
        self.assertEqual(result.dropped, [("S3", "median", "teo-7.3", "energy"),
                                          ("S3", "t1", "teo-6.12", "table-energy"),
                                          ("gone", "t1", "best", "work")])
        self.assertEqual(result.added, [("ring", "t1", "best", "work"),
                                        ("S3", "median", "teo-6.12", "energy")])
        self.assertEqual(result.kept, 1)
        self.assertEqual(result.unwritten, [("S3", "median", "teo-6.12", "energy")])

    def test_draft_of_current_lines_is_unchanged(self) -> None:
        """Drafting twice changes nothing the second time."""
        folder = self.report(self.ring(), ["ring t1 best work"])
        first = misses.draft("ring t1 best work old\n", self.drafter(folder))
        second = misses.draft(first.text, self.drafter(folder))
        self.assertEqual(first.changed, [("ring", "t1", "best", "work")])
        self.assertEqual(first.stale(), ["changed: ring t1 best work"])
        self.assertEqual(second.changed, [])
        self.assertEqual(second.stale(), [])
        self.assertEqual(second.text, first.text)

    def test_check_fails_on_a_stale_file(self) -> None:
        """replay misses --check: exit 1 while the file is not the draft,
        0 once it is."""
        folder = self.report(self.ring(), ["ring t1 best work"])
        stale = misses.draft("ring t1 best work old\ngone t1 best work x\n",
                             self.drafter(folder))
        self.assertEqual(stale.stale(), ["changed: ring t1 best work",
                                         "no longer missed: gone t1 best work"])
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            self.assertEqual(replay.check_draft(stale, folder), 1)
        self.assertIn("misses: no longer missed: gone t1 best work", said.getvalue())
        self.assertIn("2 lines differ", said.getvalue())
        fresh = misses.draft(stale.text, self.drafter(folder))
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(replay.check_draft(fresh, folder), 0)
        missing = misses.draft("# only a comment\n", self.drafter(folder))
        self.assertEqual(missing.stale(), ["not listed: ring t1 best work"])

    def test_report_without_mutants(self) -> None:
        folder = self.report(self.ring(), [])
        with self.assertRaisesRegex(Fatal, "no run of mutant-c: the draft needs one report"
                                    " with every rule mutant"):
            self.drafter(folder, mutants=("a", "c"))

    def test_not_a_report(self) -> None:
        folder = self.report(self.ring(), [])
        (folder / "results.tsv").write_text("scenario\tplatform\nx\ty\n", encoding="utf-8")
        with self.assertRaisesRegex(Fatal, "is not the lab's results.tsv"):
            misses.Report.read(folder)

    def test_miss_of_a_run_the_report_lacks(self) -> None:
        d = self.drafter(self.report(self.ring(), []))
        with self.assertRaisesRegex(Fatal, "misses.tsv names ring on t2, which results.tsv"
                                    " lacks"):
            d.cause(("ring", "t2", "best", "work"))

    def test_gates_without_bounds(self) -> None:
        gates = self.tmp / "gates.conf"
        gates.write_text("# nothing\n", encoding="utf-8")
        with self.assertRaisesRegex(Fatal, "no table or work bounds found"):
            misses.Bounds.read(gates)


if __name__ == "__main__":
    unittest.main()
