# SPDX-License-Identifier: GPL-2.0
"""The test VM: boot a kernel image in QEMU and run one command in a guest
that sees the host's root file system read-only, at the same paths.

The interface is virtme-ng's ("vng --run KERNEL --exec CMD"): a kernel, an
initramfs, CPUs, memory, a kernel command line, and a command whose output
and exit status come back as if it ran here.  Our extras are the emulated
idle driver (tools/cpuidle-emu) and its profile or --states list, the
kernel variants (--debug, --hz, --as-is; vmbuild.py builds them), the
governor at boot, and a virtio disk with a fixed completion latency for
the IO workloads.

The guest's side is tools/cpuidle-emu/vm-init, a busybox /init: it mounts
the host root over 9p read-only at /host and the run folder (writable) at
its host path, loads the driver, runs the command script vm-cmd of the run
folder chrooted into /host, and leaves stdout, stderr, dmesg and status
(or vm-error, when the VM itself failed) in the run folder.  The host
follows stdout and stderr as they grow.

Where vng would slot in: boot() and qemu_argv() are the boot part.  When
Debian ships virtme-ng, boot() can run "vng --run bzImage --cpus N
--memory M --append ARGS --qemu-opts '-drive ... -device virtio-blk-pci'
--exec 'insmod cpuidle-emu.ko ARGS; sh RUN/vm-cmd'" with the run folder
shared read-write (vng's --rwdir), and vm-init and the initramfs go away;
the builds, the driver's arguments, the run folder's files and the exit
statuses stay as they are.  Exit statuses: the command's own; 125 when
the VM itself failed.
"""

import argparse
import contextlib
import dataclasses
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, List, Optional

from teotool import disk, paths, process, states, vmbuild
from teotool.ui import Fatal, UsageError, note

VM_FAILED = 125
TIMED_OUT = 124
DEFAULT_PROFILE = "i5-10600K"
MIN_MEM_MIB = 256
# After the guest wrote its status, the seconds QEMU gets to end by itself.
GRACE_S = 20
# The guest's PATH: the host's, seen from the chroot.
GUEST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What the guest prints without a command: its idle setup.
IDLE_SETUP = """\
d=/sys/devices/system/cpu/cpuidle
echo "driver $(cat $d/current_driver) governor $(cat $d/current_governor_ro)"
grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/{name,latency,residency}
"""

DESCRIPTION = """\
Build the kernel from the private tree of 'teo tree' with the config
fragment tools/cpuidle-emu/vm.config, build the cpuidle-emu module and a
busybox initramfs, boot QEMU (KVM when /dev/kvm is usable, TCG otherwise),
load the emulated idle driver and run COMMAND inside the guest, chrooted
into the host's root file system (mounted read-only over 9p), in the
current folder.  The command's output comes back on stdout/stderr and its
exit status becomes this command's; 125 means the VM itself failed.
Without COMMAND the guest prints its idle setup.

Every step is cached in the tree's cache folder and redone only when its
inputs change.  Builds and guest runs hold the machine-wide build lock.
Arguments are checked before anything is built or locked.  Ctrl-C or
SIGTERM stops QEMU and the build, releases the lock and removes the
temporary run folder."""

EPILOG = """\
In the guest, TEO_EMU_KO and TEO_EMU_ARGS name the loaded module and its
arguments (the benchmark reloads it for its ceiling runs), and
TEO_KERNEL_HZ the guest kernel's HZ (for the replay of recordings).

Environment: KERNEL_SRC, TEO_CACHE (see 'teo tree --help'), TEO_LOCK"""

