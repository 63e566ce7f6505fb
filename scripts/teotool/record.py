# SPDX-License-Identifier: GPL-2.0
"""The benchmark's recordings (--record): each run recorded with
trace-cmd, and its report text, cut to the run, kept as
record/WORKLOAD-GOVERNOR-RUN.txt for the replay lab's converter.

What is recorded is what the converter reads (tools/idle-replay/README,
"Trace files"): idle entries and exits, what woke the CPU (device
interrupts, x86's IPI vectors and arm64's ipi_entry, timer expiries) and
whether the idle task was switched out; softirqs and cpu_idle_miss for
the reader.  Events the kernel lacks are left out, teo's own among them.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from teotool import deps, process
from teotool.ui import Fatal, note

EVENTS = (
    "power:cpu_idle", "power:cpu_idle_miss", "power:teo_select", "power:teo_update",
    "irq:irq_handler_entry", "irq:softirq_entry", "irq_vectors:local_timer_entry",
    "irq_vectors:reschedule_entry", "irq_vectors:call_function_entry",
    "irq_vectors:call_function_single_entry", "ipi:ipi_entry",
    "timer:hrtimer_expire_entry", "timer:timer_expire_entry", "sched:sched_switch",
)
# Per-CPU ring buffer (KiB) and the recorder's sleep between reads (us):
# its readers wake twice a second, not every millisecond (trace-cmd's
# default), so that the recording adds few wakeups of its own.
BUFFER_KB = 16384
SLEEP_US = 500000
TRACEFS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
START = "teo-bench: start"
STOP = "teo-bench: stop"
# How long trace-cmd may take to switch its events on.
START_TIMEOUT_S = 60


def trace_cmd() -> str:
    """The trace-cmd binary: TEO_TRACE_CMD names another one."""
    return os.environ.get("TEO_TRACE_CMD") or "trace-cmd"


def check() -> None:
    """trace-cmd must be there before anything runs (also on the host,
    for the guest, which runs the host's root file system)."""
    other = os.environ.get("TEO_TRACE_CMD")
    if other:
        if not shutil.which(other):
            raise Fatal(f"--record: TEO_TRACE_CMD={other} is not an executable command")
    else:
        deps.need_cmd("trace-cmd")


def find_tracefs(candidates: Sequence[Path] = TRACEFS) -> Path:
    """The tracefs folder, or a one-line error saying how to get one."""
    for d in candidates:
        if (d / "events").is_dir():
            return d
    raise Fatal("no tracefs (mount -t tracefs tracefs /sys/kernel/tracing; the"
                " kernel needs CONFIG_FTRACE and event tracing)")


def available_events(tracefs: Path, wanted: Sequence[str] = EVENTS) -> List[str]:
    """Those of the wanted events this kernel has."""
    return [e for e in wanted if (tracefs / "events" / e.replace(":", "/", 1)).is_dir()]


def cut(text: str) -> Tuple[str, bool]:
    """The report text between the run's start and stop markers (both
    kept), with trace-cmd's header lines; whether the markers were there
    (if not, the text is kept whole)."""
    if START not in text:
        return text, False
    out = []
    on = False
    for line in text.splitlines(keepends=True):
        if START in line:
            on = True
            out.append(line)
        elif STOP in line:
            out.append(line)
            break
        elif on or line.startswith(("cpus=", "version")):
            out.append(line)
    return "".join(out), True


class Recorder:
    """trace-cmd record around each run; the report text of each into
    out/record/.  The binary recording goes to a local folder (in the
    test VM the results folder is a 9p mount)."""

    def __init__(self, out: Path, tracefs: Optional[Path] = None) -> None:
        self.tracefs = tracefs or find_tracefs()
        if not (self.tracefs / "events" / "power" / "cpu_idle").is_dir():
            raise Fatal(f"--record: this kernel has no power:cpu_idle event"
                        f" ({self.tracefs}/events/power/cpu_idle)")
        self.events = available_events(self.tracefs)
        self.folder = out / "record"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix="teo-record."))
        self.proc: Optional["subprocess.Popen[bytes]"] = None
        self.name = ""
        self.used = False

    def args(self) -> List[str]:
        argv = ["-b", str(BUFFER_KB), "-s", str(SLEEP_US)]
        for e in self.events:
            argv += ["-e", e]
        return argv

    def describe(self) -> str:
        """The recorder's setup, for setup.txt."""
        return (f"trace-cmd {' '.join(self.args()[4:])} (buffer {BUFFER_KB} KiB per"
                f" CPU, reads every {SLEEP_US} us)")

    def _dat(self) -> Path:
        return self.tmp / f"{self.name}.dat"

    def _log(self) -> Path:
        return self.folder / f"{self.name}.log"

    def _last_log_line(self) -> str:
        try:
            lines = self._log().read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def start(self, name: str) -> None:
        """Start recording run name (WORKLOAD-GOVERNOR-RUN); return once
        the events are on."""
        self.name = name
        self.used = True
        for old in self.folder.glob(f"{name}.*"):
            old.unlink()
        with open(self._log(), "wb") as log:
            self.proc = subprocess.Popen(
                [trace_cmd(), "record", "-q", "-o", str(self._dat()), *self.args()],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        enable = self.tracefs / "events" / "power" / "cpu_idle" / "enable"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError):
                if enable.read_text().strip() == "1":
                    return
            if self.proc.poll() is not None:
                raise Fatal(f"trace-cmd record did not start: {self._last_log_line()}")
            if time.monotonic() > deadline:
                raise Fatal(f"trace-cmd record did not enable its events within"
                            f" {START_TIMEOUT_S} s")
            time.sleep(0.1)

    def mark(self, text: str) -> None:
        """A marker in the recording, when one runs."""
        if self.proc is not None:
            (self.tracefs / "trace_marker").write_text(f"teo-bench: {text}\n")

    def _interrupt(self) -> int:
        assert self.proc is not None
        proc, self.proc = self.proc, None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            return proc.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.stop_group(proc)
            return proc.wait()

    def stop(self) -> None:
        """Stop recording; keep the report text, cut to the run, as RUN.txt."""
        if self.proc is None:
            return
        status = self._interrupt()
        dat = self._dat()
        if status != 0 or not dat.is_file() or dat.stat().st_size == 0:
            raise Fatal(f"trace-cmd record failed (exit {status}): {self._last_log_line()}")
        with open(self._log(), "ab") as log:
            run = subprocess.run([trace_cmd(), "report", "-i", str(dat)],
                                 stdout=subprocess.PIPE, stderr=log, check=False)
        dat.unlink()
        if run.returncode != 0:
            raise Fatal(f"trace-cmd report of {dat} failed: {self._last_log_line()}")
        text, marked = cut(run.stdout.decode("utf-8", "replace"))
        if not marked:
            note(f"the recording of {self.name} has no teo-bench markers: kept whole")
        txt = self.folder / f"{self.name}.txt"
        txt.write_text(text)
        if " cpu_idle: " not in text:
            raise Fatal(f"the recording {txt} holds no cpu_idle event (see {self._log()})")

    def close(self) -> None:
        """At the end: stop a recording still running, leave tracing as it
        was, remove the local folder."""
        if self.proc is not None:
            self._interrupt()
        if self.used:
            subprocess.run([trace_cmd(), "reset"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)
