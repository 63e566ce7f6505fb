# SPDX-License-Identifier: GPL-2.0
"""The replay lab (tools/idle-replay) as this repository builds it: the
base and mainline trees whose teo.c and menu.c are its baselines, the
governor sources it compiles, its build in the cache, the corpus of
idle-state tables it runs on, and its machine-readable answers.

The lab builds no kernel, so nothing here takes the machine-wide build
lock: a kernel build elsewhere never holds the lab up.
"""

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from teotool import deps, fetch, paths, process, tree
from teotool.ui import Fatal, UsageError, note

# The scenario families of the lab (its scenarios are named after them).
FAMILIES: Tuple[str, ...] = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "P", "X")
_SCENARIO = re.compile(r"(s[1-9]|p|x)-[a-z0-9-]+")
_LABEL = re.compile(r"[A-Za-z0-9._-]+")
# Labels the lab gives its own governors.
_LAB_LABEL = re.compile(r"oracle|ref-.*|teo|teo-traced|teo-[0-9].*|menu-[0-9].*")
# One lab process per core (each run is single-threaded) on the 2-core
# machines this is made for; the lab's own --jobs takes the same.
JOBS = 2

# A governor compiled into the lab: its label and its source.
Governor = Tuple[str, Path]


# --- input ----------------------------------------------------------------

def check_scenario(value: str) -> str:
    """A scenario name or family, checked for its form before anything is
    built (the lab itself says whether it exists)."""
    if value in FAMILIES or _SCENARIO.fullmatch(value):
        return value
    raise UsageError(f"--scenario '{value}' is neither a family ({' '.join(FAMILIES)})"
                     " nor a scenario name (s4-fio-nvme, ...; see 'list')")


def governor_source(path: str, what: str) -> Path:
    """path, absolute, if it is the source of a cpuidle governor (what the
    lab's shim can build): anything else would fail only later, in the
    compiler or the linker.  A usage error naming what otherwise."""
    if not os.path.isfile(path):
        raise UsageError(f"{what}: no such file: '{path}'")
    try:
        text = Path(path).read_bytes()
    except OSError:
        text = b""
    if b"struct cpuidle_governor" not in text:
        raise UsageError(f"{what}: '{path}' is not a cpuidle governor source"
                         " (no struct cpuidle_governor in it)")
    if re.search(r"[\s=]", path):
        raise UsageError(f"{what}: the path must not contain spaces or '=' (make"
                         f" cannot build it): '{path}'")
    return Path(os.path.abspath(path))


def parse_gov(arg: str, taken: Sequence[str] = ()) -> Governor:
    """One --gov LABEL=PATH, checked before anything is built; taken: the
    labels of the --gov options before it."""
    label, eq, path = arg.partition("=")
    if not eq:
        raise UsageError(f"--gov wants LABEL=PATH, got '{arg}'")
    if not _LABEL.fullmatch(label):
        raise UsageError(f"--gov label '{label}' is not a plain name (letters, digits, . _ -)")
    if _LAB_LABEL.fullmatch(label):
        raise UsageError(f"--gov label '{label}' is taken by the lab (oracle, ref-*,"
                         " teo, teo-traced, teo-X.Y, menu-X.Y)")
    if label in taken:
        raise UsageError(f"--gov label '{label}' given twice")
    return label, governor_source(path, f"--gov {label}")


# --- the trees -------------------------------------------------------------

@dataclass(frozen=True)
class Trees:
    """The base tree and the newest mainline tree (None: no mainline
    baselines) whose governors the lab runs beside ours."""
    base: Path
    mainline: Optional[Path] = None


def tree_problem(src: Path) -> str:
    """What tree src lacks of what the lab reads, or ""."""
    for rel in paths.LAB_TREE_FILES:
        if not (src / rel).is_file():
            return f"has no {rel}"
    if tree.kernel_version(src) is None:
        return "has no VERSION/PATCHLEVEL in its Makefile"
    return ""


def version_xy(src: Path) -> str:
    """"X.Y" of kernel tree src (the lab's labels teo-X.Y, menu-X.Y)."""
    version = tree.kernel_version(src)
    if version is None:
        raise Fatal(f"{src} has no VERSION/PATCHLEVEL in its Makefile")
    return f"{version[0]}.{version[1]}"


