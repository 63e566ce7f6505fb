#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A/B workload benchmark of cpuidle governors on this machine (bare metal,
# or inside the test VM of scripts/vm.sh).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

CPU_SYS=/sys/devices/system/cpu
CPUIDLE_SYS=$CPU_SYS/cpuidle
POWERCAP_SYS=/sys/class/powercap
ALL_WORKLOADS="fio timer-io hackbench cyclictest idle"
DEFAULT_WORKLOADS="fio timer-io hackbench cyclictest"
hackbench_default_args="-g 4 -l 500"

usage() {
	cat <<EOF2
usage: $teo_prog [options]
       $teo_prog --report DIR
       $teo_prog --check-args [options]

Run workloads N times under each named cpuidle governor, switching through
$CPUIDLE_SYS/current_governor, and record per run the workload's
metrics and the per-state deltas of usage, time, above and below summed
over all CPUs (and the package energy where the machine has RAPL).  Runs
alternate between the governors (teo, menu, teo, menu ...).  Then print a
summary per workload and governor: the runs sorted, their median, the
latency percentiles, the idle-miss ratio (above + below) / usage, the
share of idle time per state, and whether the difference between the
governors exceeds the run-to-run spread; plot the idle time per state
(residency.svg/.png).

Workloads:
  fio         fio randread 4k, psync, direct, iodepth=1 on --fio-dev for
              --fio-runtime s: intercept-heavy (the device's interrupts are
              not timers the governor can see); metric: IOPS, with the
              completion latency p50/p99 (fio --output-format=json, jq)
  timer-io    the same fio job on a null_blk device (configfs) whose
              completions come from an hrtimer after --timer-delay-us
              (irqmode=2): timer-driven IO; metric: IOPS, and the deepest
              state's share of idle time
  hackbench   hackbench $hackbench_default_args; metric: seconds
  cyclictest  cyclictest --laptop (the PM QoS limit stays off), one thread
              per CPU, interval 1000 us, --cyclictest-runtime s, with
              --json and a 1 us histogram; metric: average wakeup latency
              (us), with p99, p99.9 and the maximum
  idle        nothing runs for --idle-runtime s (not in the default set):
              metric: the share of idle time in the shallowest halting
              state (the "idle trap": WFI on Arm tables, C1 on Intel ones)

Options:
  -g, --governors LIST     comma-separated governors (default teo,menu)
  -n, --runs N             runs per governor and workload (default 3)
  -w, --workloads LIST     comma-separated, from: ${ALL_WORKLOADS// /,}
                           (default: ${DEFAULT_WORKLOADS// /,})
  --fio-dev DEV            block device for fio: read only, never written
                           (default /dev/vda inside the VM; required on bare
                           metal)
  --fio-runtime S          seconds per fio run (default 20)
  --timer-delay-us US      null_blk completion delay (default 50000)
  --timer-runtime S        seconds per timer-io run (default 5)
  --hackbench-args ARGS    (default "$hackbench_default_args")
  --cyclictest-runtime S   seconds per cyclictest run (default 10)
  --idle-runtime S         seconds per idle run (default 60)
  --ceiling-states LIST    in the test VM only: after each round of fio
                           runs, reload cpuidle-emu with this state list
                           (e.g. 1/1: one state with no exit-latency cost)
                           and run fio once more as the "ceiling"; the
                           summary gives each governor's IOPS against it
  --record                 record every run with trace-cmd (power:cpu_idle,
                           irq, IPI, timer and sched_switch events, and
                           power:teo_* where the kernel has them) into
                           record/WORKLOAD-GOVERNOR-RUN.txt (trace-cmd
                           report text, cut to the run); the report then
                           replays each recording in the replay lab and
                           sets the lab's prediction beside the kernel's
                           counters ("Lab prediction vs kernel")
  --record-overhead        --record, and after each round the same runs
                           again unrecorded, as governors GOV-norec: the
                           summary's "GOV-norec vs ..." lines give the
                           recording's cost in the same session
  -o, --out DIR            results folder (default \$TEO_CACHE/bench/DATE)
  --no-plot                skip the plot (make it later with --report)
  --no-report              skip the summary and the plot
  --report DIR             only summarize and plot the runs in DIR (and
                           replay its recordings in the lab)
  --lab-platform NAME|FILE with --report: the lab's table to replay the
                           recordings on (default: DIR/platform.plat, the
                           table the kernel registered)
  --lab-govs MAP           with --report: lab governor per kernel governor,
                           e.g. teo=teo-base (default teo=teo, this
                           repository's teo.c, and menu=menu-base, the base
                           tree's menu.c: menu-X.Y in 'replay.sh list')
  --hz N                   with --report: the recorded kernel's HZ, when
                           setup.txt does not say it
  --check-args             only check the options (used by vm-bench.sh on
                           the host before it builds anything)
  --help                   show this text

Needs root and a cpuidle driver.  On bare metal it holds the machine-wide
build lock while it measures, so that no kernel build shares the machine;
it changes only the current governor (restored at exit, also on Ctrl-C),
and for timer-io creates a null_blk device (removed at exit).  Package
energy comes from RAPL (/sys/class/powercap) or, failing that, turbostat;
the summary says when neither is there.
Files in the results folder: setup.txt, runs.tsv (one line per run),
summary.txt, residency.dat, residency.svg and residency.png; with
--record also platform.plat (the registered states as a table of the
replay lab) and record/ (per run the trace-cmd report text, and after
--report the lab's timeline .trace and its replay .lab).  TEO_TRACE_CMD
names another trace-cmd binary.
EOF2
}

# --- idle statistics ------------------------------------------------------

# Print "state usage time_us above below" per state, summed over CPUs.
idle_snapshot() {
	grep -H . "$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/usage \
		"$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/time \
		"$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/above \
		"$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/below 2>/dev/null |
	awk -F: '{
		n = split($1, p, "/")
		st = substr(p[n - 1], 6) + 0
		v[st, p[n]] += $2
		if (st + 1 > ns) ns = st + 1
	}
	END {
		for (s = 0; s < ns; s++)
			print s, v[s, "usage"] + 0, v[s, "time"] + 0,
			      v[s, "above"] + 0, v[s, "below"] + 0
	}'
}

state_names() {
	cat "$CPU_SYS"/cpu0/cpuidle/state[0-9]*/name 2>/dev/null | tr '\n' ' '
}

# --- package energy ---------------------------------------------------------

# RAPL package domains under powercap ("package-N" zones), if any.
rapl_zones() {
	local z
	for z in "$POWERCAP_SYS"/intel-rapl:[0-9]*; do
		[ -r "$z/energy_uj" ] || continue
		case $(cat "$z/name" 2>/dev/null) in package-*) printf '%s\n' "$z" ;; esac
	done
}

# Decide how energy is measured: "rapl", "turbostat" or "none" (with the
# reason in energy_why).
energy_setup() {
	energy_how=none
	if [ -n "${TEO_IN_VM:-}" ]; then
		energy_why="not measured: inside the test VM (the emulated states save nothing)"
	elif [ -n "$(rapl_zones)" ]; then
		energy_how=rapl
		energy_why="package energy from RAPL ($(rapl_zones | xargs -n1 basename | paste -sd' '))"
	elif command -v turbostat >/dev/null 2>&1 &&
	     turbostat --quiet --Summary --Joules --show Pkg_J --num_iterations 1 \
		--interval 0.2 2>/dev/null | grep -q Pkg_J; then
		energy_how=turbostat
		energy_why="package energy from turbostat (Pkg_J)"
	else
		energy_why="not measured: no RAPL package domain in $POWERCAP_SYS and turbostat (linux-cpupower) found no package energy counter on this machine"
	fi
}

# Sum of the package energy counters in uJ.
rapl_read() {
	local z total=0
	for z in $(rapl_zones); do
		total=$((total + $(cat "$z/energy_uj")))
	done
	echo "$total"
}

# Energy in J between two rapl_read values, allowing one wrap per zone.
rapl_joules() {
	local before=$1 after=$2 range=0 z
	for z in $(rapl_zones); do
		range=$((range + $(cat "$z/max_energy_range_uj" 2>/dev/null || echo 0)))
	done
	[ "$after" -ge "$before" ] || after=$((after + range))
	awk -v d=$((after - before)) 'BEGIN { printf "%.1f\n", d / 1e6 }'
}

energy_start() {
	case $energy_how in
	rapl) energy_before=$(rapl_read) ;;
	turbostat)
		spawn turbostat --quiet --Summary --Joules --show Pkg_J --interval 1 \
			--out "$out/turbostat.tmp"
		energy_pid=$teo_last
		;;
	esac
}

# Print the energy of the run in J, or nothing.
energy_stop() {
	case $energy_how in
	rapl) rapl_joules "$energy_before" "$(rapl_read)" ;;
	turbostat)
		kill -INT "$energy_pid" 2>/dev/null || true
		wait "$energy_pid" 2>/dev/null || true
		forget_child "$energy_pid"
		awk '$1 ~ /^[0-9.]+$/ { j += $1 } END { printf "%.1f\n", j }' \
			"$out/turbostat.tmp"
		rm -f "$out/turbostat.tmp"
		;;
	esac
}

