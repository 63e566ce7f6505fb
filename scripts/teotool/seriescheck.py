# SPDX-License-Identifier: GPL-2.0
"""The checks of an exported series, applied with git am to a fresh
checkout of its base: checkpatch, MAINTAINERS, kernel-doc, the
documentation, the kselftest build, a W=1 build at every patch, the
production object without KUnit, and the KUnit suites in the patched tree.

Each check returns the problems it found (one line each); a failed check
does not stop the others.
"""

import os
import re
import shutil
from pathlib import Path
from typing import Callable, List, Sequence

from teotool import kunit, paths, process, seriesrepo, style
from teotool.ui import Fatal, note

Problems = List[str]
GOV = paths.GOVERNORS
CPU_IDLE_ENTRY = "CPU IDLE TIME MANAGEMENT FRAMEWORK"

# drivers/cpuidle at every patch, with the KUnit tests (teo.c includes
# them) built in.
STEP_CONFIG = ("CONFIG_64BIT=y", "CONFIG_SMP=y", "CONFIG_MODULES=y",
               "CONFIG_NO_HZ_IDLE=y", "CONFIG_CPU_IDLE=y",
               "CONFIG_CPU_IDLE_GOV_MENU=y", "CONFIG_CPU_IDLE_GOV_TEO=y",
               "CONFIG_KUNIT=y", "CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST=y")
# The production configuration of the object comparison: no KUnit.
PLAIN_CONFIG = ("CONFIG_64BIT=y", "CONFIG_SMP=y", "CONFIG_NO_HZ_IDLE=y",
                "CONFIG_CPU_IDLE=y", "CONFIG_CPU_IDLE_GOV_TEO=y")
# What a patch must touch for drivers/cpuidle to build differently.
BUILD_INPUTS = (paths.CPUIDLE + "/", "include/", "Makefile")


def _make(tree: Path, build: Path, *targets: str, w1: bool = False,
          log: Path) -> int:
    argv = ["make", "-s", f"O={build}", "ARCH=x86_64", "CC=ccache gcc",
            f"-j{os.cpu_count() or 1}", *targets]
    if w1:
        argv.insert(5, "W=1")
    with process.BuildLock():
        return process.run_logged(argv, log, cwd=tree, env=process.debian_env(),
                                  echo=open(os.devnull, "w", encoding="utf-8"))


def configure(tree: Path, build: Path, config: Sequence[str]) -> Problems:
    """allnoconfig with config forced on, as far as the tree's Kconfig
    knows each option."""
    build.mkdir(parents=True, exist_ok=True)
    (build / "step.config").write_text("\n".join(config) + "\n", encoding="utf-8")
    argv = ["make", "-s", f"O={build}", "ARCH=x86_64",
            f"KCONFIG_ALLCONFIG={build / 'step.config'}", "allnoconfig"]
    with process.BuildLock():
        done = process.output(argv, cwd=tree, env=process.debian_env())
    if done.returncode != 0:
        return [f"allnoconfig in {build} failed: {done.stderr.strip()[-200:]}"]
    have = (build / ".config").read_text(encoding="utf-8").splitlines()
    known = _kconfig_symbols(tree)
    return [f"the configuration in {build} lost {opt}" for opt in config
            if opt.split("=")[0][len("CONFIG_"):] in known and opt not in have]


def _kconfig_symbols(tree: Path) -> "set[str]":
    found = set()
    for kconfig in tree.rglob("Kconfig*"):
        try:
            text = kconfig.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found.update(re.findall(r"^(?:menu)?config (\w+)$", text, re.M))
    return found


def every_patch_builds(tree: Path, build: Path, base: str) -> Problems:
    """Build the cpuidle folder with W=1 and the KUnit tests at every
    patch that changes what it builds from."""
    problems: Problems = []
    revs = seriesrepo.commits_since(tree, base, "HEAD")
    configured = False
    for rev in revs:
        subject = seriesrepo.git(tree, "log", "-1", "--format=%s", rev).strip()
        if not any(seriesrepo.touches(tree, rev, p) for p in BUILD_INPUTS):
            note(f"builds nothing new: {subject}")
            continue
        seriesrepo.git(tree, "checkout", "-q", rev)
        # Again where a patch may add a symbol the configuration names.
        if not configured or seriesrepo.touches(tree, rev, paths.CPUIDLE + "/Kconfig"):
            problems += configure(tree, build, STEP_CONFIG)
            configured = True
        (build / GOV / "teo.o").unlink(missing_ok=True)
        log = build / "step.log"
        status = _make(tree, build, paths.CPUIDLE + "/", w1=True, log=log)
        out = log.read_text(encoding="utf-8", errors="replace")
        if status != 0:
            problems.append(f"build at '{subject}' failed (log: {log})")
        elif re.search(r"warning|error", out):
            print(out, end="")
            problems.append(f"W=1 warnings at '{subject}'")
        elif not (build / GOV / "teo.o").is_file():
            problems.append(f"teo.o was not built at '{subject}'")
        elif (tree / GOV / "tests" / "teo_kunit.c").is_file() and \
                ".kunit_test_suites" not in process.output(
                    ["objdump", "-h", build / GOV / "teo.o"]).stdout:
            problems.append(f"teo.o has no KUnit suites at '{subject}'")
        else:
            note(f"builds (W=1, KUnit tests built in): {subject}")
    seriesrepo.git(tree, "checkout", "-q", "teo-checked")
    return problems


