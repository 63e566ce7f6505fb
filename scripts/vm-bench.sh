#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The main job (scripts/teo run, scripts/teotool/vmbench.py).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" run "$@"
