# SPDX-License-Identifier: GPL-2.0
"""The test VM's images: the guest kernel, the emulated idle driver and the
busybox initramfs, each built only when its inputs change.

The kernel is tinyconfig plus tools/cpuidle-emu/vm.config (and
vm-debug.config for the debug kernel, and a CONFIG_HZ fragment for another
HZ), built from the private tree of tree.prepare() in a build folder of
its own per variant.  Every step leaves a stamp, a digest of its inputs,
beside its output; a step whose stamp matches is skipped, and the stamps
are read again under the build lock, because another run may have built
while this one waited.  What each stamp covers:

  kernel      the private tree's stamp (base tree and upstream edits), the
              config fragments, the overlay's files under drivers/ and
              include/ (the selftests and the documentation do not go into
              the kernel)
  module      the kernel's stamp, cpuidle-emu.c and its Makefile
  initramfs   busybox, vm-init and the file list
"""

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from teotool import deps, disk, paths, process, tree
from teotool.ui import Fatal, note

# The governors the VM kernel is built with (see vm.config).
GOVERNORS: Tuple[str, ...] = ("teo", "menu", "ladder")
HZ_CHOICES: Tuple[int, ...] = (100, 250, 300, 1000)
DEFAULT_HZ = 250
# Free space a kernel build needs in the cache slot.
BUILD_MIB = 3072

_PROFILE = re.compile(r'^\s*\{ "([^"]*)", (?:true|false), emu_', re.M)


def profile_names() -> List[str]:
    """The emulated platforms, as the module's source defines them."""
    return _PROFILE.findall(paths.EMU_SOURCES[0].read_text(encoding="utf-8"))


def max_cpus() -> int:
    """The VM kernel's CONFIG_NR_CPUS."""
    m = re.search(r"^CONFIG_NR_CPUS=([0-9]+)$",
                  paths.VM_CONFIG.read_text(encoding="utf-8"), re.M)
    if not m:
        raise Fatal(f"{paths.VM_CONFIG} sets no CONFIG_NR_CPUS")
    return int(m.group(1))


@dataclass(frozen=True)
class Variant:
    """A kind of VM kernel: each has its own build folders."""
    debug: bool = False
    hz: int = DEFAULT_HZ

    @property
    def name(self) -> str:
        """vm, vm-debug, vm-hz1000, vm-debug-hz1000 ..."""
        name = "vm-debug" if self.debug else "vm"
        return name if self.hz == DEFAULT_HZ else f"{name}-hz{self.hz}"


@dataclass(frozen=True)
class Images:
    """The folders and files of a variant in a cache slot."""
    slot: Path
    variant: Variant

    @property
    def src(self) -> Path:
        return self.slot / "src"

    @property
    def build(self) -> Path:
        return self.slot / f"build-{self.variant.name}"

    @property
    def emu_build(self) -> Path:
        return self.slot / ("build-emu" + self.variant.name[len("vm"):])

    @property
    def initrd_dir(self) -> Path:
        # One for every variant: it holds no kernel code.
        return self.slot / "vm-initramfs"

    @property
    def kernel(self) -> Path:
        return self.build / "arch" / "x86" / "boot" / "bzImage"

    @property
    def module(self) -> Path:
        return self.emu_build / "cpuidle-emu.ko"

    @property
    def initramfs(self) -> Path:
        return self.initrd_dir / "initramfs.cpio.gz"

    @property
    def hz_fragment(self) -> Path:
        return self.slot / f"hz{self.variant.hz}.config"

    def fragments(self) -> List[Path]:
        """The config fragments of the variant, in merge order."""
        found = [paths.VM_CONFIG]
        if self.variant.debug:
            found.append(paths.VM_DEBUG_CONFIG)
        if self.variant.hz != DEFAULT_HZ:
            found.append(self.hz_fragment)
        return found


# --- stamps ---------------------------------------------------------------

def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _stamp_of(path: Path) -> str:
    return _read(path).decode("utf-8", "replace").strip()


def _sha1sum_line(path: Path) -> bytes:
    """A line of sha1sum's output for path (its input format)."""
    return f"{_sha1(path.read_bytes())}  {path}\n".encode()


def hz_fragment_text(hz: int) -> str:
    return f"# CONFIG_HZ of scripts/teo vm --hz {hz}\nCONFIG_HZ_{hz}=y\nCONFIG_HZ={hz}\n"


