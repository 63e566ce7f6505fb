#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What scripts/lib.sh asks of this package while bash scripts remain
(the VM, the benchmark, the series): the shared names, the lock's
waiting and record, the checks of input, so that each rule has one
implementation.

usage: shell.py PROG COMMAND [ARGS...]; PROG names the calling script in
messages.  Exit status 1 with one line for a bad environment, 2 for bad
input.
"""

import os
import signal
import sys
from pathlib import Path
from typing import Callable, Dict, List

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from teotool import deps, disk, kunit, paths, process, states, tree, ui  # noqa: E402


def _env(args: List[str]) -> None:
    sys.stdout.write(paths.shell_env())


def _package_of(args: List[str]) -> None:
    print(deps.package_of(args[0]) or "")


def _need_cmd(args: List[str]) -> None:
    deps.need_cmd(*args)


def _writable_dir(args: List[str]) -> None:
    disk.need_writable_dir(Path(args[0]), args[1] if len(args) > 1 else "")


def _need_space(args: List[str]) -> None:
    disk.need_space(Path(args[0]), int(args[1]))


def _states(args: List[str]) -> None:
    states.parse(args[0], args[1] if len(args) > 1 else "--states")


def _lock_mode(args: List[str]) -> None:
    print(process.lock_mode(paths.lock()))


def _lock_wait(args: List[str]) -> None:
    """FD PID CMDLINE [WAITED_S]: exit 3 after a minute without the lock;
    WAITED_S, how long earlier calls waited, is missing in the first."""
    waited = float(args[3]) if len(args) > 3 else None
    if not process.acquire(int(args[0]), paths.lock(), int(args[1]), args[2],
                           waited_s=waited, give_up_s=60.0):
        sys.exit(3)


def _kunit_qemu_dir(args: List[str]) -> None:
    print(kunit.qemu_dir())


def _kernel_version(args: List[str]) -> None:
    version = tree.kernel_version(Path(args[0]))
    if version is None:
        sys.exit(1)
    print(tree.version_text(version))


COMMANDS: Dict[str, Callable[[List[str]], None]] = {
    "env": _env,
    "package-of": _package_of,
    "need-cmd": _need_cmd,
    "writable-dir": _writable_dir,
    "need-space": _need_space,
    "states": _states,
    "lock-mode": _lock_mode,
    "lock-wait": _lock_wait,
    "kunit-qemu-dir": _kunit_qemu_dir,
    "kernel-version": _kernel_version,
}


def main(argv: List[str]) -> int:
    if len(argv) < 2 or argv[1] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ui.set_prog(argv[0])
    os.environ["PATH"] = paths.DEBIAN_PATH
    # The calling script's traps say what a signal stops.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: os._exit(128 + signum))
    try:
        COMMANDS[argv[1]](argv[2:])
    except ui.Fatal as err:
        print(err.line(), file=sys.stderr)
        return err.status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
