#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kept for the callers of the bash version: this is "scripts/teo faulttest" now
# (scripts/teotool/faulttest.py).
exec "$(dirname "$0")/teo" faulttest "$@"
