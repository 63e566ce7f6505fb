# SPDX-License-Identifier: GPL-2.0
"""The build lock says who holds it and is freed on every exit; a signal
stops the children and removes temporary folders (process.py)."""

import os
import re
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path
from typing import List

from teotool import paths, process
from teotool.testing import NOBODY, ScratchTest, is_root

PYTHON_HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from teotool import process
try:
    with process.stop_signals_raise(), process.BuildLock(cmdline="holder-prog"):
        print("locked", flush=True)
        time.sleep(60)
except process.Interrupted as stop:
    sys.exit(stop.status)
"""

# Takes a temporary folder and the lock, starts a child in its own group,
# then waits: a SIGTERM must undo all three.
PYTHON_VICTIM = """
import sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from teotool import process
try:
    with process.stop_signals_raise(), \\
            tempfile.TemporaryDirectory(prefix="sig.", dir=sys.argv[2]), \\
            process.BuildLock(), process.group(["sleep", "300"]) as child:
        open(sys.argv[2] + "/child", "w").write(str(child.pid))
        time.sleep(300)
except process.Interrupted as stop:
    sys.exit(stop.status)
"""

# Takes the lock and lets it go; a bad environment is one line and exit
# status 1, as scripts/teo reports it.
LOCKER = """
import sys
sys.path.insert(0, sys.argv[1])
from teotool import process, ui
try:
    with process.BuildLock():
        pass
except ui.Fatal as err:
    print(err.line(), file=sys.stderr)
    sys.exit(err.status)
