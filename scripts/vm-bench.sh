#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: build the patched kernel, boot it in QEMU on an emulated
# idle platform and compare governors on workloads (scripts/bench.sh).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

VM_GOVERNORS="teo menu ladder"

usage() {
	cat <<EOF2
usage: $teo_prog [options] [-- BENCH_OPTIONS...]

Build the kernel and the emulated idle driver (scripts/vm.sh), boot the VM
and run scripts/bench.sh inside it, in two sessions (--cases):

  main       on the emulated platform (--profile): fio randread on a virtio
             disk with QEMU's null-co backend and a fixed completion latency
             (intercept-heavy: the completion interrupt is no timer of the
             guest's), each round followed by the same fio run on a one-state
             1/1 us table (the ceiling: no exit-latency cost, no wrong
             choice possible); fio on null_blk with hrtimer completions
             (timer-driven IO); hackbench; cyclictest --laptop
  idle-trap  a fully idle guest on the mt8196 table (WFI 1/1, two deep
             states, s2idle with an "infinite" residency) for --idle-runtime
             seconds per run: the share of idle time in WFI per governor

Prints the runs and per session the comparison (medians, fio completion
latency p50/p99, cyclictest p99/p99.9, IOPS against the ceiling, the
deepest state's share for timer IO, the WFI share when idle, and whether
each difference exceeds the run-to-run spread), and writes it with a plot
of the idle time per state to the results folder.

Options:
  --profile NAME      emulated platform of the main session (default
                      i5-10600K: POLL 0/0, C1 1/1, C2 120/360, C3 1034/3102 us)
  --states LIST       custom idle states instead, see scripts/vm.sh --help
  --cases LIST        sessions to run: main, idle-trap (default: both)
  --hz N              guest CONFIG_HZ: 100, 250, 300 or 1000 (default 250)
  --as-is             run the base tree's own governors (KERNEL_SRC as it
                      is, without this repository's overlay): for a patch
                      under review applied to an upstream tree
  --governors LIST    comma-separated (default teo,menu)
  --runs N            runs per governor and workload (default 3)
  --workloads LIST    main session's workloads, see scripts/bench.sh --help
                      (default: fio,timer-io,hackbench,cyclictest)
  --fio-runtime S     seconds per fio run (default 20)
  --idle-runtime S    seconds per idle-trap run (default 60)
  --ceiling-states L  the ceiling's table (default 1/1); "none" skips it
  --disk-latency NS   completion latency of the null-co disk (default 200000)
  --accel MODE        auto, kvm or tcg (scripts/vm.sh --accel; default auto)
  --record            record every run with trace-cmd (scripts/bench.sh
                      --record) and replay the recordings in the replay lab
                      on the emulated table (the profile's file in
                      tools/idle-replay/platforms/, or the --states list):
                      the summary adds "Lab prediction vs kernel"
  --out DIR           results folder (default \$TEO_CACHE/vm-bench/DATE)
  --help              show this text

Options after -- go to scripts/bench.sh as they are (checked before
anything is built).  Time: about 8 min for main and 6 min for idle-trap
with the defaults, plus the kernel build the first time (12-16 min with a
cold ccache).  Disk: about 3 GiB for the tree and the build.
Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh), TEO_LOCK
EOF2
}

# The replay lab's table of cpuidle-emu profile $1 (TEO_LAB_PLATFORMS:
# another folder of .plat files).
lab_table_of_profile() {
	local dir=${TEO_LAB_PLATFORMS:-$TEO_REPO/tools/idle-replay/platforms} f
	f=$dir/$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]').plat
	[ -f "$f" ] ||
		usage_error "--record: the replay lab has no table for profile '$1' (no $f); use --states, or add the table"
	printf '%s\n' "$f"
}

