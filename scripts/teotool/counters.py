# SPDX-License-Identifier: GPL-2.0
"""What the benchmark reads from the machine around each run: the idle
states' counters in sysfs (usage, time, above, below, summed over the
CPUs), their names and table, the kernel's HZ, and the package energy
(RAPL through powercap, or turbostat).

Every reader takes the folder it reads as an argument (the defaults are
the live machine's), so that the unit tests give it a made-up sysfs.
"""

import contextlib
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from teotool import process

CPU_SYS = Path("/sys/devices/system/cpu")
CPUIDLE_SYS = CPU_SYS / "cpuidle"
POWERCAP_SYS = Path("/sys/class/powercap")

# The kernel's per-state counters, in the order of runs.tsv's columns.
COUNTERS = ("usage", "time", "above", "below")

# One state's counters summed over the CPUs: usage, time (us), above, below.
Counts = Tuple[int, int, int, int]

_STATE_DIR = re.compile(r"^state([0-9]+)$")
_CPU_DIR = re.compile(r"^cpu[0-9]+$")


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def _state_dirs(cpuidle: Path) -> Dict[int, Path]:
    found = {}
    with contextlib.suppress(OSError):
        for entry in cpuidle.iterdir():
            m = _STATE_DIR.match(entry.name)
            if m:
                found[int(m.group(1))] = entry
    return found


def snapshot(cpu_sys: Path = CPU_SYS) -> List[Counts]:
    """Per idle state, its counters summed over every CPU; as many states
    as the CPU with the most has, a counter a CPU lacks counting 0."""
    sums: Dict[int, List[int]] = {}
    with contextlib.suppress(OSError):
        for cpu in cpu_sys.iterdir():
            if not _CPU_DIR.match(cpu.name):
                continue
            for index, folder in _state_dirs(cpu / "cpuidle").items():
                total = sums.setdefault(index, [0, 0, 0, 0])
                for i, name in enumerate(COUNTERS):
                    total[i] += _read_int(folder / name)
    count = max(sums) + 1 if sums else 0
    return [tuple(sums.get(s, [0, 0, 0, 0])) for s in range(count)]  # type: ignore[misc]


def delta(before: Sequence[Counts], after: Sequence[Counts]) -> List[Counts]:
    """after - before, state by state (a state missing on one side counts 0)."""
    n = max(len(before), len(after))
    zero = (0, 0, 0, 0)
    out = []
    for s in range(n):
        a = after[s] if s < len(after) else zero
        b = before[s] if s < len(before) else zero
        out.append((a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]))
    return out


def state_names(cpu_sys: Path = CPU_SYS) -> List[str]:
    """The names of CPU 0's idle states, shallowest first, white space
    made "_" (the names head columns of runs.tsv and residency.dat)."""
    folders = _state_dirs(cpu_sys / "cpu0" / "cpuidle")
    names = []
    for index in sorted(folders):
        try:
            names.append("_".join((folders[index] / "name").read_text().split()))
        except OSError:
            break
    return names


def shallow_index(names: Sequence[str]) -> int:
    """The shallowest halting state: the idle trap's state (after a
    polling state 0, if there is one and a state after it)."""
    return 1 if names and names[0] == "POLL" and len(names) > 1 else 0


@dataclass(frozen=True)
class State:
    """An idle state as CPU 0 registered it."""
    name: str
    latency_us: int
    residency_us: int
    polls: bool
    disabled: bool


def states(cpu_sys: Path = CPU_SYS) -> List[State]:
    """CPU 0's idle states, shallowest first."""
    out = []
    folders = _state_dirs(cpu_sys / "cpu0" / "cpuidle")
    for index in sorted(folders):
        d = folders[index]
        try:
            name = (d / "name").read_text().strip()
        except OSError:
            break
        try:
            desc = (d / "desc").read_text()
        except OSError:
            desc = ""
        polls = index == 0 and (name == "POLL" or "POLL IDLE" in desc)
        out.append(State(name, _read_int(d / "latency"), _read_int(d / "residency"),
                         polls, _read_int(d / "disable") != 0))
    return out


