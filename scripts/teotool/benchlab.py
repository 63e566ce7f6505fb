# SPDX-License-Identifier: GPL-2.0
"""The replay lab as the benchmark uses it: a recorded run converted to a
lab timeline and replayed with the governor the kernel ran, read from the
lab's machine-readable output (list --tsv through lab.governors, run
--json: tools/idle-replay/README); nothing here reads the lab's display
text.  The lab is built and found as "scripts/teo replay" does (lab).

Which lab governor stands for a kernel governor: teo is this repository's
teo.c ("teo"), menu the base tree's menu.c (the lab's base-role menu,
menu-X.Y); --lab-govs KERNEL=LABEL says otherwise, where LABEL may be
teo-base or menu-base for the base tree's.
"""

import json
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

from teotool import lab, process
from teotool.ui import Fatal

# Per state: usage, time (us), above, below.
StateCounts = Tuple[float, float, float, float]


def resolve(label: str, govs: Sequence[lab.LabGovernor]) -> str:
    """teo-base and menu-base name the base tree's governors (teo-X.Y,
    menu-X.Y: role base); other labels stand for themselves."""
    if label not in ("teo-base", "menu-base"):
        return label
    prefix = label[:-len("base")]
    for g in govs:
        if g.role == "base" and g.label.startswith(prefix):
            return g.label
    return ""


def label_for(kernel_gov: str, mapping: Dict[str, str],
              govs: Sequence[lab.LabGovernor]) -> str:
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
    """The lab binary with this repository's and the base tree's
    governors, its messages collected in log."""

    def __init__(self, log: Path) -> None:
        self.log = log
        log.write_text("")
        trees = lab.find_trees(fetch_mainline=False)
        self.data = lab.corpus(trees)
        self.binary = lab.Lab(trees).build("idle-replay") / "idle-replay"

    def _run(self, argv: Sequence[Union[str, Path]], stdout: Path) -> int:
        with open(stdout, "w") as out, open(self.log, "a") as err:
            return process.run([self.binary, *argv], stdout=out, stderr=err,
                               env=process.debian_env())

    def _last(self) -> str:
        lines = [line for line in self.log.read_text(errors="replace").splitlines()
                 if line.strip()]
        return lines[-1] if lines else f"see {self.log}"

    def _platform(self, table: str) -> List[str]:
        """--platform, after the corpus when the table is named, not a file."""
        if "/" in table or table.endswith(".plat"):
            return ["--platform", table]
        return [*self.data, "--platform", table]

    def governors(self) -> List[lab.LabGovernor]:
        govs = lab.governors(self.binary)
        if not any(g.role == "base" for g in govs):
            raise Fatal(f"the replay lab lists no base-tree governor ({self.binary})")
        return govs

    def convert(self, recording: Path, trace: Path, table: str, hz: str) -> None:
        if self._run(["convert", "--hz", hz, *self._platform(table), recording, trace],
                     self.log.with_name("lab-convert.out")) != 0:
            raise Fatal(f"{recording}: not a recording the lab can convert: {self._last()}")
        self.log.with_name("lab-convert.out").unlink(missing_ok=True)

    def run(self, trace: Path, table: str, label: str, display: Path, out: Path) -> Any:
        """Replay trace with governor label; the lab's JSON (its display
        text kept in display, for people)."""
        if self._run(["run", *self.data, "--trace", trace, "--platform", table, "--gov", label,
                      "--per-state", "--json", out], display) != 0:
            raise Fatal(f"{trace}: the lab's replay failed: {self._last()}")
        try:
            return json.loads(out.read_text())
        except (OSError, ValueError):
            raise Fatal(f"{out}: the lab wrote no JSON") from None
