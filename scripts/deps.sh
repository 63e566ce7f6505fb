#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the teo tooling needs.
set -eu
. "$(dirname "$0")/lib.sh"

# Every package of scripts/deps.list, one per line.
deps_packages() {
	awk '!/^#/ && NF >= 2 { print $1 }' "$TEO_REPO/scripts/deps.list"
}

usage() {
	cat <<EOF
usage: $teo_prog [--check] [--help]

Install, with apt-get, the Debian 12 packages that building, testing and
measuring the teo series need (scripts/deps.list: each package with the
commands it provides to the tooling).  Does nothing when all are present.

Options:
  --check   only list the missing packages, and the listed commands that
            an installed package does not provide; exit 1 if any
  --help    show this text
EOF
}

check_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--check) check_only=1 ;;
	--help|-h) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift
done

missing=
for pkg in $(deps_packages); do
	status=$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing="$missing $pkg"
done

# Every command the list promises, once its package is there.
probe_commands() {
	local pkg cmds cmd bad=0
	while read -r pkg cmds; do
		[ "$cmds" != - ] || continue
		for cmd in ${cmds//,/ }; do
			command -v "$cmd" >/dev/null 2>&1 && continue
			note "package $pkg is installed but provides no '$cmd' command (scripts/deps.list is wrong)"
			bad=1
		done
	done < <(awk '!/^#/ && NF >= 2 { print $1, $2 }' "$TEO_REPO/scripts/deps.list")
	return "$bad"
}

if [ -z "$missing" ]; then
	probe_commands
	exit
fi
if [ $check_only = 1 ]; then
	note "missing packages:$missing"
	exit 1
fi
[ "$(id -u)" -eq 0 ] ||
	die "missing packages:$missing; run 'sudo $0' (or: apt-get install$missing)"

note "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086 # one word per package
apt-get install -y -q --no-install-recommends $missing
probe_commands
