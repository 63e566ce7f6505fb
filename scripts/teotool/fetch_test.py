# SPDX-License-Identifier: GPL-2.0
"""The mirror found in apt sources and the rules of the fetch's arguments
(no network: these are answered before any)."""

import os
import unittest
from unittest import mock

from teotool import fetch
from teotool.testing import ScratchTest
from teotool.ui import UsageError


class MirrorTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        (self.tmp / "sources.list.d").mkdir()
        patcher = mock.patch.dict(os.environ, {"TEO_DEBIAN_MIRROR": ""})
        patcher.start()
        self.addCleanup(patcher.stop)

    def mirror(self) -> "str | None":
        with mock.patch.object(fetch, "_codename", return_value="bookworm"):
            return fetch.debian_mirror(self.tmp)

    def test_one_line_sources(self) -> None:
        (self.tmp / "sources.list").write_text(
            "deb [arch=amd64] http://one.example/debian/ bookworm main\n"
            "deb http://sec.example/debian-security bookworm-security main\n")
        self.assertEqual(self.mirror(), "http://one.example/debian")

    def test_deb822_sources(self) -> None:
        (self.tmp / "sources.list.d" / "debian.sources").write_text(
            "Types: deb\nURIs: http://sec.example/debian-security\n"
            "Suites: bookworm-security\n\nTypes: deb deb-src\n"
            "URIs: http://two.example/debian/\nSuites: bookworm bookworm-updates\n"
            "Components: main\n")
        self.assertEqual(self.mirror(), "http://two.example/debian")

    def test_disabled_stanza_and_comments(self) -> None:
        (self.tmp / "sources.list").write_text("# deb http://old.example/debian bookworm main\n")
        (self.tmp / "sources.list.d" / "x.sources").write_text(
            "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n\n"
            "Types: deb\nURIs: http://sid.example/debian\nSuites: sid\n")
        self.assertEqual(self.mirror(), "http://sid.example/debian")

    def test_own_release_before_another(self) -> None:
        (self.tmp / "sources.list").write_text("deb http://a.example/debian sid main\n"
                                               "deb http://b.example/debian bookworm main\n")
        self.assertEqual(self.mirror(), "http://b.example/debian")

    def test_none(self) -> None:
        self.assertIsNone(self.mirror())

    def test_override(self) -> None:
        with mock.patch.dict(os.environ, {"TEO_DEBIAN_MIRROR": "http://c.example/d/"}):
            self.assertEqual(fetch.debian_mirror(self.tmp), "http://c.example/d")


class ArgumentsTest(unittest.TestCase):
    def test_rules(self) -> None:
        for args, message in (((None, False, True, False, False), "go with --newest"),
                              (("linux-source-7.3", True, False, False, False), "not both"),
                              ((None, False, False, False, False), "no package given"),
                              (("linux-source-7", False, False, False, False), "linux-source-X.Y"),
                              (("linux-source-7.3/../x", False, False, False, False), "X.Y")):
            with self.assertRaisesRegex(UsageError, message):
                fetch.main(*args)


if __name__ == "__main__":
    unittest.main()
