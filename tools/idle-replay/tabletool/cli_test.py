# SPDX-License-Identifier: GPL-2.0
"""extract-tables.py on the fake kernel tree, as a user runs it: the
expected files, the warnings, a second run, --check-dtc, and bad input
(one clear line, exit status 1, nothing written).

    python3 tools/idle-replay/tabletool/cli_test.py --update

rewrites tests/extract/expected from the current extractor (review the
diff before committing it)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabletool.testing import (DATA, EXPECTED, FAKE_TREE, NOBODY, ScratchTest, leftovers,
                               listing, missing)

# The fake tree has one broken board of seven: let it be skipped.
LENIENT = ["-q", "-j", "1", "--max-skipped", "20"]


class OutputTest(ScratchTest):
    def test_fake_tree_gives_the_expected_files(self) -> None:
        run = self.extract([*LENIENT, FAKE_TREE, self.tmp / "out"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, "")
        self.assertEqual(listing(self.tmp / "out"), listing(EXPECTED))
        self.assertIn("2 table(s) break a lab rule (see INDEX): dt-acme-odd-little intel-brk",
                      run.stderr)
        self.assertIn("skipped 1 of 7 device tree(s) (parse failed: 1): see INDEX", run.stderr)

    def test_second_run_with_two_jobs_replaces_the_first(self) -> None:
        out = self.tmp / "out"
        for jobs in ("1", "2"):
            run = self.extract(["-q", "-j", jobs, "--max-skipped", "20", FAKE_TREE, out])
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(listing(out), listing(EXPECTED))
        self.assertEqual(leftovers(out), [])

    def test_progress_without_quiet(self) -> None:
        run = self.extract(["-j", "1", "--max-skipped", "20", FAKE_TREE, self.tmp / "out"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"device tree: \d+ boards, 7 reference idle states")
        self.assertRegex(run.stdout, r"Linux 9\.9\.0-fake: 10 distinct tables \(intel_idle 3, "
                         r"drivers/cpuidle 3, device tree 4\)")

    def test_check_dtc(self) -> None:
        why = missing("dtc", "device-tree-compiler")
        if why:
            self.skipTest(why)
        run = self.extract([*LENIENT, "--check-dtc", FAKE_TREE, self.tmp / "out"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(listing(self.tmp / "out"), listing(EXPECTED))

    def test_help_and_usage(self) -> None:
        run = self.extract(["--help"])
        self.assertEqual(run.returncode, 0)
        self.assertIn("usage: extract-tables.py", run.stdout)
        run = self.extract([FAKE_TREE])
        self.assertEqual(run.returncode, 2)
        self.assertIn("the following arguments are required: OUTDIR", run.stderr)


class BadInputTest(ScratchTest):
    def test_kernel_src(self) -> None:
        self.assertFails("KERNEL_SRC .*/nonexistent does not exist",
                         [self.tmp / "nonexistent"], self.tmp / "bad")
        self.write("afile", "")
        self.assertFails("KERNEL_SRC .*/afile is not a directory", [self.tmp / "afile"],
                         self.tmp / "bad")
        self.assertFails("^extract-tables: KERNEL_SRC .* is not a kernel tree: "
                         "drivers/idle/intel_idle.c is missing$", [DATA], self.tmp / "bad")

    def test_jobs(self) -> None:
        self.assertFails("--jobs needs a positive number", ["-j", "0", FAKE_TREE],
                         self.tmp / "bad")

    def test_outdir_under_a_file(self) -> None:
        self.write("afile", "")
        self.assertFails("cannot create OUTDIR .*/afile/out: .*/afile is not a directory",
                         [FAKE_TREE], self.tmp / "afile" / "out")

    def test_foreign_outdir_is_left_alone(self) -> None:
        for name, files in (("notes", ["notes.txt"]), ("mixed", ["INDEX", "notes.txt"])):
            with self.subTest(outdir=name):
                out = self.tmp / name
                out.mkdir()
                for f in files:
                    (out / f).write_text("keep\n")
                run = self.extract(["-q", FAKE_TREE, out])
                self.assertEqual(run.returncode, 1)
                self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
                self.assertIn("refusing to replace it", run.stderr)
                self.assertEqual(sorted(p.name for p in out.iterdir()), files)
                self.assertEqual((out / files[-1]).read_text(), "keep\n")
                self.assertEqual(leftovers(out), [])

    def test_unwritable_outdir(self) -> None:
        """As root, the extractor runs as nobody: root may write anywhere."""
        ro = self.tmp / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        prefix = []
        if os.geteuid() == 0:
            prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
            probe = self.extract(["--help"], prefix=prefix)
            if probe.returncode != 0:
                self.skipTest(f"the repository is not readable by uid {NOBODY}")
        self.assertFails("cannot create OUTDIR .*/ro/out: .*/ro is not writable", [FAKE_TREE],
                         ro / "out", prefix=prefix)

    def test_no_cpp(self) -> None:
        empty = self.tmp / "bin"
        empty.mkdir()
        self.assertFails("^extract-tables: cpp not found: install the Debian package cpp$",
                         [FAKE_TREE], self.tmp / "bad", path=str(empty))

    def test_too_many_broken_device_trees(self) -> None:
        """One broken board of seven is over the default limit (3 %)."""
        self.assertFails(r"1 of 7 device trees failed to preprocess or parse \(more than 3%\); "
                         "first: arch/arm64/boot/dts/acme/acme-broken.dts: parse: "
                         "arch/arm64/boot/dts/acme/acme-broken.dts:7: label or path "
                         "&no_such_label not found", [FAKE_TREE], self.tmp / "bad")

    def test_malformed_dts(self) -> None:
        tree = self.spoilt_tree("arch/arm64/boot/dts/acme/acme-board-a.dts",
                                '"acme,board-a", "acme,soc";', '"acme,board-a" "acme,soc";\n}')
        self.assertFails("2 of 7 device trees failed .* first: arch/arm64/boot/dts/acme/"
                         "acme-board-a.dts: parse: arch/arm64/boot/dts/acme/acme-board-a.dts:10: "
                         "unbalanced '}'", ["--max-skipped", "20", tree],
                         self.tmp / "bad")

    def test_tree_the_model_does_not_fit(self) -> None:
        """Spoilt copies of the fake tree: each stops with its own line."""
        cases = [
            ("drivers/idle/intel_idle.c", "cpuidle_poll_state_init(drv);", "",
             "cannot confirm that intel_idle registers the polling state as state 0"),
            ("drivers/idle/intel_idle.c", ".exit_latency = 0x64,", ".exit_latency = C6_EXIT,",
             "intel_idle.c:29: cannot evaluate exit latency 'C6_EXIT' "
             r"\(unknown symbol C6_EXIT\)"),
            ("drivers/idle/intel_idle.c", "\t{\n\t\t.name = \"C3\",", "\tBRK_C3_STATE,\n\t{",
             "intel_idle.c:61: unexpected entry in brk_cstates"),
            ("drivers/of/cpu.c", "domain-idle-states", "cluster-idle-states",
             "drivers/of/cpu.c: cannot confirm that a CPU's idle states are"),
            ("drivers/cpuidle/cpuidle-acme.c", "= ARM_CPUIDLE_WFI_STATE,", "= ACME_WFI_STATE,",
             r"cpuidle-acme.c:14: cannot read state 0 of acme_idle_driver \('ACME_WFI_STATE'\)"),
            ("drivers/cpuidle/cpuidle-psci.c", '"arm,idle-state"', '"acme,idle-state"',
             'cpuidle-psci.c: cannot confirm that it matches "arm,idle-state" states'),
            ("include/linux/cpuidle.h", "#define CPUIDLE_STATE_MAX", "#define STATE_MAX",
             "include/linux/cpuidle.h: cannot confirm that CPUIDLE_STATE_MAX is defined"),
        ]
        for rel, old, new, pattern in cases:
            with self.subTest(file=rel, change=new):
                tree = self.spoilt_tree(rel, old, new)
                self.assertFails(pattern, ["--max-skipped", "20", tree], self.tmp / "bad")


def update() -> None:
    """Rewrite tests/extract/expected from the current extractor."""
    tmp = Path(tempfile.mkdtemp(prefix="tabletool-update."))
    try:
        run = subprocess.run([sys.executable, str(Path(__file__).resolve().parent.parent /
                                                  "extract-tables.py"),
                              *LENIENT, str(FAKE_TREE), str(tmp / "new")], check=False)
        if run.returncode:
            sys.exit(f"cli_test.py: the extractor failed on {FAKE_TREE}")
        shutil.rmtree(EXPECTED)
        shutil.copytree(tmp / "new", EXPECTED)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"cli_test.py: rewrote {EXPECTED}; review it with git diff")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        unittest.main()
