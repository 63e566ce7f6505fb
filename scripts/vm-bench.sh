#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: build the patched kernel, boot it in QEMU on an emulated
# idle platform and compare governors on workloads (scripts/bench.sh).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [options] [-- BENCH_OPTIONS...]

Build the kernel and the emulated idle driver (scripts/vm.sh), boot the VM
on an emulated platform and run scripts/bench.sh inside it for each
governor: fio randread on a virtio disk with QEMU's null-co backend and a
fixed completion latency (intercept-heavy: the completion interrupt is no
timer of the guest's), fio on null_blk with hrtimer completions
(timer-driven IO), hackbench and cyclictest --laptop.  Prints the runs and
the comparison table, and writes it with a plot of the idle time per state
to the results folder.

Options:
  --profile NAME      emulated platform (default i5-10600K, 4 states:
                      POLL 0/0, C1 1/1, C2 120/360, C3 1034/3102 us)
  --states LIST       custom idle states, see scripts/vm.sh --help
  --governors LIST    comma-separated (default teo,menu)
  --runs N            runs per governor and workload (default 3)
  --workloads LIST    see scripts/bench.sh --help (default: all)
  --fio-runtime S     seconds per fio run (default 20)
  --disk-latency NS   completion latency of the null-co disk (default 200000)
  --out DIR           results folder (default \$TEO_CACHE/vm-bench/DATE)
  --help              show this text

Options after -- go to scripts/bench.sh as they are.
Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh)
EOF
}

vm_args=()
governors=teo,menu
runs=3
workloads=
fio_runtime=20
out=
profile=i5-10600K
while [ $# -gt 0 ]; do
	case $1 in
	--profile|--states|--governors|--runs|--workloads|--fio-runtime|\
	--disk-latency|--out)
		[ $# -ge 2 ] || die "$1 needs a value"
		case $1 in
		--profile) profile=$2; vm_args+=(--profile "$2") ;;
		--states) profile="custom $2"; vm_args+=(--states "$2") ;;
		--disk-latency) vm_args+=(--disk-latency "$2") ;;
		--governors) governors=$2 ;;
		--runs) runs=$2 ;;
		--workloads) workloads=$2 ;;
		--fio-runtime) fio_runtime=$2 ;;
		--out) out=$2 ;;
		esac
		shift
		;;
	--help|-h) usage; exit 0 ;;
	--) shift; break ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift
done
case $runs in ''|*[!0-9]*|0) die "--runs: '$runs' is not a positive number" ;; esac
case $fio_runtime in ''|*[!0-9]*|0) die "--fio-runtime: '$fio_runtime' is not a positive number" ;; esac
for g in ${governors//,/ }; do
	case $g in
	teo|menu|ladder) ;;
	*) die "unknown governor '$g'; the VM kernel has: teo menu ladder" ;;
	esac
done

bench=(scripts/bench.sh --governors "$governors" --runs "$runs"
       --fio-runtime "$fio_runtime" --no-report)
[ -z "$workloads" ] || bench+=(--workloads "$workloads")
bench+=("$@")

start=$SECONDS
note "building (cached steps are skipped)"
"$TEO_REPO/scripts/vm.sh" --build-only "${vm_args[@]}"
built=$SECONDS

[ -n "$out" ] || out=$TEO_CACHE/vm-bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
note "benchmark in the VM (profile $profile); results in $out"
status=0
(cd "$TEO_REPO" && "$TEO_REPO/scripts/vm.sh" "${vm_args[@]}" --out "$out" -- \
	"${bench[@]}" --out "$out/bench") || status=$?
[ "$status" -eq 0 ] || die "the benchmark in the VM failed (exit $status); see $out/stderr and $out/console.log"

title="${governors//,/ vs } on an emulated $profile (QEMU TCG, 2 vCPUs)"
printf '%s\n' "$title" > "$out/title"
# The newest complete result, for the cover letter of the series.
ln -sfn "$out" "$TEO_CACHE/vm-bench/latest"
echo
echo "$title"
"$TEO_REPO/scripts/bench.sh" --report "$out/bench"
note "done: build $((built - start)) s, boot and benchmark $((SECONDS - built)) s"