# --- workloads -------------------------------------------------------------

# fio randread on $1 for $2 s; print "IOPS p50=US,p99=US" (completion
# latency percentiles from fio's JSON output).
fio_run() {
	local dev=$1 runtime=$2 json
	json=$(fio --output-format=json --readonly --time_based --name=teobench \
		--filename="$dev" --runtime="$runtime" --rw=randread --bs=4k \
		--ioengine=psync --iodepth=1 --direct=1 2>/dev/null) ||
		die "fio on $dev failed"
	printf '%s\n' "$json" | jq -er '.jobs[0] |
		if .error != 0 then error("fio error \(.error)") else . end |
		.read | "\(.iops * 10 | round / 10) p50=\(.clat_ns.percentile["50.000000"] / 100 | round / 10),p99=\(.clat_ns.percentile["99.000000"] / 100 | round / 10)"' ||
		die "fio on $dev: no result or an error in its JSON output"
}

nullb_dir=
nullb_dev=

# Create a timer-completion null_blk device through configfs.
nullb_setup() {
	local cfg=/sys/kernel/config/nullb
	if [ ! -d "$cfg" ]; then
		modprobe null_blk nr_devices=0 2>/dev/null || true
		if [ ! -d /sys/kernel/config/nullb ] && [ -d /sys/kernel/config ]; then
			mount -t configfs configfs /sys/kernel/config 2>/dev/null || true
		fi
	fi
	[ -d "$cfg" ] || return 1
	nullb_dir=$cfg/teobench$$
	mkdir "$nullb_dir" || return 1
	echo 2 > "$nullb_dir/irqmode"
	echo $((timer_delay_us * 1000)) > "$nullb_dir/completion_nsec"
	echo 1024 > "$nullb_dir/size"
	echo 1 > "$nullb_dir/power"
	# Newer kernels name the disk after the configfs item, older ones
	# nullb<index>.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		for nullb_dev in "/dev/${nullb_dir##*/}" "/dev/nullb$(cat "$nullb_dir/index")"; do
			[ -b "$nullb_dev" ] && return 0
		done
		sleep 0.2
	done
	return 1
}

nullb_teardown() {
	[ -n "$nullb_dir" ] && [ -d "$nullb_dir" ] || return 0
	echo 0 > "$nullb_dir/power" 2>/dev/null || true
	rmdir "$nullb_dir" 2>/dev/null || true
	nullb_dir=
}

hackbench_time() {
	local out
	# shellcheck disable=SC2086 # the arguments split on purpose
	out=$(hackbench $hackbench_args) || die "hackbench $hackbench_args failed"
	printf '%s\n' "$out" | sed -n 's/^Time: *//p' | tail -n 1
}

# cyclictest with a 1 us histogram up to 10 ms; print "AVG p99=US,p99.9=US,
# max=US" over all threads (a percentile in the overflow prints as >10000).
cyclictest_run() {
	local json=$out/cyclictest.json log
	log=$(cyclictest --laptop -q -m -S -p 80 -i 1000 -h 10000 \
		-D "${cyclictest_runtime}s" --json="$json" 2>&1 >/dev/null) ||
		die "cyclictest failed: $log"
	jq -er '[.thread[]] as $t |
		($t | map(.cycles) | add) as $n |
		($t | map(.avg * .cycles) | add / $n) as $avg |
		($t | map(.max) | max) as $max |
		($t | map(.histogram | to_entries[] | {us: (.key | tonumber), c: .value}) |
			group_by(.us) | map({us: .[0].us, c: (map(.c) | add)}) | sort_by(.us)) as $h |
		def pct(p): (p * $n / 100) as $want |
			reduce $h[] as $b ({sum: 0, at: null};
				if .at == null then .sum += $b.c | (if .sum >= $want then .at = $b.us else . end) else . end) |
			if .at == null then ">10000" else .at end;
		"\($avg * 10 | round / 10) p99=\(pct(99)),p99.9=\(pct(99.9)),max=\($max)"' \
		"$json" || die "no latency in cyclictest's JSON output ($json)"
	rm -f "$json"
}

# Run workload $1 once; print "metric extra".
run_workload() {
	case $1 in
	fio) fio_run "$fio_dev" "$fio_runtime" ;;
	timer-io) fio_run "$nullb_dev" "$timer_runtime" ;;
	hackbench) echo "$(hackbench_time) -" ;;
	cyclictest) cyclictest_run ;;
	idle) sleep "$idle_runtime"; echo "idle -" ;;
	esac
}

metric_unit() {
	case $1 in
	fio|timer-io) echo "IOPS (higher is better)" ;;
	hackbench) echo "s (lower is better)" ;;
	cyclictest) echo "avg us (lower is better)" ;;
	idle) echo "% of idle time in $shallow_name (lower is better)" ;;
	esac
}

