# SPDX-License-Identifier: GPL-2.0
"""Process groups, signals, the machine-wide build lock and heartbeats.

Everything a command starts or takes is released on the way out by a
context manager or a finally clause: a signal (Ctrl-C, SIGTERM, SIGHUP)
becomes the exception Interrupted in the main thread, and unwinding stops
the children's process groups, releases the lock and removes temporary
folders in the reverse order of taking them.  No exit hook is ever
registered, so none can run twice or run in the wrong process.
"""

import contextlib
import fcntl
import os
import pwd
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import IO, Iterator, List, Mapping, Optional, Sequence, Union

from teotool import paths
from teotool.ui import Fatal, note

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Time a stopped group gets between SIGTERM and SIGKILL.
STOP_GRACE_S = 10.0

Cmd = Sequence[Union[str, Path]]


class Interrupted(BaseException):
    """A stop signal arrived: unwind, then exit with 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def status(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Turn SIGINT, SIGTERM and SIGHUP into Interrupted while inside.

    After the first one the others are ignored, so that the cleanup it
    starts runs to its end (each of its waits is bounded).
    """
    def handler(signum: int, frame: Optional[FrameType]) -> None:
        for sig in _STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        note(f"interrupted by {signal.Signals(signum).name}: stopping what"
             " this run started")
        raise Interrupted(signum)

    old = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def _alive(pid: int) -> bool:
    """Whether process pid (or, negative, process group -pid) exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_alive(pgid: int) -> bool:
    return _alive(-pgid)


def stop_group(proc: "subprocess.Popen[bytes]",
               grace_s: float = STOP_GRACE_S) -> None:
    """Stop the process group led by proc: SIGTERM, SIGKILL after grace_s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        proc.wait()
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        proc.poll()
        if not _group_alive(proc.pid):
            break
        time.sleep(0.1)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def group(argv: Cmd, **popen: object) -> Iterator["subprocess.Popen[bytes]"]:
    """Start argv in a process group of its own; stop the group on the way
    out unless it ended by itself (a build's or QEMU's grandchildren
    included)."""
    proc: "subprocess.Popen[bytes]" = subprocess.Popen(
        [str(a) for a in argv], start_new_session=True, **popen)  # type: ignore[call-overload]
    try:
        yield proc
    finally:
        if proc.poll() is None or _group_alive(proc.pid):
            stop_group(proc)


def run(argv: Cmd, cwd: Optional[Path] = None,
        env: Optional[Mapping[str, str]] = None,
        stdout: Optional[IO[str]] = None,
        stderr: Optional[IO[str]] = None) -> int:
    """Run argv in its own process group and return its exit status."""
    with group(argv, cwd=cwd, env=env, stdout=stdout, stderr=stderr) as proc:
        return proc.wait()


def run_logged(argv: Cmd, log: Path, cwd: Optional[Path] = None,
               env: Optional[Mapping[str, str]] = None,
               echo: Optional[IO[str]] = None) -> int:
    """Run argv in its own group, its output (stderr too) into log and,
    line by line, to echo (default stdout)."""
    out = echo or sys.stdout
    with open(log, "w", encoding="utf-8", errors="replace") as f, \
            group(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            f.write(line)
            f.flush()
            out.write(line)
            out.flush()
        return proc.wait()


def output(argv: Cmd, cwd: Optional[Path] = None,
           env: Optional[Mapping[str, str]] = None,
           stdin: Optional[str] = None) -> "subprocess.CompletedProcess[str]":
    """Run argv (a short command), with stdin as its input if given (else
    none), and capture its output as text."""
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, check=False)


def setup_environment() -> None:
    """The environment every command of the tooling runs in: Debian's
    PATH (paths.DEBIAN_PATH), and ccache hashing paths under the cache
    relative to the build folder, so that the private tree and the series
    check's tree, laid out alike, share compile results (side effect:
    __FILE__ reads ../src/<path> in those builds)."""
    os.environ["PATH"] = paths.DEBIAN_PATH
    os.environ["CCACHE_BASEDIR"] = str(paths.cache())
    os.environ["CCACHE_NOHASHDIR"] = "1"


def debian_env(extra: Optional[Mapping[str, str]] = None) -> "dict[str, str]":
    """The environment for children: Debian's PATH only (see paths)."""
    env = dict(os.environ)
    env["PATH"] = paths.DEBIAN_PATH
    env.update(extra or {})
    return env


# --- progress -------------------------------------------------------------

