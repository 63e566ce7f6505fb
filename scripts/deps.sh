#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the teo tooling needs.
set -eu
. "$(dirname "$0")/lib.sh"

# One line per package, with what needs it.
TEO_PACKAGES="
linux-source-6.12	the default base tree
build-essential		kernel and tool builds
bc			kernel build
bison			kernel build
flex			kernel build
libelf-dev		kernel build (objtool)
libssl-dev		kernel build (sign-file)
cpio			kernel build, initramfs
xz-utils		unpacking the base tree
patch			upstream edits
git			series export and checks
ccache			faster rebuilds
sparse			C=2 checks
python3			kunit.py, kernel-doc
python3-docutils	reStructuredText validation
python3-sphinx		make htmldocs of the documentation
perl			checkpatch.pl
shellcheck		script checks
qemu-system-x86		KUnit and the test VM
busybox-static		the VM's initramfs
fio			workload benchmark
rt-tests		hackbench, cyclictest
gnuplot-nox		plots
util-linux		flock
"

usage() {
	cat <<EOF
usage: $teo_prog [--check] [--help]

Install, with apt-get, the Debian 12 packages that building, testing and
measuring the teo series need.  Does nothing when all are present.

Options:
  --check   only list the missing packages; exit 1 if any is missing
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
for pkg in $(printf '%s\n' "$TEO_PACKAGES" | awk 'NF { print $1 }'); do
	status=$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing="$missing $pkg"
done

if [ -z "$missing" ]; then
	exit 0
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