@contextlib.contextmanager
def _flock(path: Path) -> Iterator[None]:
    """A private lock of the lab's cache (no build: not the build lock)."""
    with open(path, "a", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _partial_base() -> Path:
    """The parts of Debian's base tarball the lab reads, unpacked once into
    its own cache folder without the build lock (tree.base_tree unpacks
    the whole tree under it, for kernel builds)."""
    dest = paths.replay_cache() / "base" / paths.DEBIAN_PKG
    if (dest / ".teo-unpacked").is_file():
        return dest
    tarball = paths.DEBIAN_TARBALL
    if not tarball.is_file():
        raise Fatal(f"no base tree: set KERNEL_SRC, or install {paths.DEBIAN_PKG}"
                    " (scripts/deps.sh)")
    deps.need_cmd("tar", "xz")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _flock(dest.parent / ".unpack.lock"):
        if (dest / ".teo-unpacked").is_file():
            return dest
        note(f"unpacking the lab's part of {tarball} (once)")
        members = [f"{paths.DEBIAN_PKG}/{m}" for m in paths.LAB_BASE_MEMBERS]
        with tempfile.TemporaryDirectory(prefix="unpack.", dir=dest.parent) as tmp:
            if process.run(["tar", "-xJf", tarball, "-C", tmp, "--wildcards",
                            *members]) != 0:
                raise Fatal(f"could not unpack {tarball}")
            shutil.rmtree(dest, ignore_errors=True)
            (Path(tmp) / paths.DEBIAN_PKG).rename(dest)
        (dest / ".teo-unpacked").touch()
    return dest


def base_tree(chosen: Optional[Path] = None) -> Path:
    """The pristine base tree whose teo.c and menu.c are baselines: chosen,
    else KERNEL_SRC, else Debian's as tree.base_tree unpacked it, else the
    lab's part of it."""
    src = str(chosen) if chosen else paths.kernel_src()
    if src:
        base = tree.check_kernel_src(src)
    elif (paths.debian_base() / ".teo-unpacked").is_file():
        base = paths.debian_base()
    else:
        base = _partial_base()
    problem = tree_problem(base)
    if problem:
        raise Fatal(f"base tree {base} {problem}")
    return base


def mainline_tree(fetch_it: bool) -> Optional[Path]:
    """The newest mainline tree: TEO_MAINLINE_SRC ('none': no mainline),
    else the newest Debian ships, fetched once when fetch_it, else only
    if it was fetched before."""
    chosen = os.environ.get("TEO_MAINLINE_SRC", "")
    if chosen == "none":
        return None
    if chosen:
        if not os.path.isdir(chosen):
            raise Fatal(f"TEO_MAINLINE_SRC={chosen} is not a folder")
        src = Path(os.path.abspath(chosen))
    elif fetch_it:
        try:
            src = fetch.newest()
        except Fatal as err:
            raise Fatal(f"cannot fetch the mainline baseline ({err}); TEO_MAINLINE_SRC=none"
                        " runs without it") from None
    else:
        try:
            src = fetch.newest(cached=True)
        except Fatal:
            return None
    problem = tree_problem(src)
    if problem:
        raise Fatal(f"mainline tree {src} {problem}")
    return src


def find_trees(fetch_mainline: bool, base_src: Optional[Path] = None) -> Trees:
    """The base tree (base_tree) and the mainline tree (mainline_tree); a
    mainline of the base's version adds no baselines."""
    base = base_tree(base_src)
    mainline = mainline_tree(fetch_mainline)
    if mainline is not None and version_xy(mainline) == version_xy(base):
        note(f"the mainline tree is Linux {version_xy(base)} like the base tree:"
             " no separate mainline baselines")
        mainline = None
    return Trees(base, mainline)


# --- governor sources made in the cache ------------------------------------

def _digest(*parts: bytes) -> str:
    h = hashlib.sha1()
    for part in parts:
        h.update(part)
    return h.hexdigest()[:12]


# The intercept test of the base tree's teo.c and the one of the variant
# "avoid selecting the deepest idle state over-eagerly" (the hits below
# the candidate count as well); the report shows that variant beside the
# base teo under the label teo-X.Y-seed001.
_OVER_EAGER_OLD = "if (2 * idx_intercept_sum > cpu_data->total - idx_hit_sum) {"
_OVER_EAGER_NEW = "if (2 * (idx_intercept_sum + idx_hit_sum) > cpu_data->total) {"


def over_eager_variant(base: Path) -> Governor:
    """The base tree's teo.c with the intercept test of the variant, copied
    with its gov.h into the cache: the patched file is never part of the
    repository."""
    src = base / paths.GOVERNORS
    teo, gov_h = (src / "teo.c").read_bytes(), (src / "gov.h").read_bytes()
    folder = paths.replay_cache() / "variants" / f"seed001-{_digest(teo, gov_h)}"
    if not (folder / "teo.c").is_file():
        text = teo.decode("utf-8", "surrogateescape")
        if _OVER_EAGER_OLD not in text:
            raise Fatal(f"the over-eager variant does not apply to {src / 'teo.c'}"
                        " (the intercept test differs)")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "gov.h").write_bytes(gov_h)
        new = folder / "teo.c.tmp"
        new.write_bytes(text.replace(_OVER_EAGER_OLD, _OVER_EAGER_NEW)
                        .encode("utf-8", "surrogateescape"))
        new.rename(folder / "teo.c")
    return f"teo-{version_xy(base)}-seed001", folder / "teo.c"


