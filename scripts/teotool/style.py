# SPDX-License-Identifier: GPL-2.0
"""Style and static checks of everything the series and its tooling hold:
checkpatch.pl --strict, kernel-doc, a W=1 C=2 (sparse) build, shellcheck
on the remaining bash, mypy on this package and on the replay lab's
corpus extractor (tools/idle-replay/tabletool), and their unit tests."""

import io
import os
import re
import sys
import unittest
from pathlib import Path
from typing import List, Optional, Sequence, Union

from teotool import deps, kunit, paths, process, tree
from teotool.ui import Fatal, note

# The replay lab's corpus extractor: a package of the same layout beside
# its entry point, checked and tested with this one.
EXTRACT_ENTRY = paths.IDLE_REPLAY / "extract-tables.py"
EXTRACT_PACKAGE = paths.IDLE_REPLAY / "tabletool"


def kernel_files() -> List[str]:
    """Kernel-side C sources and headers of the repository."""
    found = []
    for folder in paths.KERNEL_C_DIRS:
        for ext in ("*.c", "*.h"):
            found += [str(p.relative_to(paths.REPO))
                      for p in (paths.REPO / folder).rglob(ext)]
    return sorted(found)


def shell_scripts() -> List[str]:
    """Every bash script of the tooling (those with a .sh name, and .ci/)."""
    found = set()
    for folder in paths.SHELL_DIRS:
        for p in (paths.REPO / folder).rglob("*"):
            rel = str(p.relative_to(paths.REPO))
            if p.is_file() and (p.suffix == ".sh" or rel.startswith(".ci/")):
                found.add(rel)
    return sorted(found)


def python_sources() -> List[str]:
    """The packages and their entry points (mypy's scope)."""
    return [str(paths.ENTRY), str(paths.PACKAGE), str(EXTRACT_ENTRY), str(EXTRACT_PACKAGE)]


def checkpatch_findings(src: Path, target: Path, whole_file: bool) -> List[str]:
    """The one checkpatch runner: checkpatch.pl --strict of tree src on a
    file (whole_file) or a patch; its findings (ERROR, WARNING, CHECK
    lines), each with its type."""
    argv: List[Union[str, Path]] = ["perl", "scripts/checkpatch.pl", "--strict",
                                    "--terse", "--show-types"]
    argv += ["--no-tree", "-f", target] if whole_file else [target]
    run = process.output(argv, cwd=src)
    return [line for line in (run.stdout + run.stderr).splitlines()
            if re.search(r"(ERROR|WARNING|CHECK):", line)]


def checkpatch(src: Path) -> List[str]:
    failed = []
    for rel in kernel_files():
        findings = checkpatch_findings(src, paths.REPO / rel, whole_file=True)
        if findings:
            sys.stderr.write("\n".join(findings) + "\n")
            failed.append(f"checkpatch: {rel}")
    return failed


def kernel_doc_files(src: Path, files: Sequence[Path]) -> List[str]:
    """The one kernel-doc runner: scripts/kernel-doc -none -Wall of tree
    src on each file; one problem per file it complains about."""
    failed = []
    for f in files:
        run = process.output(["scripts/kernel-doc", "-none", "-Wall", f], cwd=src)
        out = run.stdout + run.stderr
        if out.strip():
            sys.stderr.write(out)
            failed.append(f"kernel-doc: {f}")
    return failed


def kernel_doc(src: Path) -> List[str]:
    return kernel_doc_files(src, [paths.REPO / rel for rel in kernel_files()])


def w1_sparse(src: Path, build: Path) -> List[str]:
    """The governors' folder built with W=1 and sparse, in a KUnit build
    folder (its .config has tracing on, so the trace events are checked)."""
    if not (build / ".config").is_file():
        raise Fatal(f"no KUnit build in {build} yet: run 'scripts/teo kunit"
                    " --sanitizers' first")
    log = build.parent / "style-w1-c2.out"
    with process.BuildLock():
        status = process.run_logged(
            ["make", "-s", f"O={build}", "ARCH=x86_64", "CC=ccache gcc", "W=1",
             "C=2", f"-j{os.cpu_count() or 1}", paths.GOVERNORS + "/"],
            log, cwd=src, env=process.debian_env(), echo=io.StringIO())
    text = log.read_text(encoding="utf-8", errors="replace")
    failed = []
    if status != 0:
        failed.append(f"W=1 C=2 build of {paths.GOVERNORS}/ failed")
    bad = [line for line in text.splitlines() if re.search("warning|error", line)]
    if bad:
        sys.stderr.write("\n".join(bad) + "\n")
        failed.append(f"W=1 C=2 build of {paths.GOVERNORS}/ reports the lines above")
    return failed


def shellcheck() -> List[str]:
    status = process.run(["shellcheck", "-x", "-P", "scripts", *shell_scripts()],
                         cwd=paths.REPO, env=process.debian_env())
    return [] if status == 0 else ["shellcheck"]


def mypy() -> List[str]:
    """mypy --strict (the package's mypy.ini) on the package."""
    cache = paths.cache() / "mypy"
    status = process.run(["mypy", "--config-file", paths.PACKAGE / "mypy.ini",
                          "--exclude", r"_test\.py$",
                          f"--cache-dir={cache}", *python_sources()],
                         cwd=paths.REPO, env=process.debian_env())
    return [] if status == 0 else ["mypy"]


def unit_tests(pattern: str = "*_test.py", verbosity: int = 2,
               stream: Optional[io.TextIOBase] = None) -> unittest.TestResult:
    """The packages' unit tests (NAME_test.py beside each module)."""
    sys.dont_write_bytecode = True
    suite = unittest.TestSuite()
    for package in (paths.PACKAGE, EXTRACT_PACKAGE):
        suite.addTest(unittest.TestLoader().discover(str(package), pattern=pattern,
                                                     top_level_dir=str(package.parent)))
    runner = unittest.TextTestRunner(stream=stream or sys.stdout,  # type: ignore[arg-type]
                                     verbosity=verbosity)
    return runner.run(suite)


def run(build_variant: kunit.Variant = kunit.SANITIZERS) -> None:
    """Every check; fail naming the ones that failed."""
    deps.need_cmd("perl", "sparse", "shellcheck", "make", "mypy")
    slot = tree.prepare()
    src = slot / "src"
    failed = checkpatch(src) + kernel_doc(src)
    failed += w1_sparse(src, build_variant.build_dir(slot))
    failed += shellcheck() + mypy()
    for line in failed:
        note(f"FAIL: {line}")
    if failed:
        raise Fatal("style checks failed")
    note("checkpatch --strict, kernel-doc, W=1 C=2, shellcheck and mypy: clean")