# The idle workload's metric from the run's state deltas ($1, tab
# separated): the shallowest halting state's share of idle time, and its
# entries per second.
idle_metric() {
	printf '%s\n' "$1" | awk -v s="$shallow_index" -v t="$idle_runtime" '{
		n = split($0, f, "\t")
		for (i = 0; i < (n - 1) / 4; i++) total += f[3 + 4 * i]
		printf "%.2f entries/s=%.1f\n", total ? 100 * f[3 + 4 * s] / total : 0,
			f[2 + 4 * s] / t
	}'
}

set_governor() {
	if ! echo "$1" > "$CPUIDLE_SYS/current_governor" 2>/dev/null ||
	   [ "$(cat "$CPUIDLE_SYS/current_governor")" != "$1" ]; then
		die "could not switch to governor $1"
	fi
}

# Reload the emulated idle driver with module arguments $1 (VM only).
emu_reload() {
	local args=$1
	busybox rmmod cpuidle_emu || die "cannot unload cpuidle_emu"
	# shellcheck disable=SC2086 # the module arguments are separate words
	busybox insmod "$TEO_EMU_KO" $args || die "cannot load cpuidle-emu with $args"
	emu_current=$args
}

# --- recording (--record) --------------------------------------------------

# What the replay lab's converter reads (tools/idle-replay/README, "Trace
# files"): idle entries and exits, what woke the CPU (device interrupts,
# x86's IPI vectors and arm64's ipi_entry, timer expiries) and whether the
# idle task was switched out; softirqs and cpu_idle_miss for the reader.
# Events this kernel lacks are left out, teo's own events among them.
RECORD_EVENTS="power:cpu_idle power:cpu_idle_miss power:teo_select power:teo_update irq:irq_handler_entry
irq:softirq_entry irq_vectors:local_timer_entry irq_vectors:reschedule_entry
irq_vectors:call_function_entry irq_vectors:call_function_single_entry
ipi:ipi_entry timer:hrtimer_expire_entry timer:timer_expire_entry
sched:sched_switch"
# Per-CPU ring buffer (KiB) and the recorder's sleep between reads (us):
# its readers wake twice a second, not every millisecond (trace-cmd's
# default), so that the recording adds few wakeups of its own.
RECORD_BUFFER_KB=16384
RECORD_SLEEP_US=500000
TRACE_CMD=${TEO_TRACE_CMD:-trace-cmd}
tracefs=
record_args=()

# trace-cmd must be there before anything runs (also on the host, for the
# guest, which runs the host's root file system).
record_check() {
	if [ -n "${TEO_TRACE_CMD:-}" ]; then
		command -v "$TEO_TRACE_CMD" >/dev/null 2>&1 ||
			die "--record: TEO_TRACE_CMD=$TEO_TRACE_CMD is not an executable command"
	else
		need_cmd trace-cmd
	fi
}

# Find tracefs and the events to record; write platform.plat.
record_setup() {
	local d ev
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -d "$d/events" ] && { tracefs=$d; break; }
	done
	[ -n "$tracefs" ] ||
		die "--record: no tracefs (mount -t tracefs tracefs /sys/kernel/tracing; the kernel needs CONFIG_FTRACE and event tracing)"
	[ -d "$tracefs/events/power/cpu_idle" ] ||
		die "--record: this kernel has no power:cpu_idle event ($tracefs/events/power/cpu_idle)"
	record_args=()
	for ev in $RECORD_EVENTS; do
		[ ! -d "$tracefs/events/${ev%%:*}/${ev#*:}" ] || record_args+=(-e "$ev")
	done
	mkdir -p "$out/record"
	# The binary recording goes to a local folder (in the test VM the
	# results folder is a 9p mount); only the report text is kept.
	record_tmp=$(mktemp -d "${TMPDIR:-/tmp}/teo-record.XXXXXX")
	remove_at_exit "$record_tmp"
	write_platform > "$out/platform.plat"
}

# The registered idle states as a replay lab table (tools/idle-replay
# README, "Platform files"): names, exit latency and target residency in
# us, the polling state and states disabled now marked.
write_platform() {
	local d i=0 name flags
	printf '# the idle states %s registered (cpuidle driver %s), written by %s\n' \
		"$(uname -r)" "$driver" "$teo_prog"
	printf 'name recorded\ntitle %s\n' "$driver${TEO_EMU_ARGS:+ $TEO_EMU_ARGS}"
	while [ -d "$CPU_SYS/cpu0/cpuidle/state$i" ]; do
		d=$CPU_SYS/cpu0/cpuidle/state$i
		name=$(tr -c 'A-Za-z0-9_.+\n-' '_' < "$d/name")
		flags=
		if [ "$i" = 0 ] && { [ "$name" = POLL ] ||
		   grep -q 'POLL IDLE' "$d/desc" 2>/dev/null; }; then
			flags=" poll"
		fi
		[ "$(cat "$d/disable" 2>/dev/null || echo 0)" = 0 ] || flags="$flags off"
		printf 'state %s %s %s%s\n' "$name" "$(cat "$d/latency")" \
			"$(cat "$d/residency")" "$flags"
		i=$((i + 1))
	done
}

# The kernel's HZ, if it can be found: vm.sh says it to the guest, Debian
# installs the config in /boot.
kernel_hz() {
	local hz=${TEO_KERNEL_HZ:-}
	if [ -z "$hz" ] && [ -r "/boot/config-$(uname -r)" ]; then
		hz=$(sed -n 's/^CONFIG_HZ=\([0-9]*\)$/\1/p' "/boot/config-$(uname -r)")
	fi
	printf '%s\n' "${hz:-unknown}"
}

record_pid=
record_file=
record_dat=
record_tmp=

# Start recording run $1 (WORKLOAD-GOVERNOR-RUN); return once the events
# are on.
record_start() {
	local i
	record_file=$out/record/$1
	record_dat=$record_tmp/$1.dat
	rm -f "$record_file".*
	spawn_group "$TRACE_CMD" record -q -o "$record_dat" -b "$RECORD_BUFFER_KB" \
		-s "$RECORD_SLEEP_US" "${record_args[@]}" > "$record_file.log" 2>&1
	record_pid=$teo_last
	for i in $(seq 600); do
		[ "$(cat "$tracefs/events/power/cpu_idle/enable" 2>/dev/null)" = 1 ] && return 0
		kill -0 "$record_pid" 2>/dev/null ||
			die "trace-cmd record did not start: $(tail -n 1 "$record_file.log")"
		[ "$i" != 600 ] || die "trace-cmd record did not enable its events within 60 s"
		sleep 0.1
	done
}

# A marker in the recording: the cut of the report keeps what lies
# between "teo-bench: start" and "teo-bench: stop".
record_mark() {
	[ -z "$record_pid" ] || echo "teo-bench: $1" > "$tracefs/trace_marker"
}

# At exit: stop a recording still running, and leave tracing as it was.
record_stop_quietly() {
	if [ -n "$record_pid" ]; then
		kill -INT -- "-$record_pid" 2>/dev/null || true
		wait "$record_pid" 2>/dev/null || true
		forget_child "$record_pid"
		record_pid=
	fi
	[ "$record" = 0 ] || "$TRACE_CMD" reset >/dev/null 2>&1 || true
}

