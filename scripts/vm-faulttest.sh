#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM fault test: stress the idle path of a debug kernel and fail on any
# kernel splat.
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF2
usage: $teo_prog [options]

Build the debug VM kernel (scripts/vm.sh --debug: lockdep, KASAN, RCU and
idle-path checks, objtool noinstr validation of vmlinux and of the
cpuidle-emu module) and run tools/cpuidle-emu/faulttest-guest.sh in it:

  1. under fio randread on the guest's disk, in a loop until fio ends:
     take each CPU but CPU 0 offline, switch the cpuidle governor (teo,
     menu, ladder in turn), disable one idle state on every CPU, bring the
     CPU back, enable the state again;
  2. with the guest idle, unload and reload cpuidle-emu with other tables.

Fails when an operation fails, when fio fails or reports an error, or when
the kernel log or console has a BUG, WARNING, Oops, lockdep, KASAN or
UBSAN report, a suspicious-RCU or RCU-stall report, a soft lockup or a
hung task.  This is the extended check (not in scripts/teo check): a cold
debug kernel build takes about 20-25 minutes on 2 cores.

Options:
  --fio-runtime S   seconds of IO for phase 1 (default 120)
  --reloads N       driver reloads in phase 2 (default 5)
  --smp N           virtual CPUs (default 3)
  --profile NAME    emulated platform (default i5-10600K)
  --out DIR         keep the run folder there (default: the cache)
  --help            show this text

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh), TEO_LOCK
EOF2
}

fio_runtime=120
reloads=5
smp=3
profile=i5-10600K
out=
while [ $# -gt 0 ]; do
	case $1 in
	--fio-runtime|--reloads|--smp|--profile|--out)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		--fio-runtime) fio_runtime=$2 ;;
		--reloads) reloads=$2 ;;
		--smp) smp=$2 ;;
		--profile) profile=$2 ;;
		--out) out=$2 ;;
		esac
		shift
		;;
	--help|-h) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done
case $fio_runtime in ''|*[!0-9]*|0) usage_error "--fio-runtime: '$fio_runtime' is not a positive number" ;; esac
case $reloads in ''|*[!0-9]*) usage_error "--reloads: '$reloads' is not a number" ;; esac
[ "${#fio_runtime}" -le 6 ] || usage_error "--fio-runtime: '$fio_runtime' is too large"
[ "${#reloads}" -le 4 ] || usage_error "--reloads: '$reloads' is too large"
[ "$smp" != 1 ] || usage_error "--smp: 1 CPU cannot be hotplugged; use 2 or more"

vm_args=(--debug --smp "$smp" --profile "$profile")
"$TEO_REPO/scripts/vm.sh" --check-args "${vm_args[@]}"
need_cmd fio jq
start=$SECONDS
# vm.sh checks the remaining arguments before it builds anything.
"$TEO_REPO/scripts/vm.sh" --build-only "${vm_args[@]}"
built=$SECONDS

if [ -z "$out" ]; then
	slot=$("$TEO_REPO/scripts/prepare-tree.sh")
	out=$slot/vm-faulttest
fi
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
status=0
"$TEO_REPO/scripts/vm.sh" "${vm_args[@]}" --out "$out" \
	--timeout $((fio_runtime * 3 + reloads * 30 + 900)) -- \
	bash "$TEO_REPO/tools/cpuidle-emu/faulttest-guest.sh" "$fio_runtime" "$reloads" ||
	status=$?
ran=$SECONDS
[ "$status" -ne 125 ] || die "the VM failed; see $out/console.log"

# Kernel reports that must not appear; the kernel log first, the console
# for what the log lost.
splat='(^|[^A-Z_])BUG:|WARNING:|Oops|Kernel panic|UBSAN:|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|detected stall|self-detected stall|soft lockup|hard LOCKUP|blocked for more than|hung_task'
splats=$(cat "$out/dmesg" "$out/console.log" 2>/dev/null | grep -E "$splat" | sort -u || true)
summary=$(grep '^faulttest: phase\|^faulttest: done' "$out/stdout" || true)
note "build $((built - start)) s, VM run $((ran - built)) s; folder $out"
if [ -n "$splats" ]; then
	printf '%s\n' "$splats" >&2
	die "the debug kernel reported the lines above (full log: $out/dmesg, $out/console.log)"
fi
[ "$status" = 0 ] || die "the fault test failed in the guest (exit $status); see $out/stderr"
[ -n "$summary" ] || die "the guest printed no result; see $out/stdout"
printf '%s\n' "$summary"
echo "fault test: passed, no kernel report in $(wc -l < "$out/dmesg") lines of kernel log"