def strip_test_hooks(text: str) -> str:
    """teo.c without its test hooks: the blocks under the tests' Kconfig
    symbol and the redirections of the input wrappers."""
    text = re.sub(r"^#ifdef CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST\n.*?^#endif\n", "",
                  text, flags=re.M | re.S)
    return re.sub(r"^\s*TEO_TEST_REDIRECT\(.*\);\n", "", text, flags=re.M)


def _object_summary(obj: Path) -> str:
    dis = process.output(["objdump", "-d", "--no-show-raw-insn", obj]).stdout
    dis = dis.split("\n\n", 1)[1] if "\n\n" in dis else dis
    sizes = process.output(["size", "-A", obj]).stdout.splitlines()
    keep = [" ".join(line.split()[:2]) for line in sizes
            if re.match(r"\.(text|data|rodata|bss|init|exit)", line)]
    return dis + "\n".join(keep) + "\n"


def kunit_off_object(tree: Path, build: Path) -> Problems:
    """With CONFIG_KUNIT=n, teo.c compiles to the same code as the file
    with its test hooks stripped."""
    problems = configure(tree, build, PLAIN_CONFIG)
    if "CONFIG_KUNIT=y" in (build / ".config").read_text(encoding="utf-8"):
        return problems + ["the production configuration has CONFIG_KUNIT"]
    teo = tree / GOV / "teo.c"
    original = teo.read_text(encoding="utf-8")
    stripped = strip_test_hooks(original)
    if re.search("KUNIT|kunit", stripped):
        return problems + ["the stripped teo.c still has test hooks"]
    summaries = []
    try:
        for text in (original, stripped):
            teo.write_text(text, encoding="utf-8")
            (build / GOV / "teo.o").unlink(missing_ok=True)
            if _make(tree, build, f"{GOV}/teo.o", log=build / "nokunit.log") != 0:
                return problems + ["teo.o without KUnit did not build"]
            summaries.append(_object_summary(build / GOV / "teo.o"))
    finally:
        teo.write_text(original, encoding="utf-8")
    if summaries[0] != summaries[1]:
        return problems + ["CONFIG_KUNIT=n: teo.o differs from teo.c without"
                           " its test hooks"]
    count = sum(1 for line in summaries[1].splitlines() if line.startswith(" "))
    note(f"CONFIG_KUNIT=n: teo.o is the same code ({count} instructions, same"
         " section sizes) as teo.c without its test hooks")
    return problems


def _maintained(tree: Path, path: str) -> bool:
    run = process.output(["perl", "scripts/get_maintainer.pl", "--no-git",
                          "--no-git-fallback", "-f", path], cwd=tree)
    return CPU_IDLE_ENTRY in run.stdout


def _added_files(patch: Path) -> List[str]:
    found, current = [], ""
    for line in patch.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"diff --git a/\S+ b/(\S+)", line)
        if m:
            current = m.group(1)
        elif line.startswith("new file mode"):
            found.append(current)
    return found


def checkpatch(tree: Path, patches: Sequence[Path]) -> Problems:
    """checkpatch.pl --strict on every patch, nothing ignored up front.  The
    one question it asks of every new file outside a MAINTAINERS patch
    (FILE_PATH_CHANGES) is answered, not ignored: the patch is clean if
    every file it adds is already in the CPU IDLE entry."""
    problems = []
    for p in patches:
        findings = style.checkpatch_findings(tree, p, whole_file=False)
        answered = bool(findings) and all("FILE_PATH_CHANGES" in f for f in findings) \
            and all(_maintained(tree, f) for f in _added_files(p))
        if not findings or answered:
            note(f"checkpatch --strict clean: {p.name}")
        else:
            print("\n".join(findings))
            problems.append(f"checkpatch: {p.name}")
    return problems


