#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The replay lab's driver (scripts/teo replay, scripts/teotool/replay.py).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" replay "$@"
