# SPDX-License-Identifier: GPL-2.0
"""Bad input on every command fails early with one clear line and changes
nothing; --help prints help and does nothing else.  The commands run as a
user runs them: scripts/teo and the entry scripts kept beside it."""

import os
import shutil
import subprocess
import unittest
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from teotool.testing import TEO, SCRIPTS, ScratchTest, is_root

T = "{tmp}"  # the test's scratch folder, in arguments and patterns

# name: (status, pattern, argv, extra environment)
BAD_INPUT: List[Tuple[str, int, str, List[str], Dict[str, str]]] = [
    ("vm: decreasing residency", 2,
     "residency 100 us of state 1 is below the previous state's 360 us",
     [TEO, "vm", "--states", "1/360,120/100", "--build-only"], {}),
    ("vm: 11 states", 2, "more than 10 states",
     [TEO, "vm", "--states", "poll,1/1,1/2,1/3,1/4,1/5,1/6,1/7,1/8,1/9,1/10"], {}),
    ("vm: exit latency above 100 ms", 2,
     "exit latency 150000 us of state 1 is above 100000 us",
     [TEO, "vm", "--states", "1/1,150000/200000"], {}),
    ("vm: malformed states", 2, r"want \[poll,\]LAT/RES", [TEO, "vm", "--states", "1/1,poll"], {}),
    ("vm: --mem 0", 2, "--mem: 0 is below 256", [TEO, "vm", "--mem", "0"], {}),
    ("vm: --timeout 0", 2, "--timeout: 0 is below 1", [TEO, "vm", "--timeout", "0"], {}),
    ("vm: --smp 64", 2, "--smp: 64 is above 8 .*CONFIG_NR_CPUS=8", [TEO, "vm", "--smp", "64"], {}),
    ("vm: --out with a space", 2, "--out '{tmp}/a b' has white space",
     [TEO, "vm", "--out", "{tmp}/a b"], {}),
    ("vm: --hz 500", 2, "--hz: '500' is not one of", [TEO, "vm", "--hz", "500"], {}),
    ("vm: --accel xen", 2, "--accel: 'xen'", [TEO, "vm", "--accel", "xen"], {}),
    ("vm: unknown governor", 2, "unknown governor 'foo'", [TEO, "vm", "--governor", "foo"], {}),
    ("vm: unknown profile", 2, "unknown profile 'nosuch'", [TEO, "vm", "--profile", "nosuch"], {}),
    ("vm: unknown option", 2, "unknown argument '--bogus'", [TEO, "vm", "--bogus"], {}),
    ("vm: option without value", 2, "--timeout needs a value", [TEO, "vm", "--timeout"], {}),
    ("vm: KERNEL_SRC is a file", 1,
     "KERNEL_SRC=/etc/hostname is a file, not a kernel source folder",
     [TEO, "vm", "--build-only"], {"KERNEL_SRC": "/etc/hostname"}),
    ("vm: KERNEL_SRC does not exist", 1, "KERNEL_SRC={tmp}/no-such-tree does not exist",
     [TEO, "vm", "--build-only"], {}),
    ("tree: TEO_CACHE on a read-only file system", 1, "TEO_CACHE=/proc/teo-cache is not writable",
     [TEO, "tree"], {"KERNEL_SRC": "", "TEO_CACHE": "/proc/teo-cache"}),
    ("tree: TEO_CACHE below a file", 1,
     "TEO_CACHE=/etc/hostname/cache cannot be created: /etc/hostname is not a folder",
     [TEO, "tree"], {"KERNEL_SRC": "", "TEO_CACHE": "/etc/hostname/cache"}),
    ("run: unknown workload", 2, "unknown workload 'nosuch'", [TEO, "run", "--workloads", "nosuch"], {}),
    ("run: bad bench option after --", 2, "unknown argument '--bogus'", [TEO, "run", "--", "--bogus"], {}),
    ("run: bad bench value after --", 2, "--runs: '0' is not a positive whole number",
     [TEO, "run", "--", "--runs", "0"], {}),
    ("run: bad case", 2, "--cases: unknown case 'nosuch'", [TEO, "run", "--cases", "nosuch"], {}),
    ("run: bad governor", 2, "unknown governor 'performance'",
     [TEO, "run", "--governors", "teo,performance"], {}),
    ("run: bad states", 2, "more than 10 states",
     [TEO, "run", "--states", "1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1"], {}),
    ("run: bad ceiling", 2, "--ceiling-states '1/2/3'", [TEO, "run", "--ceiling-states", "1/2/3"], {}),
    ("run: --hz 1001", 2, "--hz: '1001'", [TEO, "run", "--hz", "1001"], {}),
    ("bench: --report of a missing folder", 2, "--report: '{tmp}/none' is not a folder",
     [TEO, "bench", "--report", "{tmp}/none"], {}),
    ("bench: unknown workload", 2, "unknown workload 'x'", [TEO, "bench", "-w", "fio,x"], {}),
    ("faulttest: one CPU", 2, "--smp: 1 CPU cannot be hotplugged", [TEO, "faulttest", "--smp", "1"], {}),
    ("kselftest: unknown option", 2, "unknown argument '--x'", [TEO, "kselftest", "--x"], {}),
    ("kunit: unknown option", 2, "unknown argument '--x'", [TEO, "kunit", "--x"], {}),
    ("style: unknown option", 2, "unknown argument '--x'", [TEO, "style", "--x"], {}),
    ("tree: unknown option", 2, "unknown argument '--x'", [TEO, "tree", "--x"], {}),
    ("teo: unknown command", 2, "unknown command 'nosuch'", [TEO, "nosuch"], {}),
    ("series check: not a folder", 2, "check: '{tmp}/none' is not a folder",
     [TEO, "series", "check", "{tmp}/none"], {}),
    ("series check: no patches", 2, r"holds no \*\.patch or \*\.eml mails",
     [TEO, "series", "check", "{tmp}/empty"], {}),
    ("series check: unknown option", 2, "unknown argument '--bogus'",
     [TEO, "series", "check", "--bogus"], {}),
    ("series check: extra argument", 2, "unknown argument 'x'",
     [TEO, "series", "check", "{tmp}/empty", "x"], {}),
    ("series export: --version without value", 2, "--version needs a value",
     [TEO, "series", "export", "--version"], {}),
    ("series export: --out without value", 2, "--out needs a value",
     [TEO, "series", "export", "--out"], {}),
    ("series export: bad --version", 2, "--version: 'x' is not a positive",
     [TEO, "series", "export", "--version", "x"], {}),
    ("series: unknown command", 2, "unknown command 'nosuch'", [TEO, "series", "nosuch"], {}),
    ("teo check: extra argument", 2, "check takes no arguments, got 'x'", [TEO, "check", "x"], {}),
    ("teo check --extended: extra argument", 2, "check --extended takes no more arguments",
     [TEO, "check", "--extended", "x"], {}),
    ("teo deps: two modes", 2, "not allowed with argument", [TEO, "deps", "--check", "--lint"], {}),
    ("fetch: bad package name", 2, "'linux-source-6' is not a package name",
     [TEO, "fetch", "linux-source-6"], {}),
    ("fetch: --cached without --newest", 2, "--cached and --refresh go with --newest",
     [TEO, "fetch", "--cached"], {}),
    ("fetch: a package and --newest", 2, "give a package or --newest, not both",
     [TEO, "fetch", "--newest", "linux-source-7.3"], {}),
    ("run: --record, a profile the lab has no table for", 2,
     r"--record: the replay lab has no table for profile 'i5-10600K' \(no {tmp}/empty/i5-10600k.plat\)",
     [TEO, "run", "--record", "--cases", "main"], {"TEO_LAB_PLATFORMS": "{tmp}/empty"}),
]