def write_hz_fragment(images: Images) -> None:
    """The CONFIG_HZ fragment of a variant that needs one (written only
    when it differs, so that nothing looks changed)."""
    if images.variant.hz == DEFAULT_HZ:
        return
    text = hz_fragment_text(images.variant.hz)
    if _read(images.hz_fragment) != text.encode():
        images.slot.mkdir(parents=True, exist_ok=True)
        images.hz_fragment.write_text(text, encoding="utf-8")


def config_digest(images: Images) -> str:
    return _sha1(b"".join(f.read_bytes() for f in images.fragments()))


def kernel_stamp(images: Images) -> str:
    """The digest of everything the kernel is built from; the same text
    the VM script hashed when it was bash (sha1sum lines of the overlay's
    kernel files), so that the builds it made stay current."""
    parts = [_read(images.slot / "src.stamp"), f"{config_digest(images)}\n".encode()]
    for rel in paths.OVERLAY_PATHS:
        if not rel.startswith(("drivers/", "include/")):
            continue
        path = images.src / rel
        if path.is_dir():
            files = sorted((p for p in path.rglob("*") if p.is_file()),
                           key=lambda p: os.fsencode(p))
        elif path.exists():
            files = [path]
        else:
            files = []
        parts += [_sha1sum_line(f) for f in files]
    return _sha1(b"".join(parts))


def module_stamp(images: Images) -> str:
    return _sha1(_read(images.build / ".teo-stamp")
                 + b"".join(f.read_bytes() for f in paths.EMU_SOURCES))


def busybox() -> Path:
    found = deps.which("busybox")
    if not found:
        deps.need_cmd("busybox")
    assert found
    return Path(found)


def initramfs_list(init: str, busybox_path: Path) -> str:
    """gen_init_cpio's list of the initramfs, /init being the file init."""
    return (f"dir /bin 755 0 0\ndir /dev 755 0 0\nnod /dev/console 600 0 0 c 5 1\n"
            f"dir /proc 755 0 0\ndir /sys 755 0 0\ndir /tmp 1777 0 0\n"
            f"dir /host 755 0 0\nfile /bin/busybox {busybox_path} 755 0 0\n"
            f"slink /bin/sh busybox 777 0 0\nfile /init {init} 755 0 0\n")


def initramfs_stamp(busybox_path: Path) -> str:
    return _sha1(_sha1sum_line(busybox_path) + paths.VM_INIT.read_bytes()
                 + initramfs_list("/dev/null", busybox_path).encode())


def kernel_current(images: Images) -> bool:
    return _stamp_of(images.build / ".teo-stamp") == kernel_stamp(images) \
        and images.kernel.is_file()


def module_current(images: Images) -> bool:
    return _stamp_of(images.emu_build / ".teo-stamp") == module_stamp(images) \
        and images.module.is_file()


def initramfs_current(images: Images, busybox_path: Path) -> bool:
    return _stamp_of(images.initrd_dir / ".teo-stamp") == initramfs_stamp(busybox_path) \
        and images.initramfs.is_file()


# --- the kernel -----------------------------------------------------------

def config_misses(config: str, fragments: Iterable[Tuple[str, str]]) -> List[str]:
    """The symbols of the fragments (name, text) that the final .config
    text does not hold as the fragments ask."""
    have = set(config.splitlines())
    set_syms = {line.split("=", 1)[0] for line in have if line.startswith("CONFIG_")}
    bad = []
    for _, text in fragments:
        for line in text.splitlines():
            m = re.match(r"^# (CONFIG_\S+) is not set$", line)
            if m:
                if m.group(1) in set_syms:
                    bad.append(m.group(1))
            elif line.startswith("CONFIG_") and line not in have:
                bad.append(line.split("=", 1)[0])
    return bad


def _make(images: Images) -> List[str]:
    argv = ["make", "-C", str(images.src), "ARCH=x86_64", f"-j{os.cpu_count() or 1}"]
    if deps.which("ccache"):
        argv.append("CC=ccache gcc")
    return argv


def _quiet() -> List[str]:
    """On a terminal make's own lines show the progress."""
    return [] if sys.stderr.isatty() else ["-s"]


def _run(argv: List[str], failure: str) -> None:
    if process.run(argv, stdout=sys.stderr, env=process.debian_env()) != 0:
        raise Fatal(failure)


def _frag_names(images: Images) -> str:
    return " ".join(f.name for f in images.fragments())


