#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prepare the private kernel tree and print its cache folder (scripts/teo tree).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" tree "$@"
