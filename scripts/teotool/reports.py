# SPDX-License-Identifier: GPL-2.0
"""The one matcher of kernel reports in a kernel log.

Each pattern is the exact text the kernel prints at the start of a report
(see the printk of each in the kernel tree), so that a test's own output
or a boot message cannot look like one.  The KUnit runner uses it; the
kernel logs of the VM runs (kselftests, the fault test, the series'
KUnit module) are meant to use it too when they are ported:
"scripts/teo reports FILE..." prints the report lines of each file and
exits 1 if there are any.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

# Not after a letter, digit or underscore: "BUG: " but not "DEBUG: ".
_W = r"(?<![A-Za-z0-9_])"

# (kind, pattern); the first that matches names the line.
PATTERNS: Tuple[Tuple[str, str], ...] = (
    ("soft lockup", r"BUG: soft lockup - CPU#"),
    ("hard lockup", r"Watchdog detected hard LOCKUP on cpu "),
    ("KASAN", _W + r"KASAN: "),
    ("UBSAN", _W + r"UBSAN: "),
    ("lockdep", r"WARNING: (?:possible (?:circular|recursive) locking"
                r"|inconsistent lock state|possible irq lock inversion"
                r"|bad unlock balance|held lock freed"
                r"|lock held when returning)|DEBUG_LOCKS_WARN_ON\("),
    ("suspicious RCU usage", r"WARNING: suspicious RCU usage"),
    ("RCU stall", r"INFO: \S+ (?:self-detected stall on CPU"
                  r"|detected (?:expedited )?stalls?[ ,])"),
    ("hung task", r"INFO: task .+ blocked.* for more than \d+ seconds"),
    ("BUG", _W + r"BUG: "),
    ("BUG", r"kernel BUG at "),
    ("WARNING", _W + r"WARNING: "),
    ("Oops", _W + r"Oops: "),
    ("general protection fault", r"general protection fault"),
    ("Unable to handle kernel", r"Unable to handle kernel "),
    ("Kernel panic", r"Kernel panic - not syncing"),
)
_COMPILED = tuple((kind, re.compile(p)) for kind, p in PATTERNS)


@dataclass(frozen=True)
class Report:
    """A kernel report line: where it is, what kind, the line itself."""
    lineno: int
    kind: str
    line: str

    def __str__(self) -> str:
        return f"{self.lineno}: [{self.kind}] {self.line}"


def kind_of(line: str) -> str:
    """The kind of report the line starts, or "" if it starts none."""
    for kind, pattern in _COMPILED:
        if pattern.search(line):
            return kind
    return ""


def find(lines: Iterable[str]) -> List[Report]:
    """Every report line of a kernel log."""
    found = []
    for number, line in enumerate(lines, 1):
        kind = kind_of(line)
        if kind:
            found.append(Report(number, kind, line.rstrip("\n")))
    return found


def scan(path: Path) -> List[Report]:
    with open(path, encoding="utf-8", errors="replace") as log:
        return find(log)


def main(files: Sequence[Path]) -> int:
    """Print each file's report lines; 1 if any, else 0."""
    status = 0
    for path in files:
        for report in scan(path):
            print(f"{path}:{report}")
            status = 1
    return status
