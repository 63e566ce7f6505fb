# SPDX-License-Identifier: GPL-2.0
"""scripts/teo replay: the replay lab (tools/idle-replay) built against the
base tree and the newest mainline tree, and its commands: the report, the
gates (labcheck), the targets, the draft of the documented misses
(misses), the strict differential, the overhead measurement, the trace
converter, and the lab's own run and list.

Every argument is checked before anything is built or fetched.  The other
commands of the tooling use the functions here (diff, report) rather than
the command line.
"""

import argparse
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from teotool import deps, lab, labcheck, labsteps, misses, paths, process
from teotool.ui import Fatal, UsageError, note

HELP = "the replay lab: report, gates, targets, misses, differential, trace converter"

DESCRIPTION = """\
The replay lab (tools/idle-replay) runs governor sources, compiled
unmodified against a small kernel-API shim, on simulated idle timelines
next to an oracle: our teo.c, the base tree's teo.c and menu.c, the newest
mainline tree's, and any source given with --gov.  Each command builds the
lab it needs into $TEO_CACHE/replay (never taking the kernel build lock).

Environment: KERNEL_SRC (base tree; default: Debian's linux-source-6.12),
TEO_MAINLINE_SRC (a mainline tree, or 'none'; default: the newest Debian
ships, fetched once by 'scripts/teo fetch --newest'), TEO_CORPUS (more
folders of .plat files, ':'-separated), TEO_CACHE.  The lab:
tools/idle-replay/README."""

COUNT_COLUMNS = ("runs", "decisions", "divergent", "random_cases", "random_decisions",
                 "random_divergent")

ENV_NOTE = "Environment and trees: scripts/teo replay --help."

REPORT = """\
Replay every scenario on every table of the corpus through the oracle, our
teo, the base tree's and the newest mainline tree's teo and menu, the base
teo with the intercept test "avoid selecting the deepest idle state
over-eagerly" (label teo-X.Y-seed001), and any governor source given with
--gov; write report.md, results.tsv and SVG plots to DIR, all or nothing,
and print the report."""

CHECK = f"""\
The gates (exit 1 on a failure): the oracle gate, the targets against
every baseline and the work target of closed loops
(tools/idle-replay/gates.conf) with the documented misses
(tools/idle-replay/known-misses), the targets of 'replay targets' (each
family target ours misses must be listed there too, as its miss against
that target's best baseline; the mean over the families has no such
line and must be met), the intended differences from the base teo
(tools/idle-replay/intended-differences), each with a mutant of
tools/teo-mutants that must diverge from ours, the randomized contract
check under ASan/UBSan ({labcheck.FUZZ_DECISIONS} decisions per governor),
the trace gate (our teo.c with its trace calls compiled out and with them
recording must decide alike everywhere, and the recorded events must
match the decisions), the bad-input, converter and lab tests, and the
negative tests of the gates and of the trace gate (events made to lie
must be caught).  Ends with 'N passed, N failed (S s)'."""

DIFF = """\
Compile governor sources (each with the headers next to it, so a kernel
tree's teo.c builds with that tree's gov.h) and compare the state and tick
decisions of each with the next at every step of every scenario on every
table and on random tables.  Prints the first divergences and, per pair,
one line with the runs, decisions and divergent runs of the scenarios and
of the random tables; exits 0 whether or not they diverge, 1 on an error.
Proves "no functional change"; a chain (a patch series) takes one build,
and each governor of it runs once (plus once where the chain is cut to
use every CPU)."""

CONVERT = """\
Turn 'perf script' or 'trace-cmd report' text (power:cpu_idle, irq, IPI,
timer and sched_switch events) into a trace file for 'run --trace'."""

MISSES = """\
Draft tools/idle-replay/known-misses from one report: replay every scenario
on every table through ours, the baselines and every rule mutant that
tools/idle-replay/intended-differences lists (ours with that one rule
reverted), then write each line of a per-table target (table-energy, work)
from the report's tables: its numbers, the states, and the mutants that
meet the target.  The lines of the family medians are written by hand and
kept, as are the comments; lines of misses that are gone are dropped, new
misses added.  The draft goes to --out (default: standard output), a
summary to standard error; exit 1 if a new family median miss needs its
line written.  With --check nothing is written: exit 1 if the draft
differs from the file, naming each line that does (the extended check
runs this, so that the file's numbers are the lab's of today)."""

