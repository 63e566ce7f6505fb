#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kept for the callers of the bash version: this is "scripts/teo kselftest" now
# (scripts/teotool/kselftest.py).
exec "$(dirname "$0")/teo" kselftest "$@"
