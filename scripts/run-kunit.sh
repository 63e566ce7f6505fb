#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the patched kernel for KUnit and run the teo suites under QEMU.
set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [--sanitizers] [--help]

Run the teo KUnit suites with the kernel's own tools/testing/kunit/kunit.py
(x86_64 under QEMU; UML cannot enable CONFIG_CPU_IDLE) in the private tree
from scripts/prepare-tree.sh.  The build folder is kept, so later runs are
incremental.

The kernel is built with tracing and boots with teo's trace events
enabled (trace_event=cpuidle_teo:*), so the suites also run the events'
code.

Fails when kunit.py reports a failure, a crash or no tests at all, or when
the kernel log holds a BUG, WARNING, Oops or sanitizer report.  kunit.py
writes the result of every case (its --json form) to TEO_KUNIT_JSON,
default <cache folder>/VARIANT.json; scripts/kunit-mutants.sh reads it.

Options:
  --sanitizers   build with KASAN and UBSAN (own build folder)
  --help         show this text

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh),
TEO_KUNIT_JSON
EOF
}

variant=kunit
while [ $# -gt 0 ]; do
	case $1 in
	--sanitizers) variant=kunit-sanitizers ;;
	--help|-h) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

need_cmd python3 qemu-system-x86_64 gcc make flex bison bc
slot=$("$TEO_REPO/scripts/prepare-tree.sh")
src=$slot/src
build=$slot/build-$variant
json=${TEO_KUNIT_JSON:-$slot/$variant.json}
need_space "$slot" 4096

# Tracing on, with teo's events enabled from boot: teo.c is then built (and
# checked by check-style.sh's W=1 C=2 build in this folder) with its trace
# events compiled in, and the suites run their code.
args=(run --arch=x86_64 --build_dir="$build"
      --kunitconfig="$src/drivers/cpuidle/governors/.kunitconfig"
      --kconfig_add=CONFIG_FTRACE=y --kconfig_add=CONFIG_ENABLE_DEFAULT_TRACERS=y
      --kernel_args=trace_event=cpuidle_teo:*
      --jobs="$(nproc)" --timeout=600 --json="$json")
if command -v ccache >/dev/null 2>&1; then
	args+=(--make_options="CC=ccache gcc")
fi
if [ "$variant" = kunit-sanitizers ]; then
	args+=(--kconfig_add=CONFIG_KASAN=y --kconfig_add=CONFIG_KASAN_GENERIC=y
	       --kconfig_add=CONFIG_UBSAN=y --kconfig_add=CONFIG_UBSAN_BOUNDS=y
	       --kconfig_add=CONFIG_UBSAN_SHIFT=y
	       --kconfig_add=CONFIG_UBSAN_DIV_ZERO=y)
fi

# Other worktrees share the private tree: one of them may have laid its
# own files in between prepare-tree.sh and the lock.  Check under the lock.
tree_is_ours() {
	local path e
	while IFS= read -r path; do
		[ -f "$TEO_REPO/$path" ] || continue
		cmp -s "$TEO_REPO/$path" "$src/$path" || return 1
	done <<EOF
$TEO_OVERLAY_PATHS
EOF
	# shellcheck disable=SC2013 # file names without white space
	for e in $(grep -l '^+++ b/drivers/cpuidle/' "$TEO_REPO"/series/edits/*.patch); do
		patch -s -f -R --dry-run -p1 -d "$src" -i "$e" >/dev/null 2>&1 || return 1
	done
}

log=$slot/$variant.out
qemu_dir=$(kunit_qemu_dir)
rm -f "$build/test.log" "$json"
: > "$log"
build_lock
until tree_is_ours; do
	build_unlock
	note "another worktree changed the private tree in $src: preparing it again"
	slot=$("$TEO_REPO/scripts/prepare-tree.sh")
	build_lock
done
# kunit.py is silent while it builds: say what runs and keep a heartbeat.
if [ -f "$build/vmlinux" ]; then
	expect="under a minute when little changed"
else
	expect="about 12 min on 2 cores with a cold ccache (13 with --sanitizers), 1 min warm"
fi
note "kunit.py ($variant) in $src, build folder $build (expected: $expect)"
heartbeat_start "building and running the KUnit kernel ($variant)" "$expect"
# shellcheck disable=SC2016 # expanded by the child shell
spawn_group env PATH="$qemu_dir:$PATH" \
	bash -c 'cd "$1" && shift && exec python3 tools/testing/kunit/kunit.py "$@"' \
	kunit "$src" "${args[@]}" > "$log" 2>&1
kunit_pid=$teo_last
spawn tail -n +1 -f --pid="$kunit_pid" "$log"
tail_pid=$teo_last
status=0
wait "$kunit_pid" || status=$?
forget_child "$kunit_pid"
wait "$tail_pid" 2>/dev/null || true
forget_child "$tail_pid"
heartbeat_stop
build_unlock
[ "$status" = 0 ] || die "kunit.py failed (exit $status); see $log"

# kunit.py exits 0 on an empty run; insist on real results.
summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$log" | tail -n 1)
case $summary in
"") die "no test summary in $log" ;;
*"Ran 0 tests"*) die "kunit.py ran no tests" ;;
*"failed: "[1-9]*|*"crashed: "[1-9]*|*"skipped: "[1-9]*|*"errors: "[1-9]*)
	die "$summary" ;;
esac

# kunit.py parses only the KTAP lines; the rest of the kernel log can still
# show a bug that did not fail a test.
[ -s "$build/test.log" ] || die "kunit.py left no kernel log in $build/test.log"
if grep -nE 'BUG:|WARNING:|Oops|UBSAN:|KASAN:|Kernel panic' "$build/test.log"; then
	die "the kernel log ($build/test.log) has the reports above"
fi
note "$summary"