USAGE = "teo vm [options] [--] [COMMAND [ARG...]]"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of 'teo vm' (also for the commands that boot it)."""
    p.usage = USAGE
    p.epilog = EPILOG
    p.add_argument("--build-only", action="store_true",
                   help="build everything, do not boot")
    p.add_argument("--as-is", action="store_true",
                   help="build the base tree (KERNEL_SRC) as it is, without this"
                   " repository's overlay: its own teo and menu, for a patch"
                   " under review applied to an upstream tree")
    p.add_argument("--check-args", action="store_true",
                   help="only check the options, build and boot nothing")
    p.add_argument("--debug", action="store_true",
                   help="the debug kernel (own build folder): vm.config plus"
                   " tools/cpuidle-emu/vm-debug.config -- lockdep, KASAN, RCU and"
                   " idle-path checks, objtool noinstr validation (also run on"
                   " cpuidle-emu's object)")
    p.add_argument("--hz", metavar="N", default=str(vmbuild.DEFAULT_HZ),
                   help="CONFIG_HZ of the guest kernel: 100, 250, 300 or 1000"
                   " (default 250; others get their own build folder)")
    p.add_argument("--governor", metavar="NAME", default="teo",
                   help="cpuidle.governor= at boot: "
                   f"{' '.join(vmbuild.GOVERNORS)} (default teo)")
    p.add_argument("--profile", metavar="NAME", default=DEFAULT_PROFILE,
                   help=f"emulated platform (default {DEFAULT_PROFILE}): "
                   + " ".join(vmbuild.profile_names()))
    p.add_argument("--states", metavar="LIST",
                   help='custom idle states instead of a profile,'
                   ' "[poll,]LAT/RES[,LAT/RES...]" in microseconds: at most'
                   f" {states.MAX_STATES} states, latency up to"
                   f" {states.MAX_LATENCY_US}, residency not decreasing"
                   ' ("poll" alone is one polling state)')
    p.add_argument("--no-emu", action="store_true",
                   help="boot without the emulated idle driver")
    p.add_argument("--smp", metavar="N", default="2",
                   help="virtual CPUs, 1 to the VM kernel's CONFIG_NR_CPUS"
                   f" ({vmbuild.max_cpus()}; default 2)")
    p.add_argument("--mem", metavar="MIB", default="1024",
                   help=f"guest memory, {MIN_MEM_MIB} to the host's memory (default 1024)")
    p.add_argument("--disk-latency", metavar="NS", default="200000",
                   help="latency of the guest's /dev/vda, a QEMU null-co disk"
                   " (default 200000)")
    p.add_argument("--append", metavar="ARGS", default="",
                   help="more kernel command line")
    p.add_argument("--accel", metavar="auto|kvm|tcg", default="auto",
                   help="QEMU accelerator (default auto: KVM when /dev/kvm is usable)")
    p.add_argument("--out", metavar="DIR",
                   help="run folder: command script, console.log, dmesg and status"
                   " are kept there, and the guest can write to it at the same"
                   " path (no white space, comma or colon in it; default: a fresh"
                   " folder under the cache, removed afterwards)")
    p.add_argument("--timeout", metavar="SEC", default="3600",
                   help="stop the guest after SEC seconds, at least 1 (default 3600)")
    p.add_argument("--console", action="store_true",
                   help="copy the serial console to stderr")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND",
                   help="the command to run in the guest, with its arguments")


def namespace(*argv: str) -> argparse.Namespace:
    """The options of argv (known to be well formed: the commands that
    boot the VM make them), for from_args to check."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    return p.parse_args(list(argv))


# --- checking the options -------------------------------------------------

@dataclass
class Options:
    """A checked request for a guest run."""
    governor: str = "teo"
    emu_args: str = f"profile={DEFAULT_PROFILE}"
    use_emu: bool = True
    smp: int = 2
    mem: int = 1024
    disk_latency: int = 200000
    append: str = ""
    out: Optional[Path] = None
    timeout_s: int = 3600
    console: bool = False
    accel: str = "auto"
    as_is: bool = False
    variant: vmbuild.Variant = vmbuild.Variant()
    # Host folders under /tmp or /run the guest keeps visible.
    keep: List[str] = field(default_factory=list)
    cwd: str = "/"
    command: List[str] = field(default_factory=list)


def check_number(opt: str, text: str, low: int, high: int, why: str = "") -> int:
    """A whole number within [low, high], or a usage error naming opt."""
    if not re.fullmatch(r"[0-9]+", text):
        raise UsageError(f"{opt}: '{text}' is not a whole number")
    if len(text) > 12:
        raise UsageError(f"{opt}: '{text}' is too large")
    n = int(text, 10)
    because = f" ({why})" if why else ""
    if n < low:
        raise UsageError(f"{opt}: {n} is below {low}{because}")
    if n > high:
        raise UsageError(f"{opt}: {n} is above {high}{because}")
    return n


