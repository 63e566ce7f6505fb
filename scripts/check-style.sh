#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Style and static checks of everything the series and its tooling hold.
set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [--help]

Check, in the private tree from scripts/prepare-tree.sh:
  - checkpatch.pl --strict: no errors, warnings or checks on every kernel-side
    C file of the repository (drivers/, include/, the selftests, cpuidle-emu);
  - kernel-doc -none -Wall: no warnings;
  - a W=1 C=2 (sparse) build of drivers/cpuidle/governors/ in the KUnit build
    folder: no warnings (run scripts/run-kunit.sh once first);
  - shellcheck on every shell script.

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh)
EOF
}

case ${1:-} in
--help|-h) usage; exit 0 ;;
"") ;;
*) usage_error "unknown argument '$1'" ;;
esac

need_cmd perl sparse shellcheck make
slot=$("$TEO_REPO/scripts/prepare-tree.sh")
src=$slot/src
build=$slot/build-kunit
failed=0

fail() {
	note "FAIL: $*"
	failed=1
}

# Kernel-side C sources and headers owned by this repository (the trace
# event header under include/ too).
kernel_files() {
	(cd "$TEO_REPO" &&
		find drivers include tools/testing/selftests/cpuidle-teo \
			tools/cpuidle-emu -name '*.[ch]' 2>/dev/null | sort)
}

check_checkpatch() {
	local f out
	for f in $(kernel_files); do
		out=$(cd "$src" && perl scripts/checkpatch.pl --strict --no-tree \
			--terse --show-types -f "$TEO_REPO/$f" 2>&1) || true
		if printf '%s\n' "$out" | grep -qE '(ERROR|WARNING|CHECK):'; then
			printf '%s\n' "$out" >&2
			fail "checkpatch: $f"
		fi
	done
}

check_kernel_doc() {
	local f out
	for f in $(kernel_files); do
		out=$(cd "$src" && scripts/kernel-doc -none -Wall "$TEO_REPO/$f" 2>&1)
		if [ -n "$out" ]; then
			printf '%s\n' "$out" >&2
			fail "kernel-doc: $f"
		fi
	done
}

check_w1_sparse() {
	local out
	[ -f "$build/.config" ] ||
		die "no KUnit build in $build yet: run scripts/run-kunit.sh first"
	out=$(cd "$src" && with_build_lock make -s O="$build" ARCH=x86_64 \
		CC="ccache gcc" W=1 C=2 -j"$(nproc)" drivers/cpuidle/governors/ 2>&1) ||
		fail "W=1 C=2 build of drivers/cpuidle/governors/ failed"
	if printf '%s\n' "$out" | grep -E 'warning|error'; then
		fail "W=1 C=2 build of drivers/cpuidle/governors/ reports the lines above"
	fi
}

check_shell() {
	local scripts
	scripts=$(cd "$TEO_REPO" && {
		find scripts .ci tools -type f \( -name '*.sh' -o -path '.ci/*' \) \
			2>/dev/null
		printf '%s\n' scripts/teo
	} | sort -u)
	# shellcheck disable=SC2086 # one word per path
	(cd "$TEO_REPO" && shellcheck -x -P scripts $scripts) ||
		fail "shellcheck"
}

check_checkpatch
check_kernel_doc
check_w1_sparse
check_shell
[ $failed = 0 ] || die "style checks failed"
note "checkpatch --strict, kernel-doc, W=1 C=2 and shellcheck: clean"