# Lab table $1 as session $2's guest registers it: cpuidle-emu gives the
# Intel client profiles the POLL state intel_idle always adds, which some
# lab tables (alder-lake, skylake) leave out; then a copy with it is used.
lab_table_with_poll() {
	local table=$1 p=$profile copy
	[ "$2" != idle-trap ] || p=mt8196
	if [ -n "$states" ] && [ "$2" = main ] ||
	   ! grep -qi "^[[:space:]]*{ \"$p\", true, emu_" "$TEO_REPO/tools/cpuidle-emu/cpuidle-emu.c" ||
	   grep -q '^state .* poll' "$table"; then
		printf '%s\n' "$table"
		return 0
	fi
	copy=$out/lab-$(basename "$table")
	awk '/^state / && !done { print "state POLL 0 0 poll"; done = 1 } { print }' "$table" > "$copy"
	printf '%s\n' "$copy"
}

# A --states list as a lab table, named as cpuidle-emu names the states.
states_plat() {
	local item i=0 rest=$1
	printf 'name states\ntitle cpuidle-emu states=%s\n' "$1"
	if [ "$rest" = poll ] || [ "${rest#poll,}" != "$rest" ]; then
		echo "state POLL 0 0 poll"
		i=1
		rest=${rest#poll}
		rest=${rest#,}
	fi
	for item in ${rest//,/ }; do
		printf 'state S%d %d %d\n' "$i" "$((10#${item%/*}))" "$((10#${item#*/}))"
		i=$((i + 1))
	done
}

vm_args=()
governors=teo,menu
runs=3
workloads=
fio_runtime=20
idle_runtime=60
ceiling=1/1
cases=main,idle-trap
hz=250
as_is=0
out=
profile=i5-10600K
states=
disk_latency=
accel=
record=0
while [ $# -gt 0 ]; do
	case $1 in
	--profile|--states|--governors|--runs|--workloads|--fio-runtime|\
	--disk-latency|--out|--cases|--hz|--idle-runtime|--ceiling-states|--accel)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		--profile) profile=$2 ;;
		--states) states=$2 ;;
		--disk-latency) disk_latency=$2 ;;
		--accel) accel=$2 ;;
		--governors) governors=$2 ;;
		--runs) runs=$2 ;;
		--workloads) workloads=$2 ;;
		--fio-runtime) fio_runtime=$2 ;;
		--idle-runtime) idle_runtime=$2 ;;
		--ceiling-states) ceiling=$2 ;;
		--cases) cases=$2 ;;
		--hz) hz=$2 ;;
		--out) out=$2 ;;
		esac
		shift
		;;
	--as-is) as_is=1 ;;
	--record) record=1 ;;
	--help|-h) usage; exit 0 ;;
	--) shift; break ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done
bench_extra=("$@")

# --- every argument is checked before anything is built -------------------
for c in ${cases//,/ }; do
	case $c in main|idle-trap) ;; *) usage_error "--cases: unknown case '$c'; known: main idle-trap" ;; esac
done
[ -n "${cases//,/}" ] || usage_error "--cases: empty list"
for g in ${governors//,/ }; do
	case " $VM_GOVERNORS " in
	*" $g "*) ;;
	*) usage_error "unknown governor '$g'; the VM kernel has: $VM_GOVERNORS" ;;
	esac
done
[ "$ceiling" = none ] || check_states_list "$ceiling" --ceiling-states
vm_args=(--hz "$hz")
[ "$as_is" = 0 ] || vm_args+=(--as-is)
[ -z "$disk_latency" ] || vm_args+=(--disk-latency "$disk_latency")
[ -z "$accel" ] || vm_args+=(--accel "$accel")
main_vm=("${vm_args[@]}")
if [ -n "$states" ]; then
	main_vm+=(--states "$states")
	label="custom $states"
else
	main_vm+=(--profile "$profile")
	label=$profile
fi
bench=(scripts/bench.sh --governors "$governors" --runs "$runs"
       --fio-runtime "$fio_runtime" --idle-runtime "$idle_runtime" --no-report)
