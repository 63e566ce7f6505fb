# SPDX-License-Identifier: GPL-2.0
"""The facts of the tree: what stops the extraction when a tree does not
state them, and what is read when it does."""

import unittest

from tabletool import kernel
from tabletool.errors import ExtractError
from tabletool.testing import FAKE_TREE, ScratchTest

POLL_STATE = """\
void cpuidle_poll_state_init(struct cpuidle_driver *drv)
{
	struct cpuidle_state *state = &drv->states[0];

	snprintf(state->name, CPUIDLE_NAME_LEN, "POLL");
	state->exit_latency = 0;
	state->target_residency = POLL_RES;
	state->flags = CPUIDLE_FLAG_POLLING;
}
"""


class KernelTest(ScratchTest):
    def test_tree(self) -> None:
        kernel.check_tree(str(FAKE_TREE))
        with self.assertRaisesRegex(ExtractError, "is not a kernel tree"):
            kernel.check_tree(str(self.tmp))

    def test_version(self) -> None:
        self.assertEqual(kernel.kernel_version(str(FAKE_TREE)), "9.9.0-fake")
        self.assertEqual(kernel.kernel_version(str(self.tmp)), "unknown")
        self.write("Makefile", "VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL =\nEXTRAVERSION = -rc7\n")
        self.assertEqual(kernel.kernel_version(str(self.tmp)), "7.3.0-rc7")
        self.write("Makefile", "# no version\n")
        self.assertEqual(kernel.kernel_version(str(self.tmp)), "unknown")

    def test_fake_tree(self) -> None:
        self.assertEqual(kernel.state_max_of(str(FAKE_TREE)), 10)
        poll = kernel.poll_state_of(str(FAKE_TREE))
        self.assertEqual((poll.name, poll.exit_us, poll.res_us, poll.poll), ("POLL", 0, 0, True))
        self.assertEqual(poll.origin,
                         "drivers/cpuidle/poll_state.c:4 cpuidle_poll_state_init()")
        kernel.check_core_flags(str(FAKE_TREE))

    def test_polling_state(self) -> None:
        self.write("drivers/cpuidle/poll_state.c", "#define POLL_RES 2\n" + POLL_STATE)
        self.assertEqual(kernel.poll_state_of(str(self.tmp)).res_us, 2)
        self.write("drivers/cpuidle/poll_state.c", POLL_STATE)
        with self.assertRaisesRegex(ExtractError, "^drivers/cpuidle/poll_state.c: cannot "
                                    r"evaluate target residency 'POLL_RES' \(unknown symbol"):
            kernel.poll_state_of(str(self.tmp))
        self.write("drivers/cpuidle/poll_state.c", POLL_STATE.replace("FLAG_POLLING", "FLAG_X"))
        with self.assertRaisesRegex(ExtractError, "cannot read the polling state"):
            kernel.poll_state_of(str(self.tmp))

    def test_missing_facts(self) -> None:
        self.write("include/linux/cpuidle.h", "#define CPUIDLE_STATE_MAX FOO\n")
        with self.assertRaisesRegex(ExtractError, "^include/linux/cpuidle.h: cannot confirm that "
                                    "CPUIDLE_STATE_MAX is defined; the extractor's model of "
                                    "this tree needs review$"):
            kernel.state_max_of(str(self.tmp))
        self.write("drivers/cpuidle/cpuidle.c", "if (flags & CPUIDLE_FLAG_OFF)\n"
                   "\tdev->states_usage[i].disable |= 1;\n")
        with self.assertRaisesRegex(ExtractError, "the core disables CPUIDLE_FLAG_UNUSABLE"):
            kernel.check_core_flags(str(self.tmp))


if __name__ == "__main__":
    unittest.main()
