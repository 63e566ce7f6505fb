# SPDX-License-Identifier: GPL-2.0
"""scripts/deps.list: the Debian packages the tooling needs, their
installation, and the audit that every program a check ran came from one.

deps.list has one line per package: the package, then the commands it
provides to the tooling (comma-separated, "-" for none), then why.
"""

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from teotool import paths
from teotool.ui import Fatal, note

Entry = Tuple[str, List[str]]

# Programs that a listed tool runs only when the machine happens to have
# them, and that nothing of ours needs.  Keep this short: everything else
# a step runs must be covered by deps.list.
OPTIONAL_PROGRAMS: Dict[str, str] = {
    "/usr/bin/gpgconf": "apt-key, under apt's signature checks, stops gpg"
                        " agents with it when it is installed",
}


def read_list(path: Optional[Path] = None) -> List[Entry]:
    """The (package, commands) entries of a deps list."""
    entries = []
    for line in (path or paths.DEPS_LIST).read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if line.startswith("#") or len(fields) < 2:
            continue
        cmds = [] if fields[1] == "-" else fields[1].split(",")
        entries.append((fields[0], cmds))
    return entries


def package_of(cmd: str, path: Optional[Path] = None) -> Optional[str]:
    """The package deps.list says provides cmd to the tooling."""
    for pkg, cmds in read_list(path):
        if cmd in cmds:
            return pkg
    return None


def which(cmd: str) -> Optional[str]:
    """cmd as Debian's PATH finds it."""
    return shutil.which(cmd, path=paths.DEBIAN_PATH)


def need_cmd(*cmds: str) -> None:
    """Fail with the package to install unless every command is there."""
    for cmd in cmds:
        if which(cmd):
            continue
        pkg = package_of(cmd)
        if not pkg:
            raise Fatal(f"'{cmd}' not found, and scripts/deps.list names no"
                        " package for it (a bug: add it there)")
        raise Fatal(f"'{cmd}' not found: it comes from the Debian package {pkg};"
                    f" run 'scripts/deps.sh' as root (or: apt-get install {pkg})")


def _run(argv: Sequence[str]) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PATH=paths.DEBIAN_PATH, LC_ALL="C")
    return subprocess.run(list(argv), capture_output=True, text=True,
                          env=env, check=False)


def installed_packages(pkgs: Iterable[str]) -> Set[str]:
    """Those of pkgs that dpkg has installed."""
    run = _run(["dpkg-query", "-W", "-f", "${Package} ${Status}\n", *pkgs])
    return {line.split()[0] for line in run.stdout.splitlines()
            if line.endswith(" install ok installed")}


def missing_packages(path: Optional[Path] = None) -> List[str]:
    pkgs = [pkg for pkg, _ in read_list(path)]
    have = installed_packages(pkgs)
    return [pkg for pkg in pkgs if pkg not in have]


def probe_commands(path: Optional[Path] = None) -> List[str]:
    """Every listed command whose installed package does not provide it."""
    return [f"package {pkg} is installed but provides no '{cmd}' command"
            " (scripts/deps.list is wrong)"
            for pkg, cmds in read_list(path) for cmd in cmds if not which(cmd)]


def install(check_only: bool) -> int:
    """Install the missing packages (or, check_only, list them)."""
    missing = missing_packages()
    if missing and check_only:
        note(f"missing packages: {' '.join(missing)}")
        return 1
    if missing:
        names = " ".join(missing)
        if os.geteuid() != 0:
            raise Fatal(f"missing packages: {names}; run 'sudo scripts/deps.sh'"
                        f" (or: apt-get install {names})")
        note(f"installing: {names}")
        env = dict(os.environ, PATH=paths.DEBIAN_PATH, DEBIAN_FRONTEND="noninteractive")
        for argv in (["apt-get", "update", "-q"],
                     ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]):
            if subprocess.run(argv, env=env, check=False).returncode != 0:
                raise Fatal(f"{' '.join(argv[:2])} failed")
    problems = probe_commands()
    for line in problems:
        note(line)
    return 1 if problems else 0


# --- lint -----------------------------------------------------------------

_PY_NEED = re.compile(r"need_cmd\(([^)]*)\)")


def needed_commands() -> Set[str]:
    """Commands the modules of this package check for (need_cmd, then the
    commands as string literals); the tests' own calls are not counted."""
    found: Set[str] = set()
    modules = [m for m in sorted(paths.PACKAGE.glob("*.py"))
               if not m.name.endswith("_test.py") and m.name != "testing.py"]
    for module in modules:
        for args in _PY_NEED.findall(module.read_text(encoding="utf-8")):
            found |= set(re.findall(r'"([A-Za-z0-9_.+-]+)"', args))
    return found


def apt_known(pkgs: Sequence[str]) -> Set[str]:
    run = _run(["apt-cache", "show", "--no-all-versions", *pkgs])
    return set(re.findall(r"^Package: (\S+)$", run.stdout, re.M))


def lint(path: Optional[Path] = None) -> List[str]:
    """Problems of deps.list: unknown packages, a command listed twice, a
    needed command not listed (its error could not name a package)."""
    path = path or paths.DEPS_LIST
    entries = read_list(path)
    known = apt_known([pkg for pkg, _ in entries])
    problems = [f"{path}: package {pkg} is unknown to apt (run apt-get update?)"
                for pkg, _ in entries if pkg not in known]
    seen: Set[str] = set()
    for _, cmds in entries:
        for cmd in cmds:
            if cmd in seen:
                problems.append(f"{path}: command {cmd} is listed twice")
            seen.add(cmd)
    problems += [f"need_cmd {cmd}: the command is not in {path}"
                 for cmd in sorted(needed_commands() - seen)]
    return problems


