# SPDX-License-Identifier: GPL-2.0
"""What the DT cpuidle drivers register for each CPU of a board.

A CPU's table is its driver's own state 0 (WFI) followed by the DT states
of_get_cpu_state_node() returns for it, in that order; unavailable states
(status) are skipped, states beyond CPUIDLE_STATE_MAX dropped, and a state
that lacks a latency or min-residency-us, or is not the driver's
compatible, makes the driver register nothing for the CPU.

Hierarchical PSCI (power-domains with domain-idle-states): the index-th
state is the CPU's own power domain's domain-idle-states[index] when
there is one, else cpu-idle-states[index].  Those are the CPU-level
states.  The states of the domains above (a cluster's "domain-idle-state"
nodes) are genpd states: in OSI mode the genpd governor picks one when
the last CPU of the domain enters the deepest CPU state; in PC mode
cpuidle-psci does not use them at all.  Either way the CPU's cpuidle
governor never sees them, so they are not part of any table here.

Drivers: cpuidle-psci takes every arm64 CPU and arm CPUs with
enable-method "psci" (an arm64 CPU without enable-method is taken as psci
with a note: its firmware adds the property; another method such as
spin-table makes cpuidle-psci give up on every CPU, as its probe does);
cpuidle-qcom-spm takes arm CPUs with a "qcom,..." method, cpuidle-arm the
arm CPUs whose method has cpuidle ops, cpuidle-big_little the machines it
lists, cpuidle-riscv-sbi riscv CPUs."""

import os
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from tabletool.csource import CFile, MacroSet, included_headers, read_text, require
from tabletool.drivers import drv_state, drv_states_of_driver
from tabletool.dts import Node, Tree
from tabletool.errors import DtsError, ExtractError
from tabletool.kernel import DRIVER_INIT
from tabletool.plat import UINT_MAX, State


class DtDriver(NamedTuple):
    label: str            # e.g. 'cpuidle-psci'
    compat: str           # the idle-state compatible it matches
    wfi: State            # its state 0
    all_or_nothing: bool  # one CPU it cannot take makes it take none


class DtDrivers(NamedTuple):
    by_key: Dict[str, DtDriver]  # the drivers the tree has, by DT_DRIVERS key
    arm_methods: Set[str]        # enable-methods with arch/arm cpuidle ops
    bl_machines: Set[str]        # machines cpuidle-big_little takes


class CpuTable(NamedTuple):
    """The table a driver registers for one CPU."""
    cpu: str                 # the CPU's node name
    core: str                # its compatible without the vendor
    capacity: Optional[int]  # capacity-dmips-mhz
    driver: str              # the driver's label
    states: List[State]
    notes: List[str]
    shaper: Optional[str]    # where the last property that shaped it is set


# key, source, the idle-state compatible it matches, all CPUs or none
DT_DRIVERS = (("psci", "drivers/cpuidle/cpuidle-psci.c", "arm,idle-state", True),
              ("arm", "drivers/cpuidle/cpuidle-arm.c", "arm,idle-state", True),
              ("qcom-spm", "drivers/cpuidle/cpuidle-qcom-spm.c", "qcom,idle-state-spc", False),
              ("riscv-sbi", "drivers/cpuidle/cpuidle-riscv-sbi.c", "riscv,idle-state", True))
BIG_LITTLE = "drivers/cpuidle/cpuidle-big_little.c"


def wfi_state_of(src: str, rel: str) -> Optional[State]:
    """State 0 a DT cpuidle driver sets up itself (assignments or
    initializer); None if the tree has no such driver."""
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
        macros = MacroSet(included_headers(src, cf) + [cf])
        items, _ = drv_states_of_driver(cf, macros, a, b)
        if 0 in items:
            return drv_state(cf, macros, items[0][0], items[0][1], 0, m.group(1))
    raise ExtractError(f"{rel}: cannot read the state 0 the driver registers; the "
                       "extractor's model of this tree needs review")


def dt_drivers(src: str) -> DtDrivers:
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
    drivers = DtDrivers({}, arm_cpuidle_methods(src), set())
    for key, rel, compat, aon in DT_DRIVERS:
        wfi = wfi_state_of(src, rel)
        if wfi is not None:
            text = read_text(os.path.join(src, rel))
            if f'"{compat}"' not in text:
                raise ExtractError(f"{rel}: cannot confirm that it matches \"{compat}\" states; "
                                   "the extractor's model of this tree needs review")
            drivers.by_key[key] = DtDriver(os.path.basename(rel)[:-2], compat, wfi, aon)
    if os.path.exists(os.path.join(src, BIG_LITTLE)):
        cf = CFile(src, BIG_LITTLE)
        m = re.search(r"compatible_machine_match\[\]\s*=\s*\{(.*?)\};", cf.text, re.S)
        if m and '"arm,idle-state"' in cf.text:
            drivers.bl_machines.update(re.findall(r'\.compatible\s*=\s*"([^"]+)"', m.group(1)))
            wfi = wfi_state_of(src, BIG_LITTLE)
            if wfi is None:
                raise ExtractError(f"{BIG_LITTLE}: cannot read the state 0 the driver "
                                   "registers; the extractor's model of this tree needs review")
            drivers.by_key["big_little"] = DtDriver("cpuidle-big_little", "arm,idle-state",
                                                    wfi, True)
    return drivers


