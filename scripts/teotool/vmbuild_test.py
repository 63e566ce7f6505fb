# SPDX-License-Identifier: GPL-2.0
"""The VM images' stamps change with their inputs and only with them, and
read as they did when the VM script was bash (its builds stay current);
the config check and the module's noinstr filter."""

import hashlib
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from teotool import paths, vmbuild
from teotool.testing import ScratchTest
from teotool.ui import Fatal


class FakeSlot(ScratchTest):
    """A cache slot with a private tree holding the overlay's kernel files."""

    def setUp(self) -> None:
        super().setUp()
        self.slot = self.tmp / "slot"
        self.src = self.slot / "src"
        (self.slot / "src.stamp").parent.mkdir(parents=True)
        (self.slot / "src.stamp").write_text("base stamp\n")
        for rel in paths.OVERLAY_PATHS:
            path = self.src / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith("cpuidle-teo"):
                path.mkdir()
                (path / "gov_qos.c").write_text("int main(void) { return 0; }\n")
            else:
                path.write_text(f"contents of {rel}\n")
        self.images = vmbuild.Images(self.slot, vmbuild.Variant())


class KernelStampTest(FakeSlot):
    def test_same_text_as_the_bash_version(self) -> None:
        """The digest of what the bash VM script hashed with cat, sha1sum
        and find."""
        kernel_paths = " ".join(p for p in paths.OVERLAY_PATHS
                                if p.startswith(("drivers/", "include/")))
        script = ('cd "$1" && { cat src.stamp; cat "$2" | sha1sum | cut -c1-40;'
                  ' for p in $3; do [ -e "src/$p" ] || continue;'
                  ' find "$PWD/src/$p" -type f -print0 | sort -z | xargs -0 sha1sum; done;'
                  ' } | sha1sum | cut -c1-40')
        want = subprocess.run(["bash", "-c", script, "sh", str(self.slot),
                               str(paths.VM_CONFIG), kernel_paths],
                              capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(vmbuild.kernel_stamp(self.images), want)

    def test_changes_with_governor_source_only(self) -> None:
        before = vmbuild.kernel_stamp(self.images)
        (self.src / paths.TEO_SELFTESTS / "gov_qos.c").write_text("changed\n")
        (self.src / "Documentation/admin-guide/pm/teo.rst").write_text("changed\n")
        self.assertEqual(vmbuild.kernel_stamp(self.images), before,
                         "the selftests and the documentation are no kernel input")
        (self.src / paths.GOVERNORS / "teo.c").write_text("changed\n")
        self.assertNotEqual(vmbuild.kernel_stamp(self.images), before)

    def test_changes_with_the_tree_and_the_config(self) -> None:
        before = vmbuild.kernel_stamp(self.images)
        (self.slot / "src.stamp").write_text("another base\n")
        self.assertNotEqual(vmbuild.kernel_stamp(self.images), before)
        hz = vmbuild.Images(self.slot, vmbuild.Variant(hz=1000))
        vmbuild.write_hz_fragment(hz)
        self.assertIn("CONFIG_HZ=1000", hz.hz_fragment.read_text())
        self.assertNotEqual(vmbuild.kernel_stamp(hz), vmbuild.kernel_stamp(self.images))
        debug = vmbuild.Images(self.slot, vmbuild.Variant(debug=True))
        self.assertNotEqual(vmbuild.config_digest(debug), vmbuild.config_digest(self.images))

    def test_current_needs_stamp_and_image(self) -> None:
        self.assertFalse(vmbuild.kernel_current(self.images))
        self.images.build.mkdir()
        (self.images.build / ".teo-stamp").write_text(vmbuild.kernel_stamp(self.images) + "\n")
        self.assertFalse(vmbuild.kernel_current(self.images), "no bzImage")
        self.images.kernel.parent.mkdir(parents=True)
        self.images.kernel.write_bytes(b"kernel")
        self.assertTrue(vmbuild.kernel_current(self.images))
        (self.src / paths.GOVERNORS / "teo.h").write_text("changed\n")
        self.assertFalse(vmbuild.kernel_current(self.images))


class ModuleAndInitramfsStampTest(FakeSlot):
    def test_module_follows_the_kernel(self) -> None:
        self.images.build.mkdir()
        (self.images.build / ".teo-stamp").write_text("kernel one\n")
        one = vmbuild.module_stamp(self.images)
        self.assertEqual(one, hashlib.sha1(b"kernel one\n" + b"".join(
            f.read_bytes() for f in paths.EMU_SOURCES)).hexdigest())
        (self.images.build / ".teo-stamp").write_text("kernel two\n")
        self.assertNotEqual(vmbuild.module_stamp(self.images), one)

    def test_initramfs_follows_busybox(self) -> None:
        box = self.tmp / "busybox"
        box.write_bytes(b"one")
        one = vmbuild.initramfs_stamp(box)
        self.assertEqual(one, vmbuild.initramfs_stamp(box))
        box.write_bytes(b"two")
        self.assertNotEqual(vmbuild.initramfs_stamp(box), one)

    def test_initramfs_list(self) -> None:
        text = vmbuild.initramfs_list("/path/vm-init", Path("/bin/busybox"))
        self.assertIn("file /init /path/vm-init 755 0 0\n", text)
        self.assertIn("file /bin/busybox /bin/busybox 755 0 0\n", text)
        self.assertIn("nod /dev/console 600 0 0 c 5 1\n", text)


class VariantTest(unittest.TestCase):
    def test_folders(self) -> None:
        slot = Path("/slot")
        for variant, build, emu in (
                (vmbuild.Variant(), "build-vm", "build-emu"),
                (vmbuild.Variant(debug=True), "build-vm-debug", "build-emu-debug"),
                (vmbuild.Variant(hz=1000), "build-vm-hz1000", "build-emu-hz1000"),
                (vmbuild.Variant(True, 100), "build-vm-debug-hz100", "build-emu-debug-hz100")):
            images = vmbuild.Images(slot, variant)
            self.assertEqual(images.build, slot / build)
            self.assertEqual(images.emu_build, slot / emu)
            self.assertEqual(images.initrd_dir, slot / "vm-initramfs")

    def test_fragments(self) -> None:
        images = vmbuild.Images(Path("/slot"), vmbuild.Variant(True, 300))
        self.assertEqual(images.fragments(), [paths.VM_CONFIG, paths.VM_DEBUG_CONFIG,
                                              Path("/slot/hz300.config")])

    def test_profiles_and_cpus(self) -> None:
        self.assertIn("i5-10600K", vmbuild.profile_names())
        self.assertIn("mt8196", vmbuild.profile_names())
        self.assertGreaterEqual(vmbuild.max_cpus(), 3, "the fault test boots 3 vCPUs")


class ConfigCheckTest(unittest.TestCase):
    def test_misses(self) -> None:
        config = "CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_E=y\n"
        fragment = ("# a comment\nCONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n"
                    "CONFIG_D=y\n# CONFIG_E is not set\n")
        self.assertEqual(vmbuild.config_misses(config, [("f", fragment)]),
                         ["CONFIG_B", "CONFIG_D", "CONFIG_E"])
        self.assertEqual(vmbuild.config_misses(config, [("f", "CONFIG_A=y\n")]), [])


class NoinstrTest(unittest.TestCase):
    NM = ("ffffffff81000000 T __noinstr_text_start\n"
          "ffffffff81000100 T ct_cpuidle_enter\n"
          "ffffffff81001000 T __noinstr_text_end\n"
          "ffffffff82000000 T __cpuidle_text_start\n"
          "ffffffff82000010 T default_idle\n"
          "ffffffff82000100 T __cpuidle_text_end\n"
          "ffffffff83000000 T printk\n"
          "                 U undefined_symbol\n")

    def test_calls_into_noinstr_sections_are_dropped(self) -> None:
        symbols = vmbuild.symbol_table(self.NM)
        self.assertEqual(symbols["printk"], 0xffffffff83000000)
        out = ("cpuidle-emu.o: warning: objtool: emu_enter+0x1: call to ct_cpuidle_enter()"
               " leaves .noinstr.text section\n"
               "cpuidle-emu.o: warning: objtool: emu_enter+0x2: call to default_idle()"
               " leaves .noinstr.text section\n"
               "\n"
               "cpuidle-emu.o: warning: objtool: emu_enter+0x3: call to printk()"
               " leaves .noinstr.text section\n"
               "cpuidle-emu.o: warning: objtool: emu_enter+0x4: call to nosuch()"
               " leaves .noinstr.text section\n"
               "cpuidle-emu.o: warning: objtool: emu_exit(): unreachable instruction\n")
        left = vmbuild.noinstr_complaints(out, symbols)
        self.assertEqual(len(left), 3, left)
        self.assertIn("printk()", left[0])
        self.assertIn("nosuch()", left[1])
        self.assertIn("unreachable", left[2])


class BuildArgsTest(ScratchTest):
    def test_bad_tree_builds_nothing(self) -> None:
        """A KERNEL_SRC that is a file stops before any build or lock."""
        self.assertBadInput(1, "KERNEL_SRC=/etc/hostname is a file",
                            [str(paths.ENTRY), "vm", "--debug", "--build-only"],
                            {"KERNEL_SRC": "/etc/hostname"})

    def test_busybox_must_be_static(self) -> None:
        fake = mock.Mock(return_value=subprocess.CompletedProcess(
            [], 0, "  [Requesting program interpreter: /lib64/ld-linux-x86-64.so.2]\n", ""))
        with mock.patch("teotool.process.output", fake), \
                mock.patch("teotool.deps.need_cmd"), \
                mock.patch("teotool.deps.which", return_value="/bin/busybox"), \
                self.assertRaisesRegex(Fatal, "not statically linked"):
            vmbuild.need_tools()


if __name__ == "__main__":
    unittest.main()