# name: (pattern on stdout, argv)
HELP: List[Tuple[str, str, List[str]]] = [
    ("teo run --help: help, no dependency check", "usage: teo run", [TEO, "run", "--help"]),
    ("teo check --help", "usage: teo check", [TEO, "check", "--help"]),
    ("teo faulttest --help", "usage: teo faulttest", [TEO, "faulttest", "--help"]),
    ("teo kselftest --help", "--restricted MODE", [TEO, "kselftest", "--help"]),
    ("teo vm --help", "--hz N", [TEO, "vm", "--help"]),
    ("teo bench --help", "--ceiling-states", [TEO, "bench", "--help"]),
    ("teo --help names every command", "test-tools", [TEO, "--help"]),
    ("teo kunit --help", "--sanitizers", [TEO, "kunit", "--help"]),
    ("scripts/prepare-tree.sh --help", "--as-is", [str(SCRIPTS / "prepare-tree.sh"), "--help"]),
    ("scripts/fetch-source.sh --help", "--newest", [str(SCRIPTS / "fetch-source.sh"), "--help"]),
    ("scripts/deps.sh --help", "--check", [str(SCRIPTS / "deps.sh"), "--help"]),
]


def _subst(text: str, tmp: Path) -> str:
    return text.replace(T, str(tmp))


class BadInputTest(ScratchTest):
    """One test per case of BAD_INPUT (methods made below)."""

    def setUp(self) -> None:
        super().setUp()
        (self.tmp / "empty").mkdir()


def _bad_input_case(status: int, pattern: str, argv: List[str],
                    env: Dict[str, str]) -> Callable[[BadInputTest], None]:
    def test(self: BadInputTest) -> None:
        self.assertBadInput(status, _subst(pattern, self.tmp),
                            [_subst(a, self.tmp) for a in argv],
                            {k: _subst(v, self.tmp) for k, v in env.items()})
    return test


class HelpTest(ScratchTest):
    """One test per case of HELP (methods made below)."""


def _help_case(pattern: str, argv: List[str]) -> Callable[[HelpTest], None]:
    def test(self: HelpTest) -> None:
        self.assertHelp(pattern, argv)
    return test


def _method_name(name: str) -> str:
    return "test_" + "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


for _name, _status, _pattern, _argv, _env in BAD_INPUT:
    setattr(BadInputTest, _method_name(_name), _bad_input_case(_status, _pattern, _argv, _env))