def check_vm_path(what: str, path: str) -> None:
    """A path the guest must see at the same place: no white space, comma
    (QEMU's option separator) or colon (teo.keep's separator), and not
    under the guest's own /dev, /proc or /sys."""
    if re.search(r"[\s,:]", path):
        raise UsageError(f"{what} '{path}' has white space, a comma or a colon, which"
                         " the VM's command line cannot carry; use another folder")
    if re.match(r"^/(dev|proc|sys)(/|$)", path):
        raise UsageError(f"{what} '{path}' is under /dev, /proc or /sys, which the"
                         " guest mounts itself; use another folder")


def host_mib() -> int:
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    raise Fatal("no MemTotal in /proc/meminfo")


def current_dir() -> str:
    """The current folder as the shell names it ($PWD, when it is ours)."""
    pwd = os.environ.get("PWD", "")
    try:
        if pwd and os.path.samefile(pwd, "."):
            return pwd
    except OSError:
        pass
    return os.getcwd()


def keep_paths(cwd: str) -> List[str]:
    """The guest mounts its own /tmp and /run but keeps the repository,
    the cache and the current folder visible there; /dev, /proc and /sys
    are the guest's own."""
    keep: List[str] = []
    cache = str(paths.cache())
    for path in (str(paths.REPO), cache, cwd):
        if re.match(r"^/(dev|proc|sys)/", path + "/"):
            raise Fatal(f"'{path}' is under /dev, /proc or /sys, which the guest"
                        " mounts itself; use another folder")
        if path == cache and re.search(r"[\s:,]", path):
            raise Fatal(f"TEO_CACHE={cache} has white space, a comma or a colon;"
                        " the VM cannot use it")
        if re.match(r"^/(tmp|run)/", path + "/"):
            if re.search(r"[\s:]", path):
                raise Fatal(f"the path '{path}' has white space or a colon; the VM"
                            " cannot keep it visible")
            keep.append(path)
    return keep


def kvm_usable() -> bool:
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def from_args(args: argparse.Namespace) -> Options:
    """Every option checked, before anything is built or locked."""
    if args.governor not in vmbuild.GOVERNORS:
        raise UsageError(f"unknown governor '{args.governor}'; the VM kernel has:"
                         f" {' '.join(vmbuild.GOVERNORS)}")
    profiles = vmbuild.profile_names()
    if args.profile.lower() not in (p.lower() for p in profiles):
        raise UsageError(f"unknown profile '{args.profile}'; known: {' '.join(profiles)}")
    if args.states is not None:
        states.parse(args.states, "--states")
    if args.hz not in [str(hz) for hz in vmbuild.HZ_CHOICES]:
        raise UsageError(f"--hz: '{args.hz}' is not one of the kernel's choices"
                         f" {', '.join(str(hz) for hz in vmbuild.HZ_CHOICES)}")
    if args.accel not in ("auto", "kvm", "tcg"):
        raise UsageError(f"--accel: '{args.accel}' is not auto, kvm or tcg")
    nr_cpus = vmbuild.max_cpus()
    smp = check_number("--smp", args.smp, 1, nr_cpus,
                       f"the VM kernel has CONFIG_NR_CPUS={nr_cpus}")
    mib = host_mib()
    mem = check_number("--mem", args.mem, MIN_MEM_MIB, mib,
                       f"MiB; the guest needs {MIN_MEM_MIB}, the host has {mib}")
    latency = check_number("--disk-latency", args.disk_latency, 0, 10 ** 10, "ns")
    timeout_s = check_number("--timeout", args.timeout, 1, 7 * 24 * 3600,
                             "seconds; there is no 'no timeout'")
    if "teo." in args.append or "cpuidle.governor=" in args.append:
        raise UsageError("--append: teo.* and cpuidle.governor= are set by this"
                         " command (use --governor)")
    cwd = current_dir()
    out = None
    if args.out is not None:
        if not args.out:
            raise UsageError("--out: empty path")
        check_vm_path("--out", args.out)
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise UsageError(f"--out: '{args.out}' exists and is not a folder")
        disk.need_writable_dir(Path(args.out), f"--out {args.out}")
        if not args.out.startswith("/"):
            check_vm_path("--out", os.path.join(cwd, args.out))
        out = Path(os.path.normpath(os.path.join(cwd, args.out)))
    keep = keep_paths(cwd)
    if args.accel == "kvm" and not kvm_usable():
        raise UsageError("--accel kvm: /dev/kvm is missing or not usable by"
                         f" {process._user(os.geteuid())}")
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    return Options(
        governor=args.governor,
        emu_args=f"states={args.states}" if args.states else f"profile={args.profile}",
        use_emu=not args.no_emu, smp=smp, mem=mem, disk_latency=latency,
        append=args.append, out=out, timeout_s=timeout_s, console=args.console,
        accel=args.accel, as_is=args.as_is,
        variant=vmbuild.Variant(debug=args.debug, hz=int(args.hz)),
        keep=keep, cwd=cwd, command=command)


