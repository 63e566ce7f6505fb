# SPDX-License-Identifier: GPL-2.0
"""The reader of drivers/idle/intel_idle.c: every static struct
cpuidle_state array as the driver registers it, behind the polling state
it registers first, with the CPU models that use it and what the driver
may change in it at run time."""

import re
from typing import Dict, List, Optional, Tuple

from tabletool.csource import (CFile, c_fields, c_flag, c_string, match_brace, require,
                               runtime_updates, split_top)
from tabletool.errors import ExtractError
from tabletool.kernel import INTEL, STATE_ARRAY
from tabletool.plat import State, Table

# table name -> (CPU models, those of them with use_acpi, the function that
# picks the table at run time or None)
Users = Dict[str, Tuple[List[str], List[str], Optional[str]]]


def check_intel_model(cf: CFile) -> None:
    """The registration logic of intel_idle.c this extractor models."""
    init = require(cf, r"intel_idle_cpuidle_driver_init\s*\([^)]*\)\s*\{(.*?)\n\}",
                   "intel_idle_cpuidle_driver_init() is defined")
    if not re.search(r"cpuidle_poll_state_init\s*\(\s*drv\s*\)\s*;.*drv->state_count\s*=\s*1\s*;",
                     init.group(1), re.S):
        raise ExtractError(f"{cf.rel}: cannot confirm that intel_idle registers the polling "
                           "state as state 0 (cpuidle_poll_state_init(), then state_count = 1); "
                           "the extractor's model of this tree needs review")
    require(cf, r"if\s*\(\s*!cpuidle_state_table\[cstate\]\.enter\s*&&\s*"
            r"!cpuidle_state_table\[cstate\]\.enter_s2idle\s*\)\s*break\s*;",
            "a table ends at its first entry without .enter and .enter_s2idle")
    require(cf, r"if\s*\(\s*cpuidle_state_table\[cstate\]\.flags\s*&\s*CPUIDLE_FLAG_UNUSABLE\s*\)"
            r"\s*\{[^}]*continue\s*;",
            "states flagged CPUIDLE_FLAG_UNUSABLE are skipped")
    require(cf, r"static\s+int\s+max_cstate\s*=\s*CPUIDLE_STATE_MAX\s*-\s*1\s*;",
            "max_cstate defaults to CPUIDLE_STATE_MAX - 1")
    require(cf, r"cstate\s*\+\s*1\s*>\s*max_cstate", "intel_idle stops at entry max_cstate")


def intel_users(cf: CFile, fixups: Dict[str, List[str]]) -> Users:
    """Which CPU models use which table."""
    table_of, acpi = {}, set()
    for m, a, b in cf.find_init(r"\bstatic\s+const\s+struct\s+idle_cpu\s+(\w+)\s*"
                                r"(?:__\w+\s*)*=\s*\{"):
        f = c_fields(cf.text, a, b)
        if "state_table" in f:
            table_of[m.group(1)] = f["state_table"][0]
            if f.get("use_acpi", ("", 0))[0] == "true":
                acpi.add(m.group(1))
    users: Users = {}
    for m in re.finditer(r"X86_MATCH_\w+\s*\(\s*(?:INTEL_FAM6_)?(\w+)\s*,\s*&?(\w+)\s*\)",
                         cf.text):
        table = table_of.get(m.group(2))
        if table:
            models, acpi_models, _ = users.setdefault(table, ([], [], None))
            models.append(m.group(1))
            if m.group(2) in acpi:
                acpi_models.append(m.group(1))
    # ivt_idle_state_table_update() style: a model's fixup swaps the table.
    for m in re.finditer(r"\bcpuidle_state_table\s*=\s*(\w+)\s*;", cf.text):
        func = cf.function_at(m.start())
        picked = [model for model, funcs in fixups.items() if func in funcs]
        if picked and m.group(1) not in users:
            users[m.group(1)] = (picked, [], func)
    return users


def intel_model_fixups(cf: CFile) -> Dict[str, List[str]]:
    """CPU model -> the functions intel_idle_init_cstates_icpu() calls for it
    before registering its table."""
    m = re.search(r"intel_idle_init_cstates_icpu\s*\([^)]*\)\s*\{", cf.text)
    if not m:
        return {}
    body = cf.text[m.end():match_brace(cf.text, m.end() - 1)]
    sw = re.search(r"switch\s*\([^)]*\)\s*\{", body)
    if not sw:
        return {}
    body = body[sw.end():match_brace(body, sw.end() - 1)]
    out: Dict[str, List[str]] = {}
    pending: List[str] = []
    for t in re.finditer(r"case\s+(\w+)\s*:|(\w+)\s*\([^;]*\)\s*;|break\s*;", body):
        if t.group(1):
            pending.append(t.group(1))
        elif t.group(2):
            for model in pending:
                out.setdefault(model, []).append(t.group(2))
        else:
            pending = []
    return out


