# SPDX-License-Identifier: GPL-2.0
"""The test VM's runner without booting a kernel: bad options stop before
anything is built, QEMU's and the guest's command lines, the command
script's quoting, the exit status from the run folder, and boot() and
run() against a stand-in for QEMU."""

import contextlib
import os
import signal
import subprocess
import unittest
from pathlib import Path
from typing import IO, List, Tuple
from unittest import mock

from teotool import paths, process, vm, vmbuild
from teotool.testing import TEO, ScratchTest
from teotool.ui import UsageError

T = "{tmp}"

# (status, pattern, arguments of teo vm)
BAD_INPUT: List[Tuple[int, str, List[str]]] = [
    (2, r"--append: teo\.\* and cpuidle.governor= are set", ["--append", "teo.emu=none"]),
    (2, "--append: teo", ["--append", "quiet cpuidle.governor=menu"]),
    (2, "--out '{tmp}/a,b' has white space, a comma or a colon", ["--out", "{tmp}/a,b"]),
    (2, "--out '/proc/teo' is under /dev, /proc or /sys", ["--out", "/proc/teo"]),
    (2, "--out: '{tmp}/file' exists and is not a folder", ["--out", "{tmp}/file"]),
    (2, "--out: empty path", ["--out", ""]),
    (2, "--states: empty list", ["--states", ""]),
    (2, "--smp: 'two' is not a whole number", ["--smp", "two"]),
    (2, "--smp: 0 is below 1", ["--smp", "0"]),
    (2, "--disk-latency: '1234567890123' is too large", ["--disk-latency", "1234567890123"]),
    (2, "--timeout: 604801 is above 604800", ["--timeout", "604801"]),
    (2, "--hz needs a value", ["--hz"]),
    (2, "unknown argument '--nosuch'", ["--debug", "--nosuch", "--", "true"]),
]


