# SPDX-License-Identifier: GPL-2.0
"""Every path and name the tooling uses, in one place.

The repository is two things side by side: the upstream overlay (files at
their in-tree paths, copied over a kernel tree) and the tooling around it.
OVERLAY_PATHS says what belongs to the overlay; everything else
here is tooling.  Moving either is a change to this module alone.
"""

import hashlib
import os
from pathlib import Path
from typing import Optional, Tuple

REPO = Path(__file__).resolve().parent.parent.parent
SCRIPTS = REPO / "scripts"
PACKAGE = SCRIPTS / "teotool"
ENTRY = SCRIPTS / "teo"
DEPS_LIST = SCRIPTS / "deps.list"
# The patch queues of the series, one per base (queue.py).
SERIES = REPO / "series"
CPUIDLE_EMU = REPO / "tools" / "cpuidle-emu"
# The test VM: its kernel config fragments, the emulated idle driver's
# source, the initramfs' /init and the fault test's guest side.
VM_CONFIG = CPUIDLE_EMU / "vm.config"
VM_DEBUG_CONFIG = CPUIDLE_EMU / "vm-debug.config"
EMU_SOURCES = (CPUIDLE_EMU / "cpuidle-emu.c", CPUIDLE_EMU / "Makefile")
VM_INIT = CPUIDLE_EMU / "vm-init"
FAULTTEST_GUEST = CPUIDLE_EMU / "faulttest-guest.sh"
IDLE_REPLAY = REPO / "tools" / "idle-replay"
LAB_PLATFORMS = IDLE_REPLAY / "platforms"
# The replay lab's gate files, its test data and the mutants of our teo.c.
LAB_GATES = IDLE_REPLAY / "gates.conf"
LAB_KNOWN_MISSES = IDLE_REPLAY / "known-misses"
LAB_INTENDED = IDLE_REPLAY / "intended-differences"
LAB_EXTRACT = IDLE_REPLAY / "extract-tables.py"
LAB_TESTS = IDLE_REPLAY / "tests"
TEO_MUTANTS = REPO / "tools" / "teo-mutants"
# The benchmark's workload programs (C), built into bench_programs().
TEO_BENCH = REPO / "tools" / "teo-bench"

# The in-tree paths this repository owns; each is copied over the base tree.
OVERLAY_PATHS: Tuple[str, ...] = (
    "drivers/cpuidle/governors/teo.c",
    "drivers/cpuidle/governors/teo.h",
    "drivers/cpuidle/governors/teo_trace.h",
    "drivers/cpuidle/governors/.kunitconfig",
    "drivers/cpuidle/governors/tests/teo_kunit.c",
    "tools/testing/selftests/cpuidle-teo",
    "Documentation/admin-guide/pm/teo.rst",
)
# In-tree paths, relative to a kernel tree.
CPUIDLE = "drivers/cpuidle"
GOVERNORS = CPUIDLE + "/governors"
SELFTESTS = "tools/testing/selftests"
TEO_SELFTESTS = SELFTESTS + "/cpuidle-teo"
KUNITCONFIG = GOVERNORS + "/.kunitconfig"
KUNIT_PY = "tools/testing/kunit/kunit.py"
KUNIT_SUITE = GOVERNORS + "/tests/teo_kunit.c"
# Our governor: the files a mutant patches and the lab compiles together.
OUR_GOVERNOR: Tuple[str, ...] = tuple(f"{GOVERNORS}/{name}"
                                      for name in ("teo.c", "teo.h", "teo_trace.h"))
# What the replay lab reads of a kernel tree: its version and baselines ...
LAB_TREE_FILES: Tuple[str, ...] = ("Makefile", GOVERNORS + "/teo.c", GOVERNORS + "/menu.c",
                                   GOVERNORS + "/gov.h")
# ... and the parts of Debian's base tarball it unpacks without the build
# lock when no full base tree is there: governors, idle drivers, the
# architectures (device trees, idle tables and their headers) and the few
# core files the table extractor reads.
LAB_BASE_MEMBERS: Tuple[str, ...] = (
    "Makefile", "drivers/cpuidle/*", "drivers/idle/*", "drivers/of/cpu.c",
    "include/linux/cpuidle.h", "include/uapi/linux/input-event-codes.h",
    "arch/*", "include/dt-bindings/*", "scripts/dtc/include-prefixes/*",
)
# Folders of the repository whose C files are kernel-side (checkpatch,
# kernel-doc): the overlay's and the emulated driver's.
KERNEL_C_DIRS: Tuple[str, ...] = (
    "drivers", "include", "tools/testing/selftests/cpuidle-teo",
    "tools/cpuidle-emu",
)
# Shell scripts: every *.sh below these folders, and .ci/*.
SHELL_DIRS: Tuple[str, ...] = ("scripts", ".ci", "tools")

# Default base tree: Debian's 6.12 LTS source package.
DEBIAN_PKG = "linux-source-6.12"
DEBIAN_TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
# Oldest base the overlay is written for.
MIN_BASE: Tuple[int, int] = (6, 12)

# Debian's folders only: nothing installed by hand (pyenv shims,
# /usr/local, ~/.cargo) may stand in for a package of deps.list, not even
# for a build's probes (Kconfig looks for rustc).
DEBIAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
PYTHON = "/usr/bin/python3"

DEFAULT_LOCK = "/tmp/teo-kernel-build.lock"


def cache() -> Path:
    """Everything built or downloaded: TEO_CACHE, default <repo>/.cache
    (made absolute: children run in other folders)."""
    return Path(os.path.abspath(os.environ.get("TEO_CACHE") or REPO / ".cache"))


def lock() -> Path:
    """The machine-wide build lock (TEO_LOCK for tests)."""
    return Path(os.path.abspath(os.environ.get("TEO_LOCK") or DEFAULT_LOCK))


def kernel_src() -> Optional[str]:
    """KERNEL_SRC when set and not empty: another base tree."""
    return os.environ.get("KERNEL_SRC") or None


def debian_base() -> Path:
    """Where Debian's default base tree is unpacked once."""
    return cache() / "base" / DEBIAN_PKG


def trees() -> Path:
    """The private copies of base trees, one slot per base."""
    return cache() / "trees"


def replay_cache() -> Path:
    """The replay lab's builds, corpus, variants and check logs."""
    return cache() / "replay"


def repo_key() -> str:
    """A short name of this repository (work tree) in a shared cache."""
    return hashlib.sha1(str(REPO).encode()).hexdigest()[:8]


def replay_check(name: str = "check") -> Path:
    """The output folder of the lab's check (or its leak check): one per
    repository, so that checks of two work trees sharing a cache do not
    remove each other's logs."""
    return replay_cache() / f"{name}-{repo_key()}"


def mutants_copy() -> Path:
    """The copy of this repository the KUnit mutation check patches."""
    return cache() / "mutants" / repo_key()


def check_dir() -> Path:
    """The exec logs of "check" for the dependency audit."""
    return cache() / "check" / "exec"


def kunit_qemu() -> Path:
    """The QEMU wrapper for kunit.py (kunit.qemu_dir)."""
    return cache() / "kunit-qemu"


def kvm_probe() -> Path:
    """The test VM's cached verdicts on booting under KVM (vm.py)."""
    return cache() / "kvm-probe"


def bench_results() -> Path:
    """Results of "scripts/teo bench", one folder per run."""
    return cache() / "bench"


def vm_bench_results() -> Path:
    """Results of "scripts/teo run", one folder per run, latest/ the newest."""
    return cache() / "vm-bench"


def bench_programs() -> Path:
    """The benchmark's workload programs, one folder per source version."""
    return cache() / "teo-bench"