# --- what the guest gets --------------------------------------------------

@dataclass(frozen=True)
class Guest:
    """What QEMU boots, as vng would take it."""
    kernel: Path
    initramfs: Path
    cmdline: str
    smp: int
    mem_mib: int
    disk_latency_ns: int
    accel: str = "tcg"
    kvm_cpu: str = ""


def kernel_cmdline(opts: Options, run_dir: Path, module: Optional[Path],
                   tsc_khz: int) -> str:
    """The guest kernel's command line; teo.* are vm-init's keys."""
    # idle=halt: the emulated driver does the idle states, not the
    # kernel's own default idle loop.  tsc=reliable: TCG's TSC is one
    # host clock for all vCPUs; without it the clocksource watchdog may
    # drop the TSC over TCG jitter, and a jiffies clocksource has no
    # high-resolution timers (no NO_HZ idle).
    words = ["console=ttyS0", "loglevel=4", "panic=-1", "idle=halt", "tsc=reliable",
             f"tsc_early_khz={tsc_khz}", f"cpuidle.governor={opts.governor}",
             f"teo.out={run_dir}", f"teo.emu={module if module else 'none'}"]
    if opts.emu_args:
        words.append(f"teo.emu_args={opts.emu_args}")
    if opts.keep:
        words.append(f"teo.keep={':'.join(opts.keep)}")
    if opts.append:
        words.append(opts.append)
    return " ".join(words)


def qemu_argv(guest: Guest, run_dir: Path) -> List[str]:
    """QEMU's command line: no ACPI, no network, the host root read-only
    and the run folder writable over 9p, a null-co disk whose reads
    complete after disk_latency_ns."""
    smp = guest.smp
    argv = ["qemu-system-x86_64", "-machine", "pc",
            # Without ACPI the guest finds its CPUs in SeaBIOS's MP table,
            # which lists one CPU per socket: hence one socket per vCPU.
            "-smp", f"{smp},sockets={smp},cores=1,threads=1", "-m", str(guest.mem_mib),
            "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-monitor", "none", "-serial", f"file:{run_dir}/console.log",
            "-kernel", str(guest.kernel), "-initrd", str(guest.initramfs),
            "-append", guest.cmdline,
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
            "multidevs=remap",
            "-virtfs", f"local,path={run_dir},mount_tag=out,security_model=none,"
            "multidevs=remap",
            "-drive", "if=none,id=null0,driver=null-co,size=1G,read-zeroes=on,"
            f"latency-ns={guest.disk_latency_ns}",
            "-device", "virtio-blk-pci,drive=null0"]
    if guest.accel == "kvm":
        return argv + ["-accel", "kvm", "-cpu", guest.kvm_cpu]
    return argv + ["-accel", "tcg"]


def command_script(opts: Options, module: Optional[Path]) -> str:
    """The script vm-init runs in the guest (bash, chrooted into the
    host root): the caller's folder, then the command."""
    lines = ["# generated by teo vm",
             f"export PATH={GUEST_PATH}",
             f"export HOME=/tmp TEO_IN_VM=1 TEO_CACHE={shlex.quote(str(paths.cache()))}"
             f" TEO_KERNEL_HZ={opts.variant.hz}"]
    if module:
        lines.append(f"export TEO_EMU_KO={shlex.quote(str(module))}"
                     f" TEO_EMU_ARGS={shlex.quote(opts.emu_args)}")
    lines.append(f"cd {shlex.quote(opts.cwd)} 2>/dev/null || cd /")
    if opts.command:
        lines.append("exec " + " ".join(shlex.quote(a) for a in opts.command))
    else:
        lines += IDLE_SETUP.splitlines()
    return "\n".join(lines) + "\n"


