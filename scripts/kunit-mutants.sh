#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The KUnit mutation check (scripts/teo mutants, scripts/teotool/mutants.py).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" mutants "$@"
