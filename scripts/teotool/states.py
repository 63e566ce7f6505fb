# SPDX-License-Identifier: GPL-2.0
"""Idle-state lists as the emulated cpuidle driver (tools/cpuidle-emu)
takes them: "[poll,]LAT/RES[,LAT/RES...]", exit latency and target
residency in microseconds, shallowest first."""

import re
from typing import List, Tuple

from teotool.ui import UsageError

# The kernel's CPUIDLE_STATE_MAX, the polling state included.
MAX_STATES = 10
# cpuidle-emu refuses exit latencies above 100 ms.
MAX_LATENCY_US = 100000
MAX_U32 = 2 ** 32 - 1
_LIST = re.compile(r"^[0-9]{1,10}/[0-9]{1,10}(,[0-9]{1,10}/[0-9]{1,10})*$")
WANT = "want [poll,]LAT/RES[,LAT/RES...] in microseconds, e.g. poll,1/1,120/360"


def parse(text: str, opt: str = "--states") -> Tuple[bool, List[Tuple[int, int]]]:
    """(has a polling state, [(latency, residency)...]) of a list, or a
    usage error naming option opt and the rule the list breaks."""
    if not text:
        raise UsageError(f"{opt}: empty list; {WANT}")
    rest, poll = text, False
    if rest == "poll" or rest.startswith("poll,"):
        poll, rest = True, rest[len("poll,"):]
    if not rest:
        return poll, []
    if not _LIST.match(rest):
        raise UsageError(f"{opt} '{text}': {WANT}")
    states: List[Tuple[int, int]] = []
    prev = 0
    for item in rest.split(","):
        lat, res = (int(x, 10) for x in item.split("/"))
        n = len(states) + int(poll)
        if n + 1 > MAX_STATES:
            raise UsageError(f"{opt} '{text}': more than {MAX_STATES} states (the"
                             " kernel's CPUIDLE_STATE_MAX, polling state included)")
        if lat > MAX_LATENCY_US:
            raise UsageError(f"{opt} '{text}': exit latency {lat} us of state {n}"
                             f" is above {MAX_LATENCY_US} us (100 ms), which"
                             " cpuidle-emu refuses")
        if res > MAX_U32:
            raise UsageError(f"{opt} '{text}': residency {res} us does not fit 32 bits")
        if res < prev:
            raise UsageError(f"{opt} '{text}': residency {res} us of state {n} is"
                             f" below the previous state's {prev} us; list the"
                             " states shallowest first")
        prev = res
        states.append((lat, res))
    return poll, states