LEAKS = """\
Only the leak check of 'check' (LeakSanitizer on valid validate, run,
report and list); 'check' skips it when traced, as under the strace of
'scripts/teo check', which runs this step untraced."""


# --- the commands ------------------------------------------------------------

def report(out: Path, govs: Sequence[lab.Governor] = (), scenarios: Sequence[str] = (),
           base: Optional[Path] = None) -> Path:
    """Replay every scenario (or those named) on every table through the
    oracle, ours, the baselines of base (default: lab.base_tree), the base
    teo's over-eager variant and govs; write report.md, results.tsv and
    the SVG plots to out, swapped in only when complete.  out itself."""
    deps.need_cmd("gnuplot")
    trees = lab.find_trees(fetch_mainline=True, base_src=base)
    variant = lab.over_eager_variant(trees.base)
    built = lab.Lab(trees, extra=(*govs, variant))
    data = lab.corpus(trees)
    binary = built.build("idle-replay") / "idle-replay"
    known = lab.listing(binary, data).scenarios
    for s in scenarios:
        if not any(s in pair for pair in known):
            raise UsageError(f"--scenario '{s}': no such scenario or family (see 'scripts/teo"
                             " replay list')")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=out.name + ".tmp.", dir=out.parent))
    except OSError:
        raise Fatal(f"cannot write next to {out}") from None
    try:
        argv: List[Union[str, Path]] = [binary, "report", "--out", tmp, "--jobs",
                                        str(lab.JOBS), *data]
        for s in scenarios:
            argv += ["--scenario", s]
        argv += ["--gates", paths.LAB_GATES, "--known-misses", paths.LAB_KNOWN_MISSES,
                 "--intended", paths.LAB_INTENDED,
                 "--kunit", paths.REPO / paths.KUNIT_SUITE]
        if process.run(argv, stdout=sys.stderr) != 0 or \
                process.run(["gnuplot", "plots.gp"], cwd=tmp, stdout=sys.stderr) != 0:
            raise Fatal("the report failed; nothing was written")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


@dataclass(frozen=True)
class Differential:
    """The counts of one pair of a differential (the lab's --out table);
    log: the lab's output for the piece of the chain that held the pair."""
    old: Path
    new: Path
    runs: int
    decisions: int
    divergent: int
    random_cases: int
    random_decisions: int
    random_divergent: int
    log: Tuple[str, ...]

    def row(self) -> str:
        return "\t".join(str(v) for v in (self.old, self.new, self.runs, self.decisions,
                                           self.divergent, self.random_cases,
                                           self.random_decisions, self.random_divergent))


