# SPDX-License-Identifier: GPL-2.0
"""The kselftests of tools/testing/selftests/cpuidle-teo, built with the
kselftest framework of the private tree and run in the test VM (vm.py)
on an emulated idle platform with run_kselftest.sh.

In the VM every precondition holds, so a skip is a failure there; with
--restricted the suite runs where it must not change anything, and then
every test must skip (each says why).
"""

import argparse
import dataclasses
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from teotool import deps, paths, process, reports, tree, vm
from teotool.ui import Fatal, UsageError, note

MODES = ("ro-sysfs", "non-root")

DESCRIPTION = f"""\
Build {paths.TEO_SELFTESTS} with the kselftest framework of the private
tree (make -C {paths.SELFTESTS} TARGETS=cpuidle-teo), install it in the
cache, boot the test VM of 'teo vm' on an emulated idle platform and run
the suite there with run_kselftest.sh.

Fails when a test fails, when the suite or any test in it was skipped (in
the VM every precondition holds, so a skip means a broken set-up), when no
test ran, or when the guest's kernel log holds a kernel report (BUG,
WARNING, Oops, panic, KASAN, UBSAN, lockdep, RCU stall, lockup, hung task).

With --restricted the suite runs where it must not change anything, and
the run passes only if every test skipped (each says why) and none
passed or failed:
  ro-sysfs   sysfs remounted read-only first
  non-root   as the user nobody"""

EPILOG = "Environment: KERNEL_SRC, TEO_CACHE (see 'teo tree --help'), TEO_LOCK"

# The guest's side: bash -c SCRIPT run RUNNER MODE.  The runner copies the
# tests' output byte by byte (kselftest/prefix.pl): written to the 9p run
# folder that is a stream of virtio interrupts while the tests measure
# idle behaviour, so it stays in the guest's tmpfs until the end.  Append
# (>>): the runner writes to the same file through ">> /dev/stdout", an
# open file of its own, and a plain ">" would let the two write over each
# other.  Exit status 124: the restricted set-up failed.
GUEST_SCRIPT = """
cmd=("$1")
case $2 in
ro-sysfs) mount -o remount,ro /sys || exit 124 ;;
non-root)
	# A copy of the suite that belongs to nobody (the framework
	# installs its scripts 0744), and an output file it may open
	# again as /dev/stdout, as the runner does.
	cp -r "${1%/*}" /tmp/ksft && : > /tmp/kselftest.out &&
		chown -R nobody /tmp/ksft /tmp/kselftest.out || exit 124
	cmd=(setpriv --reuid=nobody --regid=nogroup --clear-groups
		/tmp/ksft/run_kselftest.sh)
	;;
esac
"${cmd[@]}" >> /tmp/kselftest.out 2>&1; s=$?
cat /tmp/kselftest.out; exit $s"""
SETUP_FAILED = 124


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.add_argument("--profile", metavar="NAME",
                   help=f"emulated platform (default {vm.DEFAULT_PROFILE})")
    p.add_argument("--states", metavar="LIST",
                   help="custom idle states, see 'teo vm --help'")
    p.add_argument("--restricted", metavar="MODE",
                   help="ro-sysfs or non-root, see above")


# --- the verdict ----------------------------------------------------------

# run_kselftest.sh's top-level results: "ok N selftests: cpuidle-teo: T".
_RESULT = re.compile(r"^(not )?ok [0-9]+ selftests: (.*)$")
_SKIP_REASON = re.compile(r"^# 1\.\.0 # SKIP")


@dataclass
class Tally:
    """The top-level results of a run_kselftest.sh output."""
    passed: List[str] = field(default_factory=list)
    failed: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    # The lines that say what was skipped and why.
    skip_lines: List[str] = field(default_factory=list)


def tally(text: str) -> Tally:
    t = Tally()
    for line in text.splitlines():
        m = _RESULT.match(line)
        if m and m.group(1):
            t.failed.append(m.group(2))
        elif m and "# SKIP" in m.group(2):
            t.skipped.append(m.group(2))
            t.skip_lines.append(line)
        elif m:
            t.passed.append(m.group(2))
        elif _SKIP_REASON.match(line):
            t.skip_lines.append(line)
    return t