for _name, _pattern, _argv in HELP:
    setattr(HelpTest, _method_name(_name), _help_case(_pattern, _argv))


class VmArgumentsTest(ScratchTest):
    def test_states_poll_is_accepted(self) -> None:
        """"--states poll" is one polling state, which the module accepts."""
        for args in (["--states", "poll"], ["--states", "poll,1/1", "--hz", "1000", "--debug"]):
            run = self.run_cmd([TEO, "vm", *args, "--check-args"])
            self.assertEqual(run.returncode, 0, run.stderr)


class RecordingTest(ScratchTest):
    """--record and the replay of recordings (scripts/teo bench --report): bad
    input is named before anything is printed, built or measured."""

    def setUp(self) -> None:
        super().setUp()
        self.rec = self.tmp / "rec"
        (self.rec / "record").mkdir(parents=True)
        (self.rec / "runs.tsv").write_text(
            "workload\tgovernor\trun\tmetric\tunit\textra\tC1_usage\tC1_time_us\tC1_above\tC1_below\n"
            "fio\tteo\t1\t700\tIOPS (higher is better)\t-\t10\t100\t0\t0\n")
        (self.rec / "platform.plat").write_text("name recorded\nstate C1 1 1\n")
        self.trace = self.rec / "record" / "fio-teo-1.txt"
        self.bench = [TEO, "bench"]

    def test_empty_recording(self) -> None:
        self.trace.write_text("")
        self.assertBadInput(1, "fio-teo-1.txt: empty recording",
                            [*self.bench, "--report", self.rec, "--no-plot"])

    def test_recording_without_idle_events(self) -> None:
        self.trace.write_text("cpus=2\n   fio-1 [000] 1.000000: sched_switch: fio:1 [120] S"
                              " ==> swapper/0:0 [120]\n")
        self.assertBadInput(1, "fio-teo-1.txt: not a trace-cmd report of a run: no cpu_idle event",
                            [*self.bench, "--report", self.rec, "--no-plot"])

    def test_recordings_without_a_table(self) -> None:
        self.trace.write_text("  <idle>-0 [000] 1.000000: cpu_idle: state=0 cpu_id=0\n")
        (self.rec / "platform.plat").unlink()
        self.assertBadInput(1, f"no lab table for the recordings: {self.rec}/platform.plat is missing",
                            [*self.bench, "--report", self.rec, "--no-plot"])

    def test_lab_platform_missing(self) -> None:
        self.assertBadInput(2, f"--lab-platform: no such file: '{self.tmp}/none.plat'",
                            [*self.bench, "--report", self.rec, "--lab-platform",
                             self.tmp / "none.plat"])

    def test_bad_lab_govs(self) -> None:
        self.assertBadInput(2, "--lab-govs: 'teo' is not KERNEL_GOVERNOR=LAB_LABEL",
                            [*self.bench, "--report", self.rec, "--lab-govs", "teo"])

    def test_lab_platform_without_report(self) -> None:
        self.assertBadInput(2, "go with --report DIR", [*self.bench, "--lab-platform", "x.plat"])

    def test_record_with_trace_cmd_missing(self) -> None:
        self.assertBadInput(1, f"--record: TEO_TRACE_CMD={self.tmp}/no-trace-cmd is not an"
                            " executable command",
                            [*self.bench, "--record", "-w", "hackbench"],
                            {"TEO_TRACE_CMD": str(self.tmp / "no-trace-cmd")})

    def test_record_without_trace_cmd(self) -> None:
        """Its error names the package; as root trace-cmd is hidden in a
        mount namespace (an overlay whose upper layer has a whiteout)."""
        pattern = "'trace-cmd' not found: it comes from the Debian package trace-cmd"
        found = shutil.which("trace-cmd", path="/usr/bin:/bin")
        if not found:
            self.assertBadInput(1, pattern, [*self.bench, "--record", "-w", "hackbench"])
            return
        if not is_root():
            self.skipTest("needs root to hide trace-cmd in a mount namespace")
        bin_dir = os.path.dirname(os.path.realpath(found))
        (self.tmp / "ovl" / "upper").mkdir(parents=True)
        (self.tmp / "ovl" / "work").mkdir()
        os.mknod(self.tmp / "ovl" / "upper" / "trace-cmd", 0o600 | 0o020000, os.makedev(0, 0))
        script = ('mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work"'
                  ' "$1" && shift 2 && exec "$@"')
        self.assertBadInput(1, pattern, ["unshare", "--mount", "--", "sh", "-c", script, "sh",
                                         bin_dir, self.tmp / "ovl", *self.bench, "--record",
                                         "-w", "hackbench"])


class ParserTest(unittest.TestCase):
    def test_unknown_argument_is_one_line(self) -> None:
        run = subprocess.run([TEO, "style", "--nosuch", "x"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertEqual(run.stderr, "teo: error: unknown argument '--nosuch' (see --help)\n")

    def test_no_command(self) -> None:
        run = subprocess.run([TEO], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertTrue(run.stderr.endswith("teo: error: no command given (see --help)\n"))


if __name__ == "__main__":
    unittest.main()