def configure(images: Images) -> None:
    """Generate the .config aside and copy it only when it differs, so
    that an unchanged config never triggers a rebuild."""
    build = images.build
    cfg = build.parent / f"{build.name}-config"
    note(f"configuring the {images.variant.name} kernel (tinyconfig + {_frag_names(images)})")
    cfg.mkdir(parents=True, exist_ok=True)
    make = _make(images)
    _run([*make, "-s", f"O={cfg}", "tinyconfig"], "make tinyconfig failed")
    merge = [str(images.src / "scripts" / "kconfig" / "merge_config.sh"), "-m", "-O",
             str(cfg), str(cfg / ".config"), *[str(f) for f in images.fragments()]]
    with open(os.devnull, "w", encoding="utf-8") as null:
        if process.run(merge, stdout=null, env=process.debian_env()) != 0:
            raise Fatal("merge_config.sh failed")
    _run([*make, "-s", f"O={cfg}", "olddefconfig"], "make olddefconfig failed")
    fragments = [(str(f), f.read_text(encoding="utf-8")) for f in images.fragments()]
    bad = config_misses((cfg / ".config").read_text(encoding="utf-8"), fragments)
    if bad:
        raise Fatal("these config options did not survive olddefconfig (unmet"
                    f" dependencies?): {' '.join(bad)}")
    if _read(cfg / ".config") != _read(build / ".config"):
        shutil.copyfile(cfg / ".config", build / ".config")
    (build / ".teo-config").write_text(config_digest(images) + "\n", encoding="utf-8")


def build_time(images: Images) -> str:
    """What a kernel build of this variant costs on a 2-core machine."""
    if (images.build / "vmlinux").is_file():
        return "under a minute when little changed"
    if images.variant.debug:
        return "about 20-25 min with a cold ccache, 2-4 min warm"
    return "about 12-16 min with a cold ccache, 1-3 min warm"


def build_kernel(images: Images) -> None:
    images.build.mkdir(parents=True, exist_ok=True)
    if _stamp_of(images.build / ".teo-config") != config_digest(images) or \
            not (images.build / ".config").is_file():
        configure(images)
    what = f"building the {images.variant.name} kernel in {images.build}"
    expect = build_time(images)
    note(f"{what} (expected: {expect})")
    t0 = time.monotonic()
    with process.heartbeat(what, expect):
        status = process.run([*_make(images), *_quiet(), f"O={images.build}", "bzImage",
                              "modules"], stdout=sys.stderr, env=process.debian_env())
    if status != 0:
        raise Fatal(f"the {images.variant.name} kernel build failed (see the compiler"
                    " messages above)")
    note(f"done in {time.monotonic() - t0:.0f} s: {what}")


# --- the module -----------------------------------------------------------

_LEAVES = re.compile(r"call to ([A-Za-z0-9_.]+)\(\) leaves \.noinstr\.text section")


def symbol_table(nm_output: str) -> Dict[str, int]:
    """Symbol addresses of nm's output."""
    found = {}
    for line in nm_output.splitlines():
        f = line.split()
        if len(f) >= 3:
            try:
                found[f[2]] = int(f[0], 16)
            except ValueError:
                continue
    return found


def noinstr_complaints(objtool_output: str, symbols: Dict[str, int]) -> List[str]:
    """objtool's warnings on the module that stand.  In a single object a
    call to a kernel function cannot be seen to stay in noinstr code
    (ct_cpuidle_enter() is), so a warning about a call to a function that
    vmlinux places between __noinstr_text_start/_end or
    __cpuidle_text_start/_end is dropped; every other line stays."""
    sections = [(symbols.get(f"__{s}_text_start"), symbols.get(f"__{s}_text_end"))
                for s in ("noinstr", "cpuidle")]
    left = []
    for line in objtool_output.splitlines():
        if not line.strip():
            continue
        m = _LEAVES.search(line)
        addr = symbols.get(m.group(1)) if m else None
        if addr is not None and any(lo is not None and hi is not None and lo <= addr < hi
                                    for lo, hi in sections):
            continue
        left.append(line)
    return left


