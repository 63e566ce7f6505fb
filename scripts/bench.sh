#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The A/B workload benchmark (scripts/teo bench, scripts/teotool/bench.py).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" bench "$@"