# Under TCG the guest's TSC is the host's, and a guest without ACPI has no
# HPET or PM timer to calibrate it against: its PIT calibration fails now
# and then, the TSC is marked unstable and the guest falls back to jiffies,
# without high-resolution timers or a stoppable tick.  Telling it the
# frequency (tsc_early_khz=) avoids that; this program measures it.
TSC_KHZ_C = """\
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
static long long ns(void) { struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec; }
int main(void) { long long t0 = ns(), t;
  unsigned long long c0 = __rdtsc(), c;
  do t = ns(); while (t - t0 < 200000000LL);
  c = __rdtsc();
  printf("%llu\\n", (c - c0) * 1000000ULL / (t - t0));
  return 0; }
"""


def host_tsc_khz(slot: Path) -> int:
    """The host's TSC frequency in kHz (the program is built once)."""
    prog = slot / "host-tsc-khz"
    if not os.access(prog, os.X_OK):
        source = slot / "host-tsc-khz.c"
        source.write_text(TSC_KHZ_C, encoding="utf-8")
        built = process.output(["gcc", "-O2", "-o", prog, source])
        if built.returncode != 0:
            raise Fatal(f"cannot build {prog}: {built.stderr.strip()}")
    run = process.output([prog])
    if run.returncode != 0 or not run.stdout.strip().isdigit():
        raise Fatal(f"{prog} failed: {run.stderr.strip()}")
    return int(run.stdout)


# --- booting --------------------------------------------------------------

class Follow:
    """Copy what the guest appends to a run folder file to a stream as it
    comes (tail -f), until the block ends; then the rest."""

    def __init__(self, path: Path, stream: BinaryIO, interval_s: float = 0.2) -> None:
        self.path = path
        self.stream = stream
        self.interval_s = interval_s
        self.offset = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _copy(self) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        if data:
            self.offset += len(data)
            self.stream.write(data)
            self.stream.flush()
        return bool(data)

    def _loop(self) -> None:
        while not self.stop.is_set():
            if not self._copy():
                self.stop.wait(self.interval_s)

    def __enter__(self) -> "Follow":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        while self._copy():
            pass


def boot(guest: Guest, run_dir: Path, timeout_s: int, console: bool = False,
         out: Optional[BinaryIO] = None, err: Optional[BinaryIO] = None) -> int:
    """Boot the guest (the caller holds the build lock) and wait for it,
    at most timeout_s; QEMU's exit status, TIMED_OUT after the timeout.
    The guest's stdout goes to out, its stderr, QEMU's messages and with
    console the serial console to err (default: ours)."""
    out = out or sys.stdout.buffer
    err = err or sys.stderr.buffer
    t0 = time.monotonic()
    deadline = t0 + timeout_s
    status = 0
    follows = [Follow(run_dir / "stdout", out), Follow(run_dir / "stderr", err)]
    if console:
        follows.append(Follow(run_dir / "console.log", err))
    with contextlib.ExitStack() as stack:
        for follow in follows:
            stack.enter_context(follow)
        # Left first: QEMU has stopped before the last of its files is copied.
        qemu = stack.enter_context(process.group(
            qemu_argv(guest, run_dir), stdin=subprocess.DEVNULL, stdout=err, stderr=err))
        # The guest resets when done; should it hang after writing its
        # status, QEMU is stopped after a grace period.
        grace = GRACE_S
        while qemu.poll() is None and grace > 0:
            if (run_dir / "status").exists() or (run_dir / "vm-error").exists():
                grace -= 1
            if time.monotonic() >= deadline:
                note(f"the guest ran into the {timeout_s}s timeout and was stopped")
                status = TIMED_OUT
                break
            time.sleep(1)
        if qemu.poll() is None:
            process.stop_group(qemu)
        elif status != TIMED_OUT:
            status = qemu.returncode
    note(f"guest ran {time.monotonic() - t0:.0f} s (boot, command, reset)")
    return status


RUN_FILES = ("status", "vm-error", "dmesg", "console.log")