def check_module_noinstr(images: Images) -> None:
    """objtool's noinstr validation runs on vmlinux.o only; run it on the
    module's object too, so that a .cpuidle.text function calling
    instrumentable code outside instrumentation_begin()/end() fails the
    build."""
    if "CONFIG_NOINSTR_VALIDATION=y" not in \
            _read(images.build / ".config").decode().splitlines():
        return
    objtool = images.build / "tools" / "objtool" / "objtool"
    if not os.access(objtool, os.X_OK):
        raise Fatal(f"no objtool in {objtool.parent} for the noinstr check")
    run = process.output([objtool, "--hacks=jump_label", "--hacks=noinstr", "--noinstr",
                          "--link", "--module", images.emu_build / "cpuidle-emu.o"])
    nm = process.output(["nm", images.build / "vmlinux"])
    if nm.returncode != 0:
        raise Fatal(f"nm cannot read {images.build / 'vmlinux'}: {nm.stderr.strip()}")
    left = noinstr_complaints(run.stdout + run.stderr, symbol_table(nm.stdout))
    if left:
        sys.stderr.write("\n".join(left) + "\n")
        raise Fatal("objtool's noinstr validation of cpuidle-emu.o failed (lines above)")
    note("objtool --noinstr: cpuidle-emu.o is clean (calls into vmlinux checked"
         " against its noinstr sections)")


def build_module(images: Images) -> None:
    """W=1 and warnings as errors: the module must stay warning-free."""
    images.emu_build.mkdir(parents=True, exist_ok=True)
    for source in paths.EMU_SOURCES:
        copy = images.emu_build / source.name
        if _read(copy) != source.read_bytes():
            shutil.copyfile(source, copy)
    argv = ["make", "-C", str(images.build), f"M={images.emu_build}", "ARCH=x86_64", "W=1",
            "KCFLAGS=-Werror"]
    if deps.which("ccache"):
        argv.append("CC=ccache gcc")
    note(f"building cpuidle-emu.ko in {images.emu_build}")
    _run([*argv, "-s", "modules"], "cpuidle-emu module build failed")
    check_module_noinstr(images)


# --- the initramfs --------------------------------------------------------

def pack_initramfs(images: Images, busybox_path: Path) -> None:
    images.initrd_dir.mkdir(parents=True, exist_ok=True)
    listing = images.initrd_dir / "list"
    listing.write_text(initramfs_list(str(paths.VM_INIT), busybox_path), encoding="utf-8")
    # A short command: its output is the archive.
    cpio = subprocess.run([str(images.build / "usr" / "gen_init_cpio"), str(listing)],
                          capture_output=True, check=False)
    if cpio.returncode != 0 or not cpio.stdout:
        raise Fatal("could not pack the initramfs: "
                    + cpio.stderr.decode(errors="replace").strip())
    tmp = images.initramfs.with_name(images.initramfs.name + ".tmp")
    tmp.write_bytes(gzip.compress(cpio.stdout, compresslevel=9, mtime=0))
    os.replace(tmp, images.initramfs)


# --- all of it ------------------------------------------------------------

def need_tools() -> Path:
    """The commands a build needs; busybox must be static (the initramfs
    has no libraries).  Returns busybox's path."""
    deps.need_cmd("qemu-system-x86_64", "busybox", "readelf", "gcc", "make", "flex",
                  "bison", "bc", "gzip")
    path = busybox()
    # readelf, not ldd: ldd runs every dynamic loader it finds.
    if "program interpreter" in process.output(["readelf", "-lW", path]).stdout:
        raise Fatal("busybox is not statically linked; install busybox-static")
    return path


def build(variant: Variant, as_is: bool = False,
          busybox_path: Optional[Path] = None) -> Images:
    """The images of a variant, built where out of date."""
    busybox_path = busybox_path or need_tools()
    images = Images(tree.prepare(as_is=as_is), variant)
    write_hz_fragment(images)
    if not kernel_current(images) or not module_current(images):
        disk.need_space(images.slot, BUILD_MIB)
        with process.BuildLock():
            if not kernel_current(images):
                kstamp = kernel_stamp(images)
                (images.build / ".teo-stamp").unlink(missing_ok=True)
                build_kernel(images)
                (images.build / ".teo-stamp").write_text(kstamp + "\n", encoding="utf-8")
            if not module_current(images):
                (images.emu_build / ".teo-stamp").unlink(missing_ok=True)
                build_module(images)
                (images.emu_build / ".teo-stamp").write_text(module_stamp(images) + "\n",
                                                             encoding="utf-8")
    if not initramfs_current(images, busybox_path):
        note("packing the initramfs")
        pack_initramfs(images, busybox_path)
        (images.initrd_dir / ".teo-stamp").write_text(
            initramfs_stamp(busybox_path) + "\n", encoding="utf-8")
    return images