# Stop recording; write the report text, cut to the run, as RUN.txt.
record_stop() {
	local status=0 pid=$record_pid
	[ -n "$pid" ] || return 0
	record_pid=
	kill -INT -- "-$pid" 2>/dev/null || true
	wait "$pid" || status=$?
	forget_child "$pid"
	if [ "$status" != 0 ] || [ ! -s "$record_dat" ]; then
		die "trace-cmd record failed (exit $status): $(tail -n 1 "$record_file.log")"
	fi
	"$TRACE_CMD" report -i "$record_dat" > "$record_dat.txt" 2>> "$record_file.log" ||
		die "trace-cmd report of $record_dat failed: $(tail -n 1 "$record_file.log")"
	rm -f "$record_dat"
	if grep -q 'teo-bench: start' "$record_dat.txt"; then
		awk '/teo-bench: start/ { on = 1; print; next }
		     /teo-bench: stop/ { print; exit }
		     on || /^(cpus=|version)/' "$record_dat.txt" > "$record_file.txt"
	else
		note "the recording of ${record_file##*/} has no teo-bench markers: kept whole"
		cp "$record_dat.txt" "$record_file.txt"
	fi
	rm -f "$record_dat.txt"
	grep -q ' cpu_idle: ' "$record_file.txt" ||
		die "the recording $record_file.txt holds no cpu_idle event (see $record_file.log)"
}

# --- the replay lab's prediction of the recorded runs ----------------------

# --lab-platform, --lab-govs and --hz of --report, checked first.
check_report_args() {
	local kv
	for kv in ${lab_govs//,/ }; do
		[[ $kv =~ ^[a-z0-9_-]+=[A-Za-z0-9._-]+$ ]] ||
			usage_error "--lab-govs: '$kv' is not KERNEL_GOVERNOR=LAB_LABEL"
	done
	case $report_hz in
	""|100|250|300|1000) ;;
	*) usage_error "--hz: '$report_hz' is not one of the kernel's choices 100, 250, 300, 1000" ;;
	esac
	case $lab_platform in
	*/*|*.plat) [ -f "$lab_platform" ] || usage_error "--lab-platform: no such file: '$lab_platform'" ;;
	esac
}

# The lab's label for kernel governor $1: --lab-govs, else teo (this
# repository's teo.c, which the kernel runs) and the base tree's menu;
# nothing for a governor the lab does not have.
lab_label() {
	local kv
	for kv in ${lab_govs//,/ }; do
		[ "${kv%%=*}" != "$1" ] || { lab_resolve "${kv#*=}"; return 0; }
	done
	case $1 in
	teo) echo teo ;;
	menu) lab_resolve menu-base ;;
	esac
}

# teo-base and menu-base name the base tree's governors (teo-X.Y, menu-X.Y).
lab_resolve() {
	case $1 in
	teo-base|menu-base) printf '%s\n' "$lab_base" | awk -v g="${1%-base}" '$1 ~ "^" g "-" { print $1 }' ;;
	*) printf '%s\n' "$1" ;;
	esac
}

# Check the recordings of folder $1 before anything is printed or built:
# each is trace-cmd report text with idle events, and there is a table.
lab_precheck() {
	local dir=$1 rec=$1/record f
	[ -d "$rec" ] || return 0
	ls "$rec"/*.txt >/dev/null 2>&1 || die "$rec holds no recording (*.txt): nothing to replay"
	for f in "$rec"/*.txt; do
		[ -s "$f" ] || die "$f: empty recording"
		grep -q ' cpu_idle: .*state=' "$f" ||
			die "$f: not a trace-cmd report of a run: no cpu_idle event"
	done
	case ${lab_platform:-$dir/platform.plat} in
	*/*|*.plat)
		[ -f "${lab_platform:-$dir/platform.plat}" ] ||
			die "no lab table for the recordings: ${lab_platform:-$dir/platform.plat} is missing (give --lab-platform)" ;;
	esac
}

# Replay every recording of folder $1 in the lab and print the prediction
# next to the kernel's counters for the same runs.
lab_section() {
	local dir=$1 rec=$1/record table hz f name w g r label base log replay lab_all n=0
	[ -d "$rec" ] || return 0
	table=${lab_platform:-$dir/platform.plat}
	hz=$report_hz
	[ -n "$hz" ] || hz=$(sed -n 's/^hz: \([0-9][0-9]*\)$/\1/p' "$dir/setup.txt" 2>/dev/null)
	[ -n "$hz" ] || { hz=250; note "the recorded kernel's HZ is not in $dir/setup.txt: replaying at HZ=250 (give --hz)"; }
	replay=$TEO_REPO/scripts/replay.sh
	log=$rec/lab.log
	: > "$log"
	lab_all=$("$replay" list 2>>"$log" |
		awk '/^governors:/ { on = 1; next } /^[a-z]/ { on = 0 } on { print $1, $2 }') ||
		die "the replay lab did not build (see $log)"
	lab_base=$(printf '%s\n' "$lab_all" | awk '$2 == "base" { print $1 }')
	[ -n "$lab_base" ] || die "the replay lab lists no base-tree governor (see $log)"
	[ -z "$lab_platform" ] || [ ! -f "$dir/platform.plat" ] || lab_table_differs "$table" "$dir/platform.plat"
	: > "$rec/lab.tsv"
	while IFS=$'\t' read -r w g r _; do
		[ "$w" != workload ] || continue
		f=$rec/$w-$g-$r.txt
		[ -f "$f" ] || continue
		label=$(lab_label "$g")
		if [ -n "$label" ] && ! printf '%s\n' "$lab_all" | awk -v l="$label" '$1 == l { f = 1 } END { exit !f }'; then
			die "--lab-govs: the lab has no governor '$label' (it has: $(printf '%s\n' "$lab_all" | cut -d' ' -f1 | paste -sd' '))"
		fi
		if [ -z "$label" ]; then
			note "$w-$g-$r: the lab has no governor for '$g' (--lab-govs): not replayed"
			continue
		fi
		name=${f%.txt}
		"$replay" convert --hz "$hz" --platform "$table" "$f" "$name.trace" 2>>"$log" ||
			die "$f: not a recording the lab can convert: $(grep -v '^make\|built' "$log" | tail -n 1)"
		"$replay" run --trace "$name.trace" --platform "$table" --gov "$label" \
			--per-state > "$name.lab" 2>>"$log" ||
			die "$name.trace: the lab's replay failed: $(tail -n 1 "$log")"
		awk -v w="$w" -v g="$g" -v r="$r" -v l="$label" '
			/^per state/ { on = 1; next }
			on && $1 == l && NF == 7 { print w "\t" g "\t" r "\t" l "\t" $2 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }
		' "$name.lab" >> "$rec/lab.tsv"
		n=$((n + 1))
	done < "$dir/runs.tsv"
	[ "$n" -gt 0 ] || die "no recording in $rec matches a run of $dir/runs.tsv"
	base=$(sed -n 's/^name //p' "$table" 2>/dev/null | head -n 1)
	lab_table "$dir/runs.tsv" "$rec/lab.tsv" "${base:-$table}" "$hz"
}