def intended_ids() -> List[str]:
    """The IDs tools/idle-replay/intended-differences lists, in order."""
    ids = []
    for line in paths.LAB_INTENDED.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            ids.append(words[0])
    return ids


def mutant_sources() -> List[Governor]:
    """Our teo.c (with its headers) with the mutant of each difference the
    intended-differences file lists applied, one copy per mutant in the
    cache, as mutant-ID.  A listed ID without a mutant is left to the
    gate, which names it."""
    deps.need_cmd("patch")
    ours = [paths.REPO / rel for rel in paths.OUR_GOVERNOR]
    found: List[Governor] = []
    for ident in intended_ids():
        patch = paths.TEO_MUTANTS / f"{ident}.patch"
        if not re.fullmatch(r"[A-Za-z0-9_-]+", ident) or not patch.is_file():
            continue
        key = _digest(*(f.read_bytes() for f in ours), patch.read_bytes())
        folder = paths.replay_cache() / "mutants" / f"{ident}-{key}"
        teo = folder / paths.GOVERNORS / "teo.c"
        if not teo.is_file():
            new = folder.with_name(folder.name + ".tmp")
            shutil.rmtree(new, ignore_errors=True)
            (new / paths.GOVERNORS).mkdir(parents=True)
            for f in ours:
                shutil.copyfile(f, new / paths.GOVERNORS / f.name)
            if process.output(["patch", "-s", "-f", "-p1", "--no-backup-if-mismatch",
                               "-d", new, "-i", patch]).returncode != 0:
                shutil.rmtree(new, ignore_errors=True)
                raise Fatal(f"mutant {patch} does not apply to {paths.GOVERNORS}/teo.c")
            shutil.rmtree(folder, ignore_errors=True)
            new.rename(folder)
        found.append((f"mutant-{ident}", teo))
    return found


# --- the build --------------------------------------------------------------

def _words(govs: Sequence[Governor]) -> str:
    return " ".join(f"{label}={src}" for label, src in govs)