def changes_tables(cf: CFile, func: str) -> bool:
    """Does func touch idle-state fields (so that it may change a table)?"""
    body = cf.body_of(func)
    if body is None:
        return False
    return re.search(r"CPUIDLE_FLAG_UNUSABLE|exit_latency|target_residency", body) is not None


def intel_table_states(cf: CFile, var: str, a: int, b: int, poll: State,
                       max_entries: int) -> Tuple[List[State], List[str], List[str], List[str]]:
    """What intel_idle registers from one table: (states, entry names,
    comment lines, notes).  POLL first; the table ends at the first entry
    without .enter and .enter_s2idle; _UNUSABLE entries are skipped; entries
    from index max_entries on are never looked at."""
    states = [State(poll.name, poll.exit_us, poll.res_us, poll=True,
                    origin=f"added by cpuidle_poll_state_init() ({poll.origin.split()[0]})")]
    names: List[str] = []
    head: List[str] = []
    notes: List[str] = []
    for idx, (entry, off) in enumerate(split_top(cf.text, a, b)):
        if not entry.startswith("{"):
            raise ExtractError(f"{cf.where(off)}: unexpected entry in {var}")
        f = c_fields(cf.text, off + 1, off + len(entry) - 1)
        if (f.get("enter", ("NULL", 0))[0] == "NULL"
                and f.get("enter_s2idle", ("NULL", 0))[0] == "NULL"):
            break
        name = c_string(f.get("name", ('""', 0))[0]) or f"state{idx}"
        names.append(name)
        if idx >= max_entries:
            notes.append(f"{var} has entries beyond index {max_entries - 1}; intel_idle "
                         f"stops there (max_cstate), {name} and later are not registered")
            break
        flags = f.get("flags", ("0", 0))[0]
        at = cf.where(f["name"][1] if "name" in f else off)
        if c_flag(flags, "CPUIDLE_FLAG_UNUSABLE"):
            head.append(f"{name} ({at}) is flagged CPUIDLE_FLAG_UNUSABLE: not registered")
            continue
        if "exit_latency" not in f or "target_residency" not in f:
            raise ExtractError(f"{cf.where(off)}: {var} entry {name} lacks .exit_latency or "
                               ".target_residency")
        states.append(State(name, cf.eval(*f["exit_latency"], "exit latency"),
                            cf.eval(*f["target_residency"], "target residency"),
                            poll=c_flag(flags, "CPUIDLE_FLAG_POLLING"),
                            off=c_flag(flags, "CPUIDLE_FLAG_OFF"), origin=at))
    return states, names, head, notes


def extract_intel(src: str, state_max: int, poll: State) -> List[Table]:
    """Every static table of intel_idle.c, as the driver registers it."""
    cf = CFile(src, INTEL)
    check_intel_model(cf)
    fixups = intel_model_fixups(cf)
    users = intel_users(cf, fixups)
    arrays = list(cf.find_init(STATE_ARRAY))
    updates = runtime_updates(cf, [m.group(1) for m, _, _ in arrays])
    tables = []
    for m, a, b in arrays:
        var = m.group(1)
        states, names, head, notes = intel_table_states(cf, var, a, b, poll, state_max - 1)
        for idx, field, op, value, line, func in updates.get(var, []):
            who = names[idx] if idx < len(names) else f"entry {idx}"
            head.append(f"at run time {func or '?'}() ({INTEL}:{line}) may set "
                        f"{who} .{field} {op} {value}")
        models, acpi_models, picker = users.get(var, ([], [], None))
        if picker:
            head.append(f"at run time {picker}() may pick this table (it reads the hardware)")
        for model in models:
            for func in [f for f in fixups.get(model, []) if changes_tables(cf, f)]:
                head.append(f"on {model}, {func}() may change this table first (it reads "
                            "the hardware)")
        if acpi_models:
            head.append("with use_acpi (" + " ".join(acpi_models) + "), states not in the "
                        "firmware's _CST start disabled unless CPUIDLE_FLAG_ALWAYS_ENABLE")
        short = re.sub(r"_?cstates_?", "-", var).strip("-").replace("_", "-")
        name = "intel-" + short
        title = f"Intel {short}: " + (" ".join(models) if models else "no CPU model uses it")
        head.insert(0, "CPU models: " + (" ".join(models) if models else
                                         f"none (no idle_cpu entry points at {var})"))
        tables.append(Table("intel", name, title, f"{cf.where(m.start())} {var}", states,
                            head, notes, sort_key=(name,)))
    return tables