# Warn when the lab's table $1 is not the one the kernel registered ($2).
lab_table_differs() {
	local a b
	a=$(awk '$1 == "state" { print $3, $4 }' "$1" 2>/dev/null)
	b=$(awk '$1 == "state" { print $3, $4 }' "$2")
	[ -z "$a" ] || [ "$a" = "$b" ] ||
		note "warning: the lab table $1 differs from the states the kernel registered ($2)"
}

# The table: per workload and governor, each state's kernel counters over
# the recorded runs beside the lab's, and the model error.
lab_table() {
	awk -F'\t' -v table="$3" -v hz="$4" '
	FNR == NR && FNR == 1 {
		for (i = 7; i <= NF; i++)
			if ($i ~ /_usage$/) { nm = $i; sub(/_usage$/, "", nm); names[ns++] = nm }
		next
	}
	FNR == NR { for (i = 7; i <= NF; i++) kv[$1, $2, $3, i] = $i; next }
	{
		key = $1 SUBSEP $2
		if (!(key in seen)) { seen[key] = 1; order[nk++] = key; lab[key] = $4 }
		rk = key SUBSEP $3
		if (!(rk in rseen)) { rseen[rk] = 1; runs[key] = runs[key] " " $3; nrun[key]++ }
		s = $5 + 0
		if (s + 1 > nls[key]) nls[key] = s + 1
		lu[key, s] += $6; lt[key, s] += $7; la[key, s] += $8; lb[key, s] += $9
		rlt[rk, s] = $7; rla[rk] += $8 + $9; rlu[rk] += $6; rltt[rk] += $7
	}
	function tvd(a, ta, b, tb, n,    s, d, x) {
		d = 0
		for (s = 0; s < n; s++) {
			x = (ta ? a[s] / ta : 0) - (tb ? b[s] / tb : 0)
			d += x < 0 ? -x : x
		}
		return 50 * d
	}
	END {
		printf "\nLab prediction vs kernel: each recorded run replayed in the replay lab\n"
		printf "(table %s, HZ=%s), counters summed over the CPUs and the recorded runs\n", table, hz
		for (k = 0; k < nk; k++) {
			key = order[k]; split(key, kk, SUBSEP)
			n = ns > nls[key] ? ns : nls[key]
			delete ku; delete kt; delete ka; delete kb; delete pl; delete pk
			KU = KT = KM = LU = LT = LM = 0
			nr = split(runs[key], rl, " ")
			for (j = 1; j <= nr; j++)
				for (s = 0; s < ns; s++) {
					c = 7 + 4 * s
					ku[s] += kv[kk[1], kk[2], rl[j], c]
					kt[s] += kv[kk[1], kk[2], rl[j], c + 1]
					ka[s] += kv[kk[1], kk[2], rl[j], c + 2]
					kb[s] += kv[kk[1], kk[2], rl[j], c + 3]
				}
			for (s = 0; s < n; s++) {
				KU += ku[s]; KT += kt[s]; KM += ka[s] + kb[s]
				LU += lu[key, s]; LT += lt[key, s]; LM += la[key, s] + lb[key, s]
				pk[s] = kt[s]; pl[s] = lt[key, s]
			}
			printf "\n%s, %s (lab: %s; %d recorded run%s)\n", kk[1], kk[2], lab[key],
				nr, nr == 1 ? "" : "s"
			printf "  %-12s %21s %15s %17s %17s\n", "", "usage", "time share %",
				"above", "below"
			printf "  %-12s %10s %10s %7s %7s %8s %8s %8s %8s\n", "state",
				"kernel", "lab", "kernel", "lab", "kernel", "lab", "kernel", "lab"
			for (s = 0; s < n; s++)
				printf "  %-12s %10d %10d %7.1f %7.1f %8d %8d %8d %8d\n",
					s < ns ? names[s] : "state" s, ku[s], lu[key, s],
					KT ? 100 * kt[s] / KT : 0, LT ? 100 * lt[key, s] / LT : 0,
					ka[s], la[key, s], kb[s], lb[key, s]
			km = KU ? KM / KU : 0; lm = LU ? LM / LU : 0
			d = tvd(pk, KT, pl, LT, n)
			printf "  %-12s %10d %10d  miss (above + below) / usage: kernel %.3f, lab %.3f\n",
				"all", KU, LU, km, lm
			per = ""
			for (j = 1; j <= nr; j++) {
				rk = key SUBSEP rl[j]
				delete a1; delete b1; t1 = 0
				for (s = 0; s < n; s++) {
					a1[s] = kv[kk[1], kk[2], rl[j], 8 + 4 * s]; t1 += a1[s]
					b1[s] = rlt[rk, s]
				}
				per = per sprintf(" %.1f", tvd(a1, t1, b1, rltt[rk], n))
			}
			printf "  model error: TVD of the time shares %.1f %% (per run:%s), miss ratio lab - kernel %+.3f, entries lab / kernel %.2f\n",
				d, per, lm - km, KU ? LU / KU : 0
			row[k] = sprintf("  %-10s %-8s %-10s %4d %9d %9d %7.3f %7.3f %6.1f %+8.3f",
				kk[1], kk[2], lab[key], nr, KU, LU, km, lm, d, lm - km)
		}
		printf "\nModel error per workload and governor (TVD: total variation distance of\n"
		printf "the time shares per state, 0 = same, 100 = disjoint; miss = (above + below) / usage)\n"
		printf "  %-10s %-8s %-10s %4s %9s %9s %7s %7s %6s %8s\n", "workload", "kernel",
			"lab", "runs", "entries", "lab", "miss", "lab", "TVD %", "miss +-"
		for (k = 0; k < nk; k++) print row[k]
	}' "$1" "$2"
}

# --- report ----------------------------------------------------------------

