# SPDX-License-Identifier: GPL-2.0
"""The states-list checker agrees with cpuidle-emu's rules, and every
emulated profile has the same table in the replay lab."""

import re
import unittest
from typing import Dict, List

from teotool import paths, states
from teotool.ui import UsageError

GOOD = ["poll", "1/1", "poll,0/0,1/1,2/4,170/650,210/1000", "20000/4294967295,1/4294967295",
        "10200/9826", "poll,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1"]
BAD = ["poll,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1", "1/4294967296", "100001/200000",
       "1/1,", ",1/1", "poll,poll", "", "1/360,120/100"]


class StatesTest(unittest.TestCase):
    def test_good(self) -> None:
        for text in GOOD:
            with self.subTest(states=text):
                states.parse(text)

    def test_bad(self) -> None:
        for text in BAD:
            with self.subTest(states=text), self.assertRaises(UsageError):
                states.parse(text)

    def test_parse(self) -> None:
        self.assertEqual(states.parse("poll,1/2,3/4"), (True, [(1, 2), (3, 4)]))
        self.assertEqual(states.parse("poll"), (True, []))

    def test_message_names_option_and_state(self) -> None:
        with self.assertRaisesRegex(UsageError, "^--ceiling-states '1/360,120/100': residency 100"
                                    " us of state 1 is below the previous state's 360 us"):
            states.parse("1/360,120/100", "--ceiling-states")


def emu_profiles() -> Dict[str, List[str]]:
    """Each cpuidle-emu profile's "LAT/RES" list, "0/0" first for a
    profile that adds intel_idle's POLL state."""
    source = (paths.CPUIDLE_EMU / "cpuidle-emu.c").read_text()
    tables = {}
    for m in re.finditer(r"^static const struct emu_state emu_([a-z0-9_]+)\[\] = \{(.*?)\};",
                         source, re.M | re.S):
        tables[m.group(1)] = [f"{a}/{b}" for a, b in
                              re.findall(r'\{ "[^"]*", ([0-9]+)U?, ([0-9]+)U? \}', m.group(2))]
    profiles = {}
    for name, poll, table in re.findall(r'^\t\{ "([^"]+)", (true|false), emu_([a-z0-9_]+) \},',
                                        source, re.M):
        profiles[name.lower()] = (["0/0"] if poll == "true" else []) + tables[table]
    return profiles


class ProfilesTest(unittest.TestCase):
    def test_every_profile_has_the_labs_table(self) -> None:
        """The replay of a recorded VM run uses it; where the module adds
        the POLL state of intel_idle and the lab's table has none
        (alder-lake, skylake), scripts/teo run --record adds it to a copy."""
        profiles = emu_profiles()
        self.assertGreaterEqual(len(profiles), 10)  # the parser found them all
        for name, want in profiles.items():
            with self.subTest(profile=name):
                plat = (paths.LAB_PLATFORMS / f"{name}.plat").read_text()
                got = [f"{f[2]}/{f[3]}" for f in (line.split() for line in plat.splitlines())
                       if f and f[0] == "state"]
                self.assertIn(want, (got, ["0/0"] + got))


if __name__ == "__main__":
    unittest.main()
