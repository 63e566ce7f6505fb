#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Extract every idle-state table a kernel tree knows into idle-replay .plat files.

usage: extract-tables.py [--help] [-j N] [--check-dtc] [--max-skipped PERCENT] [-q]
                         KERNEL_SRC OUTDIR

Reads the kernel tree KERNEL_SRC (never writes to it) and writes one .plat
file per distinct table into OUTDIR, plus OUTDIR/INDEX.  The tables come from

  intel_idle    every static struct cpuidle_state array of
                drivers/idle/intel_idle.c, behind the polling state the
                driver registers first (cpuidle_poll_state_init())
  drivers       the static tables of drivers/cpuidle/*.c (pseries, tegra,
                exynos, kirkwood, ...), with each state's power_usage (mW)
                where the driver gives it for two halting states or more
                and it does not rise with depth
  device tree   the idle states of every CPU of every board under
                arch/{arm64,arm,riscv}/boot/dts, behind the WFI state the
                DT cpuidle drivers add as state 0

Tables with the same numbers (exit latency, target residency, polling,
default-off, power_usage, state by state) are written once; INDEX names every source
that yielded each one.  The output depends only on the tree, so it can be
cached by the tree's identity.  See the lab README, "Platform files".
"""

import argparse
import ast
import bisect
import concurrent.futures
import hashlib
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

PROG = "extract-tables"
FORMAT = 1
UINT_MAX = 0xFFFFFFFF
DT_ARCHES = ("arm64", "arm", "riscv")
INCLUDE_PREFIXES = "scripts/dtc/include-prefixes"
# Boards that fail to preprocess or parse are skipped; more than this share
# of them means the tool, not a board, is broken.
MAX_SKIPPED_PERCENT = 3.0
BATCH = 24  # boards per cpp run
PLAT_NAME_MAX = 31  # struct platform's name[32] in the lab
PLAT_TITLE_MAX = 63  # and its title[64]


class ExtractError(Exception):
    """A problem that stops the whole extraction (one line for the user)."""


class DtsError(Exception):
    """A problem with one board: it is skipped and counted."""


def warn(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


# ---------------------------------------------------------------------------
# C source helpers (enough C for static initializers)

C_LEXEME = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*',
                      re.S)


def blank(s):
    """Same length, same newlines, nothing else: keeps offsets and lines."""
    if "\n" not in s:
        return " " * len(s)
    return "\n".join(" " * len(part) for part in s.split("\n"))


def strip_c_comments(text):
    return C_LEXEME.sub(lambda m: m.group() if m.group()[0] in "\"'" else blank(m.group()),
                        text)


class CFile:
    """A C file with comments blanked, its #defines and enum constants."""

    def __init__(self, src, rel):
        self.rel = rel
        self.path = os.path.join(src, rel)
        self.text = strip_c_comments(read_text(self.path))
        self._lines = [m.start() for m in re.finditer("\n", self.text)]
        self.defines = {}
        self.fmacros = {}
        joined = re.sub(r"\\\n", "  ", self.text)
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)]*\))?[ \t]*(.*)$",
                             joined, re.M):
            if m.group(2) is None:
                self.defines[m.group(1)] = m.group(3).strip()
            else:
                params = [p.strip() for p in m.group(2)[1:-1].split(",") if p.strip()]
                self.fmacros[m.group(1)] = (params, m.group(3).strip())
        for m in re.finditer(r"\benum\b[^{;]*\{([^}]*)\}", self.text):
            value = -1
            for item in m.group(1).split(","):
                name, _, expr = item.partition("=")
                name = name.strip()
                if not re.fullmatch(r"[A-Za-z_]\w*", name):
                    continue
                try:
                    value = eval_c_int(expr, self.defines) if expr.strip() else value + 1
                except ValueError:
                    value = None  # not needed unless a table uses it
                if value is None:
                    break
                self.defines[name] = str(value)

    def line(self, pos):
        return bisect.bisect_left(self._lines, pos) + 1

    def where(self, pos):
        return f"{self.rel}:{self.line(pos)}"

    def eval(self, expr, pos, what):
        try:
            return eval_c_int(expr, self.defines)
        except ValueError as e:
            at = f"{self.where(pos)}: " if pos is not None else f"{self.rel}: "
            raise ExtractError(f"{at}cannot evaluate {what} '{expr.strip()}' ({e})") from None

    def find_init(self, pattern):
        """Yield (match, body_start, body_end) for 'pattern ... = {' initializers."""
        for m in re.finditer(pattern, self.text):
            open_pos = m.end() - 1
            yield m, open_pos + 1, match_brace(self.text, open_pos)

    def function_at(self, pos):
        """Name of the function whose body holds pos (C files in kernel style)."""
        best = None
        for m in re.finditer(r"^[A-Za-z_][^\n;]*?\b(\w+)\s*\([^;{]*\)\s*\{", self.text, re.M):
            if m.start() > pos:
                break
            best = m.group(1)
        return best


def match_brace(text, open_pos):
    """Index of the '}' matching the '{' at open_pos (strings skipped)."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}]', text[open_pos:]):
        t = m.group()
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return open_pos + m.start()
    raise ExtractError(f"unbalanced braces after offset {open_pos}")


def split_top(text, start, end):
    """Split text[start:end] at commas outside brackets: [(piece, offset)]."""
    out = []
    depth = 0
    last = start
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[\[({})\],]',
                         text[start:end]):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == "," and depth == 0:
            out.append((text[last:start + m.start()], last))
            last = start + m.end()
    out.append((text[last:end], last))
    return [(p.strip(), o + len(p) - len(p.lstrip())) for p, o in out if p.strip()]


C_INT = re.compile(r"\b(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\b")
BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
          ast.Mult: lambda a, b: a * b, ast.Mod: lambda a, b: a % b,
          ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
          ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
          ast.BitXor: lambda a, b: a ^ b, ast.FloorDiv: None}
ALLOWED_BINOPS = tuple(BINOPS)


def _c_literal(m):
    lit = m.group(1)
    if len(lit) > 1 and lit[0] == "0" and lit[1] not in "xX":
        return "0o" + lit[1:]
    return lit


def eval_c_int(expr, symbols=None, depth=0):
    """Evaluate an integer C constant expression; identifiers from symbols."""
    if depth > 20:
        raise ValueError("macro nesting too deep")
    expr = expr.strip()
    expr = re.sub(r"'(\\?.)'", lambda m: str(ord(m.group(1)[-1])), expr)

    def ident(m):
        name = m.group()
        if symbols and name in symbols:
            return "(" + str(eval_c_int(symbols[name], symbols, depth + 1)) + ")"
        raise ValueError(f"unknown symbol {name}")

    expr = re.sub(r"\b(?!0[xX])[A-Za-z_]\w*\b", ident, expr)
    expr = C_INT.sub(_c_literal, expr)
    expr = re.sub(r"(?<![/])/(?![/])", "//", expr)
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ValueError("not a constant expression") from None
    return _ast_int(tree.body)


def _ast_int(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        v = _ast_int(node.operand)
        return -v if isinstance(node.op, ast.USub) else ~v if isinstance(node.op, ast.Invert) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, ALLOWED_BINOPS):
        a, b = _ast_int(node.left), _ast_int(node.right)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise ValueError("division by zero")
        if isinstance(node.op, ast.FloorDiv):
            return int(a / b)  # C truncates toward zero
        return BINOPS[type(node.op)](a, b)
    raise ValueError("not a constant expression")


def c_fields(text, start, end):
    """'.field = value' items of an initializer body: {field: (value, offset)}."""
    fields = {}
    for piece, off in split_top(text, start, end):
        m = re.match(r"\s*\.(\w+)\s*=\s*(.*)\Z", piece, re.S)
        if m:
            fields[m.group(1)] = (m.group(2).strip(), off + m.start(2))
    return fields


def c_string(value):
    m = re.fullmatch(r'\s*"((?:[^"\\]|\\.)*)"\s*', value or "")
    return m.group(1) if m else None


def c_flag(value, flag):
    return re.search(r"\b" + flag + r"\b", value or "") is not None


# ---------------------------------------------------------------------------
# Tables

class State:
    __slots__ = ("name", "exit_us", "res_us", "poll", "off", "origin", "mw")

    def __init__(self, name, exit_us, res_us, poll=False, off=False, origin="", mw=None):
        self.name = re.sub(r"\s+", "-", name.strip()) or "unnamed"
        self.exit_us = exit_us
        self.res_us = res_us
        self.poll = poll
        self.off = off
        self.origin = origin
        self.mw = mw  # the driver's power_usage in mW, None if it gives none

    def key(self):
        return (self.exit_us, self.res_us, self.poll, self.off, self.mw)


class Table:
    """One table as one source yields it."""

    def __init__(self, kind, pref_name, title, source, states, head=(), notes=(),
                 sort_key=None, alt_name=None):
        self.kind = kind          # 'intel', 'drv' or 'dt'
        self.pref_name = pref_name
        self.title = title
        self.source = source      # where it comes from, one line
        self.states = states
        self.head = list(head)    # comment lines about the source
        self.notes = list(notes)  # modelling notes, written as '# note:'
        self.sort_key = sort_key or (pref_name, source)
        self.alt_name = alt_name  # for name clashes (dt: the board)

    def key(self):
        return tuple(s.key() for s in self.states)


INT_MAX = 0x7FFFFFFF


def power_usage_of(value):
    """A power_usage initializer's value in mW, or None where it says
    "unknown": the drivers write UINT_MAX (-1 in the int field) or -1
    (poll_state.c) for a state whose power they do not give."""
    if value is None or not 0 <= value < INT_MAX:
        return None
    return value


def keep_power_usage(states):
    """Keep the drivers' power_usage only where the lab can use it: on at
    least two halting states (one value alone gives no ratio), never
    rising with depth.  Returns the notes on what was dropped."""
    given = [s for s in states if s.mw is not None and not s.poll]
    notes = []
    if len(given) == 1:
        notes.append(f"power_usage {given[0].mw} mW of {given[0].name} alone gives no "
                     "ratio between states: not used")
    elif any(b.mw > a.mw for a, b in zip(given, given[1:])):
        notes.append("power_usage rises with depth: not used ("
                     + ", ".join(f"{s.name} {s.mw} mW" for s in given) + ")")
    if notes or len(given) < 2:
        for s in states:
            s.mw = None
    return notes


def lab_rule_breaks(states, state_max):
    """The lab's platform rules this table breaks (written, not fixed)."""
    out = []
    if len(states) > state_max:
        out.append(f"{len(states)} states, more than CPUIDLE_STATE_MAX ({state_max})")
    for i in range(1, len(states)):
        if states[i].res_us < states[i - 1].res_us:
            out.append(f"target residency of {states[i].name} ({states[i].res_us} us) is below "
                       f"that of {states[i - 1].name} ({states[i - 1].res_us} us)")
        if states[i].poll:
            out.append(f"state {i} ({states[i].name}) polls; only state 0 may")
    for s in states:
        for v in (s.exit_us, s.res_us):
            if not 0 <= v <= UINT_MAX:
                out.append(f"{s.name}: {v} us is outside 0..{UINT_MAX}")
    return out


# ---------------------------------------------------------------------------
# Facts of the tree the model relies on

def require(cfile, pattern, fact):
    m = re.search(pattern, cfile.text, re.S)
    if not m:
        raise ExtractError(f"{cfile.rel}: cannot confirm that {fact}; the extractor's model "
                           "of this tree needs review")
    return m


def state_max_of(src):
    cf = CFile(src, "include/linux/cpuidle.h")
    m = require(cf, r"#\s*define\s+CPUIDLE_STATE_MAX\s+(\d+)", "CPUIDLE_STATE_MAX is defined")
    return int(m.group(1))


def poll_state_of(src):
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


def check_core_flags(src):
    """How the core treats CPUIDLE_FLAG_OFF and _UNUSABLE at registration."""
    cf = CFile(src, "drivers/cpuidle/cpuidle.c")
    require(cf, r"flags\s*&\s*CPUIDLE_FLAG_OFF\s*\)\s*dev->states_usage\[i\]\.disable\s*\|=",
            "the core disables CPUIDLE_FLAG_OFF states when it registers a device")
    require(cf, r"flags\s*&\s*CPUIDLE_FLAG_UNUSABLE\s*\)\s*dev->states_usage\[i\]\.disable\s*\|=",
            "the core disables CPUIDLE_FLAG_UNUSABLE states when it registers a device")


# ---------------------------------------------------------------------------
# intel_idle

INTEL = "drivers/idle/intel_idle.c"
STATE_ARRAY = (r"\bstatic\s+(?:const\s+)?struct\s+cpuidle_state\s+(\w+)\s*\[[^\]]*\]\s*"
               r"(?:__\w+\s*)*=\s*\{")


def check_intel_model(cf):
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


def intel_users(cf, fixups):
    """table name -> (CPU models, those of them with use_acpi, the function
    that picks the table at run time or None)."""
    table_of, acpi = {}, set()
    for m, a, b in cf.find_init(r"\bstatic\s+const\s+struct\s+idle_cpu\s+(\w+)\s*"
                                r"(?:__\w+\s*)*=\s*\{"):
        f = c_fields(cf.text, a, b)
        if "state_table" in f:
            table_of[m.group(1)] = f["state_table"][0]
            if f.get("use_acpi", ("",))[0] == "true":
                acpi.add(m.group(1))
    users = {}
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


def intel_model_fixups(cf):
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
    out, pending = {}, []
    for t in re.finditer(r"case\s+(\w+)\s*:|(\w+)\s*\([^;]*\)\s*;|break\s*;", body):
        if t.group(1):
            pending.append(t.group(1))
        elif t.group(2):
            for model in pending:
                out.setdefault(model, []).append(t.group(2))
        else:
            pending = []
    return out


def changes_tables(cf, func):
    """Does func touch idle-state fields (so that it may change a table)?"""
    m = re.search(r"^[^\n;]*\b" + func + r"\s*\([^;{]*\)\s*\{", cf.text, re.M)
    if not m:
        return False
    body = cf.text[m.end():match_brace(cf.text, m.end() - 1)]
    return re.search(r"CPUIDLE_FLAG_UNUSABLE|exit_latency|target_residency", body) is not None


def runtime_updates(cf, arrays):
    """'array[i].field op value;' statements: hardware-dependent changes."""
    out = {}
    for m in re.finditer(r"\b(\w+)\[(\d+)\]\.(flags|exit_latency|target_residency)\s*(\|=|&=|=)"
                         r"\s*([^;]+);", cf.text):
        if m.group(1) in arrays:
            out.setdefault(m.group(1), []).append(
                (int(m.group(2)), m.group(3), m.group(4), " ".join(m.group(5).split()),
                 cf.line(m.start()), cf.function_at(m.start())))
    return out


def intel_table_states(cf, var, a, b, poll, max_entries):
    """What intel_idle registers from one table: (states, entry names,
    comment lines, notes).  POLL first; the table ends at the first entry
    without .enter and .enter_s2idle; _UNUSABLE entries are skipped; entries
    from index max_entries on are never looked at."""
    states = [State(poll.name, poll.exit_us, poll.res_us, poll=True,
                    origin=f"added by cpuidle_poll_state_init() ({poll.origin.split()[0]})")]
    names, head, notes = [], [], []
    for idx, (entry, off) in enumerate(split_top(cf.text, a, b)):
        if not entry.startswith("{"):
            raise ExtractError(f"{cf.where(off)}: unexpected entry in {var}")
        f = c_fields(cf.text, off + 1, off + len(entry) - 1)
        if f.get("enter", ("NULL",))[0] == "NULL" and f.get("enter_s2idle", ("NULL",))[0] == "NULL":
            break
        name = c_string(f.get("name", ('""',))[0]) or f"state{idx}"
        names.append(name)
        if idx >= max_entries:
            notes.append(f"{var} has entries beyond index {max_entries - 1}; intel_idle "
                         f"stops there (max_cstate), {name} and later are not registered")
            break
        flags = f.get("flags", ("0",))[0]
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


def extract_intel(src, state_max, poll):
    """Every static table of intel_idle.c, as the driver registers it."""
    cf = CFile(src, INTEL)
    check_intel_model(cf)
    fixups = intel_model_fixups(cf)
    users = intel_users(cf, fixups)
    arrays = list(cf.find_init(STATE_ARRAY))
    updates = runtime_updates(cf, {m.group(1) for m, _, _ in arrays})
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


# ---------------------------------------------------------------------------
# Static tables of drivers/cpuidle/*.c

# Drivers whose static table is only a placeholder filled at run time.
DRV_SKIP = {
    "cpuidle-powernv.c": "its states come from the firmware's device tree (ibm,cpu-idle-state-*)",
}
DRIVER_INIT = r"\bstatic\s+(?:const\s+)?struct\s+cpuidle_driver\s+(\w+)\s*(?:__\w+\s*)*=\s*\{"


class MacroSet:
    """Object- and function-like macros from a C file and headers."""

    def __init__(self, cfiles):
        self.obj = {}
        self.fn = {}
        for cf in cfiles:
            self.obj.update(cf.defines)
            self.fn.update(cf.fmacros)

    def expand(self, text, depth=0):
        text = text.strip()
        if depth > 10:
            return text
        m = re.fullmatch(r"(\w+)\s*(?:\((.*)\))?", text, re.S)
        if not m:
            return text
        if m.group(2) is not None and m.group(1) in self.fn:
            params, body = self.fn[m.group(1)]
            args = [a.strip() for a in m.group(2).split(",")]
            for p, v in zip(params, args):
                body = re.sub(r"\b" + re.escape(p) + r"\b", v, body)
            return self.expand(body, depth + 1)
        if m.group(2) is None and m.group(1) in self.obj:
            return self.expand(self.obj[m.group(1)], depth + 1)
        return text


def drv_state(cf, macros, text, off, idx, var):
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
    flags = f.get("flags", ("0",))[0]
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
    return State(c_string(f.get("name", ('""',))[0]) or f"state{idx}",
                 numbers["exit_latency"], numbers["target_residency"],
                 poll=c_flag(flags, "CPUIDLE_FLAG_POLLING"),
                 off=c_flag(flags, "CPUIDLE_FLAG_OFF") or c_flag(flags, "CPUIDLE_FLAG_UNUSABLE"),
                 origin=cf.where(f["name"][1] if "name" in f else off), mw=mw)


def drv_states_of_driver(cf, macros, a, b):
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


def driver_headers(src, cf):
    """The arch <asm/...> and local "..." headers a driver includes, parsed
    for their macros (state initializers such as ARM_CPUIDLE_WFI_STATE)."""
    out = []
    for kind, name in re.findall(r'^#\s*include\s*([<"])([^>"]+)[>"]', cf.text, re.M):
        if kind == "<" and name.startswith("asm/"):
            arches = sorted(os.listdir(os.path.join(src, "arch")))
            cands = [f"arch/{a}/include/{name}" for a in arches]
        elif kind == '"':
            cands = [os.path.join(os.path.dirname(cf.rel), name)]
        else:
            continue
        out.extend(CFile(src, c) for c in cands if os.path.isfile(os.path.join(src, c)))
    return out


def drv_table_states(cf, macros, var, items, count, is_array, poll):
    """States of one static table: (states, {initializer index: name}, notes)."""
    uses_poll_init = re.search(r"cpuidle_poll_state_init\s*\(", cf.text)
    states, names, head = [], {}, []
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


def drv_runtime_notes(cf, var, names, pos):
    """Comment lines on what the driver changes in its table at run time."""
    head = []
    for idx, field, op, value, line, func in runtime_updates(cf, {var}).get(var, []):
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


def drv_name(stem, var, several):
    part = re.sub(r"(_idle)?(_driver|_states|_cstates)$", "", var)
    if part.startswith(stem.replace("-", "_")):
        part = part[len(stem):].strip("_")
    return ("drv-" + stem + ("-" + part if several and part else "")).replace("_", "-")


def extract_drivers(src, poll):
    """Static tables of drivers/cpuidle/cpuidle-*.c: (tables, not taken)."""
    tables, skipped = [], []
    ddir = os.path.join(src, "drivers/cpuidle")
    for fname in sorted(os.listdir(ddir)):
        if not (fname.startswith("cpuidle-") and fname.endswith(".c")):
            continue
        rel = f"drivers/cpuidle/{fname}"
        if fname in DRV_SKIP:
            skipped.append(f"{rel}: {DRV_SKIP[fname]}")
            continue
        cf = CFile(src, rel)
        dt_fed = "dt_init_idle_driver(" in cf.text
        macros = MacroSet(driver_headers(src, cf) + [cf])
        found = []
        for m, a, b in cf.find_init(DRIVER_INIT):
            items, count = drv_states_of_driver(cf, macros, a, b)
            found.append((m.group(1), m.start(), items, count, False))
        for m, a, b in cf.find_init(STATE_ARRAY):
            items = dict(enumerate(split_top(cf.text, a, b)))
            found.append((m.group(1), m.start(), items, None, True))
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
        stem = fname[len("cpuidle-"):-2]
        for var, pos, states, head in kept:
            name = drv_name(stem, var, len(kept) > 1)
            notes = keep_power_usage(states)
            if any(s.mw is not None for s in states):
                head.append("power_usage (mW) as the driver gives it: the lab takes the "
                            "ratios between these states' powers from it")
            tables.append(Table("drv", name, f"{rel} {var}", f"{cf.where(pos)} {var}",
                                states, head, notes, sort_key=(name,)))
    return tables, skipped


# ---------------------------------------------------------------------------
# Device trees: files, includes, preprocessing

INC_RE = re.compile(r'^[ \t]*(#[ \t]*include|/include/)[ \t]*([<"])([^>"]+)[>"]', re.M)
DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)


class DtFiles:
    """The .dts/.dtsi/.h files of the tree: includes, macros, state users."""

    def __init__(self, src):
        self.src = src
        self.info = {}  # rel -> (includes, defines, uses_states)
        self._isfile = {}
        # scripts/dtc/include-prefixes/X are symlinks into the tree.
        self.prefixes = {}
        top = os.path.join(src, INCLUDE_PREFIXES)
        for e in sorted(os.listdir(top)) if os.path.isdir(top) else []:
            p = os.path.join(top, e)
            if os.path.islink(p):
                self.prefixes[e] = os.path.normpath(os.path.join(INCLUDE_PREFIXES,
                                                                 os.readlink(p)))

    def canon(self, rel):
        """A tree-relative path without include-prefixes/ detours."""
        rel = os.path.normpath(rel)
        if rel.startswith(INCLUDE_PREFIXES + "/"):
            first, _, rest = rel[len(INCLUDE_PREFIXES) + 1:].partition("/")
            if first in self.prefixes:
                rel = os.path.normpath(os.path.join(self.prefixes[first], rest))
        return rel

    def isfile(self, rel):
        if rel not in self._isfile:
            self._isfile[rel] = os.path.isfile(os.path.join(self.src, rel))
        return self._isfile[rel]

    def resolve(self, cur, kind, quote, name):
        dirs = []
        if quote == '"' or kind == "/include/":
            dirs.append(os.path.dirname(cur))
        dirs.append(INCLUDE_PREFIXES)
        for d in dirs:
            p = self.canon(os.path.join(d, name))
            if self.isfile(p):
                return p
        return None

    def file(self, rel):
        if rel not in self.info:
            try:
                text = read_text(os.path.join(self.src, rel))
            except OSError:
                text = ""
            incs = []
            for m in INC_RE.finditer(text) if "include" in text else ():
                r = self.resolve(rel, m.group(1).replace(" ", "").replace("\t", ""),
                                 m.group(2), m.group(3))
                if r:
                    incs.append(r)
            self.info[rel] = (incs,
                              set(DEFINE_RE.findall(text)) if "define" in text else set(),
                              "cpu-idle-states" in text or "domain-idle-states" in text)
        return self.info[rel]

    def closure(self, rel):
        """All files rel includes, itself first (an over-approximation)."""
        seen = {}
        todo = [rel]
        while todo:
            r = todo.pop()
            if r in seen:
                continue
            seen[r] = True
            todo.extend(reversed(self.file(r)[0]))
        return list(seen)

    def boards(self):
        out = []
        for arch in DT_ARCHES:
            top = os.path.join(self.src, "arch", arch, "boot/dts")
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith(".dts"):
                        out.append(os.path.relpath(os.path.join(dirpath, f), self.src))
        return sorted(out)

    def uses_states(self, board):
        return any(self.file(r)[2] for r in self.closure(board))

    def macros(self, board):
        names = set()
        for r in self.closure(board):
            names |= self.file(r)[1]
        return sorted(names)


SPLIT = "__idle_extract_board_end__"
CPP_ARGS = ["-nostdinc", "-I", INCLUDE_PREFIXES, "-undef", "-D__DTS__",
            "-x", "assembler-with-cpp"]


def cpp_one(src, board):
    """Preprocess one board as the kernel's dtc rule does: (text, error)."""
    r = subprocess.run(["cpp"] + CPP_ARGS + [board], cwd=src, capture_output=True,
                       text=True, errors="replace")
    if r.returncode:
        lines = [ln for ln in r.stderr.splitlines() if "error" in ln] or r.stderr.splitlines()
        return None, "cpp: " + (lines[0].strip() if lines else f"exit {r.returncode}")
    return r.stdout, None


def cpp_batch(src, boards, macros):
    """Preprocess several boards in one cpp run: each board is included from
    a wrapper and every macro its files may define is #undef'd after it, so
    that the next board starts from a clean slate (include guards too).
    Returns {board: (text, error)}; on any error, falls back to one run per
    board."""
    if len(boards) > 1:
        parts = []
        for b in boards:
            parts.append(f'#include "{b}"\n{SPLIT}\n')
            parts.extend(f"#undef {name}\n" for name in macros[b])
        r = subprocess.run(["cpp"] + CPP_ARGS + ["-"], cwd=src, input="".join(parts),
                           capture_output=True, text=True, errors="replace")
        pieces = r.stdout.split(SPLIT)
        if r.returncode == 0 and len(pieces) == len(boards) + 1:
            return {b: (pieces[i], None) for i, b in enumerate(boards)}
    return {b: cpp_one(src, b) for b in boards}


# ---------------------------------------------------------------------------
# Device trees: the source parser (dtc syntax after cpp)

PRE_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|//[^\n]*|^#[ \t]*\d+[ \t]+"[^\n]*$',
                    re.S | re.M)
MARKER_RE = re.compile(r'#[ \t]*(\d+)[ \t]+"((?:[^"\\]|\\.)*)"')
TOK_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|&\{[^}]*\}|[{}]')
STMT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|;')
LABELS_RE = re.compile(r"\s*((?:[A-Za-z_]\w*\s*:\s*)*)(.*)\Z", re.S)
NODE_NAME_RE = re.compile(r"[A-Za-z0-9,._+@-]+\Z")
DTS_INCLUDE_RE = re.compile(r'/include/\s*"([^"]+)"')


def split_labels(text):
    m = LABELS_RE.match(text)
    labels = re.findall(r"[A-Za-z_]\w*", m.group(1))
    return labels, m.group(2).strip()


class SNode:
    """A node of the merged tree; its properties stay text until read."""
    __slots__ = ("name", "parent", "children", "segs", "dead", "props")

    def __init__(self, name, parent):
        self.name = name
        self.parent = parent
        self.children = {}
        self.segs = []      # (start, end) of its statements, in merge order
        self.dead = False   # deleted (/delete-node/)
        self.props = None   # {name: (value text, offset)} once parsed


class SrcTree:
    """The merged tree of one preprocessed board, as dtc would build it.

    Properties are kept as text spans and parsed only for the nodes the
    idle-state logic reads."""

    def __init__(self, src, files, board, text):
        self.src = src
        self.files = files
        self.board = board
        self.text, self.markers = self._splice(text)
        self._mpos = [m[0] for m in self.markers]
        self.root = SNode("", None)
        self.labels = {}
        self._phandles = None
        self._parse()

    # -- text and positions
    def _clean(self, text):
        markers = []

        def repl(m):
            s = m.group()
            if s[0] == '"':
                return s
            if s[0] == "#":
                mm = MARKER_RE.match(s)
                markers.append((m.end() + 1, int(mm.group(1)), mm.group(2)))
            return blank(s)
        return PRE_RE.sub(repl, text), markers

    def _splice(self, text):
        """Apply dtc's own /include/ (not handled by cpp)."""
        for _ in range(16):
            clean, markers = self._clean(text)
            m = DTS_INCLUDE_RE.search(clean)
            if not m:
                return clean, markers
            cur, line = self._where_in(markers, clean, m.start())
            rel = None
            for d in (os.path.dirname(cur), os.path.dirname(self.board), INCLUDE_PREFIXES):
                p = self.files.canon(os.path.join(d, m.group(1)))
                if self.files.isfile(p):
                    rel = p
                    break
            if rel is None:
                raise DtsError(f"{cur}:{line}: /include/ \"{m.group(1)}\" not found")
            inc = read_text(os.path.join(self.src, rel))
            text = (text[:m.start()] + f'\n# 1 "{rel}"\n' + inc + f'\n# {line} "{cur}"\n'
                    + text[m.end():])
        raise DtsError("/include/ nested too deep")

    @staticmethod
    def _where_in(markers, text, pos):
        i = bisect.bisect_right([m[0] for m in markers], pos) - 1
        if i < 0:
            return "<cpp>", text.count("\n", 0, pos) + 1
        start, line, name = markers[i]
        return name, line + text.count("\n", start, pos)

    def where(self, pos):
        i = bisect.bisect_right(self._mpos, pos) - 1
        if i < 0:
            return f"{self.board}:?"
        start, line, name = self.markers[i]
        if name.startswith(INCLUDE_PREFIXES + "/"):
            name = self.files.canon(name)
        elif name == "<stdin>":
            name = self.board
        line += self.text.count("\n", start, pos)
        return f"{name}:{line}"

    def _stmts(self, a, b):
        """Statements of text[a:b]: (text, offset of its first character)."""
        last = a
        for m in STMT_RE.finditer(self.text, a, b):
            if m.group() == ";":
                raw = self.text[last:m.start()]
                s = raw.lstrip()
                if s:
                    yield s.rstrip(), last + len(raw) - len(s)
                last = m.end()
        rest = self.text[last:b].strip()
        if rest:
            raise DtsError(f"{self.where(last)}: expected ';' after '{rest[:40]}'")

    # -- structure
    def _parse(self):
        text = self.text
        stack = [None]
        pending = 0
        for m in TOK_RE.finditer(text):
            c = m.group()[0]
            if c == "{":
                start = m.start()
                semi = text.rfind(";", pending, start)
                head_at = pending
                if semi >= 0:
                    self._segment(stack[-1], pending, semi + 1)
                    head_at = semi + 1
                stack.append(self._open(stack[-1], text[head_at:start], head_at))
                pending = m.end()
            elif c == "}":
                if len(stack) == 1:
                    raise DtsError(f"{self.where(m.start())}: unbalanced '}}'")
                self._segment(stack[-1], pending, m.start())
                stack.pop()
                pending = m.end()
        if len(stack) != 1:
            raise DtsError(f"{self.board}: unterminated node")
        self._segment(None, pending, len(text))

    def _segment(self, node, a, b):
        text = self.text
        if node is None:
            for s, at in self._stmts(a, b):
                if s.startswith("/delete-node/"):
                    target = self._ref(s[len("/delete-node/"):].strip(), at)
                    self._delete(target)
                elif s.split()[0] in ("/dts-v1/", "/plugin/", "/memreserve/", "/omit-if-no-ref/"):
                    continue
                else:
                    raise DtsError(f"{self.where(at)}: unexpected '{s[:40]}' at top level")
            return
        if text.find("/delete-node/", a, b) >= 0:
            for s, at in self._stmts(a, b):
                if s.startswith("/delete-node/"):
                    child = node.children.get(s[len("/delete-node/"):].strip())
                    if child is not None:
                        self._delete(child)
        if b - a > 1:
            node.segs.append((a, b))

    def _delete(self, node):
        if node.parent is not None and node.parent.children.get(node.name) is node:
            del node.parent.children[node.name]
        node.dead = True

    def _alive(self, node):
        while node is not None:
            if node.dead:
                return False
            node = node.parent
        return True

    def _ref(self, ref, at):
        if ref.startswith("&{") and ref.endswith("}"):
            node = self._path(ref[2:-1])
        elif ref.startswith("&"):
            node = self._label(ref[1:])
        else:
            node = None
        if node is None:
            raise DtsError(f"{self.where(at)}: label or path {ref} not found")
        return node

    def _path(self, path):
        """A node by path; dtc also takes 'label/sub/path'."""
        node = self.root
        if not path.startswith("/"):
            label, _, path = path.partition("/")
            node = self._label(label)
            if node is None:
                return None
        for part in [p for p in path.split("/") if p]:
            node = node.children.get(part)
            if node is None:
                return None
        return node

    def _open(self, parent, head, at):
        at += len(head) - len(head.lstrip())
        head = head.strip()
        if head.startswith("/omit-if-no-ref/"):
            head = head[len("/omit-if-no-ref/"):]
        labels, rest = split_labels(head)
        if parent is None:
            node = self.root if rest == "/" else self._ref(rest, at)
        else:
            if not NODE_NAME_RE.match(rest):
                raise DtsError(f"{self.where(at)}: cannot parse node header '{head[:40]}'")
            node = parent.children.get(rest)
            if node is None:
                node = SNode(rest, parent)
                parent.children[rest] = node
        for lab in labels:
            nodes = self.labels.setdefault(lab, [])
            if node not in nodes:
                nodes.append(node)
        return node

    def _label(self, name):
        """The node carrying a label: the first alive one in tree order (as
        dtc looks labels up; a label may repeat if all but one are deleted)."""
        alive = [n for n in self.labels.get(name, ()) if self._alive(n)]
        if len(alive) < 2:
            return alive[0] if alive else None
        order = {}
        todo = [self.root]
        while todo:
            n = todo.pop()
            order[id(n)] = len(order)
            todo.extend(reversed(list(n.children.values())))
        return min(alive, key=lambda n: order.get(id(n), len(order)))

    # -- properties (the interface the idle-state logic uses)
    def props(self, node):
        if node.props is None:
            d = {}
            for a, b in node.segs:
                for s, at in self._stmts(a, b):
                    if s.startswith("/delete-property/"):
                        d.pop(s[len("/delete-property/"):].strip(), None)
                    elif not s.startswith("/delete-node/"):
                        name, eq, value = s.partition("=")
                        name = split_labels(name)[1]
                        d[name] = (value.strip() if eq else "", at)
            node.props = d
        return node.props

    def has(self, node, name):
        return name in self.props(node)

    def value(self, node, name):
        p = self.props(node).get(name)
        return None if p is None else parse_dts_value(p[0], self.where(p[1]))

    def strings(self, node, name):
        v = self.value(node, name)
        if v is None:
            return None
        return [x for kind, x in v if kind == "s"]

    def cells(self, node, name):
        v = self.value(node, name)
        if v is None:
            return None
        out = []
        for kind, x in v:
            if kind == "c":
                out.extend(x)
        return out

    def deref(self, node, cell):
        """A phandle cell -> node (None if it does not resolve)."""
        if isinstance(cell, tuple):
            kind, ref = cell
            return self._path(ref) if kind == "path" else self._label(ref)
        if self._phandles is None:
            self._phandles = {}
            self._index_phandles(self.root)
        return self._phandles.get(cell)

    def _index_phandles(self, node):
        for child in node.children.values():
            for key in ("phandle", "linux,phandle"):
                c = self.cells(child, key)
                if c and isinstance(c[0], int):
                    self._phandles[c[0]] = child
            self._index_phandles(child)

    def prop_where(self, node, name):
        p = self.props(node).get(name)
        return self.where(p[1]) if p else None

    def prop_pos(self, node, name):
        p = self.props(node).get(name)
        return p[1] if p else None


def parse_dts_value(text, where):
    """A property value -> [('s', str) | ('c', [int | ('ref'|'path', x)]) | ('b', bytes)]."""
    out = []
    i, n = 0, len(text)
    bits = 32
    while i < n:
        c = text[i]
        if c.isspace() or c == ",":
            i += 1
        elif c == '"':
            m = re.compile(r'"((?:[^"\\\n]|\\.)*)"').match(text, i)
            if not m:
                raise DtsError(f"{where}: bad string")
            out.append(("s", bytes(m.group(1), "utf-8").decode("unicode_escape")))
            i = m.end()
        elif c == "<":
            j, depth = i + 1, 0
            while j < n and (text[j] != ">" or depth):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            if j >= n:
                raise DtsError(f"{where}: unterminated '<'")
            out.append(("c", parse_cells(text[i + 1:j], where, bits)))
            bits = 32
            i = j + 1
        elif c == "[":
            j = text.find("]", i)
            if j < 0:
                raise DtsError(f"{where}: unterminated '['")
            out.append(("b", bytes.fromhex("".join(text[i + 1:j].split()))))
            i = j + 1
        elif c == "&":
            m = re.compile(r"&(\{[^}]*\}|[A-Za-z_]\w*)").match(text, i)
            if not m:
                raise DtsError(f"{where}: bad reference")
            out.append(("s", m.group(1)))  # a path reference is a string
            i = m.end()
        elif text.startswith("/bits/", i):
            m = re.compile(r"/bits/\s*(\d+)").match(text, i)
            bits = int(m.group(1))
            i = m.end()
        else:
            m = re.compile(r"[A-Za-z_]\w*:").match(text, i)
            if not m:
                raise DtsError(f"{where}: cannot parse value near '{text[i:i + 30]}'")
            i = m.end()  # a label inside a value
    return out


def parse_cells(text, where, bits):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "&":
            if text.startswith("&{", i):
                j = text.index("}", i)
                out.append(("path", text[i + 2:j]))
                i = j + 1
            else:
                m = re.compile(r"&([A-Za-z_]\w*)").match(text, i)
                if not m:
                    raise DtsError(f"{where}: bad reference in cells")
                out.append(("ref", m.group(1)))
                i = m.end()
        elif c == "(":
            depth, j = 0, i
            while j < n:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            out.append(_cell_int(text[i:j + 1], where, bits))
            i = j + 1
        else:
            m = re.compile(r"'(?:\\.|[^'])'|[0-9A-Za-z_]+").match(text, i)
            if not m:
                raise DtsError(f"{where}: cannot parse cells near '{text[i:i + 30]}'")
            if re.fullmatch(r"[A-Za-z_]\w*:", text[i:m.end() + 1]):
                i = m.end() + 1  # label
                continue
            out.append(_cell_int(m.group(), where, bits))
            i = m.end()
    return out


def _cell_int(expr, where, bits):
    try:
        return eval_c_int(expr) & ((1 << bits) - 1)
    except ValueError as e:
        raise DtsError(f"{where}: cannot evaluate '{expr}' ({e})") from None


# ---------------------------------------------------------------------------
# Device trees: what the DT cpuidle drivers register
#
# A CPU's table is its driver's own state 0 (WFI) followed by the DT states
# of_get_cpu_state_node() returns for it, in that order; unavailable states
# (status) are skipped, states beyond CPUIDLE_STATE_MAX dropped, and a state
# that lacks a latency or min-residency-us, or is not the driver's
# compatible, makes the driver register nothing for the CPU.
#
# Hierarchical PSCI (power-domains with domain-idle-states): the index-th
# state is the CPU's own power domain's domain-idle-states[index] when
# there is one, else cpu-idle-states[index].  Those are the CPU-level
# states.  The states of the domains above (a cluster's "domain-idle-state"
# nodes) are genpd states: in OSI mode the genpd governor picks one when
# the last CPU of the domain enters the deepest CPU state; in PC mode
# cpuidle-psci does not use them at all.  Either way the CPU's cpuidle
# governor never sees them, so they are not part of any table here.
#
# Drivers: cpuidle-psci takes every arm64 CPU and arm CPUs with
# enable-method "psci" (an arm64 CPU without enable-method is taken as psci
# with a note: its firmware adds the property; another method such as
# spin-table makes cpuidle-psci give up on every CPU, as its probe does);
# cpuidle-qcom-spm takes arm CPUs with a "qcom,..." method, cpuidle-arm the
# arm CPUs whose method has cpuidle ops, cpuidle-big_little the machines it
# lists, cpuidle-riscv-sbi riscv CPUs.

class DtDriver:
    def __init__(self, label, compat, wfi, all_or_nothing):
        self.label = label          # e.g. 'cpuidle-psci'
        self.compat = compat        # idle-state compatible it matches
        self.wfi = wfi              # its state 0
        self.all_or_nothing = all_or_nothing


def wfi_state_of(src, rel):
    """State 0 a DT cpuidle driver sets up itself (assignments or initializer)."""
    path = os.path.join(src, rel)
    if not os.path.exists(path):
        return None
    cf = CFile(src, rel)
    lat = re.search(r"states\[0\]\.exit_latency\s*=\s*([^;]+);", cf.text)
    res = re.search(r"states\[0\]\.target_residency\s*=\s*([^;]+);", cf.text)
    name = re.search(r'str\w*cpy\s*\(\s*\w+->states\[0\]\.name\s*,\s*"([^"]+)"', cf.text)
    if lat and res and name:
        return State(name.group(1), cf.eval(lat.group(1), lat.start(1), "exit latency"),
                     cf.eval(res.group(1), res.start(1), "target residency"),
                     origin=f"{cf.where(lat.start())}")
    for m, a, b in cf.find_init(DRIVER_INIT):
        macros = MacroSet(driver_headers(src, cf) + [cf])
        items, _ = drv_states_of_driver(cf, macros, a, b)
        if 0 in items:
            return drv_state(cf, macros, items[0][0], items[0][1], 0, m.group(1))
    raise ExtractError(f"{rel}: cannot read the state 0 the driver registers; the "
                       "extractor's model of this tree needs review")


# key, source, the idle-state compatible it matches, all CPUs or none
DT_DRIVERS = (("psci", "drivers/cpuidle/cpuidle-psci.c", "arm,idle-state", True),
              ("arm", "drivers/cpuidle/cpuidle-arm.c", "arm,idle-state", True),
              ("qcom-spm", "drivers/cpuidle/cpuidle-qcom-spm.c", "qcom,idle-state-spc", False),
              ("riscv-sbi", "drivers/cpuidle/cpuidle-riscv-sbi.c", "riscv,idle-state", True))


def dt_drivers(src):
    """The DT cpuidle drivers, their state 0, checked against the tree."""
    dts = CFile(src, "drivers/cpuidle/dt_idle_states.c")
    require(dts, r'"wakeup-latency-us".*?entry_latency\s*\+\s*exit_latency.*?"min-residency-us"',
            "a DT state's exit latency is wakeup-latency-us, else entry-latency-us + "
            "exit-latency-us, and its target residency min-residency-us")
    require(dts, r"of_device_is_available\s*\(\s*state_node\s*\)\s*\)\s*\{\s*of_node_put\s*"
            r"\(\s*state_node\s*\)\s*;\s*continue\s*;",
            "unavailable (status) DT states are skipped")
    ofc = CFile(src, "drivers/of/cpu.c")
    require(ofc, r"of_get_cpu_state_node\s*\(.*?\"power-domains\".*?\"domain-idle-states\""
            r".*?\"cpu-idle-states\"",
            "a CPU's idle states are its power domain's domain-idle-states, then its "
            "cpu-idle-states")
    drivers = {}
    for key, rel, compat, aon in DT_DRIVERS:
        wfi = wfi_state_of(src, rel)
        if wfi is not None:
            text = read_text(os.path.join(src, rel))
            if f'"{compat}"' not in text:
                raise ExtractError(f"{rel}: cannot confirm that it matches \"{compat}\" states; "
                                   "the extractor's model of this tree needs review")
            drivers[key] = DtDriver(os.path.basename(rel)[:-2], compat, wfi, aon)
    drivers["arm-methods"] = arm_cpuidle_methods(src)
    drivers["bl-machines"] = set()
    bl = "drivers/cpuidle/cpuidle-big_little.c"
    if os.path.exists(os.path.join(src, bl)):
        cf = CFile(src, bl)
        m = re.search(r"compatible_machine_match\[\]\s*=\s*\{(.*?)\};", cf.text, re.S)
        if m and '"arm,idle-state"' in cf.text:
            drivers["bl-machines"] = set(re.findall(r'\.compatible\s*=\s*"([^"]+)"', m.group(1)))
            drivers["big_little"] = DtDriver("cpuidle-big_little", "arm,idle-state",
                                             wfi_state_of(src, bl), True)
    return drivers


def arm_cpuidle_methods(src):
    """enable-method strings arch/arm's cpuidle ops exist for (cpuidle-arm)."""
    methods = set()
    top = os.path.join(src, "arch/arm")
    for dirpath, _, files in os.walk(top):
        if "/boot" in dirpath[len(top):]:
            continue
        for f in files:
            if f.endswith(".c"):
                text = read_text(os.path.join(dirpath, f))
                if "CPUIDLE_METHOD_OF_DECLARE" in text:
                    methods.update(re.findall(
                        r'CPUIDLE_METHOD_OF_DECLARE\s*\(\s*\w+\s*,\s*"([^"]+)"', text))
    return methods


def cpu_driver(drivers, arch, cpu_em, machine):
    """The DT cpuidle driver that takes a CPU (None: no driver would)."""
    if arch == "arm" and drivers["bl-machines"] & set(machine):
        return drivers.get("big_little")
    if arch == "riscv":
        return drivers.get("riscv-sbi")
    if arch == "arm64" or cpu_em == "psci":
        return drivers.get("psci")
    if arch == "arm" and cpu_em and cpu_em.startswith("qcom,"):
        return drivers.get("qcom-spm")
    if arch == "arm" and cpu_em in drivers["arm-methods"]:
        return drivers.get("arm")
    return None


def state_nodes(tree, cpu):
    """of_get_cpu_state_node(cpu, i) for i = 0, 1, ...: ([(node, via)], the
    (node, property) lists it read).  Index by index, the CPU's first power
    domain's domain-idle-states win over the CPU's own cpu-idle-states."""
    domain, lists = [], []
    pd = tree.cells(cpu, "power-domains")
    if pd:
        target = tree.deref(cpu, pd[0])
        ncells = tree.cells(target, "#power-domain-cells") if target is not None else None
        if ncells and len(pd) >= 1 + ncells[0]:
            domain = [(c, f"domain-idle-states of {target.name}")
                      for c in (tree.cells(target, "domain-idle-states") or [])]
            if domain:
                lists.append((target, "domain-idle-states"))
    own = [(c, "cpu-idle-states") for c in (tree.cells(cpu, "cpu-idle-states") or [])]
    if len(own) > len(domain):
        lists.append((cpu, "cpu-idle-states"))
    out = []
    for i in range(max(len(domain), len(own))):
        cell, via = domain[i] if i < len(domain) else own[i]
        node = tree.deref(cpu, cell)
        if node is None:
            break
        out.append((node, via))
    return out, lists


def u32(tree, node, name):
    c = tree.cells(node, name)
    if not c:
        return None
    if not isinstance(c[0], int):
        raise DtsError(f"{name} of {node.name} is not a number")
    return c[0]


def compress_lines(wheres):
    """['f:1', 'f:2', 'g:7'] -> 'f:1-2 g:7'."""
    by_file = {}
    for w in wheres:
        if w:
            f, _, ln = w.rpartition(":")
            by_file.setdefault(f, set()).add(int(ln) if ln.isdigit() else 0)
    parts = []
    for f, lines in by_file.items():
        ls = sorted(lines)
        parts.append(f"{f}:{ls[0]}" + (f"-{ls[-1]}" if ls[-1] != ls[0] else ""))
    return " ".join(parts)


def dt_cpu_states(tree, cpu, drv, em, state_max):
    """(states, notes, shaper) of one CPU, as dt_init_idle_driver() builds
    them behind the driver's state 0; raises ValueError(why) where the
    driver registers nothing.  shaper is where the last property that
    shaped the table was set (names the table after the right file)."""
    nodes, lists = state_nodes(tree, cpu)
    if not nodes:
        raise ValueError("no idle states")
    notes = []
    if drv.label == "cpuidle-psci" and em != "psci":
        if em is not None:
            raise ValueError(f"enable-method {em}: cpuidle-psci takes only psci CPUs")
        notes.append("the tree gives the CPUs no enable-method (their firmware adds it); "
                     "taken as psci")
    states = [State(drv.wfi.name, drv.wfi.exit_us, drv.wfi.res_us,
                    origin=f"state 0 of {drv.label} ({drv.wfi.origin})")]
    shaped = [tree.prop_pos(n, p) for n, p in lists]
    for node, via in nodes:
        compat = tree.strings(node, "compatible") or []
        if drv.compat not in compat:
            raise ValueError(f"{node.name} (via {via}) is not \"{drv.compat}\"")
        status = tree.strings(node, "status")
        if status and status[0] not in ("okay", "ok"):
            notes.append(f"{node.name} is skipped: status \"{status[0]}\"")
            shaped.append(tree.prop_pos(node, "status"))
            continue
        if len(states) == state_max:
            notes.append(f"{node.name} and later states are dropped: the driver keeps "
                         f"{state_max} states (CPUIDLE_STATE_MAX)")
            break
        if tree.has(node, "wakeup-latency-us"):
            used = ["wakeup-latency-us"]
            lat = u32(tree, node, "wakeup-latency-us")
            how = f"wakeup-latency-us {lat}"
        else:
            used = ["entry-latency-us", "exit-latency-us"]
            entry = u32(tree, node, "entry-latency-us")
            exit_ = u32(tree, node, "exit-latency-us")
            if entry is None or exit_ is None:
                raise ValueError(f"{node.name} lacks entry-latency-us or exit-latency-us")
            lat = (entry + exit_) & UINT_MAX
            how = f"entry-latency-us {entry} + exit-latency-us {exit_}"
        res = u32(tree, node, "min-residency-us")
        if lat is None or res is None:
            raise ValueError(f"{node.name} lacks a latency or min-residency-us")
        used.append("min-residency-us")
        shaped += [tree.prop_pos(node, u) for u in used]
        where = compress_lines([tree.prop_where(node, u) for u in used])
        states.append(State(node.name.split("@")[0], lat, res,
                            origin=f"{where} {how}, min-residency-us {res} (via {via})".strip()))
    if len(states) == 1:
        raise ValueError("no available idle states")
    shaped = [p for p in shaped if p is not None]
    return states, notes, tree.where(max(shaped)) if shaped else None


def dt_board(tree, board, drivers, state_max):
    """Tables of one board: ([(cpu, core, capacity, driver, states, notes)],
    [why some CPUs get none])."""
    arch = board.split("/")[1]
    cpus = tree.root.children.get("cpus")
    if cpus is None:
        return [], []
    per_cpu, failed, aon_failed = [], {}, set()
    machine = tree.strings(tree.root, "compatible") or []
    for cpu in list(cpus.children.values()):
        dtype = tree.strings(cpu, "device_type")
        if not (cpu.name.split("@")[0] == "cpu" or (dtype and dtype[0] == "cpu")):
            continue
        status = tree.strings(cpu, "status")
        if status and status[0].startswith("fail"):
            continue
        em = tree.strings(cpu, "enable-method")
        em = em[0] if em else None
        drv = cpu_driver(drivers, arch, em, machine)
        if drv is None:
            if state_nodes(tree, cpu):
                why = f"enable-method {em or 'none'}: no DT cpuidle driver takes these CPUs"
                failed.setdefault(why, []).append(cpu.name)
            continue
        try:
            states, notes, shaper = dt_cpu_states(tree, cpu, drv, em, state_max)
        except ValueError as e:
            failed.setdefault(str(e), []).append(cpu.name)
            if drv.all_or_nothing:
                aon_failed.add(drv.label)
            continue
        compat = tree.strings(cpu, "compatible") or [""]
        cap = u32(tree, cpu, "capacity-dmips-mhz")
        per_cpu.append((cpu.name, compat[0].split(",")[-1], cap, drv, states, notes, shaper))
    if not per_cpu and list(failed) == ["no idle states"]:
        return [], []  # a board without idle states
    rejects = [f"{cpu_list(names)}: {why}" for why, names in failed.items()]
    for label in sorted(aon_failed):
        dropped = [c[0] for c in per_cpu if c[3].label == label]
        if dropped:
            rejects.append(f"{cpu_list(dropped)}: {label} registers no CPU when one fails")
        per_cpu = [c for c in per_cpu if c[3].label != label]
    return per_cpu, rejects


def board_result(src, files, board, text, drivers, state_max):
    """Parse one preprocessed board: a plain, picklable result."""
    tree = SrcTree(src, files, board, text)
    per_cpu, rejects = dt_board(tree, board, drivers, state_max)
    return [(c[0], c[1], c[2], c[3].label, [(s.name, s.exit_us, s.res_us, s.origin) for s in c[4]],
             c[5], c[6]) for c in per_cpu], rejects


def dtc_board(src, files, board, text, drivers, state_max):
    """The same as dtc compiles it, for --check-dtc.  dtc writes the board
    back as source (-O dts): one flat tree in which dtc itself has merged
    the nodes, applied the deletions and /include/, evaluated the
    expressions and turned every reference into a phandle number.  The
    same parser reads that: what is hard in the source (labels, paths,
    overrides, deletions, arithmetic) is done by dtc on one side and by the
    parser on the other."""
    r = subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dts",
                        "-i", os.path.dirname(board), "-i", INCLUDE_PREFIXES, "-o", "-", "-"],
                       cwd=src, input=text.encode(), capture_output=True)
    if r.returncode:
        raise DtsError("dtc: " + (r.stderr.decode(errors="replace").strip().splitlines()
                                  or ["failed"])[0])
    tree = SrcTree(src, files, board, r.stdout.decode(errors="replace"))
    per_cpu, rejects = dt_board(tree, board, drivers, state_max)
    return [(c[0], c[3].label, [(s.name, s.exit_us, s.res_us) for s in c[4]]) for c in per_cpu]


def check_board(src, files, board, text, res, drivers, state_max):
    """--check-dtc for one board: None if cpp alone and dtc give what the
    batch and the parser gave, else ('unchecked' | 'differs', why)."""
    single, err = cpp_one(src, board)
    if err:
        return ("differs", f"a single cpp run fails ({err})")
    if _strip_markers(single) != _strip_markers(text):
        return ("differs", "the batched cpp output differs from a single cpp run")
    try:
        theirs = dtc_board(src, files, board, single, drivers, state_max)
    except DtsError as e:
        return ("unchecked", str(e))
    ours = [(c[0], c[3], [(s[0], s[1], s[2]) for s in c[4]]) for c in res[0]]
    return None if ours == theirs else ("differs", f"parser {ours} != dtc {theirs}")


def _strip_markers(text):
    return "\n".join(ln for ln in text.splitlines()
                     if ln.strip() and not re.match(r'#\s*\d+\s+"', ln))


# Worker globals (set before the pool forks).
_G = {}


def work_batch(boards):
    """Preprocess and parse some boards: [(board, result, error, check)]."""
    src, files, drivers, state_max = _G["src"], _G["files"], _G["drivers"], _G["state_max"]
    macros = {b: files.macros(b) for b in boards}
    out = []
    for b, (text, err) in cpp_batch(src, boards, macros).items():
        res = check = None
        if not err:
            try:
                res = board_result(src, files, b, text, drivers, state_max)
            except DtsError as e:
                err = f"parse: {e}"
        if res is not None and _G["check_dtc"]:
            check = check_board(src, files, b, text, res, drivers, state_max)
        out.append((b, res, err, check))
    return out


def extract_dt(src, state_max, jobs, check_dtc, max_skipped, log):
    """Tables of every board: (tables, rejects, skipped, checks, boards read)."""
    t0 = time.monotonic()
    files = DtFiles(src)
    boards = files.boards()
    candidates = [b for b in boards if files.uses_states(b)]
    log(f"device tree: {len(boards)} boards, {len(candidates)} reference idle states "
        f"(scanned in {time.monotonic() - t0:.1f} s)")
    if not candidates:
        return [], [], [], [], 0
    if shutil.which("cpp") is None:
        raise ExtractError("cpp not found: install the Debian package cpp")
    if check_dtc and shutil.which("dtc") is None:
        raise ExtractError("dtc not found (--check-dtc): install the Debian package "
                           "device-tree-compiler")
    drivers = dt_drivers(src)
    _G.update(src=src, files=files, drivers=drivers, state_max=state_max, check_dtc=check_dtc)
    for b in candidates:
        files.macros(b)  # fill the cache before forking
    batches = [candidates[i:i + BATCH] for i in range(0, len(candidates), BATCH)]
    results = []
    t0 = time.monotonic()
    if jobs > 1 and len(batches) > 1:
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            for part in pool.map(work_batch, batches):
                results.extend(part)
    else:
        for batch in batches:
            results.extend(work_batch(batch))
    log(f"device tree: preprocessed and parsed in {time.monotonic() - t0:.1f} s "
        f"({jobs} job(s))")
    results.sort(key=lambda r: r[0])
    skipped = [(b, err) for b, _, err, _ in results if err]
    checks = [(b, chk) for b, _, _, chk in results if chk]
    if len(skipped) * 100.0 > max_skipped * len(candidates):
        raise ExtractError(f"{len(skipped)} of {len(candidates)} device trees failed to "
                           f"preprocess or parse (more than {max_skipped:g}%); first: "
                           f"{skipped[0][0]}: {skipped[0][1]}")
    tables, rejects = dt_tables([(b, res) for b, res, err, _ in results if not err])
    return tables, rejects, skipped, checks, len(candidates)


def dt_tables(results):
    """Board results -> Table objects (one per board and distinct CPU table)."""
    tables, rejects = [], []
    for board, (per_cpu, board_rejects) in results:
        for r in board_rejects:
            rejects.append(f"{board}: {r}")
        groups = {}
        for cpu, core, cap, drv, states, notes, shaper in per_cpu:
            key = tuple((s[0], s[1], s[2]) for s in states)
            g = groups.setdefault(key, {"cpus": [], "cores": [], "caps": [], "drv": drv,
                                        "states": states, "notes": notes, "shaper": shaper})
            g["cpus"].append(cpu)
            g["cores"].append(core)
            g["caps"].append(cap)
        quals = cluster_names(list(groups.values()))
        for g, qual in zip(groups.values(), quals):
            def_file = (g["shaper"] or board).rpartition(":")[0] or board
            stem = os.path.splitext(os.path.basename(def_file))[0]
            pref = "dt-" + stem + ("-" + qual if qual else "")
            bstem = os.path.splitext(os.path.basename(board))[0]
            alt = "dt-" + bstem + ("-" + qual if qual else "")
            states = [State(n, e, r, origin=o) for n, e, r, o in g["states"]]
            cpus = cpu_list(g["cpus"])
            first = g["states"][1][3].split(" ")[0] if len(g["states"]) > 1 else board
            title = f"DT {stem}" + (f" {qual}" if qual else "") + f" ({g['drv']})"
            cores = " ".join(sorted(set(g["cores"])))
            tables.append(Table("dt", pref, title, f"{first} {board} {cpus}", states,
                                [f"board {board}, CPUs {cpus} ({cores}), {g['drv']}"], g["notes"],
                                sort_key=(pref, def_file, board), alt_name=alt))
    return tables, rejects


def cluster_names(groups):
    """Names for the distinct tables of one board's CPUs."""
    if len(groups) < 2:
        return [""] * len(groups)
    caps = [max((c or 0) for c in g["caps"]) for g in groups]
    if all(c for c in caps) and len(set(caps)) == len(caps) and len(caps) <= 3:
        words = ["little", "big"] if len(caps) == 2 else ["little", "mid", "big"]
        order = sorted(range(len(caps)), key=lambda i: caps[i])
        names = [""] * len(groups)
        for w, i in zip(words, order):
            names[i] = w
        return names
    cores = ["-".join(sorted(set(g["cores"]))) for g in groups]
    if all(cores) and len(set(cores)) == len(cores):
        return [re.sub(r"[^A-Za-z0-9.+-]", "-", c) for c in cores]
    return ["cpu" + g["cpus"][0].replace("cpu@", "").replace("@", "") for g in groups]


def cpu_list(names):
    units = [n.split("@", 1)[1] if n.startswith("cpu@") else None for n in names]
    if all(u is not None for u in units):
        return "cpu@{" + ",".join(units) + "}" if len(units) > 1 else names[0]
    return ",".join(names)


# ---------------------------------------------------------------------------
# Output

def kernel_version(src):
    try:
        mk = read_text(os.path.join(src, "Makefile"))
    except OSError:
        return "unknown"
    v = {k: (re.search(rf"^{k}[ \t]*=[ \t]*(.*)$", mk, re.M) or [None, ""])[1].strip()
         for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION")}
    if not v["VERSION"]:
        return "unknown"
    return f"{v['VERSION']}.{v['PATCHLEVEL']}.{v['SUBLEVEL'] or 0}{v['EXTRAVERSION']}"


def fit_name(name):
    name = re.sub(r"[^A-Za-z0-9._+-]", "-", name)
    if len(name) <= PLAT_NAME_MAX:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:4]
    return name[:PLAT_NAME_MAX - 5] + "-" + digest


def group_tables(tables):
    """Dedupe by contents.  Each distinct table is named after its main
    source: intel_idle before drivers before device trees, then the name
    most of its sources share (the SoC with the most boards), then order."""
    groups = {}
    for t in tables:
        groups.setdefault(t.key(), []).append(t)
    for g in groups.values():
        share = {}
        for t in g:
            share[t.pref_name] = share.get(t.pref_name, 0) + 1
        g.sort(key=lambda t: ({"intel": 0, "drv": 1, "dt": 2}[t.kind], -share[t.pref_name])
               + tuple(t.sort_key))
    by_name = {}
    for key, g in groups.items():
        by_name.setdefault(fit_name(g[0].pref_name), []).append(key)
    named = {}
    for name, keys in sorted(by_name.items()):
        keys.sort(key=lambda k: (-len(groups[k]), k))
        for i, k in enumerate(keys):
            if i == 0:
                named[k] = name
                continue
            alt = fit_name(groups[k][0].alt_name or f"{name}-{i + 1}")
            n = 2
            while alt in named.values() or alt in by_name:
                alt = fit_name(f"{groups[k][0].alt_name or name}-{n}")
                n += 1
            named[k] = alt
    return sorted(((named[k], g) for k, g in groups.items()), key=lambda x: x[0])


def plat_text(name, group, version, state_max):
    t = group[0]
    lines = [f"# Generated by tools/idle-replay/extract-tables.py (format {FORMAT}) from Linux "
             f"{version}; do not edit.",
             f"# Source: {t.source}"]
    if len(group) > 1:
        lines.append(f"# {len(group) - 1} more source(s) yield the same table: see INDEX")
    lines += [f"# {h}" for h in t.head]
    lines += [f"# note: {n}" for n in t.notes]
    lines += [f"# note: breaks a lab rule: {b}" for b in lab_rule_breaks(t.states, state_max)]
    title = t.title if len(t.title) <= PLAT_TITLE_MAX else t.title[:PLAT_TITLE_MAX - 3] + "..."
    lines += [f"name {name}", f"title {title}"]
    for s in t.states:
        if s.origin:
            lines.append(f"# {s.name}: {s.origin}"[:500])
        words = ["state", s.name, str(s.exit_us), str(s.res_us)]
        if s.poll:
            words.append("poll")
        if s.off:
            words.append("off")
        if s.mw is not None:
            words.append(f"power_usage={s.mw}")
        lines.append(" ".join(words))
    return "\n".join(line[:500] for line in lines) + "\n"


def index_text(named, version, counts, rejects, skipped, drv_skipped, state_max):
    lines = [f"# extract-tables.py format {FORMAT}, Linux {version}: {len(named)} distinct "
             f"tables from {counts}",
             "# NAME\tSTATES\tSOURCE\tLAB-RULES\tALSO-FROM"]
    for name, group in named:
        t = group[0]
        breaks = lab_rule_breaks(t.states, state_max)
        also = " ".join(o.source for o in group[1:]) or "-"
        lines.append(f"{name}\t{len(t.states)}\t{t.source}\t"
                     f"{'; '.join(breaks) if breaks else 'ok'}\t{also}")
    for r in rejects:
        lines.append(f"# no table: {r}")
    for b, why in skipped:
        lines.append(f"# skipped: {b}: {why}")
    for s in drv_skipped:
        lines.append(f"# not taken: {s}")
    return "\n".join(lines) + "\n"


def prepare_outdir(outdir):
    """Check OUTDIR can be (re)placed; returns a temp dir beside it."""
    parent = os.path.dirname(os.path.abspath(outdir)) or "."
    if os.path.exists(outdir):
        if not os.path.isdir(outdir):
            raise ExtractError(f"OUTDIR {outdir} exists and is not a directory")
        entries = os.listdir(outdir)
        if entries and "INDEX" not in entries:
            raise ExtractError(f"OUTDIR {outdir} exists, is not empty and holds no INDEX: "
                               "refusing to replace it")
        if entries and not all(e == "INDEX" or e.endswith(".plat") for e in entries):
            raise ExtractError(f"OUTDIR {outdir} holds files other than INDEX and *.plat: "
                               "refusing to replace it")
    if not os.path.isdir(parent):
        raise ExtractError(f"cannot create OUTDIR {outdir}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ExtractError(f"cannot create OUTDIR {outdir}: {parent} is not writable")
    try:
        return tempfile.mkdtemp(prefix="." + os.path.basename(os.path.abspath(outdir)) + ".",
                                dir=parent)
    except OSError as e:
        raise ExtractError(f"cannot create OUTDIR {outdir}: {e.strerror}") from None


def install_outdir(tmp, outdir):
    """Rename the finished temp dir to OUTDIR (mkdtemp made it 0700)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    old = None
    if os.path.exists(outdir):
        old = tmp + ".old"
        os.rename(outdir, old)
    os.rename(tmp, outdir)
    if old:
        shutil.rmtree(old)


# ---------------------------------------------------------------------------

def report_checks(checks, skipped, log):
    """Summary of --check-dtc; fails if any board differs."""
    differs = [(b, why) for b, (kind, why) in checks if kind == "differs"]
    unchecked = [(b, why) for b, (kind, why) in checks if kind == "unchecked"]
    for b, why in differs[:20]:
        warn(f"check-dtc: {b}: {why}")
    if unchecked:
        warn(f"check-dtc: this dtc cannot compile {len(unchecked)} board(s) the parser read "
             f"(first: {unchecked[0][0]}: {unchecked[0][1]}); they are not checked")
    if differs:
        raise ExtractError(f"check-dtc: {len(differs)} board(s) differ between the parser "
                           "and dtc")
    log("check-dtc: every board the parser read and dtc compiles gives the same tables"
        + (f" ({len(skipped)} skipped board(s) not checked)" if skipped else ""))
    return 0


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="extract-tables.py",
        description="Write every idle-state table a kernel tree knows (intel_idle, the "
        "static tables of drivers/cpuidle, the device trees of arm64/arm/riscv) as "
        "idle-replay .plat files, one per distinct table, with an INDEX of their sources.",
        epilog="KERNEL_SRC is only read.  OUTDIR is written through a temporary directory "
        "beside it and renamed into place, so a failure leaves it as it was; an existing "
        "OUTDIR is replaced only if it holds nothing but INDEX and *.plat.  Needs cpp "
        "(Debian package cpp); --check-dtc also needs dtc (device-tree-compiler).  "
        "Exit status: 0 done, 1 error, 2 usage.")
    p.add_argument("kernel_src", metavar="KERNEL_SRC", help="kernel source tree to read")
    p.add_argument("outdir", metavar="OUTDIR", help="directory to write (created or replaced)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel device-tree workers (default: the number of CPUs)")
    p.add_argument("--check-dtc", action="store_true",
                   help="also compile every board with cpp and dtc one by one and check that "
                   "dtc's tree gives the same tables (slow; a self-test of the parser)")
    p.add_argument("--max-skipped", type=float, default=MAX_SKIPPED_PERCENT, metavar="PERCENT",
                   help="fail if more than this share of the device trees that use idle "
                   f"states cannot be preprocessed or parsed (default {MAX_SKIPPED_PERCENT:g})")
    p.add_argument("-q", "--quiet", action="store_true", help="print only warnings and errors")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    src = args.kernel_src
    log = (lambda m: None) if args.quiet else (lambda m: print(f"{PROG}: {m}"))
    if not os.path.exists(src):
        raise ExtractError(f"KERNEL_SRC {src} does not exist")
    if not os.path.isdir(src):
        raise ExtractError(f"KERNEL_SRC {src} is not a directory")
    if not os.path.isfile(os.path.join(src, INTEL)):
        raise ExtractError(f"KERNEL_SRC {src} is not a kernel tree: {INTEL} is missing")
    if args.jobs < 1:
        raise ExtractError("--jobs needs a positive number")
    tmp = prepare_outdir(args.outdir)
    t0 = time.monotonic()
    try:
        version = kernel_version(src)
        state_max = state_max_of(src)
        poll = poll_state_of(src)
        check_core_flags(src)
        intel = extract_intel(src, state_max, poll)
        drv, drv_skipped = extract_drivers(src, poll)
        dt, rejects, skipped, checks, n_dt = extract_dt(src, state_max, args.jobs,
                                                        args.check_dtc, args.max_skipped, log)
        named = group_tables(intel + drv + dt)
        counts = (f"{len(intel)} intel_idle arrays, {len(drv)} drivers/cpuidle tables, "
                  f"{len(dt)} device-tree (board, CPU group) tables")
        for name, group in named:
            with open(os.path.join(tmp, name + ".plat"), "w", encoding="utf-8") as f:
                f.write(plat_text(name, group, version, state_max))
        with open(os.path.join(tmp, "INDEX"), "w", encoding="utf-8") as f:
            f.write(index_text(named, version, counts, rejects, skipped, drv_skipped, state_max))
        install_outdir(tmp, args.outdir)
        tmp = None
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    kinds = {k: len({n for n, g in named if g[0].kind == k}) for k in ("intel", "drv", "dt")}
    log(f"Linux {version}: {len(named)} distinct tables (intel_idle {kinds['intel']}, "
        f"drivers/cpuidle {kinds['drv']}, device tree {kinds['dt']}) in "
        f"{time.monotonic() - t0:.1f} s -> {args.outdir}")
    breaking = [n for n, g in named if lab_rule_breaks(g[0].states, state_max)]
    if breaking:
        warn(f"{len(breaking)} table(s) break a lab rule (see INDEX): {' '.join(breaking)}")
    if skipped:
        reasons = {}
        for _, why in skipped:
            reasons[why.split(":")[0]] = reasons.get(why.split(":")[0], 0) + 1
        warn(f"skipped {len(skipped)} of {n_dt} device tree(s) ("
             + ", ".join(f"{k} failed: {v}" for k, v in sorted(reasons.items())) + "): see INDEX")
    if args.check_dtc:
        return report_checks(checks, skipped, log)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ExtractError as e:
        warn(str(e))
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