@dataclass(frozen=True)
class Lab:
    """The lab with the governors of trees, extra ones (role extra: shown,
    never a baseline) and mutants (role mutant: the intended-differences
    gate alone runs them)."""
    trees: Trees
    extra: Tuple[Governor, ...] = ()
    mutants: Tuple[Governor, ...] = ()

    def make(self, out: Path, *targets: str, jobs: int = JOBS) -> List[str]:
        """The make command line that builds targets into folder out."""
        return ["make", "-s", f"-j{jobs}", "-C", str(paths.IDLE_REPLAY),
                f"BASE={self.trees.base}", f"MAINLINE={self.trees.mainline or ''}",
                f"O={out}", f"GOV_EXTRA={_words(self.extra)}",
                f"GOV_MUTANTS={_words(self.mutants)}", *targets]

    def folder(self) -> Path:
        """The build folder: one per repository (the binary names this
        repository's sources and platform folder, so a cache shared by
        two work trees keeps one build each) and set of governors."""
        key = "\n".join([str(paths.IDLE_REPLAY), str(self.trees.base),
                         str(self.trees.mainline or ""), _words(self.extra),
                         _words(self.mutants)]) + "\n"
        return paths.replay_cache() / f"build-{_digest(key.encode())}"

    def build(self, *binaries: str) -> Path:
        """Build binaries (idle-replay, idle-replay-asan); the folder."""
        deps.need_cmd("make", "gcc")
        out = self.folder()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError:
            raise Fatal(f"cannot create {out}; set TEO_CACHE to a writable folder") from None
        argv = self.make(out, *(str(out / b) for b in binaries))
        if process.run(argv, stdout=sys.stderr, env=process.debian_env()) != 0:
            raise Fatal("building the replay lab failed")
        return out


# --- the corpus -------------------------------------------------------------

def _extractor_digest() -> bytes:
    """The table extractor's sources, whichever files it is split into."""
    files = [paths.LAB_EXTRACT] + sorted(
        p for p in paths.IDLE_REPLAY.rglob("*.py")
        if p != paths.LAB_EXTRACT and paths.LAB_TESTS not in p.parents
        and not p.name.endswith("_test.py"))
    return b"".join(f.read_bytes() for f in files)


def _extracted(src: Path) -> Path:
    """The tables extracted from tree src, made once per tree and
    extractor."""
    key = _digest(f"{src}\n".encode(), _extractor_digest())
    out = paths.replay_cache() / "corpus" / f"{version_xy(src)}-{key}"
    if (out / "INDEX").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    new = Path(tempfile.mkdtemp(prefix=out.name + ".tmp.", dir=out.parent))
    try:
        if process.run([paths.PYTHON, paths.LAB_EXTRACT, src, new], stdout=sys.stderr,
                       env=process.debian_env()) != 0:
            raise Fatal(f"{paths.LAB_EXTRACT.name} failed on {src}")
        if not (out / "INDEX").is_file():
            shutil.rmtree(out, ignore_errors=True)
            new.rename(out)
    finally:
        shutil.rmtree(new, ignore_errors=True)
    return out


def extra_corpus() -> List[Path]:
    """The folders of TEO_CORPUS (':'-separated), absolute."""
    folders = []
    for entry in os.environ.get("TEO_CORPUS", "").split(":"):
        if not entry:
            continue
        if not os.path.isdir(entry):
            raise Fatal(f"TEO_CORPUS: {entry} is not a folder")
        folders.append(Path(os.path.abspath(entry)))
    return folders


def corpus(trees: Trees) -> List[str]:
    """The lab's --data options: the hand-written tables, those extracted
    from the trees, and TEO_CORPUS."""
    more = extra_corpus()
    folders = [paths.LAB_PLATFORMS]
    if paths.LAB_EXTRACT.is_file():
        deps.need_cmd("python3")
        folders += [_extracted(t) for t in (trees.base, trees.mainline) if t is not None]
    args = []
    for folder in folders + more:
        args += ["--data", str(folder)]
    return args


# --- running it -------------------------------------------------------------

@dataclass(frozen=True)
class Command:
    """A lab command whose output (stderr too) goes to a log."""
    argv: Tuple[str, ...]
    log: Path
    env: Optional[Mapping[str, str]] = None


def run_lanes(lanes: Sequence[Sequence[Command]], parallel: int = JOBS) -> List[List[int]]:
    """Run the commands of each lane in turn, up to `parallel` lanes at
    once, each command in a process group of its own (stopped if this
    unwinds); the exit status of every command, lane by lane."""
    status: List[List[int]] = [[] for _ in lanes]
    waiting = [i for i, lane in enumerate(lanes) if lane]
    running: Dict[int, "subprocess.Popen[bytes]"] = {}
    with contextlib.ExitStack() as stack:
        def start(lane: int) -> None:
            cmd = lanes[lane][len(status[lane])]
            log = stack.enter_context(open(cmd.log, "w", encoding="utf-8"))
            running[lane] = stack.enter_context(process.group(
                cmd.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=process.debian_env(cmd.env)))

        while waiting or running:
            while waiting and len(running) < parallel:
                start(waiting.pop(0))
            time.sleep(0.1)
            for lane, proc in list(running.items()):
                if proc.poll() is None:
                    continue
                status[lane].append(proc.returncode)
                del running[lane]
                if len(status[lane]) < len(lanes[lane]):
                    start(lane)
    return status


