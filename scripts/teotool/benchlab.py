# SPDX-License-Identifier: GPL-2.0
"""The replay lab as the benchmark uses it: a recorded run converted to a
lab timeline and replayed with the governor the kernel ran, through
"scripts/teo replay" and the lab's machine-readable output (list --tsv,
run --json: tools/idle-replay/README); nothing here reads the lab's
display text.

Which lab governor stands for a kernel governor: teo is this repository's
teo.c ("teo"), menu the base tree's menu.c (the lab's base-role menu,
menu-X.Y); --lab-govs KERNEL=LABEL says otherwise, where LABEL may be
teo-base or menu-base for the base tree's.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from teotool import paths, process
from teotool.ui import Fatal

# Per state: usage, time (us), above, below.
StateCounts = Tuple[float, float, float, float]


@dataclass(frozen=True)
class Governor:
    """A governor the lab has compiled in."""
    label: str
    role: str
    source: str


def parse_list(text: str) -> List[Governor]:
    """The governor rows of "idle-replay list --tsv"."""
    govs = []
    for line in text.splitlines():
        f = line.split("\t")
        if f[0] == "governor" and len(f) >= 3:
            govs.append(Governor(f[1], f[2], f[3] if len(f) > 3 else "-"))
    return govs


def resolve(label: str, govs: Sequence[Governor]) -> str:
    """teo-base and menu-base name the base tree's governors (teo-X.Y,
    menu-X.Y: role base); other labels stand for themselves."""
    if label not in ("teo-base", "menu-base"):
        return label
    prefix = label[:-len("base")]
    for g in govs:
        if g.role == "base" and g.label.startswith(prefix):
            return g.label
    return ""


def label_for(kernel_gov: str, mapping: Dict[str, str], govs: Sequence[Governor]) -> str:
    """The lab's governor for a kernel governor, or "" (none: ladder)."""
    if kernel_gov in mapping:
        return resolve(mapping[kernel_gov], govs)
    if kernel_gov == "teo":
        return "teo"
    if kernel_gov == "menu":
        return resolve("menu-base", govs)
    return ""


def with_qos(trace: str, limit_ns: int) -> str:
    """A lab timeline (tools/idle-replay/README, "Trace files") with a PM
    QoS limit on every CPU from its start: a recording does not say
    which limit the run held."""
    lines = trace.splitlines()
    data = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    at = data[0] if data else len(lines)
    cpus = 0
    for line in lines[:at]:
        f = line.split()
        if f[:1] == ["cpus"] and len(f) > 1 and f[1].isdigit():
            cpus = int(f[1])
    if not cpus:
        cpus = 1 + max((int(lines[i].split()[1]) for i in data), default=0)
    qos = [f"0 {cpu} qos {limit_ns}" for cpu in range(cpus)]
    return "\n".join(lines[:at] + qos + lines[at:]) + "\n"


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Fatal(f"{what}: the lab's JSON has no number where a count belongs")
    return float(value)


def states_of(doc: Any, label: str, what: Path) -> List[StateCounts]:
    """Per state, in index order, the usage, time, above and below that
    the lab's run --json gives governor label."""
    try:
        entry = next(g for g in doc["governors"] if g["label"] == label)
        states = sorted(entry["states"], key=lambda s: int(s["index"]))
        return [(_number(s["usage"], str(what)), _number(s["time_us"], str(what)),
                 _number(s["above"], str(what)), _number(s["below"], str(what)))
                for s in states]
    except StopIteration:
        raise Fatal(f"{what}: the lab's JSON has no governor '{label}'") from None
    except (TypeError, KeyError, ValueError):
        raise Fatal(f"{what}: the lab's JSON has no per-state counts") from None


class Lab:
    """scripts/teo replay, its messages collected in log."""

    def __init__(self, log: Path) -> None:
        self.log = log
        log.write_text("")

    def _run(self, argv: Sequence[str], stdout: Path) -> int:
        with open(stdout, "w") as out, open(self.log, "a") as err:
            return process.run([str(paths.ENTRY), "replay", *argv], cwd=paths.REPO,
                               stdout=out, stderr=err)

    def _last(self) -> str:
        lines = [line for line in self.log.read_text(errors="replace").splitlines()
                 if line.strip() and not line.startswith(("make", "built"))]
        return lines[-1] if lines else f"see {self.log}"

    def governors(self) -> List[Governor]:
        out = self.log.with_name("lab-list.tsv")
        if self._run(["list", "--tsv"], out) != 0:
            raise Fatal(f"the replay lab did not build (see {self.log})")
        govs = parse_list(out.read_text())
        out.unlink()
        if not any(g.role == "base" for g in govs):
            raise Fatal(f"the replay lab lists no base-tree governor (see {self.log})")
        return govs

    def convert(self, recording: Path, trace: Path, table: str, hz: str) -> None:
        if self._run(["convert", "--hz", hz, "--platform", table, str(recording),
                      str(trace)], self.log.with_name("lab-convert.out")) != 0:
            raise Fatal(f"{recording}: not a recording the lab can convert: {self._last()}")
        self.log.with_name("lab-convert.out").unlink(missing_ok=True)

    def run(self, trace: Path, table: str, label: str, display: Path, out: Path) -> Any:
        """Replay trace with governor label; the lab's JSON (its display
        text kept in display, for people)."""
        if self._run(["run", "--trace", str(trace), "--platform", table, "--gov", label,
                      "--per-state", "--json", str(out)], display) != 0:
            raise Fatal(f"{trace}: the lab's replay failed: {self._last()}")
        try:
            return json.loads(out.read_text())
        except (OSError, ValueError):
            raise Fatal(f"{out}: the lab wrote no JSON (it needs 'idle-replay run"
                        " --json')") from None
