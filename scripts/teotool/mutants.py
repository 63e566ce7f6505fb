# SPDX-License-Identifier: GPL-2.0
"""The KUnit mutation check, "scripts/teo mutants" (an extended check):
each mutant of our governor (tools/teo-mutants/NAME.patch) is applied to a
copy of this repository, the copy's KUnit suites run ("scripts/teo kunit"
of the copy, which takes the build lock itself), and every case the
mutant's "KUnit:" header names must fail.

The copy lives in the cache, one per repository, so that its private
kernel tree and KUnit build folder are reused and each later run builds
incrementally; the repository's own private tree is never touched.
"""

import argparse
import fcntl
import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List, Sequence

from teotool import deps, paths, process
from teotool.ui import Fatal, UsageError, note

HELP = ("the KUnit mutation check: every mutant of tools/teo-mutants must fail the"
        " cases it names (an extended check)")

DESCRIPTION = """\
For every tools/teo-mutants/*.patch (or the ones named), apply it to a copy
of this repository, run the KUnit suites with that copy's governor
(scripts/teo kunit: an incremental build of the copy's KUnit tree, about a
minute each when warm) and print one line per mutant:

  NAME  killed|SURVIVED|claims-no-case|NO-BUILD  failed: CASE,...  (N s)

A mutant is killed when the kernel builds and every case its 'KUnit:'
header names fails.  'KUnit: none' names no case: its line only reports
which cases failed.  The suites of the unchanged governor must pass first.
Fails if a mutant survives, does not apply or breaks the build.

Environment: KERNEL_SRC, TEO_CACHE (see scripts/teo tree --help)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="MUTANT",
                        help="only these mutants (NAME of tools/teo-mutants/NAME.patch)")
    parser.set_defaults(func=_cmd_mutants)


def wanted_cases(patch: Path) -> List[str]:
    """The cases the 'KUnit:' lines of the patch's header name ('none':
    none can tell)."""
    cases: List[str] = []
    for line in patch.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line:
            break
        if line.startswith("KUnit:"):
            cases += [c for c in re.split(r"[\s,]+", line[len("KUnit:"):]) if c]
    return cases


def _failed(group: Any) -> Iterator[str]:
    for case in group.get("test_cases", []):
        if case.get("status") != "PASS":
            yield str(case["name"])
    for sub in group.get("sub_groups", []):
        yield from _failed(sub)


def failed_cases(results: Path) -> List[str]:
    """The cases of kunit.py's JSON results that did not pass."""
    try:
        return sorted(set(_failed(json.loads(results.read_text(encoding="utf-8")))))
    except (OSError, ValueError, KeyError, AttributeError) as err:
        raise Fatal(f"{results}: not kunit.py's JSON results ({err})") from None


def verdict(wanted: Sequence[str], failed: Sequence[str]) -> str:
    """killed: every named case failed; SURVIVED: one did not;
    claims-no-case: the header says no case can tell."""
    if any(case != "none" and case not in failed for case in wanted):
        return "SURVIVED"
    return "claims-no-case" if "none" in wanted else "killed"


def _sync_copy(copy: Path) -> None:
    """The repository's files (but .git and the cache) in copy."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(paths.REPO, copy, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if n in (".git", ".cache")]
                    if Path(folder) == paths.REPO else [])


class _Runner:
    """Runs the KUnit suites of the copy."""

    def __init__(self, work: Path) -> None:
        self.copy = work / "repo"
        self.results = work / "results.json"
        self.log = work / "run.log"

    def run(self) -> bool:
        """Whether kunit.py left results."""
        self.results.unlink(missing_ok=True)
        env = process.debian_env({"TEO_KUNIT_JSON": str(self.results),
                                  "TEO_CACHE": str(paths.cache())})
        with open(self.log, "w", encoding="utf-8") as log:
            process.run([self.copy / "scripts" / "teo", "kunit"], stdout=log, stderr=log,
                        env=env)
        return self.results.is_file() and self.results.stat().st_size > 0

    def restore(self) -> None:
        """Our governor's files as the repository has them."""
        for rel in paths.OUR_GOVERNOR:
            shutil.copyfile(paths.REPO / rel, self.copy / rel)

    def first_error(self) -> str:
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            if "error:" in line:
                return line
        return ""


def check(patches: Sequence[Path]) -> bool:
    """Run the mutation check on patches; whether every mutant was killed
    (or claims no case), applied and built."""
    deps.need_cmd("patch")
    work = paths.mutants_copy()
    work.mkdir(parents=True, exist_ok=True)
    with open(work / ".lock", "a", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Fatal(f"another mutation check of this repository runs in {work}") from None
        runner = _Runner(work)
        _sync_copy(runner.copy)
        return _check(runner, patches)


def _check(runner: _Runner, patches: Sequence[Path]) -> bool:
    t0 = time.monotonic()
    note("the unchanged governor first")
    if not runner.run():
        sys.stderr.writelines(line + "\n" for line in runner.log.read_text(
            encoding="utf-8", errors="replace").splitlines()[-20:])
        raise Fatal("the suites do not build or run")
    failed = failed_cases(runner.results)
    if failed:
        raise Fatal(f"the unchanged governor fails: {','.join(failed)}")
    good = True
    for patch in patches:
        name = patch.stem
        t1 = time.monotonic()
        runner.restore()
        wanted = wanted_cases(patch)
        if not wanted:
            note(f"mutant {name}: no 'KUnit:' header")
            good = False
            continue
        if process.output(["patch", "-s", "-f", "-p1", "--no-backup-if-mismatch", "-d",
                           runner.copy, "-i", patch]).returncode != 0:
            note(f"mutant {name}: does not apply to {paths.GOVERNORS}")
            good = False
            continue
        if not runner.run():
            print(f"{name:<24} {'NO-BUILD':<14} ({time.monotonic() - t1:.0f} s;"
                  f" {runner.first_error()})", flush=True)
            good = False
            continue
        failed = failed_cases(runner.results)
        found = verdict(wanted, failed)
        good = good and found != "SURVIVED"
        print(f"{name:<24} {found:<14} failed: {','.join(failed) or 'none'}"
              f" ({time.monotonic() - t1:.0f} s)", flush=True)
    runner.restore()
    note(f"mutation check: {len(patches)} mutants in {time.monotonic() - t0:.0f} s")
    return good


def patches(names: Sequence[str]) -> List[Path]:
    """The mutants named (all of them if none), each checked to exist."""
    if not names:
        found = sorted(paths.TEO_MUTANTS.glob("*.patch"))
        if not found:
            raise Fatal(f"no mutants in {paths.TEO_MUTANTS}")
        return found
    chosen = []
    for name in names:
        patch = paths.TEO_MUTANTS / f"{name}.patch"
        if name.startswith("-"):
            raise UsageError(f"unknown option '{name}'")
        if "/" in name or not patch.is_file():
            raise UsageError(f"no mutant {patch}")
        chosen.append(patch)
    return chosen


def _cmd_mutants(args: argparse.Namespace) -> int:
    if not check(patches(args.names)):
        raise Fatal("a mutant survived, does not apply or does not build")
    return 0
