# SPDX-License-Identifier: GPL-2.0
"""Messages on stderr and the two kinds of error every command can end with."""

import sys

_prog = "teo"


def set_prog(name: str) -> None:
    """Name the program in every message (the command the user ran)."""
    global _prog
    _prog = name


def prog() -> str:
    return _prog


class Fatal(Exception):
    """A bad environment or a failed step: one line, exit status 1."""

    status = 1

    def line(self) -> str:
        return f"{_prog}: error: {self}"


class UsageError(Fatal):
    """Bad input on the command line: one line, exit status 2."""

    status = 2

    def line(self) -> str:
        return f"{_prog}: error: {self} (see --help)"


def note(message: str) -> None:
    """Say what happens, on stderr, prefixed with the program's name."""
    print(f"{_prog}: {message}", file=sys.stderr, flush=True)
