# SPDX-License-Identifier: GPL-2.0
"""The benchmark's workloads: what each runs, and the reading of its
machine-readable output into the run's metric and extra numbers.

A workload family (fio, timer-io, hackbench, cyclictest, idle, ring,
interval) gives one or more cases, each a line of runs.tsv and a block of
the summary: ring one per work time (ring-10us, ring-100us), interval one
per interval, without and with a PM QoS limit of 0 (interval-20us,
interval-20us-qos0).  The numbers are the workload programs' own (fio's
and cyclictest's JSON, teo-ring's and teo-interval's JSON, hackbench's
"Time:" line); only the latency percentiles of a histogram are computed
here, by stats.
"""

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from teotool import counters, deps, paths, process, stats
from teotool.ui import Fatal

FAMILIES = ("fio", "timer-io", "hackbench", "cyclictest", "idle", "ring", "interval")
DEFAULT_FAMILIES = ("fio", "timer-io", "hackbench", "cyclictest")
HACKBENCH_ARGS = "-g 4 -l 500"
# cyclictest's histogram reaches this far (us); beyond it a percentile is
# printed as an overflow.
CYCLICTEST_HIST_US = 10000
OVERFLOW = f"{stats.OVERFLOW_PREFIX}{CYCLICTEST_HIST_US}"
# teo-interval's histogram: 1 us buckets up to this.
INTERVAL_HIST_US = 10000
PROGRAMS = ("teo-ring", "teo-interval")

Extras = List[Tuple[str, str]]


@dataclass(frozen=True)
class Case:
    """One workload as runs.tsv names it: its family and parameter (ring:
    us of work per hop; interval: us between wakeups) and PM QoS limit."""
    name: str
    family: str
    param: int = 0
    qos: Optional[int] = None


@dataclass
class Result:
    """A run's metric (as printed in runs.tsv) and its extra numbers."""
    metric: str
    extras: Extras = field(default_factory=list)


@dataclass
class Settings:
    """What the workloads are run with (the benchmark's options)."""
    fio_dev: str = ""
    fio_runtime: int = 20
    timer_delay_us: int = 50000
    timer_runtime: int = 5
    hackbench_args: str = HACKBENCH_ARGS
    cyclictest_runtime: int = 10
    idle_runtime: int = 60
    ring_threads: int = 0
    ring_work_us: Tuple[int, ...] = (10, 100)
    ring_runtime: int = 10
    interval_us: Tuple[int, ...] = (5, 20, 50)
    interval_qos: Tuple[Optional[int], ...] = (None, 0)
    interval_runtime: int = 5
    scratch: Path = Path(".")
    programs: Path = Path(".")


def cases(families: Sequence[str], s: Settings) -> List[Case]:
    """The cases of the families, in order."""
    out = []
    for family in families:
        if family == "ring":
            out += [Case(f"ring-{w}us", family, w) for w in s.ring_work_us]
        elif family == "interval":
            for i in s.interval_us:
                out += [Case(f"interval-{i}us" + ("" if q is None else f"-qos{q}"),
                             family, i, q) for q in s.interval_qos]
        else:
            out.append(Case(family, family))
    return out


_QOS_CASE = re.compile(r"^interval-[0-9]+us-qos([0-9]+)$")


def qos_of(name: str) -> Optional[int]:
    """The PM QoS limit (us) a case of runs.tsv ran under, from the name
    cases() gave it; None for no limit."""
    m = _QOS_CASE.match(name)
    return int(m.group(1)) if m else None


def unit(case: Case, shallow_name: str) -> str:
    """The metric's unit and direction, as the summary heads the case."""
    return {
        "fio": "IOPS (higher is better)",
        "timer-io": "IOPS (higher is better)",
        "hackbench": "s (lower is better)",
        "cyclictest": "avg us (lower is better)",
        "idle": f"% of idle time in {shallow_name} (lower is better)",
        "ring": "laps/s (higher is better)",
        "interval": "wakeups/s (higher is better)",
    }[case.family]


def number(value: float) -> str:
    """A number as jq prints it: whole numbers without a decimal point."""
    return str(int(value)) if value == int(value) else repr(value)


def jq_round(value: float) -> float:
    """jq's round (C's round): halves away from zero."""
    return math.copysign(math.floor(abs(value) + 0.5), value)


def _json(text: str, what: str) -> Any:
    """The JSON object in a program's output (text before it skipped)."""
    start = text.find("{")
    try:
        return json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        raise Fatal(f"{what}: its output is not JSON") from None


# --- parsers of the programs' output --------------------------------------

def parse_fio(text: str, dev: str) -> Result:
    """IOPS, and the completion latency p50/p99 in us, of fio's JSON."""
    bad = Fatal(f"fio on {dev}: no result or an error in its JSON output")
    try:
        job = _json(text, f"fio on {dev}")["jobs"][0]
        if job["error"] != 0:
            raise bad
        read = job["read"]
        pct = read["clat_ns"]["percentile"]
        # In us with one decimal, rounded as the bash benchmark's jq did.
        return Result(number(jq_round(read["iops"] * 10) / 10),
                      [("p50", number(jq_round(pct["50.000000"] / 100) / 10)),
                       ("p99", number(jq_round(pct["99.000000"] / 100) / 10))])
    except (TypeError, KeyError, IndexError):
        raise bad from None