def arm_cpuidle_methods(src: str) -> Set[str]:
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


def cpu_driver(drivers: DtDrivers, arch: str, cpu_em: Optional[str],
               machine: Sequence[str]) -> Optional[DtDriver]:
    """The DT cpuidle driver that takes a CPU (None: no driver would)."""
    by_key = drivers.by_key
    if arch == "arm" and drivers.bl_machines & set(machine):
        return by_key.get("big_little")
    if arch == "riscv":
        return by_key.get("riscv-sbi")
    if arch == "arm64" or cpu_em == "psci":
        return by_key.get("psci")
    if arch == "arm" and cpu_em and cpu_em.startswith("qcom,"):
        return by_key.get("qcom-spm")
    if arch == "arm" and cpu_em in drivers.arm_methods:
        return by_key.get("arm")
    return None


def state_nodes(tree: Tree, cpu: Node) -> Tuple[List[Tuple[Node, str]],
                                                List[Tuple[Node, str]]]:
    """of_get_cpu_state_node(cpu, i) for i = 0, 1, ...: ([(node, via)], the
    (node, property) lists it read).  Index by index, the CPU's first power
    domain's domain-idle-states win over the CPU's own cpu-idle-states."""
    domain = []
    lists = []
    pd = tree.cells(cpu, "power-domains")
    if pd:
        target = tree.deref(pd[0])
        ncells = u32(tree, target, "#power-domain-cells") if target is not None else None
        if target is not None and ncells is not None and len(pd) >= 1 + ncells:
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
        node = tree.deref(cell)
        if node is None:
            break
        out.append((node, via))
    return out, lists


def u32(tree: Tree, node: Node, name: str) -> Optional[int]:
    """The first cell of a property, None if it has none."""
    c = tree.cells(node, name)
    if not c:
        return None
    if not isinstance(c[0], int):
        raise DtsError(f"{name} of {node.name} is not a number")
    return c[0]


def compress_lines(wheres: Sequence[Optional[str]]) -> str:
    """['f:1', 'f:2', 'g:7'] -> 'f:1-2 g:7'."""
    by_file: Dict[str, Set[int]] = {}
    for w in wheres:
        if w:
            f, _, ln = w.rpartition(":")
            by_file.setdefault(f, set()).add(int(ln) if ln.isdigit() else 0)
    parts = []
    for f, lines in by_file.items():
        ls = sorted(lines)
        parts.append(f"{f}:{ls[0]}" + (f"-{ls[-1]}" if ls[-1] != ls[0] else ""))
    return " ".join(parts)


def dt_cpu_states(tree: Tree, cpu: Node, drv: DtDriver, em: Optional[str],
                  state_max: int) -> Tuple[List[State], List[str], Optional[str]]:
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
    found = [p for p in shaped if p is not None]
    return states, notes, tree.where(max(found)) if found else None


def dt_board(tree: Tree, board: str, drivers: DtDrivers,
             state_max: int) -> Tuple[List[CpuTable], List[str]]:
    """Tables of one board: ([CpuTable], [why some CPUs get none])."""
    arch = board.split("/")[1]
    cpus = tree.root.children.get("cpus")
    if cpus is None:
        return [], []
    per_cpu: List[CpuTable] = []
    failed: Dict[str, List[str]] = {}
    aon_failed = set()
    machine = tree.strings(tree.root, "compatible") or []
    for cpu in list(cpus.children.values()):
        dtype = tree.strings(cpu, "device_type")
        if not (cpu.name.split("@")[0] == "cpu" or (dtype and dtype[0] == "cpu")):
            continue
        status = tree.strings(cpu, "status")
        if status and status[0].startswith("fail"):
            continue
        ems = tree.strings(cpu, "enable-method")
        em = ems[0] if ems else None
        drv = cpu_driver(drivers, arch, em, machine)
        if drv is None:
            if state_nodes(tree, cpu)[0]:
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
        per_cpu.append(CpuTable(cpu.name, compat[0].split(",")[-1], cap, drv.label, states,
                                notes, shaper))
    if not per_cpu and list(failed) == ["no idle states"]:
        return [], []  # a board without idle states
    rejects = [f"{cpu_list(names)}: {why}" for why, names in failed.items()]
    for label in sorted(aon_failed):
        dropped = [c.cpu for c in per_cpu if c.driver == label]
        if dropped:
            rejects.append(f"{cpu_list(dropped)}: {label} registers no CPU when one fails")
        per_cpu = [c for c in per_cpu if c.driver != label]
    return per_cpu, rejects


def cpu_list(names: Sequence[str]) -> str:
    """['cpu@0', 'cpu@1'] -> 'cpu@{0,1}'."""
    units = [n.split("@", 1)[1] if n.startswith("cpu@") else None for n in names]
    if all(u is not None for u in units):
        return "cpu@{" + ",".join(u or "" for u in units) + "}" if len(units) > 1 else names[0]
    return ",".join(names)