def grep_after(lines: Sequence[str], pattern: str, after: int, limit: int) -> List[str]:
    """The lines matching pattern, each with up to `after` lines after it
    and "--" between groups that do not touch, as grep -A shows them;
    at most limit lines."""
    rx = re.compile(pattern)
    shown: List[str] = []
    last = -1
    until = -1
    for i, line in enumerate(lines):
        if rx.search(line):
            if shown and i > last + 1:
                shown.append("--")
            until = i + after
        if i <= until:
            shown.append(line)
            last = i
    return shown[:limit]


def read_count_rows(path: Path) -> List[Dict[str, int]]:
    """A table of counts the lab wrote: a header row, then rows of whole
    numbers (one per pair of a differential chain)."""
    try:
        rows = path.read_text(encoding="utf-8").splitlines()
        header = rows[0].split("\t")
        table = []
        for row in rows[1:]:
            values = row.split("\t")
            if len(header) != len(values):
                raise ValueError("ragged")
            table.append({name: int(value) for name, value in zip(header, values)})
        if not table:
            raise ValueError("no rows")
        return table
    except (OSError, IndexError, ValueError):
        raise Fatal(f"{path}: no table of counts (a header row and rows of"
                    " whole numbers)") from None


def read_counts(path: Path) -> Dict[str, int]:
    """A table of counts the lab wrote with one row of numbers."""
    table = read_count_rows(path)
    if len(table) != 1:
        raise Fatal(f"{path}: {len(table)} rows of counts where one was expected")
    return table[0]


@dataclass(frozen=True)
class LabGovernor:
    """A governor compiled into a lab binary, as its 'list --tsv' names it."""
    label: str
    role: str
    source: str


@dataclass(frozen=True)
class Listing:
    """What a lab binary has: its governors (oracle first), the tables of
    its corpus and its scenarios with their families."""
    governors: Tuple[LabGovernor, ...]
    platforms: Tuple[str, ...]
    scenarios: Tuple[Tuple[str, str], ...]


def listing(binary: Path, data: Sequence[str] = (),
            env: Optional[Mapping[str, str]] = None) -> Listing:
    """The 'list --tsv' of a lab binary with the corpus options data."""
    run = process.output([binary, "list", "--tsv", *data], env=process.debian_env(env))
    if run.returncode != 0:
        raise Fatal(f"{binary} list --tsv failed: {run.stderr.strip()}")
    govs, plats, scenarios = [], [], []
    for row in run.stdout.splitlines():
        cells = row.split("\t")
        if cells[0] == "governor" and len(cells) == 4:
            govs.append(LabGovernor(cells[1], cells[2], cells[3]))
        elif cells[0] == "platform" and len(cells) == 3:
            plats.append(cells[1])
        elif cells[0] == "scenario" and len(cells) == 4:
            scenarios.append((cells[1], cells[2]))
    return Listing(tuple(govs), tuple(plats), tuple(scenarios))


def governors(binary: Path, env: Optional[Mapping[str, str]] = None) -> List[LabGovernor]:
    """The governors of a lab binary, oracle first."""
    found = list(listing(binary, env=env).governors)
    if not found:
        raise Fatal(f"{binary} list --tsv names no governor")
    return found


def validate(binary: Path, files: Sequence[str]) -> None:
    """Files for the lab (a trace, a table) checked with its validate
    command, whose one line names the file, the line and what is wrong."""
    for f in files:
        run = process.output([binary, "validate", f], env=process.debian_env())
        if run.returncode != 0:
            lines = [line.removeprefix("idle-replay: ") for line in run.stderr.splitlines()]
            raise Fatal("; ".join(lines) or f"{f}: the lab does not take it")
