# SPDX-License-Identifier: GPL-2.0
"""Tables with the same numbers are one table: dedup by contents, and a
name for each distinct table that fits the lab's platform name."""

import hashlib
import re
from typing import Dict, List, Sequence

from tabletool.plat import Named, Table, TableKey

PLAT_NAME_MAX = 31  # struct platform's name[32] in the lab
KIND_ORDER = {"intel": 0, "drv": 1, "dt": 2}


def fit_name(name: str) -> str:
    """name with only the characters a .plat name takes, cut to the lab's
    length with a short hash that keeps cut names apart."""
    name = re.sub(r"[^A-Za-z0-9._+-]", "-", name)
    if len(name) <= PLAT_NAME_MAX:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:4]
    return name[:PLAT_NAME_MAX - 5] + "-" + digest


def group_tables(tables: Sequence[Table]) -> List[Named]:
    """Dedupe by contents.  Each distinct table is named after its main
    source: intel_idle before drivers before device trees, then the name
    most of its sources share (the SoC with the most boards), then order."""
    groups: Dict[TableKey, List[Table]] = {}
    for t in tables:
        groups.setdefault(t.key(), []).append(t)
    for g in groups.values():
        share: Dict[str, int] = {}
        for t in g:
            share[t.pref_name] = share.get(t.pref_name, 0) + 1
        g.sort(key=lambda t: (KIND_ORDER[t.kind], -share[t.pref_name]) + tuple(t.sort_key))
    by_name: Dict[str, List[TableKey]] = {}
    for key, g in groups.items():
        by_name.setdefault(fit_name(g[0].pref_name), []).append(key)
    named: Dict[TableKey, str] = {}
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