# Summary from runs.tsv in $1 (also writes residency.dat).
summarize() {
	local dir=$1
	awk -F'\t' -v datfile="$dir/residency.dat" '
	NR == 1 {
		for (i = 7; i <= NF; i++) {
			if ($i ~ /_usage$/) {
				name = $i; sub(/_usage$/, "", name)
				names[ns++] = name
			}
		}
		next
	}
	{
		key = $1 SUBSEP $2
		if (!(key in seen)) { seen[key] = 1; order[nk++] = key }
		if (!($1 in wseen)) { wseen[$1] = 1; worder[nw++] = $1 }
		if ($2 != "ceiling") unit[$1] = $5
		vals[key] = vals[key] " " $4
		if ($6 != "-" && $6 != "") {
			nx = split($6, kv, ",")
			for (i = 1; i <= nx; i++) {
				split(kv[i], p, "=")
				if (!((wl_k = $1 SUBSEP p[1]) in kseen)) {
					kseen[wl_k] = 1; korder[$1] = korder[$1] " " p[1]
				}
				extra[key, p[1]] = extra[key, p[1]] " " p[2]
			}
		}
		for (s = 0; s < ns; s++) {
			c = 7 + 4 * s
			usage[key, s] += $c; tm[key, s] += $(c + 1)
			above[key, s] += $(c + 2); below[key, s] += $(c + 3)
		}
	}
	function sorted(str,    a, n, i, j, t, out) {
		n = split(str, a, " ")
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		out = ""
		for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") a[i]
		return out
	}
	function median(str,    a, n) {
		n = split(sorted(str), a, " ")
		if (!n) return ""
		if (a[n] ~ /^>/ || a[(n + 1) / 2] ~ /^>/) return a[int((n + 1) / 2)]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# Ways to order n1 values of A among n2 of B with U = u.
	function ways(n1, n2, u,    k) {
		if (u < 0) return 0
		if (n1 == 0 || n2 == 0) return u == 0
		k = n1 "," n2 "," u
		if (!(k in memo))
			memo[k] = ways(n1 - 1, n2, u - n2) + ways(n1, n2 - 1, u)
		return memo[k]
	}
	# Mann-Whitney U of A over B and its exact two-sided p (ties count
	# one half; with ties the p is approximate).
	function mwu(astr, bstr,    a, b, n1, n2, i, j, u, lo, hi, tot, x, w) {
		n1 = split(astr, a, " "); n2 = split(bstr, b, " ")
		u = 0
		for (i = 1; i <= n1; i++)
			for (j = 1; j <= n2; j++)
				u += (a[i] + 0 > b[j] + 0) ? 1 : (a[i] + 0 == b[j] + 0) ? 0.5 : 0
		tot = 0; lo = 0; hi = 0
		for (x = 0; x <= n1 * n2; x++) {
			w = ways(n1, n2, x); tot += w
			if (x <= u) lo += w
			if (x >= u) hi += w
		}
		mwu_u = u; mwu_n1 = n1; mwu_n2 = n2
		mwu_p = 2 * (lo < hi ? lo : hi) / tot
		if (mwu_p > 1) mwu_p = 1
		return u
	}
	function verdict(wl, g0, g, higher,    ka, kb, m0, m1, d, u, word) {
		ka = wl SUBSEP g0; kb = wl SUBSEP g
		m0 = median(vals[ka]); m1 = median(vals[kb])
		u = mwu(vals[kb], vals[ka])
		d = m0 ? 100 * (m1 - m0) / m0 : 0
		if (mwu_n1 < 2 || mwu_n2 < 2)
			word = "one run each: no spread to compare against"
		else if (u == 0 || u == mwu_n1 * mwu_n2)
			word = sprintf("the runs do not overlap: %s is %s beyond the run-to-run spread", g,
				((u > 0) == higher) ? "better," : "worse,")
		else
			word = "the runs overlap: within the run-to-run noise"
		printf "  %s vs %s: median %+.1f %%; %s (Mann-Whitney U=%g of %d, exact two-sided p=%.2f, %d+%d runs)\n",
			g, g0, d, word, u, mwu_n1 * mwu_n2, mwu_p, mwu_n1, mwu_n2
	}
	END {
		printf "case"  > datfile
		for (s = 0; s < ns; s++) printf " %s", names[s] > datfile
		printf "\n" > datfile
		for (w = 0; w < nw; w++) {
			wl = worder[w]
			higher = unit[wl] ~ /higher is better/
			printf "\n%s: %s\n", wl, unit[wl]
			printf "  %-8s %-32s %9s %9s %7s %7s %6s %6s  %s\n", "governor",
				"runs (sorted)", "median", "entries", "above%",
				"below%", "miss", "deep%", "idle time per state (%)"
			g0 = ""; ng = 0
			for (k = 0; k < nk; k++) {
				split(order[k], kk, SUBSEP)
				if (kk[1] != wl) continue
				key = order[k]; g = kk[2]
				if (g ~ /-norec$/) { norec[nn++] = g }
				else if (g != "ceiling") { if (g0 == "") g0 = g; else govs[ng++] = g }
				u = 0; a = 0; b = 0; t = 0
				for (s = 0; s < ns; s++) {
					u += usage[key, s]; a += above[key, s]
					b += below[key, s]; t += tm[key, s]
				}
				res = ""
				if (g != "ceiling") printf "%s/%s", wl, g > datfile
				for (s = 0; s < ns; s++) {
					share = t ? 100 * tm[key, s] / t : 0
					res = res sprintf(" %s %.1f", names[s], share)
					if (g != "ceiling") printf " %.2f", share > datfile
				}
				if (g != "ceiling") printf "\n" > datfile
				deep = t ? 100 * tm[key, ns - 1] / t : 0
				if (g == "ceiling")
					printf "  %-8s %-32s %9s  (the one-state table: no idle statistics)\n",
						g, sorted(vals[key]), median(vals[key])
				else
					printf "  %-8s %-32s %9s %9d %6.2f%% %6.2f%% %6.3f %5.1f%% %s\n",
						g, sorted(vals[key]), median(vals[key]), u,
						u ? 100 * a / u : 0, u ? 100 * b / u : 0,
						u ? (a + b) / u : 0, deep, res
				nx = split(korder[wl], kn, " ")
				line = ""
				for (i = 1; i <= nx; i++)
					if ((key SUBSEP kn[i]) in extra)
						line = line sprintf(" %s %s", kn[i], median(extra[key, kn[i]]))
				if (line != "")
					printf "  %-8s median of runs:%s\n", "", line
			}
			for (i = 0; i < ng; i++) verdict(wl, g0, govs[i], higher)
			if (nn) printf "  the cost of recording (--record-overhead: recorded runs vs the same runs unrecorded):\n"
			for (i = 0; i < nn; i++) {
				g = norec[i]; sub(/-norec$/, "", g)
				if ((wl SUBSEP g) in seen) verdict(wl, norec[i], g, higher)
			}
			nn = 0
			if ((wl SUBSEP "ceiling") in seen) {
				c = median(vals[wl SUBSEP "ceiling"])
				line = ""
				if (g0 != "") line = sprintf(" %s %.2fx", g0, c ? median(vals[wl SUBSEP g0]) / c : 0)
				for (i = 0; i < ng; i++)
					line = line sprintf(", %s %.2fx", govs[i], c ? median(vals[wl SUBSEP govs[i]]) / c : 0)
				printf "  against the ceiling (median %s):%s\n", c, line
			}
			if (wl == "timer-io" || wl == "idle") {
				line = ""
				for (k = 0; k < nk; k++) {
					split(order[k], kk, SUBSEP)
					if (kk[1] != wl || kk[2] == "ceiling") continue
					t = 0
					for (s = 0; s < ns; s++) t += tm[order[k], s]
					line = line sprintf(" %s %.1f %%", kk[2], t ? 100 * tm[order[k], ns - 1] / t : 0)
				}
				printf "  deepest state (%s) share of idle time:%s\n", names[ns - 1], line
			}
			delete govs
		}
		printf "\nmedian = of the runs; entries, above%%, below%%, miss and the idle time\n"
		printf "per state are over all runs: above = too deep, below = too shallow, as\n"
		printf "the kernel counts them; miss = (above + below) / entries; deep%% = the\n"
		printf "deepest state'"'"'s share of idle time.  \"The runs do not overlap\" means\n"
		printf "every run of one governor beat every run of the other: with 3+3 runs\n"
		printf "that is the strongest result possible (p=0.10); use more runs (-n 5:\n"
		printf "p=0.008) before calling a small difference real.\n"
	}' "$dir/runs.tsv"
}

plot() {
	local dir=$1 ncol
	command -v gnuplot >/dev/null 2>&1 || { note "no gnuplot: no plot"; return 0; }
	ncol=$(head -n 1 "$dir/residency.dat" | awk '{ print NF }')
	cat > "$dir/residency.gp" <<EOF2
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel "share of idle time (%)"
set title "Idle time per state, per workload and governor"
set xtics rotate by -30 noenhanced
set key outside right noenhanced
set grid ytics
plot for [i=2:$ncol] "$dir/residency.dat" using i:xtic(1) title columnheader(i)
EOF2
	gnuplot -e "set terminal svg size 960,540; set output '$dir/residency.svg'" \
		"$dir/residency.gp" 2>/dev/null || note "gnuplot (svg) failed"
	gnuplot -e "set terminal png size 960,540; set output '$dir/residency.png'" \
		"$dir/residency.gp" 2>/dev/null || note "gnuplot (png) failed"
}

report() {
	local dir=$1
	[ -d "$dir" ] || usage_error "--report: '$dir' is not a folder"
	[ -f "$dir/runs.tsv" ] || die "no runs.tsv in $dir"
	lab_precheck "$dir"
	{
		summarize "$dir"
		lab_section "$dir"
	} > "$dir/summary.txt"
	[ ! -f "$dir/setup.txt" ] || grep '^energy:' "$dir/setup.txt" || true
	cat "$dir/summary.txt"
	[ "$do_plot" = 0 ] || plot "$dir"
	[ ! -f "$dir/residency.svg" ] || note "plot: $dir/residency.svg"
}

# --- main ------------------------------------------------------------------

governors=teo,menu
runs=3
workloads=${DEFAULT_WORKLOADS// /,}
fio_dev=
fio_runtime=20
timer_delay_us=50000
timer_runtime=5
hackbench_args=$hackbench_default_args
cyclictest_runtime=10
idle_runtime=60
ceiling_states=
record=0
record_overhead=0
lab_platform=
lab_govs=
report_hz=
out=
do_plot=1
do_report=1
report_dir=
check_only=0
orig_args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-g|--governors|-n|--runs|-w|--workloads|--fio-dev|--fio-runtime|\
	--timer-delay-us|--timer-runtime|--hackbench-args|--cyclictest-runtime|\
	--idle-runtime|--ceiling-states|-o|--out|--report|--lab-platform|\
	--lab-govs|--hz)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		-g|--governors) governors=$2 ;;
		-n|--runs) runs=$2 ;;
		-w|--workloads) workloads=$2 ;;
		--fio-dev) fio_dev=$2 ;;
		--fio-runtime) fio_runtime=$2 ;;
		--timer-delay-us) timer_delay_us=$2 ;;
		--timer-runtime) timer_runtime=$2 ;;
		--hackbench-args) hackbench_args=$2 ;;
		--cyclictest-runtime) cyclictest_runtime=$2 ;;
		--idle-runtime) idle_runtime=$2 ;;
		--ceiling-states) ceiling_states=$2 ;;
		-o|--out) out=$2 ;;
		--report) report_dir=$2 ;;
		--lab-platform) lab_platform=$2 ;;
		--lab-govs) lab_govs=$2 ;;
		--hz) report_hz=$2 ;;
		esac
		shift
		;;
	--record) record=1 ;;
	--record-overhead) record=1; record_overhead=1 ;;
	--no-plot) do_plot=0 ;;
	--no-report) do_report=0 ;;
	--check-args) check_only=1 ;;
	--help|-h) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

