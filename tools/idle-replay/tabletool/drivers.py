# SPDX-License-Identifier: GPL-2.0
"""The readers of drivers/cpuidle/cpuidle-*.c: the static tables of the
drivers (pseries, tegra, exynos, kirkwood, ...), a static struct
cpuidle_driver's states[] or a static struct cpuidle_state array, with
each state's power_usage where the driver gives it."""

import os
import re
from typing import Dict, List, Optional, Tuple

from tabletool.csource import (CFile, Field, MacroSet, c_fields, c_flag, c_string,
                               eval_c_int, included_headers, match_brace, runtime_updates,
                               split_top)
from tabletool.errors import ExtractError
from tabletool.kernel import DRIVER_INIT, STATE_ARRAY
from tabletool.plat import INT_MAX, UINT_MAX, State, Table, keep_power_usage, power_usage_of

# Drivers whose static table is only a placeholder filled at run time.
DRV_SKIP = {
    "cpuidle-powernv.c": "its states come from the firmware's device tree (ibm,cpu-idle-state-*)",
}

# A table's initializers by state index: (text, offset).
Items = Dict[int, Field]


def drv_state(cf: CFile, macros: MacroSet, text: str, off: int, idx: int,
              var: str) -> Optional[State]:
    """One state initializer, written in place or given by a macro such as
    ARM_CPUIDLE_WFI_STATE -> State (None for an empty one)."""
    body = macros.expand(text)
    if not body.startswith("{") or not body.endswith("}"):
        raise ExtractError(f"{cf.where(off)}: cannot read state {idx} of {var} ('{text}')")
    if body == text:
        f = c_fields(cf.text, off + 1, off + len(text) - 1)
    else:  # a macro's fields: point at the line that uses the macro
        f = {k: (v, off) for k, (v, _) in c_fields(body, 1, len(body) - 1).items()}
    if not f:
        return None
    flags = f.get("flags", ("0", off))[0]
    numbers = {}
    for field in ("exit_latency", "target_residency"):
        value, at = f.get(field, ("0", off))
        try:
            numbers[field] = eval_c_int(value, macros.obj)
        except ValueError as e:
            raise ExtractError(f"{cf.where(at)}: cannot evaluate {field} '{value}' ({e})") from None
    mw = None
    if "power_usage" in f:
        # UINT_MAX (the drivers' "unknown") is no symbol of the file.
        limits = dict(macros.obj, UINT_MAX=str(UINT_MAX), INT_MAX=str(INT_MAX))
        try:
            mw = power_usage_of(eval_c_int(f["power_usage"][0], limits))
        except ValueError:
            mw = None  # an expression the extractor cannot read: no power given
    # The core keeps a registered _UNUSABLE state disabled, like an _OFF one.
    return State(c_string(f.get("name", ('""', off))[0]) or f"state{idx}",
                 numbers["exit_latency"], numbers["target_residency"],
                 poll=c_flag(flags, "CPUIDLE_FLAG_POLLING"),
                 off=c_flag(flags, "CPUIDLE_FLAG_OFF") or c_flag(flags, "CPUIDLE_FLAG_UNUSABLE"),
                 origin=cf.where(f["name"][1] if "name" in f else off), mw=mw)


def drv_states_of_driver(cf: CFile, macros: MacroSet, a: int,
                         b: int) -> Tuple[Items, Optional[int]]:
    """states[] and state_count of a static struct cpuidle_driver."""
    f = c_fields(cf.text, a, b)
    items = {}
    for piece, off in split_top(cf.text, a, b):
        m = re.match(r"\s*\.states\s*\[\s*([^\]]+)\]\s*=\s*(.*)\Z", piece, re.S)
        if m:
            idx = cf.eval(macros.expand(m.group(1)), off, "state index")
            items[idx] = (m.group(2), off + m.start(2))
    if "states" in f:
        value, off = f["states"]
        open_pos = off + value.index("{")
        close = match_brace(cf.text, open_pos)
        idx = 0
        for piece, poff in split_top(cf.text, open_pos + 1, close):
            m = re.match(r"\s*\[\s*([^\]]+)\]\s*=\s*(.*)\Z", piece, re.S)
            if m:
                idx = cf.eval(macros.expand(m.group(1)), poff, "state index")
                piece, poff = m.group(2), poff + m.start(2)
            items[idx] = (piece, poff)
            idx += 1
    count = None
    if "state_count" in f:
        try:
            count = eval_c_int(f["state_count"][0], macros.obj)
        except ValueError:
            count = None
    return items, count