def chain_lanes(pairs: int, lanes: int) -> List[Tuple[int, int]]:
    """Split a chain of pairs + 1 governors into at most `lanes` pieces
    of consecutive pairs, as even as can be: each piece (first, last) is
    the sources first..last, and the next piece starts at this one's last,
    so each governor runs once, plus once per cut."""
    lanes = max(1, min(lanes, pairs))
    cuts = [pairs * k // lanes for k in range(lanes + 1)]
    return [(cuts[k], cuts[k + 1]) for k in range(lanes)]


def diff(sources: Sequence[Path], base: Optional[Path] = None) -> List[Differential]:
    """Compare the decisions of each governor source with the next at every
    step of every scenario on every table (of base's corpus; default:
    lab.base_tree) and on random tables: one build for the whole chain,
    run as lab.JOBS pieces of it at once (chain_lanes).  Bad sources are
    usage errors, before anything is built."""
    if len(sources) < 2:
        raise UsageError("diff needs OLD.c and NEW.c")
    sources = [lab.governor_source(str(s), "diff") for s in sources]
    trees = lab.find_trees(fetch_mainline=False, base_src=base)
    data = lab.corpus(trees)
    built = lab.Lab(trees, extra=tuple((f"g{i}", s) for i, s in enumerate(sources)))
    binary = built.build("idle-replay") / "idle-replay"
    pieces = chain_lanes(len(sources) - 1, lab.JOBS)
    with tempfile.TemporaryDirectory(prefix="teo-diff.") as name:
        work = Path(name)
        chains = [",".join(f"g{i}" for i in range(first, last + 1))
                  for first, last in pieces]
        lanes = [[lab.Command((str(binary), "diff", "--diff", chain,
                               "--out", str(work / f"{k}.tsv"), *data),
                              work / f"{k}.log")] for k, chain in enumerate(chains)]
        status = lab.run_lanes(lanes)
        found = []
        for k, (first, last) in enumerate(pieces):
            log = (work / f"{k}.log").read_text(encoding="utf-8", errors="replace")
            if status[k] != [0]:
                for line in log.splitlines()[:20]:
                    print(f"    {line}", file=sys.stderr)
                raise Fatal(f"the differential run of {' '.join(map(str, sources[first:last + 1]))}"
                            " failed")
            try:
                rows = [[counts[c] for c in COUNT_COLUMNS]
                        for counts in lab.read_count_rows(work / f"{k}.tsv")]
            except (Fatal, KeyError):
                rows = []
            if len(rows) != last - first:
                raise Fatal(f"the differential of {sources[first]} .. {sources[last]}"
                            " wrote no counts for each pair")
            lines = tuple(log.splitlines())
            for i, n in enumerate(rows, first):
                found.append(Differential(sources[i], sources[i + 1], n[0], n[1], n[2],
                                          n[3], n[4], n[5], lines))
    return found


def _extra_govs(values: Sequence[str]) -> List[lab.Governor]:
    """The governor sources that --gov LABEL=PATH options name, checked."""
    govs: List[lab.Governor] = []
    for value in values:
        govs.append(lab.parse_gov(value, [label for label, _ in govs]))
    return govs


def _cmd_report(args: argparse.Namespace) -> int:
    govs = _extra_govs(args.gov)
    scenarios = [lab.check_scenario(s) for s in args.scenario]
    out = Path(os.path.abspath(args.out or paths.replay_cache() / "report"))
    if re.search(r"\s", str(out)):
        raise UsageError(f"--out: the folder must not contain spaces: '{args.out}'")
    report(out, govs, scenarios)
    sys.stdout.write((out / "report.md").read_text(encoding="utf-8"))
    sys.stdout.flush()
    note(f"report: {out}/report.md (plots: {out}/*.svg, data: {out}/results.tsv)")
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    trees = lab.find_trees(fetch_mainline=True)
    data = lab.corpus(trees)
    binary = lab.Lab(trees).build("idle-replay") / "idle-replay"
    tsv = ["--tsv", args.tsv] if args.tsv else []
    return process.run([binary, "targets", "--jobs", str(lab.JOBS), *tsv, *data])


def _cmd_overhead(args: argparse.Namespace) -> int:
    govs = _extra_govs(args.gov)
    trees = lab.find_trees(fetch_mainline=True)
    binary = lab.Lab(trees, extra=tuple(govs)).build("idle-replay") / "idle-replay"
    rounds = ["--rounds", str(args.rounds)] if args.rounds else []
    tsv = ["--tsv", args.tsv] if args.tsv else []
    return process.run([binary, "overhead", *rounds, *tsv])


def _rounds(value: str) -> int:
    if not re.fullmatch(r"[1-9][0-9]{0,3}", value):
        raise UsageError("--rounds wants a number of rounds, 1..9999")
    return int(value)


def _cmd_misses(args: argparse.Namespace) -> int:
    mutants = misses.intended_mutants(paths.LAB_INTENDED)
    if args.check and args.out:
        raise UsageError("--check writes nothing: leave out --out")
    if args.out and not Path(args.out).parent.is_dir():
        raise UsageError(f"--out: no such folder: '{Path(args.out).parent}'")
    if args.report:
        folder = Path(args.report)
        if not folder.is_dir():
            raise UsageError(f"--report: no such folder: '{args.report}'")
    else:
        folder = report(paths.replay_cache() / "misses", lab.mutant_sources())
    drafter = misses.Drafter(misses.Report.read(folder), misses.Bounds.read(paths.LAB_GATES),
                             mutants)
    try:
        old = paths.LAB_KNOWN_MISSES.read_text(encoding="utf-8")
    except OSError as err:
        raise Fatal(f"cannot read {paths.LAB_KNOWN_MISSES}: {err.strerror}") from None
    result = misses.draft(old, drafter)
    if args.check:
        return check_draft(result, folder)
    if args.out:
        try:
            Path(args.out).write_text(result.text, encoding="utf-8")
        except OSError as err:
            raise Fatal(f"cannot write {args.out} ({err.strerror})") from None
    else:
        sys.stdout.write(result.text)
    note(f"misses: {result.drafted} lines drafted ({len(result.changed)} changed),"
         f" {result.kept} written by hand kept, {len(result.dropped)} dropped (no longer"
         f" missed), {len(result.added)} added; from {folder}")
    for key in result.unwritten:
        note(f"misses: write the cause of '{' '.join(key)}' by hand")
    return 1 if result.unwritten else 0


def check_draft(result: misses.Draft, folder: Path) -> int:
    """replay misses --check: 0 if known-misses is the draft of folder."""
    stale = result.stale()
    for line in stale:
        note(f"misses: {line}")
    if stale:
        note(f"misses: {paths.LAB_KNOWN_MISSES} is not the draft of {folder}:"
             f" {len(stale)} lines differ (scripts/teo replay misses --out FILE redrafts it)")
        return 1
    note(f"misses: {paths.LAB_KNOWN_MISSES} is the draft of {folder}"
         f" ({result.drafted} lines drafted, {result.kept} written by hand)")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    return 0 if labcheck.run() else 1


def _cmd_leaks(args: argparse.Namespace) -> int:
    return 0 if labcheck.leaks() else 1


def _cmd_diff(args: argparse.Namespace) -> int:
    found = diff([Path(s) for s in args.sources])
    if args.counts:
        try:
            Path(args.counts).write_text("\t".join(("old", "new", *COUNT_COLUMNS)) + "\n"
                                         + "".join(d.row() + "\n" for d in found),
                                         encoding="utf-8")
        except OSError as err:
            raise Fatal(f"cannot write {args.counts} ({err.strerror})") from None
    if len(found) > 1:
        # The lab names the sources g0, g1, ... in its divergences.
        for i, source in enumerate([*(d.old for d in found), found[-1].new]):
            print(f"g{i}: {source}")
    shown = set()
    for d in found:
        if d.log not in shown:
            shown.add(d.log)
            for line in lab.grep_after(d.log, r"^DIVERGENCE", 6, 40 * len(found)):
                print(line)
        if len(found) > 1:
            print(f"{d.old} -> {d.new}")
        print(f"differential: {d.runs} runs, {d.decisions} decisions, {d.divergent} divergent"
              f" (random tables: {d.random_cases} cases, {d.random_decisions} decisions,"
              f" {d.random_divergent} divergent)", flush=True)
    return 0


def _cmd_steps(args: argparse.Namespace) -> int:
    results = Path(args.results or paths.replay_cache() / "report" / "results.tsv")
    if len(args.labels) < 2:
        raise UsageError("steps: name at least two governors of the report, in chain order")
    table = labsteps.rows(labsteps.chain(labsteps.read_results(results), args.labels))
    if args.tsv:
        try:
            Path(args.tsv).write_text("".join("\t".join(r) + "\n"
                                              for r in [labsteps.COLUMNS, *table]),
                                      encoding="utf-8")
        except OSError as err:
            raise Fatal(f"cannot write {args.tsv} ({err.strerror})") from None
    widths = [max(len(r[i]) for r in [labsteps.COLUMNS, *table])
              for i in range(len(labsteps.COLUMNS))]
    for r in [labsteps.COLUMNS, *table]:
        print("  ".join(v.rjust(w) if i >= 4 else v.ljust(w)
                        for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    return 0


def _hz(value: str) -> str:
    if value not in ("100", "250", "300", "1000"):
        raise UsageError(f"--hz wants 100, 250, 300 or 1000, got '{value}'")
    return value


def _cmd_convert(args: argparse.Namespace) -> int:
    if args.input != "-" and not os.path.isfile(args.input):
        raise UsageError(f"convert: no such file: '{args.input}'")
    trees = lab.find_trees(fetch_mainline=False)
    plat: List[str] = []
    if args.platform is not None:
        plat = ["--platform", args.platform]
        # A table named rather than given as a file is looked up in the corpus.
        if "/" not in args.platform and not args.platform.endswith(".plat"):
            plat = lab.corpus(trees) + plat
    binary = lab.Lab(trees).build("idle-replay") / "idle-replay"
    argv: List[Union[str, Path]] = [binary, "convert", "--hz", args.hz, *plat, args.input]
    if args.output != "-":
        return process.run([*argv, args.output])
    with tempfile.TemporaryDirectory(prefix="teo-convert.") as tmp:
        out = Path(tmp) / "out.trace"
        status = process.run([*argv, out])
        if status == 0:
            sys.stdout.flush()
            with open(out, "rb") as f:
                shutil.copyfileobj(f, sys.stdout.buffer)
            sys.stdout.flush()
    return status


def _run_govs(values: Sequence[str]) -> Tuple[List[str], Tuple[lab.Governor, ...]]:
    """The --gov options of run: each a label of the lab, or LABEL=PATH
    for a source to compile in beside them (checked as report checks it,
    before anything is built).  The labels to run, in order, and the
    sources."""
    extra = _extra_govs([value for value in values if "=" in value])
    return [value.partition("=")[0] for value in values], tuple(extra)


def _cmd_tool(args: argparse.Namespace) -> int:
    """run and list: the lab's own commands with the corpus."""
    scenarios: List[str] = getattr(args, "scenario", None) or []
    if len(scenarios) > 1:
        raise UsageError(f"run replays one timeline: one --scenario, not {len(scenarios)}"
                         f" ({' '.join(scenarios)}); 'report' takes several")
    for s in scenarios:
        lab.check_scenario(s)
    for opt in ("trace", "platform"):
        f = getattr(args, opt, None)
        if f and ("/" in f or f.endswith((".plat", ".trace"))) and not os.path.isfile(f):
            raise UsageError(f"--{opt}: no such file: '{f}'")
    labels, extra = _run_govs(getattr(args, "gov", []))
    trees = lab.find_trees(fetch_mainline=False)
    data = lab.corpus(trees)
    binary = lab.Lab(trees, extra=extra).build("idle-replay") / "idle-replay"
    argv: List[str] = [str(binary), args.command, *data]
    if args.command == "list":
        argv += ["--tsv"] if args.tsv else []
        return process.run(argv)
    # A bad trace or table gets the one line of the lab's validate.
    lab.validate(binary, [f for f in (args.trace, args.platform)
                          if f and ("/" in f or f.endswith((".plat", ".trace")))])
    for s in scenarios:
        argv += ["--scenario", s]
    for opt in ("trace", "platform", "json"):
        if getattr(args, opt) is not None:
            argv += [f"--{opt}", getattr(args, opt)]
    for label in labels:
        argv += ["--gov", label]
    argv += ["--per-state"] if args.per_state else []
    return process.run(argv)


# --- the command line ---------------------------------------------------------

def _no_command(args: argparse.Namespace) -> int:
    args.parser.print_help(sys.stderr)
    raise UsageError("no command given")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands of "teo replay" on parser (its class serves them)."""
    parser.set_defaults(func=_no_command, parser=parser)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")

    def command(name: str, help_: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=description + "\n\n" + ENV_NOTE,
                           allow_abbrev=False,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        return p

    p = command("report", "the Markdown report, results.tsv and SVG plots", REPORT)
    p.add_argument("--out", metavar="DIR",
                   help="the folder to write (default: $TEO_CACHE/replay/report)")
    p.add_argument("--gov", action="append", default=[], metavar="LABEL=PATH",
                   help="one more governor source to show beside the others (repeatable)")
    p.add_argument("--scenario", action="append", default=[], metavar="NAME|FAMILY",
                   help="replay only this scenario or family (S1..S9, P, X); repeatable:"
                   " every scenario any of them names (default: all)")
    p.set_defaults(func=_cmd_report)

    p = command("check", "the lab's gates and tests (exit 1 on a failure)", CHECK)
    p.set_defaults(func=_cmd_check)

    p = command("targets", "the targets our teo is judged by; exit 1 if one is missed",
                "The targets table our teo is judged by (tools/idle-replay/gates.conf)\n"
                "against every baseline per scenario family; exit 1 if one is missed.")
    p.add_argument("--tsv", metavar="FILE",
                   help="also write the table to FILE, tab-separated, for programs")
    p.set_defaults(func=_cmd_targets)

    p = command("diff", "strict decision identity of governor sources (no functional change)",
                DIFF)
    p.add_argument("--counts", metavar="FILE",
                   help="write the counts to FILE as a tab-separated table, one row per"
                   " pair (old, new, runs, decisions, divergent, random_cases,"
                   " random_decisions, random_divergent), for programs")
    p.add_argument("sources", nargs="*", metavar="SOURCE.c",
                   help="OLD.c NEW.c [NEWER.c ...]")
    p.set_defaults(func=_cmd_diff)

    p = command("steps", "what each step of a chain of governors changes in a report",
                "Compare each governor named with the one before it on every scenario\n"
                "and table of a report's results.tsv (scripts/teo replay report --gov\n"
                "pNN=...): per family, how many runs changed work (closed loops) or\n"
                "energy per unit of work (open loops) by more than 1 %, the miss ratio\n"
                "by more than half a point, the mean added latency by more than 5 % and\n"
                "1 us, up and down, with the median change of those runs (% of the\n"
                "old value; points for misses; us for latency).")
    p.add_argument("--results", metavar="FILE",
                   help="the report's results.tsv (default:"
                   " $TEO_CACHE/replay/report/results.tsv)")
    p.add_argument("--tsv", metavar="FILE",
                   help="also write the table to FILE, tab-separated, for programs")
    p.add_argument("labels", nargs="*", metavar="LABEL", help="OLD NEW [NEWER ...]")
    p.set_defaults(func=_cmd_steps)

    p = command("overhead", "ns per select+reflect of each governor (informational)",
                "ns per select+reflect of each governor, side by side, measured on the\n"
                "calls each governor made in seven scenarios; also checks that the\n"
                "recorded calls play back to the same decisions.  Informational.")
    p.add_argument("--gov", action="append", default=[], metavar="LABEL=PATH",
                   help="one more governor source to measure beside the others (repeatable)")
    p.add_argument("--rounds", type=_rounds, metavar="N", help="rounds of playback, 1..9999")
    p.add_argument("--tsv", metavar="FILE",
                   help="also write the numbers to FILE, tab-separated, for programs")
    p.set_defaults(func=_cmd_overhead)

    p = command("misses", "draft the documented misses (known-misses) from a report", MISSES)
    p.add_argument("--out", metavar="FILE", help="write the draft to FILE")
    p.add_argument("--report", metavar="DIR",
                   help="draft from this report folder, which must have run every rule"
                   " mutant (default: run one into $TEO_CACHE/replay/misses)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if the file differs from the draft")
    p.set_defaults(func=_cmd_misses)

    p = command("convert", "'perf script' or 'trace-cmd report' text -> a trace file", CONVERT)
    p.add_argument("--hz", type=_hz, default="250",
                   help="the recorded kernel's HZ: 100, 250, 300 or 1000 (default: %(default)s)")
    p.add_argument("--platform", metavar="NAME|FILE",
                   help="the recorded machine's table, which says which states poll")
    p.add_argument("input", metavar="INPUT", help="the recording ('-': standard input)")
    p.add_argument("output", metavar="OUTPUT", help="the trace file ('-': standard output)")
    p.set_defaults(func=_cmd_convert)

    p = command("leaks", "only the leak check of 'check' (LeakSanitizer), untraced", LEAKS)
    p.set_defaults(func=_cmd_leaks)

    p = command("run", "one timeline through the governors (the lab's run command)",
                "Run one scenario or recorded trace on one table through the oracle\n"
                "and the governors named (default: all), with the corpus of tables.\n"
                "A --gov LABEL=PATH compiles that governor source into the lab beside\n"
                "its own governors (another lab build, once per set of sources).")
    p.add_argument("--scenario", action="append", metavar="NAME",
                   help="the scenario (see 'list'): one name; a family or a second"
                   " --scenario is refused ('report' takes several)")
    p.add_argument("--trace", metavar="FILE", help="a trace file (see 'convert')")
    p.add_argument("--platform", metavar="NAME|FILE", help="the table (see 'list')")
    p.add_argument("--gov", action="append", default=[], metavar="LABEL[=PATH]",
                   help="a governor to run (repeatable): a label of the lab (see"
                   " 'list'), or LABEL=PATH, a governor source compiled in beside"
                   " them as 'report --gov' does")
    p.add_argument("--per-state", action="store_true",
                   help="each state's usage, time, above and below, summed over the CPUs")
    p.add_argument("--json", metavar="FILE", help="the metrics as JSON into FILE")
    p.set_defaults(func=_cmd_tool)

    p = command("list", "the lab's governors, platforms and scenarios",
                "The governors compiled into the lab (label, role, source), the tables\n"
                "of the corpus and the scenarios.")
    p.add_argument("--tsv", action="store_true",
                   help="tab-separated rows for programs instead of the display")
    p.set_defaults(func=_cmd_tool)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand add_arguments parsed."""
    status: int = args.func(args)
    return status