def prepare_run_dir(run_dir: Path, opts: Options, module: Optional[Path],
                    accel: str) -> None:
    """A run folder as vm-init expects it: fresh output files, vm-cmd."""
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    for name in ("stdout", "stderr"):
        (run_dir / name).write_bytes(b"")
    (run_dir / "accel").write_text(accel + "\n", encoding="utf-8")
    (run_dir / "vm-cmd").write_text(command_script(opts, module), encoding="utf-8")


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def verdict(run_dir: Path, qemu_status: int) -> int:
    """The run's exit status from what the guest left: the command's, or
    VM_FAILED, said why."""
    error = _read(run_dir / "vm-error")
    status = _read(run_dir / "status")
    if error is not None:
        note(f"the guest failed: {error.strip()}; see {run_dir}/console.log")
        return VM_FAILED
    if status is None:
        note(f"the guest stopped without running the command (qemu exit {qemu_status});"
             " console:")
        tail = (_read(run_dir / "console.log") or "").splitlines()[-20:]
        sys.stderr.write("".join(line + "\n" for line in tail))
        return VM_FAILED
    if "Marking TSC unstable" in (_read(run_dir / "dmesg") or ""):
        # Timers on jiffies: every measurement of this run is off.
        note(f"the guest lost its TSC clocksource (see {run_dir}/dmesg); its results"
             " are not valid")
        return VM_FAILED
    if not status.strip().isdigit():
        note(f"the guest left no exit status in {run_dir}/status")
        return VM_FAILED
    return int(status)


# --- the accelerator ------------------------------------------------------

@dataclass(frozen=True)
class Accel:
    kind: str
    cpu: str = ""
    why_not_kvm: str = ""


def kvm_cpu_model() -> Optional[str]:
    """The first CPU model QEMU can start a KVM vCPU with.  An openable
    /dev/kvm is not enough: under nested virtualisation QEMU may abort at
    the first vCPU reset ("failed to set MSR 0x10a", the
    IA32_ARCH_CAPABILITIES of -cpu host).  A paused guest that is still
    alive after two seconds has passed that point."""
    for model in ("host", "host,-arch-capabilities"):
        argv = ["qemu-system-x86_64", "-accel", "kvm", "-cpu", model, "-machine", "pc",
                "-nodefaults", "-display", "none", "-monitor", "none", "-serial", "none",
                "-S"]
        with process.group(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) as qemu:
            try:
                qemu.wait(timeout=2)
            except subprocess.TimeoutExpired:
                return model
    return None


def kvm_probe_key(qemu_version: str, host_release: str, cpu: str, kernel_release: str) -> str:
    return hashlib.sha1("".join(f"{s}\n" for s in (qemu_version, host_release, cpu,
                                                   kernel_release)).encode()).hexdigest()[:12]


def kvm_boots(opts: Options, images: vmbuild.Images, cpu: str) -> str:
    """"ok" when the test kernel boots and runs a command under KVM, else
    why not.  Nested KVM can pass kvm_cpu_model's paused start and still
    stop the guest during boot ("KVM internal error ... emulation
    failure"), so a real boot decides, once per QEMU, host kernel, CPU
    model and guest kernel release: the verdict is cached in
    paths.kvm_probe()."""
    version = process.output(["qemu-system-x86_64", "--version"]).stdout.split("\n")[0]
    release = (_read(images.build / "include" / "config" / "kernel.release") or "").strip()
    key = kvm_probe_key(version, os.uname().release, cpu, release)
    cached = paths.kvm_probe() / key
    if (_read(cached) or "").strip():
        return (_read(cached) or "").strip()
    note("trying a boot of the test kernel under KVM (once for this QEMU, host and kernel)")
    paths.kvm_probe().mkdir(parents=True, exist_ok=True)
    runs = images.slot / "vm-runs"
    runs.mkdir(parents=True, exist_ok=True)
    probe_opts = dataclasses.replace(opts, command=["true"], console=False)
    # Under KVM this kernel runs a command within seconds.
    timeout_s = 60
    with tempfile.TemporaryDirectory(prefix="kvm-probe.", dir=runs) as tmp:
        run_dir = Path(tmp)
        module = images.module if opts.use_emu else None
        prepare_run_dir(run_dir, probe_opts, module, "kvm")
        guest = make_guest(probe_opts, images, run_dir, Accel("kvm", cpu))
        with open(os.devnull, "wb") as null, open(run_dir / "qemu.err", "wb") as qerr, \
                process.BuildLock():
            qemu_status = boot(guest, run_dir, timeout_s, out=null, err=qerr)
        if (_read(run_dir / "status") or "").strip() == "0":
            answer = "ok"
        else:
            found = [line for line in (_read(run_dir / "qemu.err") or "").splitlines()
                     if re.search("KVM internal error|emulation failure|error:|Assertion",
                                  line)]
            console = (_read(run_dir / "console.log") or "").splitlines()
            found += console[-1:]
            answer = (f"the guest did not run a command within {timeout_s} s (qemu exit"
                      f" {qemu_status}; {found[0].replace(chr(13), '') if found else ''})")
    cached.write_text(answer + "\n", encoding="utf-8")
    return answer