def drv_table_states(cf: CFile, macros: MacroSet, var: str, items: Items, count: Optional[int],
                     is_array: bool, poll: State) -> Tuple[List[State], Dict[int, str], List[str]]:
    """States of one static table: (states, {initializer index: name}, notes)."""
    uses_poll_init = re.search(r"cpuidle_poll_state_init\s*\(", cf.text)
    states: List[State] = []
    names: Dict[int, str] = {}
    head: List[str] = []
    n = count if count is not None else (max(items) + 1 if items else 0)
    for idx in range(n):
        if idx == 0 and uses_poll_init:
            states.append(State(poll.name, poll.exit_us, poll.res_us, poll=True,
                                origin="cpuidle_poll_state_init() in "
                                + cf.where(uses_poll_init.start())))
            continue
        if idx not in items:
            head.append(f"state {idx} of {var} has no initializer")
            continue
        text, off = items[idx]
        if is_array and re.search(r"\.enter\s*=\s*NULL", text):
            continue  # the pseries way: entries without .enter are skipped
        st = drv_state(cf, macros, text, off, idx, var)
        if st is not None:
            names[idx] = st.name
            states.append(st)
    return states, names, head


def drv_runtime_notes(cf: CFile, var: str, names: Dict[int, str], pos: int) -> List[str]:
    """Comment lines on what the driver changes in its table at run time."""
    head = []
    for idx, field, op, value, line, func in runtime_updates(cf, [var]).get(var, []):
        head.append(f"at run time {func or '?'}() ({cf.rel}:{line}) may set "
                    f"{names.get(idx, f'state {idx}')} .{field} {op} {value}")
    for m in re.finditer(r"\b" + var + r"\.(states\[(\w+)\]\.(\w+)|state_count)\s*"
                         r"(\|=|&=|=)\s*([^;]+);", cf.text):
        head.append(f"at run time {cf.function_at(m.start()) or '?'}() "
                    f"({cf.where(m.start())}) may set {m.group(1)} {m.group(4)} "
                    f"{' '.join(m.group(5).split())}")
    for m in re.finditer(r"\b\w+->(?:exit_latency|target_residency)\s*=[^=][^;]*;|"
                         r"->flags\s*\|=\s*CPUIDLE_FLAG_(?:UNUSABLE|OFF)[^;]*;", cf.text):
        head.append(f"at run time {cf.function_at(m.start()) or '?'}() "
                    f"({cf.where(m.start())}): {' '.join(m.group().split())}")
    body = cf.text[pos:match_brace(cf.text, cf.text.index("{", pos))]
    gov = re.search(r'\.governor\s*=\s*"([^"]+)"', body)
    if gov:
        head.append(f"the driver asks for the {gov.group(1)} governor")
    return head


def drv_name(stem: str, var: str, several: bool) -> str:
    """drv-STEM, and -PART of the variable's name where a driver has
    several tables."""
    part = re.sub(r"(_idle)?(_driver|_states|_cstates)$", "", var)
    if part.startswith(stem.replace("-", "_")):
        part = part[len(stem):].strip("_")
    return ("drv-" + stem + ("-" + part if several and part else "")).replace("_", "-")


def driver_tables(src: str, rel: str, poll: State) -> List[Table]:
    """The static tables of one driver, drivers/cpuidle/cpuidle-STEM.c."""
    cf = CFile(src, rel)
    dt_fed = "dt_init_idle_driver(" in cf.text
    macros = MacroSet(included_headers(src, cf) + [cf])
    found = []
    for m, a, b in cf.find_init(DRIVER_INIT):
        items, count = drv_states_of_driver(cf, macros, a, b)
        found.append((m.group(1), m.start(), items, count, False))
    for m, a, b in cf.find_init(STATE_ARRAY):
        found.append((m.group(1), m.start(), dict(enumerate(split_top(cf.text, a, b))), None,
                      True))
    kept = []
    for var, pos, items, count, is_array in found:
        states, names, head = drv_table_states(cf, macros, var, items, count, is_array, poll)
        if dt_fed and len(states) < 2:
            continue  # a DT driver's own state 0: its tables are the device trees'
        if dt_fed:
            head.append("the device tree's idle states, when it has some, replace "
                        "states 1 and later (dt_init_idle_driver())")
        if states:
            kept.append((var, pos, states, head + drv_runtime_notes(cf, var, names, pos)))
    stem = os.path.basename(rel)[len("cpuidle-"):-2]
    tables = []
    for var, pos, states, head in kept:
        name = drv_name(stem, var, len(kept) > 1)
        notes = keep_power_usage(states)
        if any(s.mw is not None for s in states):
            head.append("power_usage (mW) as the driver gives it: the lab takes the "
                        "ratios between these states' powers from it")
        tables.append(Table("drv", name, f"{rel} {var}", f"{cf.where(pos)} {var}",
                            states, head, notes, sort_key=(name,)))
    return tables


def extract_drivers(src: str, poll: State) -> Tuple[List[Table], List[str]]:
    """Static tables of drivers/cpuidle/cpuidle-*.c: (tables, not taken)."""
    tables: List[Table] = []
    skipped = []
    ddir = os.path.join(src, "drivers/cpuidle")
    for fname in sorted(os.listdir(ddir)):
        if not (fname.startswith("cpuidle-") and fname.endswith(".c")):
            continue
        rel = f"drivers/cpuidle/{fname}"
        if fname in DRV_SKIP:
            skipped.append(f"{rel}: {DRV_SKIP[fname]}")
            continue
        tables += driver_tables(src, rel, poll)
    return tables, skipped
