# SPDX-License-Identifier: GPL-2.0
"""scripts/teo: the one entry point of the teo tooling; each command runs
a module of this package."""

import argparse
import os
import re
import sys
from pathlib import Path
from typing import List, NoReturn, Optional

from teotool import (bench, benchcompare, checks, deps, faulttest, fetch, kselftest, kunit,
                     mutants, paths, process, replay, reports, series, style, tree, ui, vm,
                     vmbench)
from teotool.ui import Fatal, UsageError

DESCRIPTION = """\
Main commands:
  run         the main job: build the patched kernel, boot it in QEMU on an
              emulated idle platform and compare teo with menu on workloads
  check       all tests: the tooling's own tests, KUnit (KASAN+UBSAN), style
              checks, the replay gates, the kselftests in the VM and the
              series checks, with an audit of every program they ran
  check --extended
              the same, then the series exported onto and checked on the
              newest mainline source Debian ships (teo fetch --newest), the
              mutation check and known-misses against today's draft

Each command takes --help.  Environment: KERNEL_SRC (another base tree),
TEO_CACHE (the cache folder), TEO_LOCK (the build lock, for tests)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of usage dumps."""

    def error(self, message: str) -> NoReturn:
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            message = f"unknown argument '{message[len(prefix):].split()[0]}'"
        elif m := re.fullmatch(r"argument (\S+): expected one argument", message):
            message = f"{m.group(1).split('/')[-1]} needs a value"
        elif m := re.fullmatch(r"argument COMMAND: invalid choice: '([^']*)'.*", message):
            message = f"unknown command '{m.group(1)}'"
        raise UsageError(message)


def _cmd_check(args: argparse.Namespace) -> int:
    if args.extra:
        if args.extended:
            raise UsageError("check --extended takes no more arguments")
        raise UsageError(f"check takes no arguments, got '{args.extra[0]}'")
    if args.extended:
        checks.run_extended()
    else:
        checks.run_checks()
    return 0


def _cmd_deps(args: argparse.Namespace) -> int:
    if args.lint:
        problems = deps.lint()
        for line in problems:
            print(line)
        if problems:
            return 1
        print(f"deps.list: {len(deps.read_list())} packages, every need_cmd command listed")
        return 0
    if args.audit:
        clean, report = deps.audit(Path(args.audit))
        print("\n".join(report))
        return 0 if clean else 1
    return deps.install(check_only=args.check)


def _cmd_tree(args: argparse.Namespace) -> int:
    print(tree.prepare(refresh=args.refresh, as_is=args.as_is))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    print(fetch.main(args.package, args.newest, args.cached, args.refresh, args.mirror))
    return 0


def _cmd_kunit(args: argparse.Namespace) -> int:
    kunit.run(kunit.SANITIZERS if args.sanitizers else kunit.PLAIN)
    return 0


def _cmd_style(args: argparse.Namespace) -> int:
    style.run()
    return 0


def _cmd_test_tools(args: argparse.Namespace) -> int:
    result = style.unit_tests(pattern=args.pattern)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"test-tools: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not result.testsRun else 0


def _cmd_reports(args: argparse.Namespace) -> int:
    return reports.main([Path(f) for f in args.files])


