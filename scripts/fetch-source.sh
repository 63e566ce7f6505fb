#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fetch a newer Debian kernel source package into the cache (scripts/teo fetch).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" fetch "$@"