class BadInputTest(ScratchTest):
    def test_each_stops_before_anything(self) -> None:
        (self.tmp / "file").write_text("")
        for status, pattern, args in BAD_INPUT:
            argv = [TEO, "vm", *[a.replace(T, str(self.tmp)) for a in args], "--build-only"]
            with self.subTest(args=args):
                self.assertBadInput(status, pattern.replace(T, str(self.tmp)), argv)

    def test_cache_path_the_guest_cannot_see(self) -> None:
        self.assertBadInput(1, "TEO_CACHE=/tmp/a:b has white space, a comma or a colon",
                            [TEO, "vm", "--build-only"], {"TEO_CACHE": "/tmp/a:b"})

    def test_check_args_builds_nothing(self) -> None:
        run = self.run_cmd([TEO, "vm", "--check-args", "--debug", "--hz", "1000",
                            "--states", "poll,1/1,120/360", "--", "false"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout + run.stderr, "")
        self.assertFalse((self.tmp / "cache").exists())


class OptionsTest(unittest.TestCase):
    def test_command_after_the_options(self) -> None:
        cases: List[Tuple[List[str], List[str]]] = [
            (["--", "cat", "/x"], ["cat", "/x"]),
            (["cat", "--smp", "3"], ["cat", "--smp", "3"]),
            (["--smp", "3", "--", "--smp"], ["--smp"]),
            ([], [])]
        for argv, command in cases:
            with self.subTest(argv=argv):
                self.assertEqual(vm.from_args(vm.namespace(*argv)).command, command)

    def test_values(self) -> None:
        opts = vm.from_args(vm.namespace("--smp", "3", "--mem", "512", "--hz", "1000",
                                         "--debug", "--governor", "menu", "--no-emu"))
        self.assertEqual((opts.smp, opts.mem, opts.governor, opts.use_emu),
                         (3, 512, "menu", False))
        self.assertEqual(opts.variant, vmbuild.Variant(debug=True, hz=1000))
        self.assertEqual(vm.from_args(vm.namespace()).emu_args, "profile=i5-10600K")
        self.assertEqual(vm.from_args(vm.namespace("--profile", "RK3399")).emu_args,
                         "profile=RK3399", "profiles match without regard to case")
        self.assertEqual(vm.from_args(vm.namespace("--states", "poll,2/2")).emu_args,
                         "states=poll,2/2")
        with self.assertRaisesRegex(UsageError, "unknown profile 'nosuch'; known: .*mt8196"):
            vm.from_args(vm.namespace("--profile", "nosuch"))

    def test_folders_under_tmp_stay_visible(self) -> None:
        with mock.patch.dict(os.environ, {"TEO_CACHE": "/tmp/teo-cache"}):
            self.assertIn("/tmp/teo-cache", vm.keep_paths("/tmp/work"))
            self.assertIn("/tmp/work", vm.keep_paths("/tmp/work"))
            self.assertNotIn("/srv", vm.keep_paths("/srv"))


def guest(accel: str = "tcg") -> vm.Guest:
    return vm.Guest(kernel=Path("/b/bzImage"), initramfs=Path("/i/initramfs.cpio.gz"),
                    cmdline="console=ttyS0 x=1", smp=3, mem_mib=512,
                    disk_latency_ns=200000, accel=accel,
                    kvm_cpu="host" if accel == "kvm" else "")


class CommandLineTest(unittest.TestCase):
    def test_qemu(self) -> None:
        argv = vm.qemu_argv(guest(), Path("/run/dir"))
        self.assertEqual(argv[0], "qemu-system-x86_64")
        pairs = {flag: argv[argv.index(flag) + 1] for flag in
                 ("-smp", "-m", "-kernel", "-initrd", "-append", "-serial")}
        self.assertEqual(pairs["-smp"], "3,sockets=3,cores=1,threads=1")
        self.assertEqual(pairs["-m"], "512")
        self.assertEqual(pairs["-kernel"], "/b/bzImage")
        self.assertEqual(pairs["-initrd"], "/i/initramfs.cpio.gz")
        self.assertEqual(pairs["-append"], "console=ttyS0 x=1")
        self.assertEqual(pairs["-serial"], "file:/run/dir/console.log")
        self.assertIn("-no-reboot", argv)
        self.assertEqual(argv[-2:], ["-accel", "tcg"])
        virtfs = [v for k, v in zip(argv, argv[1:]) if k == "-virtfs"]
        self.assertEqual(virtfs, [
            "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
            "local,path=/run/dir,mount_tag=out,security_model=none,multidevs=remap"])
        self.assertIn("latency-ns=200000", [v for k, v in zip(argv, argv[1:])
                                            if k == "-drive"][0])
        self.assertEqual(vm.qemu_argv(guest("kvm"), Path("/r"))[-4:],
                         ["-accel", "kvm", "-cpu", "host"])

    def test_kernel_cmdline(self) -> None:
        opts = vm.Options(governor="menu", emu_args="states=poll,1/1", keep=["/tmp/a", "/tmp/b"],
                          append="quiet")
        line = vm.kernel_cmdline(opts, Path("/out"), Path("/m/cpuidle-emu.ko"), 2600000)
        self.assertEqual(line.split(), [
            "console=ttyS0", "loglevel=4", "panic=-1", "idle=halt", "tsc=reliable",
            "tsc_early_khz=2600000", "cpuidle.governor=menu", "teo.out=/out",
            "teo.emu=/m/cpuidle-emu.ko", "teo.emu_args=states=poll,1/1",
            "teo.keep=/tmp/a:/tmp/b", "quiet"])
        self.assertIn("teo.emu=none", vm.kernel_cmdline(vm.Options(), Path("/o"), None, 1))


class CommandScriptTest(ScratchTest):
    def run_script(self, opts: vm.Options) -> str:
        script = self.tmp / "vm-cmd"
        script.write_text(vm.command_script(opts, Path("/m/cpuidle-emu.ko")))
        return subprocess.run(["bash", str(script)], capture_output=True, text=True,
                              check=True).stdout

    def test_arguments_arrive_as_given(self) -> None:
        args = ["a b", "$HOME", "it's", "*", ""]
        out = self.run_script(vm.Options(cwd=str(self.tmp), command=["printf", "[%s]", *args]))
        self.assertEqual(out, "[a b][$HOME][it's][*][]")

    def test_environment_and_folder(self) -> None:
        opts = vm.Options(cwd=str(self.tmp), emu_args="profile=rk3399",
                          variant=vmbuild.Variant(hz=1000),
                          command=["sh", "-c", 'echo "$TEO_IN_VM $TEO_KERNEL_HZ'
                                   ' $TEO_EMU_KO $TEO_EMU_ARGS $PWD $HOME"'])
        self.assertEqual(self.run_script(opts),
                         f"1 1000 /m/cpuidle-emu.ko profile=rk3399 {self.tmp} /tmp\n")

    def test_missing_folder_runs_in_root(self) -> None:
        opts = vm.Options(cwd=str(self.tmp / "gone"), command=["pwd"])
        self.assertEqual(self.run_script(opts), "/\n")

    def test_no_command_prints_the_idle_setup(self) -> None:
        self.assertIn("current_governor_ro", vm.command_script(vm.Options(), None))
        self.assertNotIn("TEO_EMU_KO", vm.command_script(vm.Options(), None))


class VerdictTest(ScratchTest):
    def test_statuses(self) -> None:
        run = self.tmp
        self.assertEqual(vm.verdict(run, 1), vm.VM_FAILED, "no status: the VM failed")
        (run / "status").write_text("3\n")
        self.assertEqual(vm.verdict(run, 0), 3)
        (run / "dmesg").write_text("[ 1.0] clocksource: Marking TSC unstable due to x\n")
        self.assertEqual(vm.verdict(run, 0), vm.VM_FAILED, "timers on jiffies")
        (run / "dmesg").write_text("")
        (run / "vm-error").write_text("cpuidle-emu did not load\n")
        self.assertEqual(vm.verdict(run, 0), vm.VM_FAILED)
        (run / "vm-error").unlink()
        (run / "status").write_text("")
        self.assertEqual(vm.verdict(run, 0), vm.VM_FAILED)


class KvmProbeTest(unittest.TestCase):
    def test_key_as_the_bash_version_made_it(self) -> None:
        """The verdicts cached when the VM script was bash stay valid."""
        fields = ["QEMU emulator version 7.2.15", "6.1.0-40-amd64", "host", "6.12.118"]
        want = subprocess.run(["bash", "-c", "printf '%s\\n' \"$@\" | sha1sum | cut -c1-12",
                               "sh", *fields], capture_output=True, text=True,
                              check=True).stdout.strip()
        self.assertEqual(vm.kvm_probe_key(*fields), want)


FAKE_QEMU = """#!/bin/sh
# Stands in for QEMU: acts out $FAKE_GUEST in the run folder $FAKE_RUN.
echo $$ > "$FAKE_RUN/qemu.pid"
case $FAKE_GUEST in
done) echo "to stdout" >> "$FAKE_RUN/stdout"; echo "to stderr" >> "$FAKE_RUN/stderr"
      echo 7 > "$FAKE_RUN/status" ;;
hang) echo 0 > "$FAKE_RUN/status"; exec sleep 300 ;;
stuck) exec sleep 300 ;;
esac
"""


class BootTest(ScratchTest):
    """boot() follows the guest's output and stops QEMU's group on every
    way out (a guest that hangs after its status, the timeout)."""

    def setUp(self) -> None:
        super().setUp()
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        fake = bin_dir / "qemu-system-x86_64"
        fake.write_text(FAKE_QEMU)
        fake.chmod(0o755)
        self.run_dir = self.tmp / "run"
        self.run_dir.mkdir()
        for name in ("stdout", "stderr"):
            (self.run_dir / name).write_bytes(b"")
        patch = mock.patch.dict(os.environ, {"PATH": f"{bin_dir}:{paths.DEBIAN_PATH}",
                                             "FAKE_RUN": str(self.run_dir)})
        patch.start()
        self.addCleanup(patch.stop)

    def boot(self, what: str, timeout_s: int = 60) -> Tuple[int, bytes, bytes]:
        os.environ["FAKE_GUEST"] = what
        with open(self.tmp / "out", "wb+") as out, open(self.tmp / "err", "wb+") as err:
            status = vm.boot(guest(), self.run_dir, timeout_s, out=out, err=err)
        return status, (self.tmp / "out").read_bytes(), (self.tmp / "err").read_bytes()

    def assertStopped(self) -> None:
        pid = int((self.run_dir / "qemu.pid").read_text())
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_output_follows(self) -> None:
        status, out, err = self.boot("done")
        self.assertEqual(status, 0, "QEMU's own status")
        self.assertEqual(out, b"to stdout\n")
        self.assertEqual(err, b"to stderr\n")

    def test_hanging_guest_is_stopped(self) -> None:
        with mock.patch.object(vm, "GRACE_S", 1):
            status, _, _ = self.boot("hang")
        self.assertEqual(status, 0)
        self.assertStopped()

    def test_timeout(self) -> None:
        status, _, _ = self.boot("stuck", timeout_s=1)
        self.assertEqual(status, vm.TIMED_OUT)
        self.assertStopped()


class RunFolderTest(ScratchTest):
    """A temporary run folder goes away at the end, also on a signal, and
    stays (as NAME.failed) when the VM failed."""

    def setUp(self) -> None:
        super().setUp()
        self.images = vmbuild.Images(self.tmp / "slot", vmbuild.Variant())
        stack = contextlib.ExitStack()
        stack.enter_context(mock.patch.dict(os.environ, {"TEO_LOCK": str(self.tmp / "lock")}))
        stack.enter_context(mock.patch.object(vm, "host_tsc_khz", return_value=1000))
        self.addCleanup(stack.close)

    def runs(self) -> List[str]:
        return sorted(p.name.split(".")[-1] for p in (self.images.slot / "vm-runs").iterdir())

    def run_with(self, guest_files: "dict[str, str]") -> int:
        def fake_boot(g: vm.Guest, run_dir: Path, *args: object, **kw: IO[bytes]) -> int:
            self.assertIn("lock", os.listdir(self.tmp), "boots under the build lock")
            self.assertTrue((run_dir / "vm-cmd").is_file())
            for name, text in guest_files.items():
                (run_dir / name).write_text(text)
            return 0
        with mock.patch.object(vm, "boot", fake_boot):
            return vm.run(vm.Options(command=["true"]), self.images, vm.Accel("tcg"))

    def test_removed_after_a_run(self) -> None:
        self.assertEqual(self.run_with({"status": "0\n"}), 0)
        self.assertEqual(self.runs(), [])

    def test_kept_when_the_vm_failed(self) -> None:
        self.assertEqual(self.run_with({"vm-error": "no 9p\n"}), vm.VM_FAILED)
        self.assertEqual(self.runs(), ["failed"])

    def test_removed_on_a_signal(self) -> None:
        def interrupted(*args: object, **kw: object) -> int:
            raise process.Interrupted(signal.SIGTERM)
        with mock.patch.object(vm, "boot", interrupted), \
                self.assertRaises(process.Interrupted):
            vm.run(vm.Options(command=["true"]), self.images, vm.Accel("tcg"))
        self.assertEqual(self.runs(), [])
        self.assertEqual((self.tmp / "lock").read_text(), "", "the lock's record is cleared")


if __name__ == "__main__":
    unittest.main()
