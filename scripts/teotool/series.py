# SPDX-License-Identifier: GPL-2.0
"""scripts/teo series: export the patch queue of a base as mails, check
them, and show where the overlay and the queue part.

The export imports the base's queue (queue.py) onto the base tree as git
commits (seriesrepo.py), checks that it lays in exactly the overlay, has
the replay lab check every claim about decisions (claims.py), writes the
cover letter with what was measured on this base (cover.py), and lets b4
make the mails (b4prep.py).  The check applies those mails with git am to
a fresh checkout of the base and runs the checks of seriescheck.py.
"""

import argparse
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

from teotool import (b4prep, claims, cover, deps, paths, process, queue,
                     seriescheck, seriesrepo, tree)
from teotool.ui import Fatal, UsageError, note


DESCRIPTION = """\
The series lives in series/ as quilt patch queues, one per base:
series/6.12/ for the 6.12 LTS tree, series/mainline/ for the newest
mainline tree Debian ships (scripts/teo fetch --newest).  KERNEL_SRC picks
the base, and the base its queue.

export  Import the queue onto a git copy of the base (signed off with your
        git identity), check that it lays in exactly this repository's
        overlay, have the replay lab check every claim about decisions (the
        queue's differentials file, "no functional change"), and let b4
        make the mails: the cover letter (the queue's cover-letter and what
        was measured on this base), the revision, To/Cc from the base's
        get_maintainer.pl plus series/cc.  The mails go to DIR; the b4
        branch is left for b4 send and b4 prep --compare-to.
check   Apply the mails in DIR (default: a fresh export) with git am to a
        fresh checkout of the base and check them: checkpatch --strict,
        MAINTAINERS, kernel-doc, teo.rst and make htmldocs, the kselftest
        build, a W=1 build of drivers/cpuidle at every patch that changes
        what it builds from, teo.o without KUnit equal to teo.c without its
        test hooks, and the KUnit suites in the patched tree.
status  Print how the overlay differs from what the queue lays in: the diff
        a new patch, or a quilt refresh, must hold (exit 1 if any).

To edit a patch, use quilt on a checkout of the base with QUILT_PATCHES
pointing at the queue (QUILT_REFRESH_ARGS="-p ab --no-timestamps
--no-index" keeps the patches in git's format).
"""


# --- the base --------------------------------------------------------------

@dataclass(frozen=True)
class Base:
    """A base tree, named as the cover letter names it."""
    path: Path
    version: queue.Version
    name: str        # "7.3-rc7", "6.12.118": as releases are named
    release: str     # "7.3.0-rc7": as uname -r shows it
    upstream: bool   # a clean git checkout: teo-base is an upstream commit
    text: str        # the cover letter's sentence naming it