@contextlib.contextmanager
def heartbeat(what: str, expect: str, interval_s: float = 60.0,
              stream: Optional[IO[str]] = None) -> Iterator[None]:
    """Say every interval that `what` still runs (expected: `expect`).

    On a terminal the command's own output shows progress, so nothing is
    added there.
    """
    out = stream or sys.stderr
    if out.isatty():
        yield
        return
    stop = threading.Event()
    start = time.monotonic()

    def beat() -> None:
        while not stop.wait(interval_s):
            minutes = int((time.monotonic() - start) // 60)
            note(f"... still {what}: {minutes} min so far (expected: {expect})")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


# --- the machine-wide build lock ------------------------------------------
#
# flock(2) on paths.lock().  Two kernel builds, or a build and a benchmark,
# must never share this machine, and the private tree changes only under
# it.  The holder writes "PID user USER since HH:MM:SS UTC: COMMAND" into
# the file (when the file is its own), so that a waiter can say for whom
# it waits.  It is not recursive: never run a command that takes it while
# holding it.

def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _owned(path: Path) -> bool:
    try:
        return os.stat(path).st_uid == os.geteuid()
    except OSError:
        return False


def _flock_pids(inode: int, locks: str = "/proc/locks") -> List[int]:
    """The pids /proc/locks names as holders of a flock on inode."""
    pids = []
    try:
        text = Path(locks).read_text(encoding="ascii", errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        f = line.split()
        if len(f) > 5 and f[1] == "FLOCK" and f[5].endswith(f":{inode}"):
            if f[4].isdigit():
                pids.append(int(f[4]))
    return pids


def _describe(pid: int) -> str:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return "exited"
    cmd = args.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return f"{_user(uid)} {cmd}"[:160]


def lock_holder(path: Path) -> str:
    """Describe the current holder of the lock as well as it can be known."""
    try:
        first = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        first = ""
    pid, _, rest = first.split("\n", 1)[0].partition(" ")
    if pid.isdigit() and _alive(int(pid)):
        return f"pid {pid} {rest}"
    # Not recorded (a manual flock): /proc/locks names the pid that took
    # it, which may be a helper that has exited since.
    try:
        inode = os.stat(path).st_ino
    except OSError:
        return "an unknown process"
    for holder in _flock_pids(inode):
        if _alive(holder):
            return f"pid {holder} ({_describe(holder)})"
    return "a process that did not record itself in the lock file"


def lock_mode(path: Path) -> str:
    """How the lock file can be opened: "r" (another user's file: flock
    works on a read-only descriptor) or "a" (ours, created if missing)."""
    if path.exists() and not _owned(path):
        if os.access(path, os.R_OK):
            return "r"
        raise Fatal(
            f"the build lock {path} belongs to user {_user(os.stat(path).st_uid)}"
            f" and {_user(os.geteuid())} cannot read it; ask them to run"
            f" 'chmod a+r {path}', or set TEO_LOCK to another file if you"
            " do not share builds with them")
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666))
    except OSError as err:
        raise Fatal(f"cannot create the build lock {path} ({err.strerror});"
                    " set TEO_LOCK to a file you can write") from None
    return "a"


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class _Tick(Exception):
    """The alarm that ends one bounded wait for the lock."""


def _wait_lock(fd: int, seconds: float) -> bool:
    """Wait in flock(2) itself for up to seconds (SIGALRM ends the wait):
    a blocked flock is woken by the kernel when the lock is freed, where a
    polling waiter would lose every time to one that blocks.  Whether the
    lock was taken.  Main thread only (signals)."""
    armed = [True]

    def tick(signum: int, frame: Optional[FrameType]) -> None:
        if armed[0]:
            raise _Tick()

    old = signal.signal(signal.SIGALRM, tick)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            got = True
        except _Tick:
            got = False
        finally:
            armed[0] = False
    except _Tick:
        # The alarm came between the flock call and disarming it.
        got = _try_lock(fd)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return got


def acquire(fd: int, path: Path, pid: int, cmdline: str,
            waited_s: Optional[float] = None, give_up_s: Optional[float] = None,
            report_s: float = 60.0) -> bool:
    """Take the lock on open descriptor fd and record the holder (pid,
    cmdline).  While waiting say for whom, and again every report_s.
    waited_s: how long earlier calls waited already (None: this is the
    first); give_up_s: return False after that long (a caller in bash asks
    again, so that a signal to it is not held up longer)."""
    start = time.monotonic() - (waited_s or 0.0)
    if not _try_lock(fd):
        if waited_s is None:
            note(f"waiting for the build lock {path}, held by {lock_holder(path)}")
        limit = None if give_up_s is None else time.monotonic() + give_up_s
        while True:
            now = time.monotonic()
            wait = report_s if limit is None else max(0.01, min(report_s, limit - now))
            if _wait_lock(fd, wait):
                break
            now = time.monotonic()
            note(f"... still waiting for the build lock"
                 f" ({int((now - start) // 60)} min), held by {lock_holder(path)}")
            if limit is not None and now >= limit:
                return False
        note(f"got the build lock after {int(time.monotonic() - start)} s")
    elif waited_s is not None:
        note(f"got the build lock after {int(waited_s)} s")
    if _owned(path):
        since = time.strftime("%H:%M:%S UTC", time.gmtime())
        with contextlib.suppress(OSError):
            path.write_text(f"{pid} user {_user(os.geteuid())} since {since}: {cmdline}\n",
                            encoding="utf-8")
    return True


def release(fd: int, path: Path) -> None:
    """Clear the record in our own file (never another user's), unlock."""
    if _owned(path):
        with contextlib.suppress(OSError):
            path.write_text("", encoding="utf-8")
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


class BuildLock:
    """Hold the machine-wide build lock inside a with block."""

    def __init__(self, path: Optional[Path] = None,
                 cmdline: Optional[str] = None) -> None:
        self.path = path or paths.lock()
        self.cmdline = cmdline or " ".join([Path(sys.argv[0]).name] + sys.argv[1:])
        self.fd = -1

    def __enter__(self) -> "BuildLock":
        mode = lock_mode(self.path)
        flags = os.O_RDONLY if mode == "r" else os.O_WRONLY | os.O_APPEND
        self.fd = os.open(self.path, flags)
        try:
            acquire(self.fd, self.path, os.getpid(), self.cmdline)
        except BaseException:
            os.close(self.fd)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        release(self.fd, self.path)