def maintained(tree: Path, base: str) -> Problems:
    added = seriesrepo.git(tree, "diff", "--name-only", "--diff-filter=A", base,
                           "HEAD").split()
    problems = [f"{f} is not covered by the CPU IDLE entry of MAINTAINERS"
                for f in added if not _maintained(tree, f)]
    if not problems:
        note(f"MAINTAINERS: the CPU IDLE entry covers the {len(added)} files"
             " the series adds")
    return problems


def kernel_doc(tree: Path, base: str) -> Problems:
    files = seriesrepo.git(tree, "diff", "--name-only", base, "HEAD", "--",
                           "*.c", "*.h").split()
    problems = style.kernel_doc_files(tree, [tree / f for f in files])
    if not problems:
        note(f"kernel-doc -Wall: clean in the {len(files)} C files the series changes")
    return problems


def docs(tree: Path) -> Problems:
    """teo.rst as reStructuredText, with its kernel-doc directives."""
    rst = "Documentation/admin-guide/pm/teo.rst"
    if process.run([paths.PYTHON, paths.SCRIPTS / "check-rst.py", tree, rst],
                   env=process.debian_env()) != 0:
        return [f"{rst} is not valid reStructuredText"]
    note(f"{rst} is valid reStructuredText")
    return []


def htmldocs(tree: Path, out: Path, base: str) -> Problems:
    """The kernel's own Sphinx build of the admin guide, which holds every
    page the series touches; only warnings naming a file of the series
    count (pages outside the admin guide make others warn)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    log = out.with_suffix(".log")
    status = process.run_logged(["make", "-s", f"O={out}", "SPHINXDIRS=admin-guide",
                                 "htmldocs"], log, cwd=tree, env=process.debian_env(),
                                echo=open(os.devnull, "w", encoding="utf-8"))
    if status != 0:
        return [f"make htmldocs SPHINXDIRS=admin-guide failed (log: {log})"]
    text = log.read_text(encoding="utf-8", errors="replace")
    files = seriesrepo.git(tree, "diff", "--name-only", base, "HEAD", "--",
                           "Documentation", f"{GOV}/teo.c").split()
    bad = [line for line in text.splitlines()
           if re.search("WARNING|ERROR", line) and any(f"/{f}:" in line for f in files)]
    if bad:
        print("\n".join(bad))
        return ["make htmldocs warns about the series' files"]
    html = out / "Documentation/output/admin-guide/pm/teo.html"
    doc = re.search(r"DOC: teo-description\n(?: \*\n)* \* (\S+(?: \S+){0,4})",
                    (tree / GOV / "teo.c").read_text(encoding="utf-8"))
    if not doc or not html.is_file() or doc.group(1) not in \
            html.read_text(encoding="utf-8", errors="replace"):
        return [f"make htmldocs: {html} lacks the DOC section of teo.c"]
    note("make htmldocs: teo.html built with the DOC section of teo.c, no"
         " warnings in the series' files")
    return []


def selftests_build(tree: Path, out: Path) -> Problems:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    done = process.output(["make", "-s", "-C", "tools/testing/selftests",
                           "TARGETS=cpuidle-teo", f"O={out}"], cwd=tree,
                          env=process.debian_env())
    if done.returncode != 0:
        print(done.stderr)
        return ["kselftest build of cpuidle-teo"]
    note("the cpuidle-teo kselftests build")
    return []


def same_as_private_tree(tree: Path, private: Path, base: str) -> Problems:
    """The patched tree is the private tree of tree.prepare(): every file
    the series changes is the same in both (the private tree changes no
    other: it is the base with the queue's upstream changes and the
    overlay).  KUnit run in the private tree then ran this tree's code."""
    changed = seriesrepo.git(tree, "diff", "--name-only", base, "HEAD").split()
    differ = [f for f in changed if not _same_file(tree / f, private / f)]
    if differ:
        return [f"the patched tree and the private tree {private} differ in"
                f" {' '.join(differ[:5])}"]
    note(f"the patched tree equals the private tree in the {len(changed)} files"
         " the series changes")
    return []


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def kunit_in_tree() -> Problems:
    """The KUnit suites in the private tree, which same_as_private_tree
    showed to be the patched one: the build folder of 'scripts/teo kunit
    --sanitizers', so a check after that step builds only what changed."""
    try:
        line = kunit.run(kunit.SANITIZERS)
    except Fatal as err:
        return [f"KUnit in the patched tree: {err}"]
    note(f"KUnit in the patched tree: {line}")
    return []


def run_all(checks: Sequence[Callable[[], Problems]]) -> Problems:
    problems: Problems = []
    for check in checks:
        found = check()
        for p in found:
            note(f"FAIL: {p}")
        problems += found
    return problems