def lab_name(name: str) -> str:
    """A state name as a lab table can hold it (one word)."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


def platform_table(table: Sequence[State], kernel: str, driver: str, title: str) -> str:
    """The registered states as a replay-lab table (tools/idle-replay/README,
    "Platform files"): the polling state and the states disabled now marked."""
    lines = [f"# the idle states {kernel} registered (cpuidle driver {driver}),"
             " written by scripts/teo bench",
             "name recorded", f"title {title}"]
    for s in table:
        flags = (" poll" if s.polls else "") + (" off" if s.disabled else "")
        lines.append(f"state {lab_name(s.name)} {s.latency_us} {s.residency_us}{flags}")
    return "\n".join(lines) + "\n"


def latency_lines(cpu_sys: Path = CPU_SYS) -> List[str]:
    """CPU 0's "stateN/latency:US" and "stateN/residency:US" lines, for
    setup.txt (latencies first, as grep -H lists them)."""
    folders = _state_dirs(cpu_sys / "cpu0" / "cpuidle")
    lines = []
    for what in ("latency", "residency"):
        for index in sorted(folders):
            f = folders[index] / what
            if f.is_file():
                lines.append(f"state{index}/{what}:{f.read_text().strip()}")
    return lines


def kernel_hz(release: str, env_hz: Optional[str] = None,
              boot: Path = Path("/boot")) -> str:
    """The running kernel's HZ: what the test VM tells its guest
    (TEO_KERNEL_HZ), else Debian's /boot/config-RELEASE; "unknown"."""
    if env_hz:
        return env_hz
    try:
        text = (boot / f"config-{release}").read_text()
    except OSError:
        return "unknown"
    m = re.search(r"^CONFIG_HZ=([0-9]+)$", text, re.M)
    return m.group(1) if m else "unknown"


# --- package energy ------------------------------------------------------

def rapl_zones(powercap: Path = POWERCAP_SYS) -> List[Path]:
    """The RAPL package domains under powercap ("package-N" zones)."""
    zones = []
    with contextlib.suppress(OSError):
        for z in sorted(powercap.glob("intel-rapl:[0-9]*")):
            if not os.access(z / "energy_uj", os.R_OK):
                continue
            with contextlib.suppress(OSError):
                if (z / "name").read_text().startswith("package-"):
                    zones.append(z)
    return zones


def rapl_joules(before: Sequence[int], after: Sequence[int],
                ranges: Sequence[int]) -> float:
    """Energy in J between two readings of the zones, each zone allowed
    one wrap of its counter."""
    total = 0
    for b, a, r in zip(before, after, ranges):
        total += a - b if a >= b else a + r - b
    return total / 1e6


def turbostat_joules(text: str) -> float:
    """The sum of turbostat's Pkg_J column (one number a line)."""
    total = 0.0
    for line in text.splitlines():
        f = line.split()
        if f and re.match(r"^[0-9.]+$", f[0]):
            total += float(f[0])
    return total


TURBOSTAT = ["turbostat", "--quiet", "--Summary", "--Joules", "--show", "Pkg_J"]


class Energy:
    """How this machine's package energy is measured ("rapl", "turbostat"
    or "none", with the reason), and the measurement of one run."""

    def __init__(self, in_vm: bool, powercap: Path = POWERCAP_SYS) -> None:
        self.zones = rapl_zones(powercap)
        self.how = "none"
        self._before: List[int] = []
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._out: Optional[Path] = None
        if in_vm:
            self.why = "not measured: inside the test VM (the emulated states save nothing)"
        elif self.zones:
            self.how = "rapl"
            self.why = ("package energy from RAPL ("
                        + " ".join(z.name for z in self.zones) + ")")
        elif self._turbostat_works():
            self.how = "turbostat"
            self.why = "package energy from turbostat (Pkg_J)"
        else:
            self.why = (f"not measured: no RAPL package domain in {powercap} and"
                        " turbostat (linux-cpupower) found no package energy"
                        " counter on this machine")

    @staticmethod
    def _turbostat_works() -> bool:
        try:
            run = process.output([*TURBOSTAT, "--num_iterations", "1", "--interval", "0.2"])
        except OSError:
            return False
        return "Pkg_J" in run.stdout

    def _read(self) -> List[int]:
        return [_read_int(z / "energy_uj") for z in self.zones]

    def start(self, scratch: Path) -> None:
        if self.how == "rapl":
            self._before = self._read()
        elif self.how == "turbostat":
            self._out = scratch / "turbostat.tmp"
            self._proc = subprocess.Popen(
                [*TURBOSTAT, "--interval", "1", "--out", str(self._out)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)

    def stop(self) -> Optional[float]:
        """The run's energy in J, or None."""
        if self.how == "rapl":
            ranges = [_read_int(z / "max_energy_range_uj") for z in self.zones]
            return rapl_joules(self._before, self._read(), ranges)
        if self.how == "turbostat" and self._proc and self._out:
            self.close()
            try:
                text = self._out.read_text()
            except OSError:
                text = ""
            self._out.unlink(missing_ok=True)
            return turbostat_joules(text)
        return None

    def close(self) -> None:
        """Stop a turbostat still running (also on the way out)."""
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGINT)
            try:
                self._proc.wait(timeout=process.STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                process.stop_group(self._proc)
            self._proc = None