def _makefile(src: Path) -> "dict[str, str]":
    text = (src / "Makefile").read_text(encoding="utf-8", errors="replace")
    return {k: (m.group(1).strip() if (m := re.search(rf"^{k} =(.*)$", text, re.M))
                else "") for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION")}


def release_names(src: Path) -> "tuple[str, str]":
    mk = _makefile(src)
    v, p, s, extra = mk["VERSION"], mk["PATCHLEVEL"], mk["SUBLEVEL"] or "0", mk["EXTRAVERSION"]
    name = f"{v}.{p}{extra}" if s == "0" else f"{v}.{p}.{s}{extra}"
    return name, f"{v}.{p}.{s}{extra}"


def debian_upstream(version: str) -> str:
    """The upstream part of a Debian version, as the kernel names it:
    "7.3~rc7-1~exp1" -> "7.3-rc7", "6.12.117-1~deb12u1" -> "6.12.117"."""
    v = version.split(":", 1)[-1].rsplit("-", 1)[0]
    return v.replace("~", "-")


def debian_package(src: Path, name: str) -> Optional[str]:
    """"PACKAGE VERSION" of the Debian linux-source package src was
    unpacked from, when dpkg or the apt lists of scripts/teo fetch confirm
    that its upstream version is the tree's."""
    pkg = src.name
    if not re.fullmatch(r"linux-source-[0-9.]+", pkg):
        return None
    dpkg = process.output(["dpkg-query", "-W", "-f=${Version}", pkg])
    if dpkg.returncode == 0 and debian_upstream(dpkg.stdout.strip()) == name:
        return f"{pkg} {dpkg.stdout.strip()}"
    apt = src.parent.parent / "apt"
    if not (apt / "sources.list").is_file():
        return None
    madison = process.output([
        "apt-cache", "-o", f"Dir::Etc::sourcelist={apt / 'sources.list'}",
        "-o", "Dir::Etc::sourceparts=-", "-o", f"Dir::State::Lists={apt / 'lists'}",
        "-o", f"Dir::Cache={apt / 'cache'}", "madison", pkg])
    versions = {line.split("|")[1].strip() for line in madison.stdout.splitlines()
                if line.count("|") >= 2}
    if len(versions) != 1:
        return None
    ver = versions.pop()
    return f"{pkg} {ver}" if debian_upstream(ver) == name else None


def identify_base(src: Path) -> Base:
    version = tree.check_kernel_tree(src)
    name, release = release_names(src)
    if seriesrepo.is_clean_checkout(src):
        return Base(src, version, name, release, True,
                    f"Based on Linux {name}, the upstream commit named by"
                    " base-commit below.")
    pkg = debian_package(src, name)
    if not pkg:
        raise Fatal(f"cannot name the base: {src} is neither a clean git checkout"
                    " nor an unpacked Debian linux-source package whose version"
                    " dpkg or the apt lists of 'scripts/teo fetch' confirm")
    package, ver = pkg.split(" ", 1)
    return Base(src, version, name, release, False,
                f"Based on Linux {name} as Debian ships it: package {package},"
                f" version {ver}.  That tree carries no git history, so no"
                " base-commit is given.")


# --- export -------------------------------------------------------------------

@dataclass
class Export:
    """What an export made, for the check that may follow it."""
    base: Base
    q: queue.Queue
    repo: Path
    work: Path
    mails: List[Path]


def work_dir(base: Base) -> Path:
    return paths.cache() / "series" / tree.tree_key(base.path)


def check_overlay(repo: Path, tip: str, q: queue.Queue) -> None:
    """The queue must lay in exactly the overlay's files."""
    want = seriesrepo.overlay_tree(repo, tip)
    have = seriesrepo.git(repo, "rev-parse", f"{tip}^{{tree}}").strip()
    if want != have:
        files = seriesrepo.git(repo, "diff", "--name-only", have, want).split()
        raise Fatal(f"the queue {q.folder.relative_to(paths.REPO)} does not lay in"
                    f" the overlay: {' '.join(files)} differ ('scripts/teo series"
                    " status' shows how)")


def lab_report(base: Base, out: Path) -> Path:
    """The lab's report on this base; its families.tsv.  Our teo in the
    lab is the overlay's, which check_overlay showed to be the queue's."""
    shutil.rmtree(out, ignore_errors=True)
    log = out.with_suffix(".log")
    env = process.debian_env({"KERNEL_SRC": str(base.path)})
    with open(log, "w", encoding="utf-8") as f:
        status = process.run([paths.ENTRY, "replay", "report", "--out", out],
                             env=env, stdout=f, stderr=f)
    if status != 0:
        raise Fatal(f"scripts/teo replay report failed (log: {log}); no measured"
                    " numbers, no series")
    families = out / "families.tsv"
    if not families.is_file():
        raise Fatal(f"the lab's report wrote no {families}")
    return families


def cover_letter(ex: Export, families: Path, whole: Optional[claims.Counts]) -> str:
    """The queue's own text, then what was measured on this base."""
    text = ex.q.cover_text.rstrip() + "\n\n" + cover.wrap(ex.base.text)
    text += "\n" + cover.lab_section(families, ex.base.name)
    if whole is None or whole.total == 0:
        text += "\n" + cover.wrap("The series' teo and the base's take the same"
                                  " state and tick decision at every step of"
                                  " the replay.")
    else:
        text += "\n" + cover.wrap(
            f"The series' teo and the base's decide differently in {whole.total}"
            f" of the cases compared ({whole.runs} scenario runs on real idle-state"
            f" tables plus a set of random tables; {whole.all_decisions:,}"
            " decisions).")
    text += "\n" + cover.vm_section(ex.base.name, ex.base.release)
    if whole is not None and whole.total and claims.NO_CHANGE.search(ex.q.cover_text):
        raise Fatal(f"{ex.q.folder.name}/cover-letter claims teo decides as"
                    f" before, but on Linux {ex.base.name} the series' teo decides"
                    f" differently in {whole.total} cases")
    cover.check_size(text)
    cover.check_placeholders(text)
    return text


def export(out: Optional[Path], revision: int,
           who: Optional[seriesrepo.Identity] = None) -> Export:
    deps.need_cmd("git", "perl", "b4", "python3")
    who = who or seriesrepo.user_identity()
    base = identify_base(tree.base_tree())
    q = queue.read_queue(queue.queue_name(base.version))
    queue.read_cc()
    out = out or paths.cache() / "series" / "out" / f"{q.name}-v{revision}"
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Fatal(f"output folder {out} is not empty; remove it or choose"
                    " another with --out")
    work = work_dir(base)
    repo = seriesrepo.base_repo(base.path, work / "repo.git")
    commits = seriesrepo.import_queue(repo, q, who, where=f"Linux {base.name}")
    check_overlay(repo, commits[-1], q)
    note(f"{q.name}: {len(commits)} patches lay in the overlay on Linux {base.name}")
    judged = work / "lab"
    shutil.rmtree(judged, ignore_errors=True)
    judged.mkdir(parents=True)
    steps = claims.governor_steps(repo, q, commits, judged / "gov")
    _, whole = claims.judge(q, steps, base.path, base.name, judged)
    ex = Export(base, q, repo, work, [])
    letter = cover_letter(ex, lab_report(base, judged / "report"), whole)
    b4tree = work / "b4"
    b4prep.prepare_branch(repo, b4tree, who, base.upstream)
    b4prep.set_cover(b4tree, q.cover_subject, letter, queue.read_cc())
    b4prep.set_revision(b4tree, revision)
    b4prep.add_recipients(b4tree)
    out.parent.mkdir(parents=True, exist_ok=True)
    ex.mails = b4prep.write_mails(b4tree, out)
    note(f"wrote {len(ex.mails)} mails for Linux {base.name} to {out}")
    note(f"branch {b4prep.BRANCH} in {b4tree} is b4's: b4 prep --edit-cover,"
         " b4 send, b4 prep --compare-to there")
    return ex


# --- check ----------------------------------------------------------------------

def _patches(folder: Path) -> List[Path]:
    found = sorted(folder.glob("*.patch")) + sorted(folder.glob("*.eml"))
    return [p for p in sorted(found) if not p.name.startswith("0000-")]


def check(folder: Optional[Path]) -> None:
    if folder is not None:
        if not folder.is_dir():
            raise UsageError(f"check: '{folder}' is not a folder")
        if not _patches(folder):
            raise UsageError(f"check: '{folder}' holds no *.patch or *.eml mails")
    deps.need_cmd("git", "perl", "python3", "make", "objdump", "size")
    if folder is None:
        ex = export(_fresh_out(), 1,
                    seriesrepo.Identity("teo series check", "check@invalid"))
        folder, base, work, repo = ex.mails[0].parent, ex.base, ex.work, ex.repo
    else:
        base = identify_base(tree.base_tree())
        work = work_dir(base)
        repo = seriesrepo.base_repo(base.path, work / "repo.git")
    patches = _patches(folder)
    src = seriesrepo.work_tree(repo, work / "src", seriesrepo.BASE_REF, "teo-checked")
    am = process.output(["git", "-C", str(src), "-c", "user.name=check", "-c",
                         "user.email=check@invalid", "am", "-q", *patches])
    if am.returncode != 0:
        process.output(["git", "-C", str(src), "am", "--abort"])
        raise Fatal(f"the series does not apply to Linux {base.name} with git am:"
                    f" {(am.stderr.strip().splitlines() or [''])[-1]}")
    note(f"git am: {len(patches)} patches apply to Linux {base.name}")
    if seriesrepo.overlay_tree(src, "HEAD") != seriesrepo.git(
            src, "rev-parse", "HEAD^{tree}").strip():
        raise Fatal(f"the mails in {folder} do not lay in this repository's"
                    f" overlay on Linux {base.name}")
    b = seriesrepo.BASE_REF
    private = tree.prepare() / "src"
    problems = seriescheck.run_all([
        lambda: seriescheck.checkpatch(src, patches),
        lambda: seriescheck.maintained(src, b),
        lambda: seriescheck.kernel_doc(src, b),
        lambda: seriescheck.docs(src),
        lambda: seriescheck.htmldocs(src, work / "htmldocs", b),
        lambda: seriescheck.selftests_build(src, work / "selftests"),
        lambda: seriescheck.every_patch_builds(src, work / "build-step", b),
        lambda: seriescheck.kunit_off_object(src, work / "build-nokunit"),
        lambda: seriescheck.same_as_private_tree(src, private, b)
        or seriescheck.kunit_in_tree(),
    ])
    if problems:
        raise Fatal(f"series checks on Linux {base.name} failed: {len(problems)}"
                    " problems (above)")
    note(f"series checks on Linux {base.name} passed")


def _fresh_out() -> Path:
    out = paths.cache() / "series" / "check-export"
    shutil.rmtree(out, ignore_errors=True)
    return out


# --- status ---------------------------------------------------------------------

def status() -> int:
    """Print how the overlay differs from what the queue lays in: empty
    when they agree, else the diff a new patch (or a quilt refresh of the
    last one) must hold."""
    base = identify_base(tree.base_tree())
    q = queue.read_queue(queue.queue_name(base.version))
    work = work_dir(base)
    repo = seriesrepo.base_repo(base.path, work / "repo.git")
    who = seriesrepo.Identity("status", "status@invalid")
    tip = seriesrepo.import_queue(repo, q, who, ref="teo-status",
                                  where=f"Linux {base.name}")[-1]
    diff = seriesrepo.git(repo, "diff", tip, seriesrepo.overlay_tree(repo, tip))
    print(diff, end="")
    note(f"{q.name}: the queue lays in the overlay" if not diff else
         f"{q.name}: the overlay differs from what the queue lays in (diff above)")
    return 0 if not diff else 1


# --- command line -----------------------------------------------------------------

def add_parser(sub: "argparse._SubParsersAction[Any]", parser_class: type) -> None:
    """The series command and its subcommands, with parser_class (the
    entry point's one-line errors) for each."""
    p = sub.add_parser("series", help="export or check the patch series",
                       description=DESCRIPTION, allow_abbrev=False,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    cmds: "argparse._SubParsersAction[Any]" = p.add_subparsers(
        title="commands", metavar="COMMAND", dest="series_cmd",
        parser_class=parser_class)
    e = cmds.add_parser("export", help="the mails of the base's queue, made by b4")
    e.add_argument("--version", type=_revision, default=1, metavar="N",
                   help="the revision (b4 prep --force-revision; default 1)")
    e.add_argument("--out", type=Path, metavar="DIR",
                   help="an empty or new folder (default"
                   " $TEO_CACHE/series/out/QUEUE-vN)")
    c = cmds.add_parser("check", help="apply mails with git am and check them")
    c.add_argument("folder", nargs="?", type=Path, metavar="DIR",
                   help="mails of an export (default: export afresh first)")
    cmds.add_parser("status", help="how the overlay differs from the queue")
    p.set_defaults(func=run)


def _revision(text: str) -> int:
    if not re.fullmatch(r"[1-9][0-9]*", text):
        raise UsageError(f"--version: '{text}' is not a positive whole number")
    return int(text)


def run(args: argparse.Namespace) -> int:
    if args.series_cmd == "export":
        export(args.out, args.version)
        return 0
    if args.series_cmd == "check":
        check(args.folder)
        return 0
    if args.series_cmd == "status":
        return status()
    raise UsageError("series needs a command: export, check or status")