def parse_hackbench(text: str) -> str:
    """The last "Time: S" of hackbench's output."""
    found = [line.split(":", 1)[1].strip() for line in text.splitlines()
             if line.startswith("Time:")]
    if not found or not found[-1]:
        raise Fatal("hackbench printed no 'Time:' line")
    return found[-1]


def parse_cyclictest(text: str) -> Result:
    """The average wakeup latency over every thread (weighted by its
    cycles), and p99, p99.9 and the maximum from the summed histograms;
    a percentile beyond the histogram is an overflow (">10000")."""
    try:
        threads = list(_json(text, "cyclictest")["thread"].values())
        cycles = sum(int(t["cycles"]) for t in threads)
        avg = sum(float(t["avg"]) * int(t["cycles"]) for t in threads) / cycles
        worst = max(int(t["max"]) for t in threads)
        hist: Dict[int, int] = {}
        for t in threads:
            for us, count in t["histogram"].items():
                hist[int(us)] = hist.get(int(us), 0) + int(count)
    except (TypeError, KeyError, ValueError, ZeroDivisionError, AttributeError):
        raise Fatal("no latency in cyclictest's JSON output") from None
    extras = []
    for p in (99, 99.9):
        at = stats.histogram_percentile(hist, p, cycles)
        extras.append((f"p{p:g}", OVERFLOW if at is None else str(at)))
    extras.append(("max", str(worst)))
    return Result(number(jq_round(avg * 10) / 10), extras)


def idle_metric(counts: Sequence[counters.Counts], shallow: int, runtime: int) -> Result:
    """The idle trap: the shallowest halting state's share of idle time,
    and its entries per second."""
    total = sum(c[1] for c in counts)
    share = 100 * counts[shallow][1] / total if total else 0.0
    return Result(f"{share:.2f}", [("entries/s", f"{counts[shallow][0] / runtime:.1f}")])


def parse_ring(text: str) -> Result:
    """teo-ring's laps per second and us per hop."""
    try:
        r = _json(text, "teo-ring")
        return Result(f"{float(r['laps_per_s']):.1f}", [("us/hop", f"{float(r['us_per_hop']):.1f}")])
    except (TypeError, KeyError, ValueError):
        raise Fatal("teo-ring: no laps_per_s or us_per_hop in its output") from None


def parse_interval(text: str) -> Result:
    """teo-interval's wakeups per second, and the wakeup latency: its
    average, p99 of its histogram (an overflow beyond it) and maximum."""
    try:
        r = _json(text, "teo-interval")
        hist = {int(k): int(v) for k, v in r["lat_hist_us"].items()}
        total = sum(hist.values()) + int(r["lat_overflow"])
        p99 = stats.histogram_percentile(hist, 99, total) if total else 0
        return Result(f"{float(r['wakeups_per_s']):.1f}",
                      [("avg", f"{float(r['lat_avg_us']):.1f}"),
                       ("p99", f"{stats.OVERFLOW_PREFIX}{INTERVAL_HIST_US}" if p99 is None
                        else str(p99)),
                       ("max", f"{float(r['lat_max_us']):.1f}")])
    except (TypeError, KeyError, ValueError, AttributeError):
        raise Fatal("teo-interval: no wakeups_per_s or latency in its output") from None


# --- the workload programs --------------------------------------------------

def programs_key(src: Path = paths.TEO_BENCH) -> str:
    """A digest of the programs' sources: their build folder's name."""
    h = hashlib.sha1()
    for f in sorted(src.iterdir()):
        if f.is_file() and (f.suffix in (".c", ".h") or f.name == "Makefile"):
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _built(folder: Path) -> bool:
    return all(os.access(folder / p, os.X_OK) for p in PROGRAMS)


def build_programs(src: Path = paths.TEO_BENCH, cache: Optional[Path] = None) -> Path:
    """The folder of teo-ring and teo-interval, built with Debian's gcc
    into the cache once per version of their sources.  Where the cache
    cannot be written (the test VM sees the host's read-only), a build
    the host made is used, or they are built into a temporary folder."""
    folder = (cache or paths.bench_programs()) / programs_key(src)
    if _built(folder):
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="build.", dir=folder.parent))
    except OSError:
        tmp = Path(tempfile.mkdtemp(prefix="teo-bench."))
        folder = tmp
    _make(src, tmp)
    if tmp != folder:
        try:
            tmp.rename(folder)
        except OSError:
            # Another run built the same sources meanwhile.
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _make(src: Path, out: Path) -> None:
    deps.need_cmd("gcc", "make")
    run = process.output(["make", "-s", "-C", src, f"O={out}"], env=process.debian_env())
    if run.returncode != 0 or not _built(out):
        shutil.rmtree(out, ignore_errors=True)
        raise Fatal(f"the workload programs of {src} did not build:"
                    f" {(run.stderr.strip().splitlines() or ['no output'])[-1]}")


# --- running them -----------------------------------------------------------