if [ -n "$report_dir" ]; then
	need_cmd awk
	check_report_args
	report "$report_dir"
	exit 0
fi
[ -z "$lab_platform$lab_govs$report_hz" ] ||
	usage_error "--lab-platform, --lab-govs and --hz go with --report DIR"

# --- arguments, checked before anything changes ---------------------------
for opt in "--runs $runs" "--fio-runtime $fio_runtime" \
	"--timer-delay-us $timer_delay_us" "--timer-runtime $timer_runtime" \
	"--cyclictest-runtime $cyclictest_runtime" "--idle-runtime $idle_runtime"; do
	n=${opt#* }
	case $n in
	''|*[!0-9]*|0|00*) usage_error "${opt%% *}: '$n' is not a positive whole number" ;;
	esac
	[ "${#n}" -le 6 ] || usage_error "${opt%% *}: '$n' is too large"
done
[ -n "$workloads" ] || usage_error "--workloads: empty list"
for w in ${workloads//,/ }; do
	case " $ALL_WORKLOADS " in
	*" $w "*) ;;
	*) usage_error "unknown workload '$w'; known: $ALL_WORKLOADS" ;;
	esac
done
[ -n "$governors" ] || usage_error "--governors: empty list"
for g in ${governors//,/ }; do
	case $g in
	ceiling) usage_error "'ceiling' is the name of the --ceiling-states runs, not a governor" ;;
	*[!a-z0-9_-]*) usage_error "--governors: '$g' is not a governor name" ;;
	esac
