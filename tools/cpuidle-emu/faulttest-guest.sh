#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of the VM fault test (scripts/teo faulttest runs it in the
# debug VM): CPU hotplug, governor switching and state toggling in a loop
# under fio IO, then unloading and reloading the emulated idle driver while
# the guest is idle.  Prints what it did; exits non-zero on the first
# operation that fails.  The host checks the kernel log for splats.
#
# usage: faulttest-guest.sh FIO_SECONDS RELOADS
# Environment (set by scripts/teo vm): TEO_EMU_KO, TEO_EMU_ARGS.
set -eu

fio_s=${1:?fio seconds}
reloads=${2:?reloads}
cpu_sys=/sys/devices/system/cpu
idle_sys=$cpu_sys/cpuidle
prog=faulttest
tmp=$(mktemp -d)
fio_pid=

say() {
	printf '%s: %s\n' "$prog" "$*"
}

fail() {
	printf '%s: FAIL: %s\n' "$prog" "$*" >&2
	[ -z "$fio_pid" ] || kill "$fio_pid" 2>/dev/null || true
	exit 1
}

# Write $1 to sysfs file $2, failing loudly.
put() {
	echo "$1" > "$2" 2>/dev/null || fail "cannot write '$1' to $2"
}

hotplug_cpus() {
	local c
	for c in "$cpu_sys"/cpu[0-9]*; do
		[ -f "$c/online" ] && printf '%s\n' "${c##*/cpu}"
	done
}

nstates() {
	find "$cpu_sys/cpu0/cpuidle" -maxdepth 1 -name 'state[0-9]*' | wc -l
}

# Disable state $1 on every online CPU ($2 = 1) or enable it again ($2 = 0).
toggle_state() {
	local s=$1 v=$2 f
	for f in "$cpu_sys"/cpu[0-9]*/cpuidle/state"$s"/disable; do
		[ -f "$f" ] || continue
		put "$v" "$f"
	done
}

[ "$(id -u)" = 0 ] || fail "must run as root (in the test VM)"
[ -n "${TEO_EMU_KO:-}" ] || fail "TEO_EMU_KO is not set: run me through scripts/vm.sh"
[ "$(cat "$idle_sys/current_driver")" = cpuidle_emu ] ||
	fail "the emulated idle driver is not loaded"
read -r -a governors <<< "$(cat "$idle_sys/available_governors")"
mapfile -t cpus < <(hotplug_cpus)
[ "${#cpus[@]}" -gt 0 ] || fail "no CPU can go offline (CONFIG_HOTPLUG_CPU?)"
say "governors: ${governors[*]}; hotplug CPUs: ${cpus[*]}; $(nstates) idle states"

# --- phase 1: hotplug, governor switches and state toggles under IO ------
fio --name=faulttest --filename=/dev/vda --readonly --rw=randread --bs=4k \
	--ioengine=psync --iodepth=1 --direct=1 --numjobs="$(nproc)" \
	--group_reporting --time_based --runtime="$fio_s" \
	--output-format=json --output="$tmp/fio.json" > "$tmp/fio.log" 2>&1 &
fio_pid=$!
say "fio randread on /dev/vda for $fio_s s, $(nproc) jobs; stress loop until it ends"

iter=0 offlines=0 switches=0 toggles=0
n=$(nstates)
while kill -0 "$fio_pid" 2>/dev/null; do
	iter=$((iter + 1))
	for c in "${cpus[@]}"; do
		kill -0 "$fio_pid" 2>/dev/null || break
		put 0 "$cpu_sys/cpu$c/online"
		offlines=$((offlines + 1))
		g=${governors[$(((iter + c) % ${#governors[@]}))]}
		put "$g" "$idle_sys/current_governor"
		[ "$(cat "$idle_sys/current_governor")" = "$g" ] ||
			fail "governor is $(cat "$idle_sys/current_governor"), not $g"
		switches=$((switches + 1))
		s=$(((iter + c) % n))
		toggle_state "$s" 1
		sleep 0.2
		put 1 "$cpu_sys/cpu$c/online"
		toggle_state "$s" 0
		toggles=$((toggles + 1))
		sleep 0.2
	done
	[ $((iter % 5)) -ne 0 ] ||
		say "iteration $iter: $offlines offline/online, $switches governor switches, $toggles state toggles"
done
fio_status=0
wait "$fio_pid" || fio_status=$?
fio_pid=
[ "$fio_status" = 0 ] || { cat "$tmp/fio.log" >&2; fail "fio exited $fio_status"; }
errors=$(jq '[.jobs[].error] | add' "$tmp/fio.json") || fail "fio wrote no JSON"
ios=$(jq '[.jobs[].read.total_ios] | add' "$tmp/fio.json")
iops=$(jq '[.jobs[].read.iops] | add | floor' "$tmp/fio.json")
[ "$errors" = 0 ] || fail "fio reported error $errors"
[ "$ios" -gt 0 ] || fail "fio did no IO"
say "phase 1: $iter iterations: $offlines CPU offline/online cycles, $switches governor switches, $toggles state toggles under fio ($ios reads, $iops IOPS, error 0)"
[ "$iter" -ge 3 ] || fail "only $iter iterations in $fio_s s: give fio more time"
put teo "$idle_sys/current_governor"

# --- phase 2: unload and reload the driver while idle --------------------
args_list=("profile=rk3399" "states=poll,1/1,120/360" "profile=mt8196"
	"profile=skylake" "states=poll")
for r in $(seq 1 "$reloads"); do
	busybox rmmod cpuidle_emu || fail "rmmod cpuidle_emu failed (reload $r)"
	d=$(cat "$idle_sys/current_driver")
	[ "$d" = none ] || fail "driver still '$d' after rmmod"
	sleep 1
	a=${args_list[$(((r - 1) % ${#args_list[@]}))]}
	busybox insmod "$TEO_EMU_KO" "$a" || fail "insmod cpuidle-emu $a failed (reload $r)"
	[ "$(cat "$idle_sys/current_driver")" = cpuidle_emu ] ||
		fail "driver not registered after insmod $a"
	sleep 2
done
busybox rmmod cpuidle_emu || fail "final rmmod failed"
# shellcheck disable=SC2086 # the module arguments are separate words
busybox insmod "$TEO_EMU_KO" $TEO_EMU_ARGS || fail "reloading with $TEO_EMU_ARGS failed"
sleep 2
say "phase 2: $reloads unload/reload cycles while idle, then back to $TEO_EMU_ARGS"
rm -rf "$tmp"
say "done: $iter iterations under IO, $reloads reloads"