def judge(t: Tally, restricted: Optional[str]) -> bool:
    """Whether the results pass (saying why not); with restricted every
    test must have skipped."""
    ok = True
    if t.failed:
        note(f"failed: {' '.join(t.failed)}")
        ok = False
    if restricted:
        note(f"skipped ({restricted}: every test must skip), with the reasons given:")
        sys.stderr.write("".join(line + "\n" for line in t.skip_lines))
        if t.passed:
            note(f"passed although they must skip ({restricted}): {' '.join(t.passed)}")
            ok = False
    elif t.skipped:
        note("skipped (a skip is a failure here), with the reasons given:")
        sys.stderr.write("".join(line + "\n" for line in t.skip_lines))
        ok = False
    if not (t.passed or t.failed or t.skipped):
        note("no test ran")
        ok = False
    return ok


def kernel_log_clean(dmesg: Path) -> bool:
    """Print the kernel reports of the guest's log; whether there are none."""
    found = reports.scan(dmesg) if dmesg.is_file() else []
    for report in found:
        print(f"{dmesg}:{report}", flush=True)
    if found:
        note(f"the guest's kernel log ({dmesg}) has the reports above")
    return not found


# --- the run --------------------------------------------------------------

def install_suite(slot: Path) -> Path:
    """Build and install the suite into the slot; the installed folder.
    Under the build lock: the private tree changes only under it."""
    src = slot / "src"
    install = slot / "kselftest-install"
    new = install.with_name(install.name + ".new")
    with process.BuildLock():
        ours = src / paths.TEO_SELFTESTS
        stale = [str(a) for _, a, _ in tree.overlay_changes(src) if str(a).startswith(
            (str(ours) + "/", str(paths.REPO / paths.TEO_SELFTESTS) + "/"))]
        if stale:
            sys.stderr.write("".join(f"differs: {s}\n" for s in stale))
            raise Fatal(f"{ours} is not this repository's (the files above differ):"
                        " run again")
        note(f"building the kselftests into {install}")
        shutil.rmtree(new, ignore_errors=True)
        status = process.run(["make", "-s", "-C", src / paths.SELFTESTS,
                              "TARGETS=cpuidle-teo", f"O={slot / 'build-kselftest'}",
                              f"KSFT_INSTALL_PATH={new}", "install"],
                             stdout=sys.stderr, env=process.debian_env())
        if status != 0:
            raise Fatal("the cpuidle-teo kselftests do not build")
        shutil.rmtree(install, ignore_errors=True)
        new.rename(install)
    if not (install / "run_kselftest.sh").is_file():
        raise Fatal(f"no run_kselftest.sh in {install}")
    return install


def main(args: argparse.Namespace) -> int:
    """teo kselftest."""
    if args.restricted is not None and args.restricted not in MODES:
        raise UsageError(f"--restricted: unknown mode '{args.restricted}'"
                         f" ({' or '.join(MODES)})")
    # OPTION=VALUE: a value may start with a dash.
    vm_args = []
    if args.profile is not None:
        vm_args.append(f"--profile={args.profile}")
    if args.states is not None:
        vm_args.append(f"--states={args.states}")
    opts = vm.from_args(vm.namespace(*vm_args))
    # rsync: the kselftest framework's install target copies with it.
    deps.need_cmd("make", "gcc", "qemu-system-x86_64", "rsync")
    start = time.monotonic()
    images = vm.build(opts)
    install = install_suite(images.slot)
    built = time.monotonic()

    run = images.slot / "vm-kselftest"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    opts = dataclasses.replace(opts, out=run, command=[
        "bash", "-c", GUEST_SCRIPT, "run", str(install / "run_kselftest.sh"),
        args.restricted or ""])
    status = vm.boot_and_run(opts, images)
    if status == vm.VM_FAILED:
        raise Fatal(f"the VM failed; see {run}/console.log")
    if status == SETUP_FAILED:
        raise Fatal(f"could not set up the --restricted {args.restricted} run in the guest")
    note(f"run_kselftest.sh exited {status}; output in {run}/stdout")

    t = tally((run / "stdout").read_text(encoding="utf-8", errors="replace"))
    ok = judge(t, args.restricted)
    ok = kernel_log_clean(run / "dmesg") and ok
    note(f"build {built - start:.0f} s, VM run {time.monotonic() - built:.0f} s")
    print(f"kselftests: {len(t.passed)} passed, {len(t.failed)} failed,"
          f" {len(t.skipped)} skipped", flush=True)
    if not ok:
        raise Fatal("the cpuidle-teo kselftests did not pass")
    return 0
