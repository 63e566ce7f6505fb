# SPDX-License-Identifier: GPL-2.0
"""The two kinds of failure of an extraction."""


class ExtractError(Exception):
    """A problem that stops the whole extraction (one line for the user)."""


class DtsError(Exception):
    """A problem with one board: it is skipped and counted."""
