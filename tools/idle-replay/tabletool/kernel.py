# SPDX-License-Identifier: GPL-2.0
"""Facts of the kernel tree every reader relies on: that it is a kernel
tree, its version, CPUIDLE_STATE_MAX, the polling state the core writes,
and how the core treats states flagged off or unusable."""

import os
import re

from tabletool.csource import CFile, c_flag, match_brace, read_text, require
from tabletool.errors import ExtractError
from tabletool.plat import State

INTEL = "drivers/idle/intel_idle.c"
# The initializers of the static tables: arrays of states, and drivers.
STATE_ARRAY = (r"\bstatic\s+(?:const\s+)?struct\s+cpuidle_state\s+(\w+)\s*\[[^\]]*\]\s*"
               r"(?:__\w+\s*)*=\s*\{")
DRIVER_INIT = r"\bstatic\s+(?:const\s+)?struct\s+cpuidle_driver\s+(\w+)\s*(?:__\w+\s*)*=\s*\{"


def check_tree(src: str) -> None:
    """KERNEL_SRC is a directory that holds a kernel tree."""
    if not os.path.exists(src):
        raise ExtractError(f"KERNEL_SRC {src} does not exist")
    if not os.path.isdir(src):
        raise ExtractError(f"KERNEL_SRC {src} is not a directory")
    if not os.path.isfile(os.path.join(src, INTEL)):
        raise ExtractError(f"KERNEL_SRC {src} is not a kernel tree: {INTEL} is missing")


def kernel_version(src: str) -> str:
    """VERSION.PATCHLEVEL.SUBLEVEL EXTRAVERSION of the top Makefile."""
    try:
        mk = read_text(os.path.join(src, "Makefile"))
    except OSError:
        return "unknown"
    v = {}
    for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION"):
        m = re.search(rf"^{k}[ \t]*=[ \t]*(.*)$", mk, re.M)
        v[k] = m.group(1).strip() if m else ""
    if not v["VERSION"]:
        return "unknown"
    return f"{v['VERSION']}.{v['PATCHLEVEL']}.{v['SUBLEVEL'] or 0}{v['EXTRAVERSION']}"


def state_max_of(src: str) -> int:
    cf = CFile(src, "include/linux/cpuidle.h")
    m = require(cf, r"#\s*define\s+CPUIDLE_STATE_MAX\s+(\d+)", "CPUIDLE_STATE_MAX is defined")
    return int(m.group(1))


def poll_state_of(src: str) -> State:
    """The state cpuidle_poll_state_init() writes, read from poll_state.c."""
    cf = CFile(src, "drivers/cpuidle/poll_state.c")
    m = require(cf, r"void\s+cpuidle_poll_state_init\s*\([^)]*\)\s*\{",
                "cpuidle_poll_state_init() is defined")
    body_end = match_brace(cf.text, m.end() - 1)
    body = cf.text[m.end():body_end]
    name = re.search(r'"([^"]+)"', body)
    lat = re.search(r"state->exit_latency\s*=\s*([^;]+);", body)
    res = re.search(r"state->target_residency\s*=\s*([^;]+);", body)
    flags = re.search(r"state->flags\s*=\s*([^;]+);", body)
    if not (name and lat and res and flags and c_flag(flags.group(1), "CPUIDLE_FLAG_POLLING")):
        raise ExtractError(f"{cf.rel}: cannot read the polling state cpuidle_poll_state_init() "
                           "writes; the extractor's model of this tree needs review")
    return State(name.group(1), cf.eval(lat.group(1), None, "exit latency"),
                 cf.eval(res.group(1), None, "target residency"), poll=True,
                 origin=f"{cf.where(m.start())} cpuidle_poll_state_init()")


def check_core_flags(src: str) -> None:
    """How the core treats CPUIDLE_FLAG_OFF and _UNUSABLE at registration."""
    cf = CFile(src, "drivers/cpuidle/cpuidle.c")
    require(cf, r"flags\s*&\s*CPUIDLE_FLAG_OFF\s*\)\s*dev->states_usage\[i\]\.disable\s*\|=",
            "the core disables CPUIDLE_FLAG_OFF states when it registers a device")
    require(cf, r"flags\s*&\s*CPUIDLE_FLAG_UNUSABLE\s*\)\s*dev->states_usage\[i\]\.disable\s*\|=",
            "the core disables CPUIDLE_FLAG_UNUSABLE states when it registers a device")
