#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages of scripts/deps.list (scripts/teo deps).
# Kept for the scripts and documents that name this path.
exec "$(dirname "$0")/teo" deps "$@"