[ "$record" = 0 ] || bench+=(--record)
main_bench=("${bench[@]}")
[ -z "$workloads" ] || main_bench+=(--workloads "$workloads")
case ",${workloads:-fio}," in
*,fio,*) [ "$ceiling" = none ] || main_bench+=(--ceiling-states "$ceiling") ;;
esac
main_bench+=("${bench_extra[@]}")
idle_bench=("${bench[@]}" --workloads idle "${bench_extra[@]}")
# The benchmark's own check of its options (it runs in the guest).
"$TEO_REPO/scripts/bench.sh" --check-args "${main_bench[@]:1}"
[ -z "$out" ] || need_writable_dir "$out" "--out $out"
"$TEO_REPO/scripts/vm.sh" --check-args "${main_vm[@]}"
# The lab's table of each session: the profile's file, or the --states list.
main_table=
idle_table=
if [ "$record" = 1 ]; then
	if [ -z "$states" ]; then
		main_table=$(lab_table_of_profile "$profile") || exit
	fi
	case ",$cases," in
	*,idle-trap,*) idle_table=$(lab_table_of_profile mt8196) || exit ;;
	esac
fi

if ! "$TEO_REPO/scripts/deps.sh" --check >/dev/null 2>&1; then
	"$TEO_REPO/scripts/deps.sh"
fi
need_cmd jq
# The guest runs the host's trace-cmd.
[ "$record" = 0 ] || need_cmd trace-cmd

tree_label=
[ "$as_is" = 0 ] || tree_label=" of ${KERNEL_SRC:-the Debian base} as it is"
start=$SECONDS
note "building (cached steps are skipped)"
"$TEO_REPO/scripts/vm.sh" --build-only "${main_vm[@]}"
built=$SECONDS

[ -n "$out" ] || out=$TEO_CACHE/vm-bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Run one session in folder $1 with title $2, then vm.sh options, "--",
# bench options.  The main session's folder is the results folder itself
# (title, bench/summary.txt: the series' cover letter quotes them).
session() {
	local dir=$1 title=$2 status=0 accel
	shift 2
	local -a vm=()
	while [ "$1" != -- ]; do vm+=("$1"); shift; done
	shift
	note "session: $title; results in $dir"
	mkdir -p "$dir"
	(cd "$TEO_REPO" && "$TEO_REPO/scripts/vm.sh" "${vm[@]}" --out "$dir" -- \
		"$@" --out "$dir/bench") || status=$?
	[ "$status" -eq 0 ] ||
		die "the benchmark in the VM failed (exit $status); see $dir/stderr and $dir/console.log"
	accel=$(tr '[:lower:]' '[:upper:]' < "$dir/accel" 2>/dev/null || echo TCG)
	printf '%s (QEMU %s, 2 vCPUs, HZ=%s)\n' "$title" "$accel" "$hz" > "$dir/title"
}

# Replay options of bench.sh --report for session $1 (see --record).
lab_args() {
	local table=$main_table
	[ "$record" = 1 ] || return 0
	[ "$1" != idle-trap ] || table=$idle_table
	if [ "$1" = main ] && [ -n "$states" ]; then
		table=$out/lab-states.plat
		states_plat "$states" > "$table"
	fi
	table=$(lab_table_with_poll "$table" "$1")
	printf '%s\n' --lab-platform "$table" --hz "$hz"
	[ "$as_is" = 0 ] || printf '%s\n' --lab-govs teo=teo-base
}

session_dir() {
	if [ "$1" = main ]; then echo "$out"; else echo "$out/$1"; fi
}

for c in ${cases//,/ }; do
	case $c in
	main) session "$out" "${governors//,/ vs }$tree_label on an emulated $label" \
		"${main_vm[@]}" -- "${main_bench[@]}" ;;
	idle-trap) session "$out/idle-trap" "idle trap: ${governors//,/, }$tree_label on an idle emulated mt8196, ${idle_runtime} s per run" \
		"${vm_args[@]}" --profile mt8196 -- "${idle_bench[@]}" ;;
	esac
done

# The newest complete result, for the cover letter of the series.
mkdir -p "$TEO_CACHE/vm-bench"
ln -sfn "$out" "$TEO_CACHE/vm-bench/latest"
# A report that fails (a recording the lab cannot replay) fails the job.
set -o pipefail
for c in ${cases//,/ }; do
	echo
	cat "$(session_dir "$c")/title"
	mapfile -t lab < <(lab_args "$c")
	"$TEO_REPO/scripts/bench.sh" --report "$(session_dir "$c")/bench" "${lab[@]}"
done | tee "$out/summary.txt"
note "done: build $((built - start)) s, boots and benchmarks $((SECONDS - built)) s; summary in $out/summary.txt"