def pick_accel(opts: Options, images: vmbuild.Images) -> Accel:
    """KVM when asked or when it works, else TCG, saying why not KVM."""
    if opts.accel == "tcg":
        return Accel("tcg", why_not_kvm="--accel tcg")
    why = ""
    cpu = None
    if not kvm_usable():
        why = (f"/dev/kvm not usable by {process._user(os.geteuid())}"
               if os.path.exists("/dev/kvm") else "no /dev/kvm")
    else:
        cpu = kvm_cpu_model()
        if cpu is None:
            why = ("/dev/kvm is there, but QEMU cannot start a KVM vCPU (nested"
                   " virtualisation?)")
        else:
            answer = kvm_boots(opts, images, cpu)
            if answer != "ok":
                why = f"/dev/kvm is there, but the test kernel does not boot under KVM: {answer}"
    if not why and cpu:
        return Accel("kvm", cpu)
    if opts.accel == "kvm":
        raise Fatal(f"--accel kvm: {why}")
    return Accel("tcg", why_not_kvm=why)


# --- a run ----------------------------------------------------------------

def make_guest(opts: Options, images: vmbuild.Images, run_dir: Path, accel: Accel) -> Guest:
    module = images.module if opts.use_emu else None
    return Guest(kernel=images.kernel, initramfs=images.initramfs,
                 cmdline=kernel_cmdline(opts, run_dir, module, host_tsc_khz(images.slot)),
                 smp=opts.smp, mem_mib=opts.mem, disk_latency_ns=opts.disk_latency,
                 accel=accel.kind, kvm_cpu=accel.cpu)


@dataclass
class RunDir:
    """The run folder: --out, or a fresh one under the cache removed at
    the end unless the VM failed (kept for its console log)."""
    path: Path
    temporary: bool

    def keep_failed(self) -> None:
        if self.temporary:
            failed = self.path.with_name(self.path.name + ".failed")
            self.path.rename(failed)
            self.path, self.temporary = failed, False
            note(f"kept the run folder {failed}")


def _run_dir(opts: Options, images: vmbuild.Images) -> RunDir:
    if opts.out:
        try:
            opts.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise Fatal(f"--out: cannot create '{opts.out}' ({e.strerror})") from None
        return RunDir(opts.out, False)
    runs = images.slot / "vm-runs"
    runs.mkdir(parents=True, exist_ok=True)
    return RunDir(Path(tempfile.mkdtemp(prefix="run.", dir=runs)), True)


def run(opts: Options, images: vmbuild.Images, accel: Accel) -> int:
    """Boot the guest, run the command; its exit status or VM_FAILED."""
    run_dir = _run_dir(opts, images)
    try:
        module = images.module if opts.use_emu else None
        prepare_run_dir(run_dir.path, opts, module, accel.kind)
        guest = make_guest(opts, images, run_dir.path, accel)
        with process.BuildLock():
            qemu_status = boot(guest, run_dir.path, opts.timeout_s, opts.console)
        status = verdict(run_dir.path, qemu_status)
        if status == VM_FAILED:
            run_dir.keep_failed()
        return status
    finally:
        if run_dir.temporary:
            shutil.rmtree(run_dir.path, ignore_errors=True)


def build(opts: Options) -> vmbuild.Images:
    """The images a run of opts boots, built where out of date."""
    return vmbuild.build(opts.variant, opts.as_is)


def boot_and_run(opts: Options, images: vmbuild.Images) -> int:
    """Choose the accelerator, say which, and run."""
    accel = pick_accel(opts, images)
    if accel.kind == "kvm":
        note(f"accelerator: KVM (/dev/kvm, -cpu {accel.cpu})")
    else:
        note(f"accelerator: TCG, software emulation ({accel.why_not_kvm}; timings are"
             " coarser and slower)")
    return run(opts, images, accel)


def main(args: argparse.Namespace) -> int:
    """teo vm."""
    opts = from_args(args)
    if args.check_args:
        return 0
    images = build(opts)
    if args.build_only:
        note(f"kernel: {images.kernel}")
        note(f"module: {images.module}")
        note(f"initramfs: {images.initramfs}")
        return 0
    return boot_and_run(opts, images)