"""


def wait_for(predicate: "object", timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def lock_is_free(path: Path) -> bool:
    with open(path, "a") as f:
        return process._try_lock(f.fileno())


class LockTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        self.lock = self.tmp / "lock-test"
        self.procs: List["subprocess.Popen[str]"] = []

    def tearDown(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        super().tearDown()

    def start(self, argv: List[str], **kw: object) -> "subprocess.Popen[str]":
        proc: "subprocess.Popen[str]" = subprocess.Popen(  # type: ignore[call-overload]
            argv, env=self.env({"TEO_LOCK": str(self.lock)}), text=True,
            start_new_session=True, **kw)
        self.procs.append(proc)
        return proc

    def check_waiter(self, holder: "subprocess.Popen[str]", waiter_argv: List[str]) -> None:
        """A waiter names the holder, then gets the lock once it is freed;
        the record is cleared on release."""
        waiter = self.start(waiter_argv, stderr=subprocess.PIPE)
        assert waiter.stderr is not None
        first = waiter.stderr.readline()
        os.killpg(holder.pid, signal.SIGTERM)
        rest = waiter.stderr.read()
        self.assertEqual(waiter.wait(timeout=30), 0, first + rest)
        holder.wait(timeout=30)
        self.assertRegex(first, rf"waiting for the build lock {re.escape(str(self.lock))},"
                         rf" held by pid {holder.pid} user \S+ since .*: holder-prog")
        self.assertIn("got the build lock", rest)
        self.assertEqual(self.lock.read_text(), "", "the record is cleared on release")

    def test_python_waiter_names_python_holder(self) -> None:
        holder = self.start([sys.executable, "-c", PYTHON_HOLDER, str(paths.SCRIPTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert holder.stdout is not None
        self.assertEqual(holder.stdout.readline(), "locked\n")
        self.check_waiter(holder, [sys.executable, "-c", LOCKER, str(paths.SCRIPTS)])

    def test_a_blocked_waiter_is_woken_at_once(self) -> None:
        """The wait is flock's own: freed, the lock goes to the waiter at
        once, not at its next poll; and a bounded wait gives up."""
        holder = self.start(["flock", str(self.lock), "sleep", "60"])
        self.assertTrue(wait_for(lambda: not lock_is_free(self.lock)))
        fd = os.open(self.lock, os.O_RDONLY)
        try:
            start = time.monotonic()
            self.assertFalse(process.acquire(fd, self.lock, os.getpid(), "t",
                                             give_up_s=0.3, report_s=0.1))
            self.assertLess(time.monotonic() - start, 5)
            os.killpg(holder.pid, signal.SIGTERM)
            self.assertTrue(process.acquire(fd, self.lock, os.getpid(), "t", report_s=30))
            self.assertLess(time.monotonic() - start, 10)
        finally:
            process.release(fd, self.lock)

    def test_holder_that_did_not_record_itself(self) -> None:
        """A manual flock: /proc/locks names the pid."""
        holder = self.start(["flock", str(self.lock), "sleep", "60"])
        self.assertTrue(wait_for(lambda: not lock_is_free(self.lock)))
        self.assertRegex(process.lock_holder(self.lock), rf"^pid {holder.pid} \(\S+ flock ")

    def test_python_sigterm_cleanup(self) -> None:
        """SIGTERM stops the process group, removes temporary folders and
        frees the lock."""
        self.check_stopped([sys.executable, "-c", PYTHON_VICTIM, str(paths.SCRIPTS),
                            str(self.tmp)], 143)

    def check_stopped(self, argv: List[str], want: int) -> None:
        """Start argv, SIGTERM it once it has named its child, and check
        what it left.  Its stderr goes to a file: a surviving child that
        held a pipe would block the read instead of failing the test."""
        child_file = self.tmp / "child"
        with open(self.tmp / "stderr", "w+") as stderr:
            victim = self.start(argv, stderr=stderr)
            self.assertTrue(wait_for(lambda: child_file.exists()
                                     and child_file.read_text().strip()))
            child = int(child_file.read_text())
            os.kill(victim.pid, signal.SIGTERM)
            self.assertEqual(victim.wait(timeout=30), want)
            stderr.seek(0)
            err = stderr.read()
        try:
            self.assertFalse(alive(child), "the child survived")
        finally:
            if alive(child):
                os.kill(child, signal.SIGKILL)
        self.assertEqual(list(self.tmp.glob("sig.*")), [], "temporary folder left")
        self.assertTrue(lock_is_free(self.lock), "the lock is still held")
        self.assertIn("interrupted by SIGTERM", err)


@unittest.skipUnless(is_root(), "needs root to act as two users")
class OtherUserTest(ScratchTest):
    """Another user's lock file: root takes it read-only; a user who
    cannot read it gets one clear line."""

    def setUp(self) -> None:
        super().setUp()
        self.lock = self.tmp / "lock-test"
        run = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                              "--clear-groups", "test", "-r", str(paths.PACKAGE / "process.py")])
        if run.returncode != 0:
            self.skipTest(f"the repository is not readable by uid {NOBODY}")

    def as_nobody(self, argv: List[str], env: "dict[str, str]") -> "subprocess.CompletedProcess[str]":
        return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                               "--clear-groups", "env", *[f"{k}={v}" for k, v in env.items()],
                               *argv], capture_output=True, text=True, timeout=60)

    def test_lock_file_of_another_user_works_read_only(self) -> None:
        self.lock.write_text("")
        os.chown(self.lock, NOBODY, NOBODY)
        self.lock.chmod(0o644)
        run = self.run_cmd([sys.executable, "-c", LOCKER, str(paths.SCRIPTS)],
                           {"TEO_LOCK": str(self.lock)})
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_unreadable_lock_of_another_user(self) -> None:
        self.lock.write_text("")
        self.lock.chmod(0o600)
        run = self.as_nobody([sys.executable, "-c", LOCKER, str(paths.SCRIPTS)],
                             {"TEO_LOCK": str(self.lock), "TEO_CACHE": str(self.tmp / "c")})
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertRegex(run.stderr, f"the build lock {self.lock} belongs to user root and"
                         " .* cannot read it")

    def test_unwritable_cache(self) -> None:
        ro = self.tmp / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        run = self.as_nobody([str(paths.SCRIPTS / "prepare-tree.sh")],
                             {"TEO_CACHE": str(ro / "cache"), "KERNEL_SRC": "",
                              "TEO_LOCK": str(self.lock)})
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertIn(f"TEO_CACHE={ro}/cache is not writable", run.stderr)


class HeartbeatTest(unittest.TestCase):
    def test_beats_while_running_and_stops(self) -> None:
        import io
        out = io.StringIO()
        err = sys.stderr
        sys.stderr = out
        try:
            with process.heartbeat("testing", "a moment", interval_s=0.05, stream=out):
                time.sleep(0.3)
            beats = out.getvalue().count("... still testing")
            time.sleep(0.2)
        finally:
            sys.stderr = err
        self.assertGreaterEqual(beats, 2)
        self.assertEqual(out.getvalue().count("... still testing"), beats)


class GroupTest(unittest.TestCase):
    def test_group_stops_grandchildren(self) -> None:
        """Unwinding out of a group stops its grandchildren too."""
        with self.assertRaises(RuntimeError):
            with process.group(["bash", "-c", "sleep 300 & echo $!; wait"],
                               stdout=subprocess.PIPE) as proc:
                assert proc.stdout is not None
                grandchild = int(proc.stdout.readline())
                raise RuntimeError("leave the block")
        self.assertTrue(wait_for(lambda: not alive(grandchild)))

    def test_run_returns_the_status(self) -> None:
        self.assertEqual(process.run(["sh", "-c", "exit 7"]), 7)


if __name__ == "__main__":
    unittest.main()