done
[ -z "$ceiling_states" ] || check_states_list "$ceiling_states" --ceiling-states
case $hackbench_args in
*[!-a-zA-Z0-9\ =._]*) usage_error "--hackbench-args: '$hackbench_args' has characters hackbench options never have" ;;
esac
if [ -n "$fio_dev" ]; then
	case $fio_dev in /dev/*) ;; *) usage_error "--fio-dev: '$fio_dev' is not under /dev" ;; esac
fi
[ -z "$out" ] || need_writable_dir "$out" "--out $out"
[ "$check_only" = 0 ] || exit 0
[ "$record" = 0 ] || record_check

# --- the machine -------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "must be run as root (it switches governors through sysfs)"
[ -r "$CPUIDLE_SYS/available_governors" ] ||
	die "this kernel has no cpuidle (no $CPUIDLE_SYS/available_governors)"
available=$(cat "$CPUIDLE_SYS/available_governors")
for g in ${governors//,/ }; do
	case " $available " in
	*" $g "*) ;;
	*) die "unknown governor '$g'; this kernel has: $available" ;;
	esac
done
driver=$(cat "$CPUIDLE_SYS/current_driver" 2>/dev/null || echo none)
[ "$driver" != none ] ||
	die "no cpuidle driver on this machine (current_driver is none): nothing to compare; use scripts/vm-bench.sh"
if [ -n "$ceiling_states" ]; then
	if [ -z "${TEO_EMU_KO:-}" ] || [ "$driver" != cpuidle_emu ]; then
		die "--ceiling-states needs the emulated idle driver of the test VM (scripts/vm.sh sets TEO_EMU_KO)"
	fi
	need_cmd busybox
fi
case ",$workloads," in
*,fio,*|*,timer-io,*) need_cmd fio jq ;;
esac
case ",$workloads," in
*,fio,*)
	if [ -z "$fio_dev" ]; then
		[ -n "${TEO_IN_VM:-}" ] ||
			die "--fio-dev is required on bare metal (a block device fio may read)"
		fio_dev=/dev/vda
	fi
	[ -b "$fio_dev" ] || die "$fio_dev is not a block device"
	;;
esac
case ",$workloads," in *,hackbench,*) need_cmd hackbench ;; esac
case ",$workloads," in *,cyclictest,*) need_cmd cyclictest jq ;; esac

# Measure under the build lock (no kernel build may run meanwhile).  In
# the test VM the host's vm.sh holds it for the whole guest run.
if [ -z "${TEO_BENCH_LOCKED:-}" ] && [ -z "${TEO_IN_VM:-}" ]; then
	export TEO_BENCH_LOCKED=1
	status=0
	with_build_lock "$0" "${orig_args[@]}" || status=$?
	exit "$status"
fi

[ -n "$out" ] || out=$TEO_CACHE/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
orig_gov=$(cat "$CPUIDLE_SYS/current_governor")
emu_current=${TEO_EMU_ARGS:-}
# Leave the machine as it was, however the run ends.
restore_machine() {
	record_stop_quietly
	nullb_teardown
	if [ -n "$ceiling_states" ] && [ "$emu_current" != "$TEO_EMU_ARGS" ]; then
		emu_reload "$TEO_EMU_ARGS"
	fi
	echo "$orig_gov" > "$CPUIDLE_SYS/current_governor" 2>/dev/null || true
}
at_exit restore_machine
energy_setup
[ "$record" = 0 ] || record_setup

read -r -a names <<< "$(state_names)"
# The shallowest halting state: the idle trap's state.
shallow_index=0
[ "${names[0]}" != POLL ] || [ "${#names[@]}" -lt 2 ] || shallow_index=1
shallow_name=${names[$shallow_index]}
{
	printf 'workload\tgovernor\trun\tmetric\tunit\textra'
	for s in "${names[@]}"; do
		printf '\t%s_usage\t%s_time_us\t%s_above\t%s_below' "$s" "$s" "$s" "$s"
	done
	printf '\n'
} > "$out/runs.tsv"
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "kernel: $(uname -r), $(nproc) CPUs, driver $driver${TEO_EMU_ARGS:+ ($TEO_EMU_ARGS)}"
	echo "states: ${names[*]}"
	grep -H . "$CPU_SYS"/cpu0/cpuidle/state[0-9]*/latency \
		"$CPU_SYS"/cpu0/cpuidle/state[0-9]*/residency 2>/dev/null | sed 's|.*/cpuidle/||'
	echo "governors: $governors; runs: $runs; workloads: $workloads"
	echo "fio: ${fio_dev:-none}, ${fio_runtime}s; timer-io: ${timer_delay_us} us, ${timer_runtime}s"
	echo "hackbench: $hackbench_args; cyclictest: ${cyclictest_runtime}s; idle: ${idle_runtime}s"
	echo "ceiling: ${ceiling_states:-none}"
	echo "energy: $energy_why"
	echo "hz: $(kernel_hz)"
	[ "$record" = 0 ] || echo "record: trace-cmd ${record_args[*]} (buffer ${RECORD_BUFFER_KB} KiB per CPU, reads every ${RECORD_SLEEP_US} us)"
} > "$out/setup.txt"
note "results in $out; states: ${names[*]}"
note "energy: $energy_why"
echo "per run: metric; per state usage/time/above/below deltas over all CPUs"

# One run of workload $1 under governor $2 (run $3); appends to runs.tsv.
measure() {
	local w=$1 g=$2 r=$3 before after line metric extra joules result
	if [ "$g" = ceiling ]; then
		emu_reload "states=$ceiling_states"
	else
		set_governor "${g%-norec}"
	fi
	case $g in
	ceiling|*-norec) ;;
	*) [ "$record" = 0 ] || record_start "$w-$g-$r" ;;
	esac
	sleep 1
	before=$(idle_snapshot)
	record_mark "start $w $g $r"
	energy_start
	result=$(run_workload "$w") || exit 1
	read -r metric extra <<< "$result"
	[ -n "$metric" ] || die "$w under $g gave no result"
	joules=$(energy_stop)
	record_mark "stop $w $g $r"
	after=$(idle_snapshot)
	record_stop
	[ "$g" != ceiling ] || emu_reload "$TEO_EMU_ARGS"
	if [ "$g" = ceiling ]; then
		line=$(for _ in "${names[@]}"; do printf '\t0\t0\t0\t0'; done)
	else
		line=$(paste -d' ' <(printf '%s\n' "$before") <(printf '%s\n' "$after") |
			awk '{ printf "\t%d\t%d\t%d\t%d", $7 - $2, $8 - $3, $9 - $4, $10 - $5 }')
	fi
	[ "$w" != idle ] || read -r metric extra <<< "$(idle_metric "$line")"
	if [ -n "$joules" ]; then
		if [ "$extra" = - ]; then extra=J=$joules; else extra=$extra,J=$joules; fi
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s%s\n' "$w" "$g" "$r" "$metric" \
		"$(metric_unit "$w")" "$extra" "$line" >> "$out/runs.tsv"
	# The run's own line: metric, then per state usage/time/above/below.
	printf '%s\n' "$line" | awk -v w="$w" -v g="$g" -v r="$r" -v m="$metric" \
		-v x="$extra" -v u="$(metric_unit "$w" | cut -d' ' -f1)" \
		-v names="${names[*]}" '{
		ns = split(names, nm, " ")
		split($0, f, "\t")
		printf "%-10s %-7s run %d: %s %s%s;", w, g, r, m, u,
			x == "-" ? "" : " (" x ")"
		tu = 0; ta = 0
		for (s = 0; s < ns; s++) {
			c = 2 + 4 * s
			printf " %s %d/%dms/%d/%d", nm[s + 1], f[c],
				f[c + 1] / 1000, f[c + 2], f[c + 3]
			tu += f[c]; ta += f[c + 2] + f[c + 3]
		}
		printf "; miss %.3f\n", tu ? ta / tu : 0
	}'
}

for w in ${workloads//,/ }; do
	if [ "$w" = timer-io ] && ! nullb_setup; then
		nullb_teardown
		note "timer-io: no null_blk with configfs here (CONFIG_BLK_DEV_NULL_BLK, CONFIG_CONFIGFS_FS); skipped"
		continue
	fi
	for r in $(seq 1 "$runs"); do
		for g in ${governors//,/ }; do
			measure "$w" "$g" "$r"
		done
		if [ "$record_overhead" = 1 ]; then
			for g in ${governors//,/ }; do
				measure "$w" "$g-norec" "$r"
			done
		fi
		if [ "$w" = fio ] && [ -n "$ceiling_states" ]; then
			measure "$w" ceiling "$r"
		fi
	done
	[ "$w" != timer-io ] || nullb_teardown
done

[ "$do_report" = 0 ] || report "$out"