# --- the exec audit ---------------------------------------------------------

_EXECVE = re.compile(r'^[0-9]* *execve\("([^"]*)"')


def executed_programs(folder: Path) -> List[Tuple[str, str]]:
    """(step, program) for every distinct program the logs in folder show
    as executed, with the first step that ran it.  FOLDER/*.strace are
    strace -f -z logs (successful execve calls only); FOLDER/*.execs
    plain lists of paths (from the test VM, say)."""
    first: Dict[str, str] = {}
    for log in sorted(folder.glob("*.strace")) + sorted(folder.glob("*.execs")):
        text = log.read_text(encoding="utf-8", errors="replace")
        if log.suffix == ".strace":
            progs = [m.group(1) for m in map(_EXECVE.match, text.splitlines()) if m]
        else:
            progs = [line for line in text.splitlines() if line.startswith("/")]
        for prog in sorted(set(progs)):
            first.setdefault(prog, log.stem)
    return sorted(((step, prog) for prog, step in first.items()), key=lambda sp: sp[1])


def is_ours(prog: str) -> bool:
    """Built or checked out by the tooling?  A relative path is a program
    a build runs from its own tree (the kernel's scripts/basic/fixdep):
    nothing on the system is run that way."""
    if not prog.startswith("/"):
        return True
    roots = [str(paths.REPO), str(paths.cache()), paths.kernel_src() or "/nonexistent",
             "/tmp", "/proc"]
    return any(prog.startswith(root.rstrip("/") + "/") for root in roots)


def _candidates(prog: str) -> List[str]:
    """prog, its merged-/usr twin and the target of its links."""
    names = [prog, "/usr" + prog, prog[4:] if prog.startswith("/usr/") else prog,
             os.path.realpath(prog)]
    return list(dict.fromkeys(names))


def owners(progs: Iterable[str]) -> Dict[str, str]:
    """The package that owns each program ("-" for none), dpkg-query once."""
    progs = list(progs)
    cands = sorted({c for p in progs for c in _candidates(p)})
    owner: Dict[str, str] = {}
    if cands:
        for line in _run(["dpkg-query", "-S", *cands]).stdout.splitlines():
            pkgs, sep, path = line.partition(": ")
            # "diversion by PKG from: PATH" lines name no owner.
            if sep and not pkgs.startswith("diversion by "):
                owner.setdefault(path, re.split(r"[:,]", pkgs)[0])
    return {p: next((owner[c] for c in _candidates(p) if c in owner), "-")
            for p in progs}


def covered_packages(path: Path) -> Set[str]:
    """The packages apt installs for deps.list (Depends and Pre-Depends,
    recursively, every alternative counted)."""
    return set(_covered(tuple(pkg for pkg, _ in read_list(path))))


@functools.lru_cache(maxsize=8)
def _covered(pkgs: Tuple[str, ...]) -> FrozenSet[str]:
    run = _run(["apt-cache", "depends", "--recurse", "--no-recommends",
                "--no-suggests", "--no-conflicts", "--no-breaks",
                "--no-replaces", "--no-enhances", *pkgs])
    covered = set()
    for line in run.stdout.splitlines():
        m = re.match(r"^ *\|?(?:Pre)?Depends: (.*)", line)
        name = m.group(1) if m else (line if line and not line[0].isspace() else "")
        name = name.replace("<", "").replace(">", "").replace("|", "").strip()
        if name:
            covered.add(name.split()[0])
    return frozenset(covered)


def is_required(pkg: str) -> bool:
    text = _run(["apt-cache", "show", "--no-all-versions", pkg]).stdout
    return bool(re.search(r"^(Priority: required|Essential: yes)$", text, re.M))


def audit(folder: Path, path: Optional[Path] = None) -> Tuple[bool, List[str]]:
    """Check that every program run outside the repository, its cache and
    the base tree comes from a package deps.list names, a package those
    depend on, or Debian's required core.  Returns (clean, report)."""
    path = path or paths.DEPS_LIST
    if not folder.is_dir():
        raise Fatal(f"audit: {folder} is not a folder")
    covered = covered_packages(path)
    if not covered:
        raise Fatal(f"audit: apt-cache knows none of the packages of {path}"
                    " (run apt-get update)")
    executed = executed_programs(folder)
    if not executed:
        raise Fatal(f"audit: no executed programs recorded in {folder}")
    outside = [(step, prog) for step, prog in executed if not is_ours(prog)]
    owner = owners(prog for _, prog in outside)
    report, clean = [], True
    for step, prog in outside:
        pkg = owner[prog]
        if prog in OPTIONAL_PROGRAMS:
            report.append(f"step {step} ran {prog}: optional ({OPTIONAL_PROGRAMS[prog]})")
        elif pkg == "-":
            report.append(f"step {step} ran {prog}, which no Debian package"
                          " provides (installed by hand?)")
            clean = False
        elif pkg not in covered and not is_required(pkg):
            report.append(f"step {step} ran {prog} from package {pkg}, which"
                          " scripts/deps.list does not list (nor a package it"
                          " lists depends on it)")
            clean = False
    if clean:
        report.append(f"exec audit: {len(outside)} distinct programs outside the"
                      " repository, all from listed or required packages")
    return clean, report