def build_parser() -> Parser:
    parser = Parser(prog="teo", description=DESCRIPTION, allow_abbrev=False,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, help_: str, description: str = "") -> Parser:
        p: Parser = sub.add_parser(name, help=help_, description=description or help_,
                                   allow_abbrev=False,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
        return p

    for name, help_, module in (
            ("run", "the main job: build the patched kernel, boot it in QEMU on an"
             " emulated idle platform and compare teo with menu on workloads", vmbench),
            ("bench", "the A/B workload benchmark (bare metal as root, or inside the VM)",
             bench)):
        p = command(name, help_, module.DESCRIPTION)
        module.add_arguments(p)
        p.set_defaults(func=module.main)

    p = command("compare", "one governor on several kernels, boot by boot",
                benchcompare.DESCRIPTION)
    benchcompare.add_arguments(p)
    p.set_defaults(func=benchcompare.main)

    p = command("check", "all tests (the README's test command)", _check_description())
    p.add_argument("--extended", action="store_true",
                   help="then the series check on the newest mainline source Debian ships,"
                   " the mutants and the known-misses draft")
    p.add_argument("extra", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_check)

    p = command("deps", "install the Debian packages of scripts/deps.list",
                "Install, with apt-get, the Debian 12 packages that building,"
                " testing and measuring\nthe teo series need (scripts/deps.list:"
                " each package with the commands it\nprovides to the tooling)."
                "  Does nothing when all are present.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true",
                   help="only list the missing packages and the listed commands"
                   " an installed package does not provide; exit 1 if any")
    g.add_argument("--lint", action="store_true",
                   help="static checks of deps.list: well formed, no command"
                   " listed twice, every package known to apt, every command a"
                   " module asks for with need_cmd listed")
    g.add_argument("--audit", metavar="DIR",
                   help="check that every program the execve logs in DIR"
                   " (DIR/*.strace of 'check', DIR/*.execs) show run outside"
                   " the repository, its cache and the base tree comes from a"
                   " listed package, a package those depend on, or Debian's"
                   " required core")
    p.set_defaults(func=_cmd_deps)

    p = command("tree", "prepare the private kernel tree and print its cache folder",
                "Prepare a private kernel tree with this repository's files laid"
                " over it and print\nits cache folder.  The tree is in"
                " <folder>/src; build folders go next to it.\nThe base tree is"
                " never modified: the private copy hard-links its unchanged"
                "\nfiles and replaces the files the overlay and the edits touch."
                f"\n\nBase tree: KERNEL_SRC unset: Debian's {paths.DEBIAN_PKG},"
                " unpacked once into\n$TEO_CACHE/base (installed with apt-get if"
                " missing); KERNEL_SRC=/path: any\nclean kernel tree,"
                f" {'.'.join(map(str, paths.MIN_BASE))} or later.")
    p.add_argument("--refresh", action="store_true",
                   help="rebuild the private copy even if it looks current")
    p.add_argument("--as-is", action="store_true",
                   help="a copy of the base tree without the overlay and the"
                   " edits (its own cache slot <key>-as-is), for running a"
                   " patched upstream tree's governors in the VM")
    p.set_defaults(func=_cmd_tree)

    p = command("fetch", "fetch a newer Debian kernel source package",
                "Download a Debian kernel source package from unstable (sid) or"
                " experimental with\na private apt configuration under"
                " $TEO_CACHE/apt, unpack it once into\n$TEO_CACHE/base and print"
                " the tree's path, ready for KERNEL_SRC.  The archive is\nthe"
                " one this machine's apt sources name for Debian;"
                " TEO_DEBIAN_MIRROR=URI\noverrides it (TEO_APT_ETC another apt"
                " folder, for tests).  Nothing is installed\nand the system's apt"
                " configuration is not changed.")
    p.add_argument("package", nargs="?", help="linux-source-X.Y")
    p.add_argument("--newest", action="store_true",
                   help="the newest linux-source-X.Y of unstable and"
                   " experimental; the answer is kept for a day")
    p.add_argument("--cached", action="store_true",
                   help="with --newest: the tree fetched last, never the network")
    p.add_argument("--refresh", action="store_true",
                   help="with --newest: look again even if a day has not passed")
    p.add_argument("--mirror", action="store_true",
                   help="print the Debian archive it would use and exit")
    p.set_defaults(func=_cmd_fetch)

    p = command("kunit", "the KUnit suites with kunit.py, x86_64 under QEMU",
                "Run the teo KUnit suites with the kernel's own"
                " tools/testing/kunit/kunit.py\n(x86_64 under QEMU TCG; UML cannot"
                " enable CONFIG_CPU_IDLE) in the private tree.\nThe build folder"
                " is kept, so later runs are incremental.  The kernel is built"
                "\nwith tracing and boots with teo's trace events enabled.  Fails"
                " when kunit.py\nreports a failure, a crash, a skip or no tests"
                " at all, or when the kernel log\nholds a report (BUG, WARNING,"
                " Oops, KASAN, UBSAN, lockdep, RCU stall, lockup,\nhung task).")
    p.add_argument("--sanitizers", action="store_true",
                   help="build with KASAN and UBSAN (own build folder); the"
                   " variant 'check' runs")
    p.set_defaults(func=_cmd_kunit)

    p = command("style", "checkpatch, kernel-doc, W=1/sparse, shellcheck, mypy",
                "In the private tree: checkpatch.pl --strict and kernel-doc -none"
                " -Wall on every\nkernel-side C file of the repository; a W=1"
                " C=2 (sparse) build of\ndrivers/cpuidle/governors/ in the KUnit"
                " build folder of 'kunit --sanitizers';\nshellcheck on every bash"
                " script; mypy --strict on scripts/teotool.")
    p.set_defaults(func=_cmd_style)

    p = command("test-tools", "the tooling's own tests (unit tests of scripts/teotool)",
                "Run the unit tests beside each module of scripts/teotool"
                " (NAME_test.py) with\nunittest: bad input fails early with one"
                " clear line, the build lock says who\nholds it, signals clean"
                " up, the statistics agree with the benchmark's.\nBuilds and boots"
                " nothing.  Ends with 'test-tools: N passed, N failed, N skipped'.")
    p.add_argument("--pattern", default="*_test.py",
                   help="only the test files matching this (default: %(default)s)")
    p.set_defaults(func=_cmd_test_tools)

    p = command("vm", "boot the test VM and run a command", vm.DESCRIPTION)
    vm.add_arguments(p)
    p.set_defaults(func=vm.main)

    p = command("kselftest", "the kselftests in the VM", kselftest.DESCRIPTION)
    kselftest.add_arguments(p)
    p.set_defaults(func=kselftest.main)

    p = command("faulttest", "the VM fault test on a debug kernel (an extended check,"
                " not part of check: about 30 min cold)", faulttest.DESCRIPTION)
    faulttest.add_arguments(p)
    p.set_defaults(func=faulttest.main)

    series.add_parser(sub, Parser)

    p = command("replay", replay.HELP, replay.DESCRIPTION)
    replay.add_arguments(p)

    p = command("mutants", mutants.HELP, mutants.DESCRIPTION)
    mutants.add_arguments(p)

    p = command("reports", "print the kernel reports (BUG, WARNING, ...) in kernel logs")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=_cmd_reports)
    return parser