def _output(argv: Sequence[str], what: str) -> str:
    """Run a workload in its own process group (stopped on Ctrl-C) and
    return its standard output, or fail naming it."""
    with tempfile.TemporaryFile() as err, \
            process.group(argv, stdout=subprocess.PIPE, stderr=err,
                          stdin=subprocess.DEVNULL) as proc:
        out, _ = proc.communicate()
        status = proc.wait()
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()
    if status != 0:
        raise Fatal(f"{what} failed (exit {status})" + (f": {tail[-1]}" if tail else ""))
    return bytes(out).decode("utf-8", "replace")


def fio(dev: str, runtime: int) -> Result:
    text = _output(["fio", "--output-format=json", "--readonly", "--time_based",
                    "--name=teobench", f"--filename={dev}", f"--runtime={runtime}",
                    "--rw=randread", "--bs=4k", "--ioengine=psync", "--iodepth=1",
                    "--direct=1"], f"fio on {dev}")
    return parse_fio(text, dev)


def hackbench(args: str) -> Result:
    return Result(parse_hackbench(_output(["hackbench", *args.split()],
                                          f"hackbench {args}")))


def cyclictest(runtime: int, scratch: Path) -> Result:
    """cyclictest --laptop (no PM QoS limit), one thread per CPU, 1 ms
    interval, with a 1 us histogram up to 10 ms."""
    out = scratch / "cyclictest.json"
    _output(["cyclictest", "--laptop", "-q", "-m", "-S", "-p", "80", "-i", "1000",
             "-h", str(CYCLICTEST_HIST_US), "-D", f"{runtime}s", f"--json={out}"],
            "cyclictest")
    try:
        text = out.read_text()
    except OSError:
        raise Fatal(f"no latency in cyclictest's JSON output ({out})") from None
    result = parse_cyclictest(text)
    out.unlink(missing_ok=True)
    return result


def ring(s: Settings, work_us: int) -> Result:
    argv = [str(s.programs / "teo-ring"), "--work-us", str(work_us),
            "--runtime", str(s.ring_runtime)]
    if s.ring_threads:
        argv += ["--threads", str(s.ring_threads)]
    return parse_ring(_output(argv, "teo-ring"))


def interval(s: Settings, interval_us: int, qos: Optional[int]) -> Result:
    argv = [str(s.programs / "teo-interval"), "--interval-us", str(interval_us),
            "--runtime", str(s.interval_runtime)]
    if qos is not None:
        argv += ["--pm-qos", str(qos)]
    return parse_interval(_output(argv, "teo-interval"))


def run(case: Case, s: Settings, timer_dev: str) -> Result:
    """Run case once.  The idle workload's metric comes from the run's
    counters afterwards (idle_metric); its result here is a placeholder."""
    if case.family == "fio":
        return fio(s.fio_dev, s.fio_runtime)
    if case.family == "timer-io":
        return fio(timer_dev, s.timer_runtime)
    if case.family == "hackbench":
        return hackbench(s.hackbench_args)
    if case.family == "cyclictest":
        return cyclictest(s.cyclictest_runtime, s.scratch)
    if case.family == "ring":
        return ring(s, case.param)
    if case.family == "interval":
        return interval(s, case.param, case.qos)
    time.sleep(s.idle_runtime)
    return Result("idle")


# --- null_blk with timer completions (timer-io) ----------------------------

CONFIGFS = Path("/sys/kernel/config")


@contextlib.contextmanager
def null_blk(delay_us: int, configfs: Path = CONFIGFS) -> Iterator[Optional[str]]:
    """A null_blk disk through configfs whose completions come from an
    hrtimer after delay_us (irqmode=2); its /dev path, or None where the
    kernel has no null_blk with configfs.  Removed on the way out."""
    cfg = configfs / "nullb"
    if not cfg.is_dir():
        with contextlib.suppress(OSError):
            process.output(["modprobe", "null_blk", "nr_devices=0"])
        if not cfg.is_dir() and configfs.is_dir():
            with contextlib.suppress(OSError):
                process.output(["mount", "-t", "configfs", "configfs", configfs])
    item = cfg / f"teobench{os.getpid()}"
    made = False
    try:
        if not cfg.is_dir():
            yield None
            return
        try:
            item.mkdir()
            made = True
            for name, value in (("irqmode", 2), ("completion_nsec", delay_us * 1000),
                                ("size", 1024), ("power", 1)):
                (item / name).write_text(f"{value}\n")
        except OSError:
            yield None
            return
        yield _null_blk_dev(item)
    finally:
        if made:
            with contextlib.suppress(OSError):
                (item / "power").write_text("0\n")
            with contextlib.suppress(OSError):
                item.rmdir()


def _null_blk_dev(item: Path) -> Optional[str]:
    """Newer kernels name the disk after the configfs item, older ones
    nullb<index>; it may take a moment to appear."""
    for _ in range(10):
        index = ""
        with contextlib.suppress(OSError):
            index = (item / "index").read_text().strip()
        for dev in (f"/dev/{item.name}", f"/dev/nullb{index}"):
            if Path(dev).is_block_device():
                return dev
        time.sleep(0.2)
    return None
