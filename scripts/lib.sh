# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the teo tooling.  Source it from bash scripts:
#   . "$(dirname "$0")/lib.sh"
# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the sourcing scripts

TEO_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TEO_CACHE=${TEO_CACHE:-$TEO_REPO/.cache}
# Default base tree: Debian's 6.12 LTS source package.
TEO_DEBIAN_PKG=linux-source-6.12
TEO_DEBIAN_TARBALL=/usr/src/linux-source-6.12.tar.xz
# Oldest base the overlay is written for (VERSION * 256 + PATCHLEVEL).
TEO_MIN_BASE=$((6 * 256 + 12))
# The in-tree paths this repository owns; each is copied over the base tree.
TEO_OVERLAY_PATHS="drivers/cpuidle/governors/teo.c
drivers/cpuidle/governors/teo.h
drivers/cpuidle/governors/.kunitconfig
drivers/cpuidle/governors/tests/teo_kunit.c
tools/testing/selftests/cpuidle-teo
Documentation/admin-guide/pm/teo.rst"
# Small changes to upstream files, applied in this order.
TEO_EDITS_DIR=$TEO_REPO/series/edits
# A lock shared by everything that builds a kernel or benchmarks: two kernel
# builds, or a build and a benchmark, must never share this machine.  The
# private tree is only changed under it too.  It is not recursive: never call
# a script that takes it (prepare-tree.sh, with_build_lock) while holding it.
TEO_LOCK=${TEO_LOCK:-/tmp/teo-kernel-build.lock}

# ccache (its own folder, outside the repository) hashes paths under the
# cache relative to the build folder, so the private tree and the series
# check tree, laid out alike, share compile results.  Side effect: __FILE__
# reads ../src/<path> in those builds.
export CCACHE_BASEDIR="$TEO_CACHE" CCACHE_NOHASHDIR=1

# Run Debian's tools, not whatever a user installed by hand earlier in PATH
# (pyenv shims, /usr/local): every command must come from a package that
# scripts/deps.list names, and scripts/check-deps.sh audits that.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH

teo_prog=$(basename "$0")

die() {
	printf '%s: error: %s\n' "$teo_prog" "$*" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "$teo_prog" "$*" >&2
}

# Print the Debian package that provides command $1 to the tooling, as
# scripts/deps.list says; nothing if it is not listed.
deps_package_of() {
	awk -v cmd="$1" '
		/^#/ || NF < 2 { next }
		{ n = split($2, c, ","); for (i = 1; i <= n; i++) if (c[i] == cmd) { print $1; exit } }
	' "$TEO_REPO/scripts/deps.list"
}

need_cmd() {
	local cmd pkg
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 && continue
		pkg=$(deps_package_of "$cmd")
		[ -n "$pkg" ] ||
			die "'$cmd' not found, and scripts/deps.list names no package for it (a bug: add it there)"
		die "'$cmd' not found: it comes from the Debian package $pkg; run 'scripts/deps.sh' as root (or: apt-get install $pkg)"
	done
}

# Free space in MiB on the file system holding $1 (which must exist).
free_mib() {
	df -Pm "$1" | awk 'NR == 2 { print $4 }'
}

need_space() {
	local dir=$1 want_mib=$2 have
	mkdir -p "$dir"
	have=$(free_mib "$dir")
	[ "$have" -ge "$want_mib" ] ||
		die "only ${have} MiB free under $dir, need ${want_mib} MiB; free some space or set TEO_CACHE to a larger disk"
}

# Run "$@" holding the machine-wide build lock.
with_build_lock() {
	need_cmd flock
	flock "$TEO_LOCK" "$@"
}

# Hold the build lock in this shell until build_unlock or exit.  Call no
# with_build_lock in between: the lock is not recursive.
build_lock() {
	need_cmd flock
	exec 9>>"$TEO_LOCK"
	flock 9
}

build_unlock() {
	flock -u 9
	exec 9>&-
}

# Print "VERSION.PATCHLEVEL.SUBLEVEL" of the kernel tree $1, or fail.
kernel_version() {
	local mk=$1/Makefile v p s
	[ -f "$mk" ] || return 1
	v=$(sed -n 's/^VERSION = \([0-9]*\)$/\1/p' "$mk")
	p=$(sed -n 's/^PATCHLEVEL = \([0-9]*\)$/\1/p' "$mk")
	s=$(sed -n 's/^SUBLEVEL = \([0-9]*\)$/\1/p' "$mk")
	[ -n "$v" ] && [ -n "$p" ] || return 1
	printf '%s.%s.%s\n' "$v" "$p" "${s:-0}"
}

# Check that $1 is a kernel tree the overlay can go onto; die otherwise.
check_kernel_tree() {
	local src=$1 ver major minor
	[ -d "$src" ] || die "KERNEL_SRC=$src does not exist"
	ver=$(kernel_version "$src") ||
		die "KERNEL_SRC=$src is not a kernel tree (no top-level Makefile with VERSION/PATCHLEVEL)"
	if [ ! -f "$src/drivers/cpuidle/governors/Makefile" ] ||
	   [ ! -f "$src/tools/testing/kunit/kunit.py" ]; then
		die "KERNEL_SRC=$src (version $ver) lacks drivers/cpuidle/governors or tools/testing/kunit"
	fi
	major=${ver%%.*}
	minor=${ver#*.}
	minor=${minor%%.*}
	[ $((major * 256 + minor)) -ge "$TEO_MIN_BASE" ] ||
		die "KERNEL_SRC=$src is Linux $ver; the overlay needs 6.12 or later"
	if [ -e "$src/.config" ] || [ -d "$src/include/config" ]; then
		die "KERNEL_SRC=$src has build artifacts (.config); kunit.py needs a clean tree: point at a clean checkout (this tool never cleans yours)"
	fi
}

# Name of the cache slot for a base tree path.
tree_key() {
	local src=$1 ver
	ver=$(kernel_version "$src")
	printf 'linux-%s-%s\n' "$ver" "$(printf '%s' "$src" | sha1sum | cut -c1-8)"
}