def _check_description() -> str:
    steps = "\n".join(f"  {' '.join(_short(a) for a in s.argv)}"
                      + ("" if s.traced else "  (untraced: LeakSanitizer)")
                      for s in checks.STEPS)
    return ("Run every test step in turn, report each, and fail if any failed:\n"
            f"{steps}\n  then the exec audit (teo deps --audit): every program"
            " the steps executed,\n  recorded with strace, comes from a"
            " package of scripts/deps.list.\nInstalls the Debian packages first"
            " (teo deps).  The VM fault test is an\nextended check, run on its"
            " own: teo faulttest.  --extended runs all of the\nabove, then the"
            " series check on the newest mainline source Debian ships,\nthe"
            " mutation check (teo mutants) and the check that known-misses is"
            "\nthe lab's draft of today (teo replay misses --check).")


def _short(arg: str) -> str:
    return os.path.relpath(arg, paths.REPO) if arg.startswith("/") else arg


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ui.set_prog("teo")
    process.setup_environment()
    try:
        if not argv:
            build_parser().print_help(sys.stderr)
            raise UsageError("no command given")
        parser = build_parser()
        if not argv[0].startswith("-") and argv[0] not in parser_commands(parser):
            raise UsageError(f"unknown command '{argv[0]}'")
        if argv[0] == "help":
            argv = ["--help"]
        if argv[0] == "bench":
            argv = [argv[0], *bench.join_values(argv[1:])]
        with process.stop_signals_raise():
            args = parser.parse_args(argv)
            status: int = args.func(args)
        return status
    except Fatal as err:
        print(err.line(), file=sys.stderr)
        return err.status
    except process.Interrupted as stop:
        return stop.status


def parser_commands(parser: Parser) -> List[str]:
    for action in parser._actions:  # argparse has no public accessor
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices) + ["help"]
    return []

